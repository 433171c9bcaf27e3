"""
=====================================================================
Clustered features: regression weights that share a few values
=====================================================================

:class:`~semisup.ClusteredRegressor` with ``cluster="features"`` (Roulet et al. 2016)
constrains the weight vector to take at most ``n_clusters`` distinct values: features are
grouped, and every feature of a group has the same effect. The true weights here take the
values -2, 0, 1 and 3 on 60 features in no particular order; with 80 noisy samples ridge
regression recovers them blurred, while projected gradient with the exact 1-D k-means
projection recovers the four groups.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import Ridge

from semisup import ClusteredRegressor

rng = np.random.default_rng(0)
n, d = 80, 60
values = np.array([-2.0, 0.0, 1.0, 3.0])
groups = rng.integers(0, 4, d)
w_true = values[groups]
X = rng.normal(size=(n, d))
y = X @ w_true + 0.5 * rng.normal(size=n)

ridge = Ridge(alpha=1.0).fit(X, y)
clus = ClusteredRegressor(n_clusters=4, alpha=1e-3, random_state=0).fit(X, y)

order = np.argsort(w_true, kind="stable")
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [2, 1]})
ax0.plot(w_true[order], "k-", lw=3, alpha=0.4, label="true weights")
ax0.plot(ridge.coef_[order], "o", ms=4, label="ridge")
ax0.plot(clus.coef_[order], "s", ms=4, label="ClusteredRegressor, Q = 4")
ax0.set_xlabel("feature (sorted by true weight)")
ax0.set_ylabel("weight")
ax0.legend()
ax0.set_title("learned weights")

# the confusion between true groups and learned clusters
M = np.zeros((4, 4), int)
for g, c in zip(groups, clus.cluster_labels_):
    M[g, c] += 1
ax1.imshow(M, cmap="Blues")
for (i, j), v in np.ndenumerate(M):
    ax1.text(j, i, v, ha="center", va="center")
ax1.set_xticks(range(4), [f"{v:.2f}" for v in clus.cluster_values_])
ax1.set_yticks(range(4), [f"{v:g}" for v in values])
ax1.set_xlabel("learned cluster (its value)")
ax1.set_ylabel("true value")
ax1.set_title("features per group")
fig.tight_layout()
plt.show()

print("learned values:", np.round(clus.cluster_values_, 2))
print("weight error: ridge %.3f, clustered %.3f" % (np.linalg.norm(ridge.coef_ - w_true),
                                                      np.linalg.norm(clus.coef_ - w_true)))
