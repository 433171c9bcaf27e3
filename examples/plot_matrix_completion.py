"""
=====================================================================
Transduction by matrix completion: a completed label/feature matrix
=====================================================================

:class:`~semisup.MatrixCompletionTransducer` (Goldberg et al. 2010) completes the stacked
matrix of labels and features at once: it predicts the unobserved labels, imputes the
missing features and denoises the observed ones. The data follow the paper's generative
model: 200 items with rank-3 pre-features in 15 dimensions, observed with noise; 4
binary labels that are noisy linear functions of them. 40 % of the label entries and 60 %
of the feature entries are observed. Labels are a ``{0, 1}`` matrix with ``-1`` for an
unobserved entry; missing features are ``NaN``.
"""

import matplotlib.pyplot as plt
import numpy as np

from semisup import MatrixCompletionTransducer

rng = np.random.default_rng(0)
n, d, t, rank = 200, 15, 4, 3
X0 = rng.normal(size=(n, rank)) @ rng.normal(size=(rank, d))
X_full = X0 + 0.1 * rng.normal(size=(n, d))
scores = X0 @ rng.normal(size=(d, t)) / np.sqrt(d)
Y_true = (rng.random((n, t)) < 1 / (1 + np.exp(-3 * scores))).astype(int)

X = np.where(rng.random((n, d)) < 0.6, X_full, np.nan)  # NaN: missing feature
Y = np.where(rng.random((n, t)) < 0.4, Y_true, -1)       # -1: unobserved label

# lam (weight of the label loss) and mu (of the nuclear norm) chosen by cross-validation on
# the observed labels, along one continuation path per lam
model = MatrixCompletionTransducer(variant="mc1", lam="cv", mu="cv", lam_grid=(1.0, 10.0, 100.0),
                                   random_state=0).fit(X, Y)
labels = model.transduction_  # completed labels of every item
# the convention: completed labels are {0, 1}, like the observed ones
assert set(np.unique(labels)) <= {0, 1}, np.unique(labels)

hidden = Y == -1
missing = np.isnan(X)
label_acc = (labels[hidden] == Y_true[hidden]).mean()
feat_rmse = np.sqrt(np.mean((model.features_[missing] - X0[missing]) ** 2))
bayes = ((scores[hidden] > 0).astype(int) == Y_true[hidden]).mean()
print(f"chosen lam = {model.lam_:g}, mu = {model.mu_:.2g}; rank of the completed matrix "
      f"{model.rank_}")
print(f"accuracy on unobserved labels {label_acc:.1%} (the Bayes rule, which knows the "
      f"soft labels: {bayes:.1%})")
print(f"RMSE of imputed features {feat_rmse:.3f} (feature sd {X0.std():.2f})")

# %%
# The first 40 items: observed entries (grey = unobserved), the completed matrix, and the
# truth. Labels on the left, features on the right.

show = slice(0, 40)
fig, axes = plt.subplots(2, 3, figsize=(12, 6.5),
                         gridspec_kw={"height_ratios": [1, 3]}, sharex=True)
cmap = plt.get_cmap("viridis").copy()
cmap.set_bad("0.85")
vmax = np.abs(X_full).max()
panels = [
    ("observed labels", np.where(hidden, np.nan, Y).astype(float)),
    ("completed labels", labels.astype(float)),
    ("true labels", Y_true.astype(float)),
]
for ax, (title, M) in zip(axes[0], panels):
    ax.imshow(M[show].T, cmap=cmap, vmin=0, vmax=1, aspect="auto", interpolation="nearest")
    ax.set_title(title)
    ax.set_yticks(range(t), [f"label {k}" for k in range(t)])
fpanels = [("observed features", X), ("completed features", model.features_),
           ("noise-free features", X0)]
for ax, (title, M) in zip(axes[1], fpanels):
    ax.imshow(M[show].T, cmap=cmap, vmin=-vmax, vmax=vmax, aspect="auto",
              interpolation="nearest")
    ax.set_title(title)
    ax.set_xlabel("item")
axes[1, 0].set_ylabel("feature")
fig.suptitle(f"unobserved labels predicted with accuracy {label_acc:.0%}")
fig.tight_layout()
plt.show()
