"""
=====================================================================
Harmonic function against scikit-learn's LabelSpreading
=====================================================================

The harmonic function (Zhu, Ghahramani & Lafferty 2003) is the classic graph-transduction
baseline: the unlabelled scores are the harmonic extension of the labels on the graph. It is
scikit-learn's :class:`~sklearn.semi_supervised.LabelSpreading` with ``alpha -> 0`` and
hard clamping. Here both run on the same kNN graph parameters and on the same 20 random
labelled draws of the two-moons data, with 2 to 20 labels.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons
from sklearn.semi_supervised import LabelSpreading

from semisup import HarmonicFunction

X, y = make_moons(300, noise=0.12, random_state=0)
rng = np.random.default_rng(0)
n_labels = [2, 4, 8, 12, 20]
n_draws = 20


def draw_labels(n_lab):
    """-1 everywhere but ``n_lab`` points, at least one per class."""
    while True:
        idx = rng.choice(len(y), n_lab, replace=False)
        if len(np.unique(y[idx])) == 2:
            y_train = np.full_like(y, -1)
            y_train[idx] = y[idx]
            return y_train


acc = {"HarmonicFunction": [], "LabelSpreading": []}
for n_lab in n_labels:
    scores = {k: [] for k in acc}
    for _ in range(n_draws):
        y_train = draw_labels(n_lab)
        unl = y_train == -1
        hf = HarmonicFunction(n_neighbors=10).fit(X, y_train)
        ls = LabelSpreading(kernel="knn", n_neighbors=10, alpha=0.2).fit(X, y_train)
        scores["HarmonicFunction"].append((hf.transduction_[unl] == y[unl]).mean())
        scores["LabelSpreading"].append((ls.transduction_[unl] == y[unl]).mean())
    for k in acc:
        acc[k].append((np.mean(scores[k]), np.std(scores[k])))

# %%
# Accuracy on the unlabelled points (mean and standard deviation over the draws), and the
# harmonic function's scores with four labels.

fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4))
for name, marker in [("HarmonicFunction", "o"), ("LabelSpreading", "s")]:
    m, s = np.array(acc[name]).T
    ax0.errorbar(n_labels, m, yerr=s, marker=marker, capsize=3, label=name)
ax0.set_xlabel("number of labelled points")
ax0.set_ylabel("accuracy on the unlabelled points")
ax0.legend()
ax0.set_title("Two moons, 20 draws per size")

y_train = draw_labels(4)
hf = HarmonicFunction(n_neighbors=10).fit(X, y_train)
ax1.scatter(X[:, 0], X[:, 1], c=hf.label_distributions_[:, 1], cmap="coolwarm", s=12)
lab = y_train != -1
ax1.scatter(X[lab, 0], X[lab, 1], c="k", marker="*", s=200, label="labelled")
ax1.set_title("Harmonic scores P(class 1), 4 labels")
ax1.legend(loc="lower left")
fig.tight_layout()
plt.show()
