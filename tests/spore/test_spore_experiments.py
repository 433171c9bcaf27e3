import numpy as np

from semisup.experiments import spore as exp


def test_draw_labeled_has_both_classes(rng):
    y = np.r_[np.ones(95), -np.ones(5)]
    for _ in range(20):
        lab = exp.draw_labeled(y, 0.05, rng)
        assert lab.size == 5 and set(y[lab]) == {-1.0, 1.0}


def test_cv_folds_are_stratified_and_disjoint(rng):
    y = np.r_[np.ones(10), -np.ones(10)]
    lab = np.arange(20)
    folds = exp.cv_folds(lab, y, 3, rng)
    assert len(folds) == 3
    held = np.concatenate([te for _, te in folds])
    np.testing.assert_array_equal(np.sort(held), lab)
    for tr, te in folds:
        assert not np.intersect1d(tr, te).size
        assert set(y[tr]) == {-1.0, 1.0}


def test_ties_go_to_the_larger_labelled_class():
    y = np.array([1.0, 1.0, -1.0, 1.0, -1.0])
    lab = np.array([0, 1, 2])
    acc, ties = exp.accuracy(np.array([1.0, 1.0, -1.0, 0.0, 0.0]), y, lab)
    assert acc == 50.0 and ties == 1.0


def test_demo_rows():
    rows = exp.demo_rows()
    assert {r["method"] for r in rows} == {"SPORE (T=5, 20 inner)", "N-Lap SVM",
                                           "MultiGraphSPORE (3 graphs)"}
    for r in rows:
        assert set(r) == {"method", "data", "metric", "score", "seconds"}
        assert 0.5 < r["score"] <= 1.0


def test_baseline_scores_match_the_estimator(rng):
    from semisup.baselines.graph_kernels import GraphKernelSVM, LaplacianSpectrum
    n = 40
    U = np.triu(rng.random((n, n)) < 0.2, 1)
    A = (U | U.T).astype(float)
    y = np.where(np.arange(n) < 20, 1.0, -1.0)
    lab = np.array([3, 7, 25, 31, 12])
    y_obs = np.full(n, -1)
    y_obs[lab] = (y[lab] > 0).astype(int)
    spec = LaplacianSpectrum(A, "nlap")
    s = exp.baseline_scores(spec, lab, y, 0.1, 1.0)
    m = GraphKernelSVM("nlap", c=0.1, C=1.0).fit(A, y_obs)
    np.testing.assert_allclose(s, m.decision_scores_, atol=1e-10)
