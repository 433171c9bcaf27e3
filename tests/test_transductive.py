"""One-vs-rest inside the transductive graph SVMs (SPORE, MultiGraphSPORE, GraphKernelSVM)
and the one prediction rule they share (issue #30 items 3 and 7)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits, make_blobs
from sklearn.multiclass import OneVsRestClassifier

from semisup import SPORE, GraphKernelSVM, MultiGraphSPORE
from semisup._transductive import decide, ovr_labels, transduce
from semisup.linalg.svm_dual import sign_predictions

VIEWS = [slice(0, 2), slice(2, 4)]


def _make(name):
    if name == "SPORE":
        return SPORE(random_state=0, n_outer=3)
    if name == "MultiGraphSPORE":
        return MultiGraphSPORE(views=VIEWS, random_state=0, n_outer=3)
    return GraphKernelSVM()


def _blobs(n_classes=3, per_class=3, n=90, seed=0):
    X, y = make_blobs(n, n_features=4, centers=n_classes, cluster_std=1.5, random_state=seed)
    ys = np.full(n, -1)
    for c in range(n_classes):
        ys[np.flatnonzero(y == c)[:per_class]] = c
    return X, y, ys


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return est.fit(X, y)


NAMES = ["SPORE", "MultiGraphSPORE", "GraphKernelSVM"]


# ------------------------------------------------------------------------------------------
# the shared rule
def test_decide_binary_is_sign_predictions():
    rng = np.random.default_rng(0)
    for _ in range(20):
        scores = rng.choice([-1.0, 0.0, 0.5, 2.0], size=30)
        y = rng.choice([-1, 0, 1], size=30)
        y[:2] = [0, 1]
        _, labeled, signed = ovr_labels(y, 30, "t")
        got = decide(scores, labeled, signed)
        np.testing.assert_array_equal(
            got, (sign_predictions(scores, signed[:, 0], labeled) > 0).astype(int))


def test_decide_multiclass_ties_go_to_the_larger_labelled_class():
    y = np.array([0, 1, 1, 1, 2, 2, -1, -1, -1, -1])       # counts 1, 3, 2
    _, labeled, signed = ovr_labels(y, 10, "t")
    S = np.zeros((10, 3))
    S[6] = [0.5, 0.1, 0.2]         # a plain argmax
    S[7] = [0.3, 0.1, 0.3]         # tie 0 / 2: class 2 has more labels
    S[8] = [0.0, 0.0, 0.0]         # unreached: the largest class, 1
    S[9] = [0.7, 0.7, 0.0]         # tie 0 / 1: class 1
    np.testing.assert_array_equal(decide(S, labeled, signed)[6:], [0, 2, 1, 1])
    y2 = np.array([0, 0, 1, 1, 2, -1])                      # equal counts: the later class
    _, lab2, s2 = ovr_labels(y2, 6, "t")
    assert decide(np.zeros((6, 3)), lab2, s2)[5] == 1
    assert decide(np.tile([0.0, -1.0, 0.0], (6, 1)), lab2, s2)[5] == 0
    # labelled vertices keep their labels whatever their score
    labels = transduce(-S, np.array([10, 20, 30]), labeled, signed)
    np.testing.assert_array_equal(labels[:6], [10, 20, 20, 20, 30, 30])


# ------------------------------------------------------------------------------------------
# one-vs-rest inside the estimators
@pytest.mark.parametrize("name", NAMES)
def test_one_vs_rest_equals_each_binary_problem_fitted_by_hand(name):
    X, _, ys = _blobs()
    m = _fit(_make(name), X, ys)
    assert m.decision_scores_.shape == (90, 3)
    np.testing.assert_array_equal(m.classes_, [0, 1, 2])
    for k in range(3):
        yk = np.where(ys == -1, -1, (ys == k).astype(int))      # k against the rest
        b = _fit(_make(name), X, yk)
        np.testing.assert_allclose(m.decision_scores_[:, k], b.decision_scores_,
                                   rtol=1e-12, atol=1e-12)
        if name != "GraphKernelSVM":
            emb = m.embedding_[k]
            np.testing.assert_allclose(emb, b.embedding_, rtol=1e-12, atol=1e-12)
            assert m.n_iter_[k] == b.n_iter_
    # the labels: argmax of the scores, labelled vertices kept, never -1
    u = ys == -1
    np.testing.assert_array_equal(m.transduction_[u],
                                  m.classes_[np.argmax(m.decision_scores_[u], axis=1)])
    np.testing.assert_array_equal(m.transduction_[~u], ys[~u])
    np.testing.assert_array_equal(m.predict(X), m.transduction_)
    np.testing.assert_array_equal(m.decision_function(X), m.decision_scores_)


@pytest.mark.parametrize("name", NAMES)
def test_multiclass_blobs_are_labelled_well(name):
    X, y, ys = _blobs(n_classes=4, per_class=3, n=120, seed=3)
    m = _fit(_make(name), X, ys)
    u = ys == -1
    assert -1 not in m.classes_ and m.classes_.size == 4
    assert np.mean(m.transduction_[u] == y[u]) > 0.85


@pytest.mark.parametrize("name", ["SPORE", "GraphKernelSVM"])
def test_multiclass_digits(name):
    X, y = load_digits(return_X_y=True)
    keep = np.isin(y, (0, 1, 2, 3))
    X, y = X[keep][:240], y[keep][:240]
    rng = np.random.default_rng(0)
    ys = np.full(y.size, -1)
    for c in range(4):
        ys[rng.choice(np.flatnonzero(y == c), 5, replace=False)] = c
    m = _fit(SPORE(random_state=0) if name == "SPORE" else GraphKernelSVM(), X, ys)
    u = ys == -1
    assert np.mean(m.transduction_[u] == y[u]) > 0.9


@pytest.mark.parametrize("name", NAMES)
def test_string_labels_and_the_unlabelled_marker(name):
    X, y, ys = _blobs()
    names = np.array(["ant", "bee", "cat"])
    ystr = np.where(ys == -1, "-1", names[np.maximum(ys, 0)])
    m = _fit(_make(name), X, ystr)
    np.testing.assert_array_equal(m.classes_, names)
    assert "-1" not in set(m.transduction_)
    ref = _fit(_make(name), X, ys)
    np.testing.assert_array_equal(m.transduction_, names[ref.transduction_])


def test_sklearn_one_vs_rest_wrapper_is_the_trap_the_docs_name():
    """scikit-learn's wrapper reads -1 as a class (what the docstrings warn about); the
    estimator's own one-vs-rest does not."""
    X, y, ys = _blobs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wrapped = OneVsRestClassifier(GraphKernelSVM()).fit(X, ys)
    assert -1 in wrapped.classes_
    own = _fit(GraphKernelSVM(), X, ys)
    assert -1 not in own.transduction_
    for cls in (SPORE, MultiGraphSPORE, GraphKernelSVM):
        assert "OneVsRestClassifier" in cls.__doc__


def test_graph_kernel_svm_predict_follows_its_decision_on_ties():
    """#30 item 7: a component without a label scores exactly 0; predict is the shared
    rule on decision_function (ties to the larger labelled class), for 2 and 3 classes."""
    rng = np.random.default_rng(0)
    n = 40
    A = np.zeros((n, n))
    U = np.triu(rng.random((30, 30)) < 0.3, 1)
    A[:30, :30] = U | U.T
    A[30:, 30:] = 1 - np.eye(10)                            # a component with no label
    for labels in ([0, 1, 1], [0, 1, 2, 2], [5, 5, 7, 9]):
        y = np.full(n, -1)
        y[:len(labels)] = labels
        m = _fit(GraphKernelSVM(affinity="precomputed"), A, y)
        d = m.decision_function(A)
        np.testing.assert_array_equal(d[30:], 0.0)
        _, labeled, signed = ovr_labels(y, n, "t")
        u = y == -1
        np.testing.assert_array_equal(m.predict(A)[u], m.classes_[decide(d, labeled, signed)][u])
        counts = np.array([np.sum(np.asarray(labels) == c) for c in m.classes_])
        expected = m.classes_[np.flatnonzero(counts == counts.max())[-1]]
        np.testing.assert_array_equal(m.predict(A)[30:], expected)


def test_memory_check_counts_the_kept_kernels(monkeypatch):
    from semisup.spore import estimator as est
    seen = []
    monkeypatch.setattr(est, "check_memory", lambda nbytes, *a, **k: seen.append(nbytes))
    X, _, ys = _blobs()
    _fit(SPORE(n_outer=1, random_state=0), X, ys)
    _fit(SPORE(n_outer=1, random_state=0), X, np.where(ys == 2, -1, ys))
    assert seen[0] == pytest.approx(seen[-1] * (14 + 2) / 14)


@pytest.mark.parametrize("kernel", ["unlap", "nlap", "kscaling"])
@pytest.mark.parametrize("seed", [0, 2, 4])
def test_graph_kernel_svm_unreached_clusters_tie_exactly(kernel, seed):
    """#30 item 7: on a kNN graph with clusters no label reaches, the eigenbasis of the
    repeated eigenvalue 0 mixes the components and their scores were rounding noise
    (|score| ~ 1e-15, labels of either class at random, against the warning's "score 0,
    the class with more labeled vertices"); now exactly 0 and the larger class."""
    centers = [[0, 0], [10, 0], [0, 10], [10, 10], [20, 20]]
    X, y = make_blobs(100, centers=centers, cluster_std=0.5, random_state=seed)
    far = np.isin(y, (3, 4))
    for labels in ((0, 0, 1), (0, 1, 1, 2)):                   # majority: 0, then 1
        ys = np.full(100, -1)
        for c in labels:
            ys[np.flatnonzero((y == c) & (ys == -1))[0]] = c
        with pytest.warns(UserWarning, match="components without any labeled"):
            m = GraphKernelSVM(kernel=kernel, n_neighbors=5).fit(X, ys)
        np.testing.assert_array_equal(m.decision_function(X)[far], 0.0)
        np.testing.assert_array_equal(m.predict(X)[far], labels[1])


# ------------------------------------------------------------------------------------------
# one-vs-rest tasks in worker processes
@pytest.mark.parametrize("name", ["SPORE", "MultiGraphSPORE"])
def test_one_vs_rest_in_worker_processes_gives_the_tasks_run_in_turn(monkeypatch, name):
    """``n_jobs`` runs the tasks side by side (here from 10 vertices): with ``random_state``
    set, the scores, labels, kernels and per-task records of the tasks run one after the
    other, to the bit (each task runs under one BLAS thread in either place)."""
    from semisup.spore import estimator as est
    X, _, ys = _blobs()
    seq = _fit(_make(name).set_params(n_jobs=1), X, ys)
    monkeypatch.setattr(est, "OVR_JOBS_MIN_N", 10)
    used, real = [], est.one_vs_rest

    def spy(*args, **kwargs):
        used.append(kwargs["n_jobs"])
        return real(*args, **kwargs)

    monkeypatch.setattr(est, "one_vs_rest", spy)
    par = _fit(_make(name).set_params(n_jobs=2), X, ys)
    assert used == [2]                                   # else the test could not fail
    names = ["decision_scores_", "transduction_", "embedding_", "n_iter_", "best_iter_"]
    if name == "MultiGraphSPORE":
        names += ["weights_", "kernels_"]
    for attr in names:
        np.testing.assert_array_equal(getattr(par, attr), getattr(seq, attr), err_msg=attr)


def test_one_vs_rest_keeps_results_in_task_order_from_workers():
    from semisup._transductive import one_vs_rest
    signed = np.where(np.eye(6, 4) > 0, 1.0, -1.0)
    kept = []

    def solve(s):
        return s * 2.0, int(np.argmax(s))

    for n_jobs in (1, 3):
        kept.clear()
        results, scores = one_vs_rest(solve, signed, keep=kept.append, n_jobs=n_jobs)
        assert results == kept == [0, 1, 2, 3]
        np.testing.assert_array_equal(scores, 2.0 * signed)


def test_ovr_jobs_rule(monkeypatch):
    from threadpoolctl import threadpool_limits
    from semisup.spore.estimator import OVR_JOBS_MIN_N, _dense_bytes, _ovr_jobs
    from semisup.spore.iip import ONE_THREAD_MAX_N
    monkeypatch.delenv("SEMISUP_MAX_MEMORY", raising=False)
    f64, n = np.float64, 1000
    assert _ovr_jobs(4, n, 10, 1, f64) == 4
    assert _ovr_jobs(4, n, 3, 1, f64) == 3                # no more workers than tasks
    assert _ovr_jobs(4, n, 1, 1, f64) == 1                # binary: one task
    assert _ovr_jobs(1, n, 10, 1, f64) == 1
    assert _ovr_jobs(4, OVR_JOBS_MIN_N - 1, 10, 1, f64) == 1
    assert _ovr_jobs(4, ONE_THREAD_MAX_N + 1, 10, 1, np.float32) == 1   # BLAS threads there
    with threadpool_limits(1, user_api="blas"):           # None follows the caller's limit
        assert _ovr_jobs(None, n, 10, 1, f64) == 1
    # as many as the memory holds, the sequential fit's need counted as before
    assert _dense_bytes(n, 1, f64, 10) == (14 + 9) * n * n * 8
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", str(_dense_bytes(n, 1, f64, 10, 3)))
    assert _ovr_jobs(4, n, 10, 1, f64) == 3
    monkeypatch.setenv("SEMISUP_MAX_MEMORY", str(_dense_bytes(n, 1, f64, 10, 2) - 1))
    assert _ovr_jobs(4, n, 10, 1, f64) == 1
