"""Fuzzing every public estimator and graph/kernel function with bad and edge input.

For each draw the call must either raise a clear ``ValueError``/``TypeError``/``MemoryError``
(never an error from deep inside numpy or scipy: ``LinAlgError``, ``IndexError``,
``AttributeError``, ``ZeroDivisionError``, ``FloatingPointError``...) or return a finite result
that satisfies the method's invariants (labels from ``classes_``, probabilities and
assignments on the simplex); the inputs are never changed, and two fits agree bit for bit.
Numpy's RuntimeWarnings raised in semisup's modules are errors (pyproject's filterwarnings),
so a silent overflow fails too.

The default profile keeps the suite within about a minute; ``--runslow`` runs a larger one.
"""

from __future__ import annotations

import copy
import inspect
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from test_common import CASES, _fit_input

from semisup.graph import knn_graph, laplacian
from semisup.kernels import kernel_matrix

#: any numpy RuntimeWarning (overflow, invalid value) is a silent wrong result, wherever
#: numpy reports it from (pyproject's filter covers warnings attributed to semisup only)
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

FAST = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SLOW = settings(max_examples=300, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: errors a user may see: they say what is wrong with the input or parameter
CLEAR = (ValueError, TypeError, MemoryError)
#: errors that come from deep inside numpy/scipy (LinAlgError is a ValueError subclass)
RAW = (np.linalg.LinAlgError, IndexError, AttributeError, ZeroDivisionError,
       FloatingPointError, KeyError, OverflowError)

SCALES = [1e-300, 1e-150, 1e-8, 1.0, 1e8, 1e150, 1e300]


@st.composite
def points(draw, min_n=1, max_n=24):
    n = draw(st.integers(min_n, max_n))
    d = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * draw(st.sampled_from(SCALES))
    kind = draw(st.sampled_from(["plain", "duplicates", "object", "int", "constant"]))
    if kind == "duplicates" and n > 1:
        X[n // 2:] = X[0]
    elif kind == "object":
        X = X.astype(object)
    elif kind == "int":
        X = np.round(X).clip(-1e6, 1e6).astype(np.int64)
    elif kind == "constant":
        X[:] = 1.0
    return X


@st.composite
def labels(draw, n, regression=False):
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    if regression:
        y = rng.normal(size=n) * draw(st.sampled_from([1.0, 1e100]))
        y[rng.random(n) < draw(st.floats(0, 1))] = np.nan
        return y
    n_classes = draw(st.integers(1, 3))
    y = rng.integers(0, n_classes, size=n)
    y[rng.random(n) < draw(st.floats(0, 1))] = -1
    return y


def _check_invariants(est, n):
    for attr in ("label_distributions_", "assignments_"):
        if hasattr(est, attr):
            P = np.asarray(getattr(est, attr))
            assert np.isfinite(P).all(), attr
            assert P.min() >= -1e-12 and P.max() <= 1 + 1e-12, attr
            np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-8, err_msg=attr)
    if hasattr(est, "transduction_"):
        t = np.asarray(est.transduction_)
        assert t.shape[0] == n
        assert set(np.unique(t)) <= set(np.asarray(est.classes_).tolist())
    for attr in ("decision_scores_", "alpha_", "coef_", "intercept_"):
        if hasattr(est, attr):
            assert np.isfinite(np.asarray(getattr(est, attr), dtype=float)).all(), attr


def _run(fn):
    """Call ``fn``; return its value, or None after a clear error. Raw errors propagate."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)
        try:
            return fn()
        except RAW:
            raise
        except CLEAR as exc:
            assert str(exc), "an error without a message"
            return None


def _fuzz_estimator(case, data):
    X = data.draw(points())
    y = data.draw(labels(X.shape[0], regression=case.kind == "regressor"))
    X0, y0 = copy.deepcopy(X), y.copy()
    est = _run(lambda: case.make().fit(_fit_input(case, X), y))
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    if est is None:
        return
    _check_invariants(est, X.shape[0])
    again = _run(lambda: case.make().fit(_fit_input(case, X), y))
    for attr in ("transduction_", "label_distributions_", "assignments_", "decision_scores_",
                 "coef_"):
        if hasattr(est, attr):
            np.testing.assert_array_equal(getattr(est, attr), getattr(again, attr))
    if case.kind in ("semi", "supervised-clf", "regressor"):
        pred = _run(lambda: est.predict(X))
        if pred is not None and case.kind != "regressor":
            assert set(np.unique(pred)) <= set(np.asarray(est.classes_).tolist())
        if pred is not None and case.kind == "regressor":
            assert np.isfinite(pred).all()
        if hasattr(est, "predict_proba"):
            P = _run(lambda: est.predict_proba(X))
            if P is not None:
                assert np.isfinite(P).all()
                np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-8)


IDS = [c.name for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
@FAST
@given(data=st.data())
def test_fuzz_estimator(case, data):
    _fuzz_estimator(case, data)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=IDS)
@SLOW
@given(data=st.data())
def test_fuzz_estimator_large(case, data):
    _fuzz_estimator(case, data)


# ------------------------------------------------------------------------------------------
# graphs and kernels
@st.composite
def affinities(draw):
    """Sparse symmetric affinities with explicit zeros, unsorted indices, extreme weights."""
    n = draw(st.integers(1, 15))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    A = rng.random((n, n)) * (rng.random((n, n)) < 0.4)
    A = np.triu(A, 1)
    A = A + A.T
    A *= draw(st.sampled_from(SCALES))
    W = sp.coo_matrix(A)
    rows, cols, vals = W.row, W.col, W.data
    if draw(st.booleans()):   # explicit zeros
        k = min(3, n)
        rows = np.r_[rows, np.arange(k)]
        cols = np.r_[cols, (np.arange(k) + 1) % max(n, 1)]
        vals = np.r_[vals, np.zeros(k)]
        rows, cols = np.r_[rows, cols[-k:]], np.r_[cols, rows[-k:]]
        vals = np.r_[vals, np.zeros(k)]
    perm = rng.permutation(rows.size)
    W = sp.csr_matrix((vals[perm], (rows[perm], cols[perm])), shape=(n, n))
    if draw(st.booleans()):   # unsorted indices: reverse each row's entries
        W.sort_indices()
        idx, dat = W.indices.copy(), W.data.copy()
        for i in range(n):
            a, b = W.indptr[i], W.indptr[i + 1]
            idx[a:b], dat[a:b] = idx[a:b][::-1], dat[a:b][::-1]
        W = sp.csr_matrix((dat, idx, W.indptr.copy()), shape=(n, n))
    return W


def _fuzz_graph_functions(data):
    X = data.draw(points())
    k = data.draw(st.integers(1, 12))
    weights = data.draw(st.sampled_from(["binary", "heat", "distance"]))
    X0 = copy.deepcopy(X)
    W = _run(lambda: knn_graph(X, k, weights=weights))
    np.testing.assert_array_equal(X, X0)
    if W is not None:
        assert np.isfinite(W.data).all() and (W.data >= 0).all()
        assert abs(W - W.T).max() == 0 if W.nnz else True
    kern = data.draw(st.sampled_from(["rbf", "linear", "polynomial"]))
    K = _run(lambda: kernel_matrix(X, kernel=kern, sigma=data.draw(
        st.sampled_from([1e-3, 1.0, 1e3]))))
    if K is not None:
        assert np.isfinite(K).all()
    A = data.draw(affinities())
    snap = (A.data.copy(), A.indices.copy(), A.indptr.copy())
    p = data.draw(st.integers(1, 3))
    kind = data.draw(st.sampled_from(["unnormalized", "normalized"]))
    L = _run(lambda: laplacian(A, kind=kind, power=p))
    np.testing.assert_array_equal(A.data, snap[0])
    np.testing.assert_array_equal(A.indices, snap[1])
    np.testing.assert_array_equal(A.indptr, snap[2])
    if L is not None:
        assert np.isfinite(L.data).all()


@FAST
@given(data=st.data())
def test_fuzz_graph_and_kernel_functions(data):
    _fuzz_graph_functions(data)


@pytest.mark.slow
@SLOW
@given(data=st.data())
def test_fuzz_graph_and_kernel_functions_large(data):
    _fuzz_graph_functions(data)


def _fuzz_precomputed(case, data):
    A = data.draw(affinities())
    n = A.shape[0]
    y = data.draw(labels(n))
    snap = (A.data.copy(), A.indices.copy(), A.indptr.copy(), y.copy())
    Xf = [A, A] if case.multiview else A
    make = (lambda: case.make().set_params(views=None)) if case.multiview else case.make
    est = _run(lambda: make().set_params(affinity="precomputed").fit(Xf, y))
    np.testing.assert_array_equal(A.data, snap[0])
    np.testing.assert_array_equal(A.indices, snap[1])
    np.testing.assert_array_equal(A.indptr, snap[2])
    np.testing.assert_array_equal(y, snap[3])
    if est is not None:
        _check_invariants(est, n)


GRAPH = [c for c in CASES if c.graph]


@pytest.mark.parametrize("case", GRAPH, ids=[c.name for c in GRAPH])
@FAST
@given(data=st.data())
def test_fuzz_precomputed_affinity(case, data):
    _fuzz_precomputed(case, data)


# ------------------------------------------------------------------------------------------
# the edges of float64, one process apart: a crash is reported as a failure of its case
#: subnormal and near-overflow scales of X and of a precomputed W (issue #30 item 9: X * 1e-310
#: aborted the process with "double free or corruption" in compiled code)
EXTREME_SCALES = (1e-310, 1e300)


def _extreme_case(name, what, scale):
    """Fit estimator ``name`` on blobs (``what="X"``) or their heat kNN graph
    (``what="W"``, precomputed) times ``scale``; a clear error is fine, a raw one or a
    broken invariant is not. Returns a one-word outcome."""
    case = next(c for c in CASES if c.name == name)
    X, _, y = case.data()
    if what == "X":
        Xf = _fit_input(case, np.asarray(X) * scale)
        make = case.make
    else:
        W = knn_graph(X, 5, weights="heat") * scale
        Xf = [W, W] if case.multiview else W
        make = ((lambda: case.make().set_params(views=None, affinity="precomputed"))
                if case.multiview else (lambda: case.make().set_params(affinity="precomputed")))
        if "W" in inspect.signature(case.make().fit).parameters:   # LapSVM, LapRLS
            est = _run(lambda: make().fit(X, y, W=W))
            return "refused" if est is None else (_check_invariants(est, len(y)) or "fitted")
    est = _run(lambda: make().fit(Xf, y))
    if est is None:
        return "refused"
    _check_invariants(est, len(y))
    return "fitted"


def _extreme_functions(scale):
    X = np.random.default_rng(0).normal(size=(20, 2))
    W0 = knn_graph(X, 3)
    W = knn_graph(X * scale, 3)
    assert abs(W - W0).max() == 0       # binary weights: the same graph at any scale
    assert np.isfinite(kernel_matrix(X * scale, kernel="rbf")).all()
    assert np.isfinite(laplacian(knn_graph(X, 3, weights="heat") * scale).data).all()
    return "fitted"


_EXTREME_SCRIPT = """
import sys, traceback, warnings
warnings.simplefilter("error", RuntimeWarning)
sys.path.insert(0, {tests!r})
import test_fuzz as F
for item in {items!r}:
    print("START", *item, flush=True)
    try:
        out = F._extreme_functions(item[2]) if item[0] == "functions" else F._extreme_case(*item)
    except BaseException as exc:
        out = "FAILED " + type(exc).__name__ + ": " + str(exc).replace(chr(10), " ")[:300]
    print("DONE", *item, out, flush=True)
"""


def _extreme_items():
    items = [("functions", "-", s) for s in EXTREME_SCALES]
    for case in CASES:
        for s in EXTREME_SCALES:
            items.append((case.name, "X", s))
            if case.graph:
                items.append((case.name, "W", s))
    return items


def test_fuzz_extreme_scales_in_a_separate_process():
    """Every public estimator on X and on a precomputed W at 1e-310 and 1e300, and the
    graph and kernel functions, in one child process: the child's death (abort,
    segfault) is reported with the case it was running."""
    import os
    import subprocess
    import sys

    import semisup
    tests = os.path.dirname(os.path.abspath(__file__))
    src = os.path.dirname(os.path.dirname(semisup.__file__))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, tests,
                                                        os.environ.get("PYTHONPATH", "")])}
    items = _extreme_items()
    proc = subprocess.run([sys.executable, "-c", _EXTREME_SCRIPT.format(tests=tests,
                                                                         items=items)],
                          capture_output=True, text=True, env=env, timeout=900)
    lines = proc.stdout.splitlines()
    started = [ln for ln in lines if ln.startswith("START")]
    if proc.returncode != 0:
        pytest.fail(f"the process died (exit {proc.returncode}) during "
                    f"{started[-1] if started else 'start-up'}: {proc.stderr[-1500:]}")
    failed = [ln for ln in lines if ln.startswith("DONE") and " FAILED " in ln]
    assert not failed, "\n".join(failed)
    assert sum(ln.startswith("DONE") for ln in lines) == len(items)
