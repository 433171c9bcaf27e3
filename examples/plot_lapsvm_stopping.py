"""
=====================================================================
LapSVM: stopping criteria against PCG iterations
=====================================================================

Melacci & Belkin (2011, §4) show that the classical goal conditions of an optimiser — the
norm of the gradient, of the preconditioned gradient, or the decrease of the objective —
are hard to tune for LapSVM, while the error on the data stabilises long before the
optimiser converges. Here PCG runs without stopping for 300 iterations on the two-moons
data; the left panel shows the normalised criteria per iteration (from ``history_``), the
right panel the error on held-out test points of the classifier stopped after each number
of iterations (one fit with ``keep_path=True``; ``staged_predict`` yields every iterate). The vertical line is where the paper's *stability* check (PCG's default
``early_stopping="stability"``) stops. ``solver="pcg"`` is set: the default, ``"auto"``,
solves a problem this small directly.
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons

from semisup import LapSVM

# running PCG for a fixed number of iterations on purpose
warnings.filterwarnings("ignore", message="PCG reached max_iter")

X_all, y_all = make_moons(700, noise=0.1, random_state=1)
X, y = X_all[:400], y_all[:400]
X_test, y_test = X_all[400:], y_all[400:]
rng = np.random.default_rng(0)
y_train = np.full_like(y, -1)
for c in (0, 1):  # two labels per class
    y_train[rng.choice(np.flatnonzero(y == c), 2, replace=False)] = c

# solver="pcg" (the default, "auto", solves this small problem directly); a small gamma_A
# and a large gamma_I make PCG run long enough for the stopping rules to differ
params = dict(kernel_sigma=0.35, n_neighbors=10, gamma_A=1e-4, gamma_I=10.0, solver="pcg")
# one fit of 300 iterations, its path kept: staged_predict gives the classifier after each
full = LapSVM(**params, early_stopping=None, max_iter=300, keep_path=True).fit(X, y_train)
stopped = LapSVM(**params).fit(X, y_train)

test_err = [np.mean(pred != y_test) for pred in full.staged_predict(X_test)]
iters = np.arange(1, len(test_err) + 1)

# %%
# The criteria, each divided by its value at the first iteration.

fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4))
h = full.history_
for key, label in [("grad_norm", "gradient norm"), ("pgrad_norm", "preconditioned gradient"),
                   ("mixed_norm", "mixed product")]:
    v = np.asarray(h[key], dtype=float)
    ax0.semilogy(np.arange(1, len(v) + 1), v / v[0], label=label)
obj = np.asarray(h["obj"], dtype=float)
ax0.semilogy(np.arange(1, len(obj)), np.maximum(-np.diff(obj), 1e-16) / (obj[0] - obj[-1]),
             label="objective decrease")
for ax in (ax0, ax1):
    ax.axvline(stopped.n_iter_, color="k", ls="--", label="stability check stops")
    ax.set_xlabel("PCG iteration")
ax0.set_title("classical criteria (normalised)")
ax0.legend(fontsize=8)
ax1.semilogx(iters, test_err)
ax1.set_ylabel("test error")
ax1.set_title(f"test error; stability stop: {1 - stopped.score(X_test, y_test):.1%}")
ax1.legend(fontsize=8)
fig.tight_layout()
plt.show()
