"""Smoke test of an installed semisup (run by `make wheel-check` outside the checkout).

Imports every public name, fits each estimator family once on a small problem and checks
the answers, so a wheel missing a module, a data file or a dependency fails here.
"""

import numpy as np
from sklearn.datasets import load_digits, make_moons

import semisup
from semisup import HarmonicFunction, LapRLS, LaplacianAssignment

for name in semisup.__all__:
    getattr(semisup, name)

X, y = make_moons(300, noise=0.08, random_state=0)
y_train = np.full_like(y, -1)
y_train[[np.argmax(y == 0), np.argmax(y == 1)]] = [0, 1]
unl = y_train == -1
for est in (HarmonicFunction(), LapRLS(), LaplacianAssignment()):
    acc = float(np.mean(est.fit(X, y_train).transduction_[unl] == y[unl]))
    assert acc > 0.9, (type(est).__name__, acc)
    print(f"{type(est).__name__:22s} two moons, 1 label per class: {acc:.3f}")

digits = load_digits()
rng = np.random.default_rng(0)
yd = np.full(digits.target.shape, -1)
for c in range(10):
    idx = rng.choice(np.flatnonzero(digits.target == c), 10, replace=False)
    yd[idx] = c
acc = float(np.mean(HarmonicFunction().fit(digits.data, yd).transduction_[yd == -1]
                    == digits.target[yd == -1]))
assert acc > 0.9, acc
print(f"HarmonicFunction       digits, 10 labels per class: {acc:.3f}")
print("smoke test passed:", semisup.__version__)
