"""Goal conditions for the primal PCG (Melacci & Belkin 2011, §4, Algorithms 2–3).

Data-based early stopping (the paper's proposal), checked every ``theta`` iterations with
``theta = max(1, floor(sqrt(n)/2 + 0.5))``:

* :class:`StabilityCheck` (Alg. 2): stop when fewer than ``eta`` (1.5 %) of the unlabelled
  training points changed their decision since the previous check.
* :class:`ValidationCheck` (Alg. 3): stop unless the error on a labelled validation set
  dropped by at least ``eta_V = 1/|V|`` since the previous check.
* :class:`MixedCheck`: stop only when both hold at the same check.

Classical criteria (compared against in the paper; hard to tune), each normalised by its value
at ``t = 0``: :class:`GradientNormCheck` (``||grad||``, ``||ghat||`` or ``sqrt(ghat^T grad)``)
and :class:`ObjectiveDecreaseCheck` (absolute decrease ``obj_prev - obj``, as lapsvmp).

A rule acts on a group of one-vs-all columns (``columns=None``: all of them). With one
column the decision is ``sign(f)`` (``sign(0) = +1``); with several it is the joint
one-vs-all decision ``argmax_c f_c``, which is the "joint check across the binary problems"
the paper suggests for COIL20. Every rule records ``history`` as ``(t, value)`` pairs so that
the paper's figures can be drawn.

On a GPU (PCG's arrays in CuPy) the data-based rules copy ``f`` (and the validation scores)
to the host at their check iterations only; the classical ones read the ``c``-vectors PCG
already brings to the host.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..linalg.xp import to_host

__all__ = [
    "check_interval",
    "Iterate",
    "StoppingRule",
    "StabilityCheck",
    "ValidationCheck",
    "MixedCheck",
    "GradientNormCheck",
    "ObjectiveDecreaseCheck",
    "make_rule",
    "RULES",
]

#: names accepted by :func:`make_rule` (and by the estimators' ``early_stopping``)
RULES = ("stability", "validation", "mixed", "grad", "pgrad", "mixed_grad", "obj")


def check_interval(n: int) -> int:
    """``theta = round(sqrt(n) / 2)`` with MATLAB's round-half-up, at least 1."""
    return max(1, int(math.floor(math.sqrt(n) / 2.0 + 0.5)))


@dataclass
class Iterate:
    """What a rule may look at after PCG iteration ``t`` (arrays are n x c / c-vectors).

    ``f_val`` is a callable returning the validation scores (|V| x c) so that the
    ``O(|V| n)`` product is only paid at the iterations where a validation check runs.
    ``F`` and ``f_val``'s scores are in PCG's array module (numpy, or CuPy on a GPU), the
    ``c``-vectors on the host.
    """

    t: int
    F: np.ndarray
    obj: np.ndarray
    grad_sq: np.ndarray
    ghat_sq: np.ndarray
    mixed_sq: np.ndarray
    f_val: object = None


def _decision(F: np.ndarray) -> np.ndarray:
    if F.shape[1] == 1:
        return np.where(F[:, 0] >= 0, 1, -1)
    return np.argmax(F, axis=1)


class StoppingRule:
    """Base class. Subclasses implement :meth:`_check`; ``columns`` selects the group."""

    name = "rule"

    def __init__(self, columns=None, every: int | None = None):
        self.columns = None if columns is None else np.atleast_1d(np.asarray(columns))
        self.every = every
        self.history: list[tuple[int, float]] = []

    def reset(self, n: int) -> None:
        """Prepare for a new run on ``n`` training points."""
        self.theta = self.every if self.every is not None else check_interval(n)
        self.history = []
        self._reset()

    def _reset(self) -> None:
        pass

    def _cols(self, A):
        return A if self.columns is None else A[..., self.columns]

    def __call__(self, it: Iterate) -> bool:
        """Record the criterion at iteration ``it.t`` and say whether to stop."""
        raise NotImplementedError


class _PeriodicRule(StoppingRule):
    def __call__(self, it: Iterate) -> bool:
        if it.t == 0 or it.t % self.theta:
            return False
        return self._check(it)


class StabilityCheck(_PeriodicRule):
    """Alg. 2: stop when the fraction of unlabelled decisions that changed is below ``eta``.

    The statistic is the flip *fraction* (lapsvmp), not the paper's doubled L1 count.
    Cost O(u) per check: ``f`` on the training points is maintained by PCG.
    """

    name = "stability"

    def __init__(self, unlabeled, eta: float = 0.015, columns=None, every=None):
        super().__init__(columns, every)
        self.unlabeled = np.asarray(unlabeled, dtype=bool)
        if not self.unlabeled.any():
            raise ValueError("the stability check needs at least one unlabelled point.")
        self.eta = float(eta)

    def _reset(self):
        self.prev = None

    def _check(self, it):
        d = _decision(self._cols(to_host(it.F))[self.unlabeled])
        # previous decisions start at "none", so the first check never stops
        changed = 1.0 if self.prev is None else float(np.mean(d != self.prev))
        self.history.append((it.t, changed))
        stop = changed < self.eta
        if not stop:
            self.prev = d
        return stop


class ValidationCheck(_PeriodicRule):
    """Alg. 3: stop unless the validation error improved by ``eta`` (default ``1/|V|``).

    ``Y_val`` is the |V| x c matrix of one-vs-all targets (+1 / -1); the error of a group of
    several columns is the one-vs-all (argmax) error.
    """

    name = "validation"

    def __init__(self, Y_val, eta: float | None = None, columns=None, every=None):
        super().__init__(columns, every)
        Y_val = np.asarray(Y_val, dtype=np.float64)
        self.Y_val = Y_val[:, None] if Y_val.ndim == 1 else Y_val
        if self.Y_val.shape[0] == 0:
            raise ValueError("the validation check needs at least one validation point.")
        self.eta = 1.0 / self.Y_val.shape[0] if eta is None else float(eta)

    def _reset(self):
        self.prev = 1.0

    def _error(self, it) -> float:
        Fv = self._cols(to_host(it.f_val()))
        Yv = self._cols(self.Y_val)
        return float(np.mean(_decision(Fv) != _decision(Yv)))

    def _check(self, it):
        err = self._error(it)
        self.history.append((it.t, err))
        stop = err > self.prev - self.eta
        if not stop:
            self.prev = err
        return stop


class MixedCheck(_PeriodicRule):
    """Stop only when the stability and the validation conditions hold at the same check.

    Both "previous" values are updated at every check that does not stop (lapsvmp
    ``CgStopType=3``).
    """

    name = "mixed"

    def __init__(self, unlabeled, Y_val, eta: float = 0.015, eta_val: float | None = None,
                 columns=None, every=None):
        super().__init__(columns, every)
        self.stability = StabilityCheck(unlabeled, eta, columns, every)
        self.validation = ValidationCheck(Y_val, eta_val, columns, every)

    def reset(self, n):
        super().reset(n)
        self.stability.reset(n)
        self.validation.reset(n)
        self.stability.theta = self.validation.theta = self.theta

    def _check(self, it):
        d = _decision(self._cols(to_host(it.F))[self.stability.unlabeled])
        prev = self.stability.prev
        changed = 1.0 if prev is None else float(np.mean(d != prev))
        err = self.validation._error(it)
        self.stability.history.append((it.t, changed))
        self.validation.history.append((it.t, err))
        stop = changed < self.stability.eta and err > self.validation.prev - self.validation.eta
        self.history.append((it.t, float(stop)))
        if not stop:
            self.stability.prev, self.validation.prev = d, err
        return stop


class GradientNormCheck(StoppingRule):
    """Classical rule: ``norm_t / norm_0 < tol`` for ``||grad||`` (``kind="grad"``),
    ``||ghat||`` (``"pgrad"``) or ``sqrt(ghat^T grad)`` (``"mixed_grad"``); checked every
    iteration (lapsvmp default ``tol = 1e-8``)."""

    def __init__(self, kind: str = "grad", tol: float = 1e-8, columns=None, every=1):
        if kind not in ("grad", "pgrad", "mixed_grad"):
            raise ValueError(f"kind must be 'grad', 'pgrad' or 'mixed_grad', got {kind!r}.")
        super().__init__(columns, every)
        self.kind, self.tol, self.name = kind, float(tol), kind

    def _reset(self):
        self.ref = None

    def __call__(self, it):
        sq = {"grad": it.grad_sq, "pgrad": it.ghat_sq, "mixed_grad": it.mixed_sq}[self.kind]
        val = math.sqrt(max(float(np.sum(self._cols(sq))), 0.0))
        if self.ref is None:
            self.ref = val if val > 0 else 1.0
        rel = val / self.ref
        self.history.append((it.t, rel))
        return it.t > 0 and it.t % self.theta == 0 and rel < self.tol


class ObjectiveDecreaseCheck(StoppingRule):
    """Classical rule: stop when ``obj_{t-1} - obj_t < tol`` (lapsvmp: absolute, ``1e-6``)."""

    name = "obj"

    def __init__(self, tol: float = 1e-6, columns=None, every=1):
        super().__init__(columns, every)
        self.tol = float(tol)

    def _reset(self):
        self.prev = None

    def __call__(self, it):
        val = float(np.sum(self._cols(it.obj)))
        dec = np.inf if self.prev is None else self.prev - val
        self.prev = val
        self.history.append((it.t, val))
        return it.t > 0 and it.t % self.theta == 0 and dec < self.tol


def make_rule(name: str, *, unlabeled=None, Y_val=None, tol: float | None = None,
              eta: float = 0.015, columns=None, every: int | None = None) -> StoppingRule:
    """Build a rule by name (one of :data:`RULES`).

    ``tol`` is the threshold of the classical rules (defaults 1e-8 for the norms, 1e-6 for
    the objective); ``eta`` that of the stability check.
    """
    if name == "stability":
        return StabilityCheck(unlabeled, eta, columns, every)
    if name in ("validation", "mixed"):
        if Y_val is None:
            raise ValueError(f"early_stopping={name!r} needs a validation set "
                             "(fit(..., X_val=..., y_val=...)).")
        if name == "validation":
            return ValidationCheck(Y_val, None, columns, every)
        return MixedCheck(unlabeled, Y_val, eta, None, columns, every)
    if name in ("grad", "pgrad", "mixed_grad"):
        return GradientNormCheck(name, 1e-8 if tol is None else tol, columns, every or 1)
    if name == "obj":
        return ObjectiveDecreaseCheck(1e-6 if tol is None else tol, columns, every or 1)
    raise ValueError(f"unknown stopping rule {name!r}; use one of {RULES}.")
