"""
=====================================================================
LapSVM decision boundaries after k PCG iterations
=====================================================================

:class:`~semisup.LapSVM` trained in the primal by preconditioned conjugate gradient (PCG,
Melacci & Belkin 2011, Algorithm 1). With one label per class on the two-moons data, the
decision boundary after a few PCG iterations already follows the moons: the graph term
:math:`\\gamma_I f^\\top L f` spreads the two labels along the data. ``max_iter=k`` with
``early_stopping=None`` stops PCG (``solver="pcg"``) after exactly ``k`` iterations; the last
panel is PCG's default rule, the paper's *stability* check, which stops when fewer than 1.5 % of the unlabelled
points change sign between checks.
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons

from semisup import LapSVM

# stopping PCG after k iterations on purpose: its ConvergenceWarning says so
warnings.filterwarnings("ignore", message="PCG reached max_iter")

X, y = make_moons(200, noise=0.1, random_state=0)
y_train = np.full_like(y, -1)  # -1 marks an unlabelled point
y_train[[np.argmax(y == 0), np.argmax(y == 1)]] = [0, 1]  # one label per class

# solver="pcg": the default, solver="auto", solves this small problem directly (Newton);
# the kernel width and gamma_A are hand-picked for the picture (see the user guide's
# "Choosing gamma_A and gamma_I"); the defaults classify the moons as well
params = dict(kernel_sigma=0.35, n_neighbors=6, gamma_A=1e-2, gamma_I=1.0, solver="pcg")
xx, yy = np.meshgrid(np.linspace(-1.6, 2.6, 160), np.linspace(-1.1, 1.6, 110))
grid = np.c_[xx.ravel(), yy.ravel()]

fig, axes = plt.subplots(2, 3, figsize=(12, 6.5), sharex=True, sharey=True)
for ax, k in zip(axes.flat, [1, 2, 4, 8, 16, None]):
    if k is None:
        clf = LapSVM(**params).fit(X, y_train)  # early_stopping="stability"
        title = f"stability check: stopped at {clf.n_iter_}"
    else:
        clf = LapSVM(**params, early_stopping=None, max_iter=k).fit(X, y_train)
        title = f"{k} PCG iteration{'s' if k > 1 else ''}"
    f = clf.decision_function(grid).reshape(xx.shape)
    ax.contourf(xx, yy, f, levels=20, cmap="coolwarm", alpha=0.6)
    ax.contour(xx, yy, f, levels=[0], colors="k", linewidths=2)
    ax.scatter(X[:, 0], X[:, 1], c=y, cmap="coolwarm", s=10, edgecolors="none")
    lab = y_train != -1
    ax.scatter(X[lab, 0], X[lab, 1], c="gold", marker="*", s=300, edgecolors="k")
    acc = (clf.transduction_[~lab] == y[~lab]).mean()
    ax.set_title(f"{title}\naccuracy on unlabelled: {acc:.1%}")
fig.suptitle("LapSVM (two labels, stars): decision function f and boundary f = 0")
fig.tight_layout()
plt.show()
