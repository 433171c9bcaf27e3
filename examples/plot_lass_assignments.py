"""
=====================================================================
LASS: soft assignment maps from a few (signed) tags
=====================================================================

:class:`~semisup.LaplacianAssignment` (Carreira-Perpiñán & Wang 2014) assigns every item a
point of the probability simplex over K categories, from an item–item graph and partial
item–category tags. Three Gaussian blobs, three categories, two tagged items per category
(``y = -1`` elsewhere). Each panel colours the items by their assignment (red, green, blue =
the three categories' probabilities), and the background by the out-of-sample mapping
``predict_proba`` on a grid. A small ``lam`` trusts the tags (assignments stay near the
tagged items' categories only where the graph reaches them quickly); a large one smooths the
assignments over the graph until every item looks alike.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_blobs

from semisup import LaplacianAssignment

X, y = make_blobs(300, centers=[[-2, 0], [2, 0], [0, 3]], cluster_std=1.0, random_state=0)
rng = np.random.default_rng(0)
y_train = np.full_like(y, -1)  # -1: untagged
for c in range(3):
    y_train[rng.choice(np.flatnonzero(y == c), 2, replace=False)] = c

xx, yy = np.meshgrid(np.linspace(-5.5, 5.5, 120), np.linspace(-3.5, 6.5, 110))
grid = np.c_[xx.ravel(), yy.ravel()]

fig, axes = plt.subplots(1, 3, figsize=(13, 4.4), sharey=True)
for ax, lam in zip(axes, [0.01, 1.0, 100.0]):
    lass = LaplacianAssignment(lam=lam, n_neighbors=10).fit(X, y_train)
    P = lass.predict_proba(grid).reshape(xx.shape + (3,))
    ax.imshow(P, origin="lower", extent=(xx.min(), xx.max(), yy.min(), yy.max()),
              alpha=0.45, aspect="auto")
    ax.scatter(X[:, 0], X[:, 1], c=np.clip(lass.assignments_, 0, 1), s=18,
               edgecolors="k", linewidths=0.3)
    tagged = y_train != -1
    ax.scatter(X[tagged, 0], X[tagged, 1], c=np.eye(3)[y_train[tagged]], marker="*",
               s=260, edgecolors="k")
    acc = (lass.transduction_ == y).mean()
    ax.set_title(f"lam = {lam:g}: arg-max accuracy {acc:.0%}\n"
                 f"ADMM iterations: {lass.n_iter_}")
fig.suptitle("LASS assignments (RGB = probability of each category); stars: tagged items")
fig.tight_layout()
plt.show()
