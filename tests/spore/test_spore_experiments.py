import numpy as np
import pytest

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
    assert not hasattr(exp, "predict_signed")   # the estimators' rule, not a copy of it


@pytest.mark.filterwarnings("ignore:.*no labeled neighbour")  # a sparse graph on purpose
def test_the_protocol_and_the_estimators_share_one_prediction_rule(rng):
    """Exact-zero scores (a component without labels) go to the larger labelled class in
    the reproductions and in the estimators alike."""
    from semisup.baselines.graph_kernels import GraphKernelSVM
    from semisup.spore import SPORE
    n = 24
    U = np.triu(rng.random((n, n)) < 0.5, 1)
    A = (U | U.T).astype(float)
    A[20:, :20] = A[:20, 20:] = 0.0                   # vertices 20..23: no label reaches them
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    lab = np.array([0, 2, 4, 1])                     # three +1, one -1
    y_obs = np.full(n, -1)
    y_obs[lab] = (y[lab] > 0).astype(int)
    for model in (SPORE(n_outer=2, affinity="precomputed"),
                  GraphKernelSVM(kernel="nlap", affinity="precomputed")):
        with pytest.warns(UserWarning, match="4 unlabeled vertex"):
            model.fit(A, y_obs)
        unl = np.setdiff1d(np.arange(n), lab)
        acc, _ = exp.accuracy(model.decision_scores_, y, lab)
        assert acc == pytest.approx(100 * np.mean(
            np.where(model.transduction_ == 1, 1.0, -1.0)[unl] == y[unl]))
        np.testing.assert_array_equal(model.transduction_[20:], 1)


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
    m = GraphKernelSVM(kernel="nlap", c=0.1, C=1.0, affinity="precomputed").fit(A, y_obs)
    np.testing.assert_allclose(s, m.decision_scores_, atol=1e-10)


def test_draw_rng_depends_only_on_its_arguments():
    a = exp.draw_rng(0, "1", "heart", 2).random(3)
    np.testing.assert_array_equal(a, exp.draw_rng(0, "1", "heart", 2).random(3))
    for other in (exp.draw_rng(1, "1", "heart", 2), exp.draw_rng(0, "2", "heart", 2),
                  exp.draw_rng(0, "1", "sonar", 2), exp.draw_rng(0, "1", "heart", 1),
                  exp.draw_rng(0, "1", "heart")):
        assert not np.array_equal(a, other.random(3))
    assert exp.draw_key("1", "heart", 0, 0, True) == f"t1_heart_d0_s0_quick-{exp.PROTOCOL}"


def test_reproduce_resumes_from_the_draw_cache(tmp_path, monkeypatch):
    import argparse
    from shared_data import require_dataset_dir
    require_dataset_dir("heart")
    parser = argparse.ArgumentParser()
    exp.add_reproduce_parser(parser.add_subparsers())

    def run(*extra):
        args = parser.parse_args(["spore", "--quick", "--datasets", "heart", "--only", "1",
                                  "--reps", "1", "--out", str(tmp_path), *extra])
        assert args.func(args) == 0
        text = (tmp_path / "spore.md").read_text()
        return text, [line for line in text.splitlines() if line.startswith("| ")]

    text1, rows1 = run()
    cached = sorted(p.name for p in (tmp_path / "draws").iterdir())
    assert cached == [f"t1_heart_d0_s0_quick-{exp.PROTOCOL}.json"]
    assert any(r.startswith("| heart | 270 |") and "| 1 (of 5) |" in r for r in rows1)
    assert "Fewer draws than the full protocol's 5" in text1 and "heart (1)" in text1

    def fail(*a, **kw):
        raise AssertionError("a cached draw was recomputed")

    monkeypatch.setattr(exp, "run_draw", fail)
    monkeypatch.setattr(exp, "uci_graph", fail)
    text2, rows2 = run()
    assert rows2 == rows1
    text3, rows3 = run("--assemble-only")
    assert rows3 == rows1 and "Assembled from cached draws only" in text3
    # a data set with nothing cached: assemble-only says so instead of computing it
    text4, _ = run("--assemble-only", "--datasets", "heart,sonar")
    assert "No draw computed or cached for: sonar." in text4


def test_mnist_threshold_names_the_cache_and_keeps_the_labelled_draws(tmp_path):
    cfg = {"mnist_similarity": exp.MNIST_SIMILARITY}
    assert exp.mnist_name(3, 8, cfg) == "mnist-3v8"
    assert exp.mnist_name(3, 8, {"mnist_similarity": 0.4}) == "mnist-3v8+sim0.4"
    # a graph threshold is cached apart from the default one: assembling it without a
    # cached draw computes nothing and writes no (empty) report
    import argparse
    parser = argparse.ArgumentParser()
    exp.add_reproduce_parser(parser.add_subparsers())
    args = parser.parse_args(["spore", "--only", "1", "--datasets", "mnist-3v8",
                              "--mnist-similarity", "0.4", "--assemble-only",
                              "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="nothing cached"):
        args.func(args)
    assert not (tmp_path / "spore_sim0.4.md").exists()


def test_graph_thresholds_share_their_labelled_draws(tmp_path, monkeypatch):
    """A threshold changes the cache name, not the draws: the comparison is paired."""
    import scipy.sparse as sp
    from semisup.experiments._checkpoint import TrialCache
    A = sp.csr_matrix(np.ones((6, 6)) - np.eye(6))
    y = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])
    seen = {}

    def fake_draw(A, ysig, specs, cfg, rng, identity=False):
        return {"n": 6, "edges": 15, "seconds": 0.0, "draw": rng.random(4).tolist(),
                **{k: 50.0 for k in exp.BASELINES}, "spore": 50.0,
                "spore_path": [50.0], "spore_ties": [0.0], "spore_params": [1.0, 0.01],
                "identity_path": None}

    monkeypatch.setattr(exp, "run_draw", fake_draw)
    cfg = {"draws": 2, "quick": True, "identity": False}
    for name in ("mnist-3v8", "mnist-3v8+sim0.4", "mnist-4v9"):
        cache = TrialCache(str(tmp_path / name))
        exp.run_dataset(lambda: (A, y), cfg, "1", name, 0, cache)
        seen[name] = [cache.get(exp.draw_key("1", name, d, 0, True))["draw"] for d in range(2)]
    assert seen["mnist-3v8"] == seen["mnist-3v8+sim0.4"]
    assert seen["mnist-3v8"] != seen["mnist-4v9"] and seen["mnist-3v8"][0] != seen["mnist-3v8"][1]


def test_spore_fit_is_the_public_estimator(rng):
    """The protocol's SPORE is ``semisup.SPORE`` (precomputed graph, path kept)."""
    from semisup.spore import SPORE
    n = 30
    U = np.triu(rng.random((n, n)) < 0.3, 1)
    A = (U | U.T).astype(float)
    y = np.where(np.arange(n) < 15, 1.0, -1.0)
    lab = np.array([0, 1, 20, 21])
    model = exp.spore_fit(A, y, lab, 1.0, 0.01, 3, 5, dtype="float64")
    assert isinstance(model, SPORE) and len(model.history_["scores"]) == 4
    np.testing.assert_array_equal(model.classes_, [0, 1])
    np.testing.assert_allclose(model.history_["scores"][-1], model.decision_scores_)
    unl = np.setdiff1d(np.arange(n), lab)
    assert exp.accuracy(model.decision_scores_, y, lab)[0] == pytest.approx(
        100 * np.mean((model.transduction_[unl] == 1) == (y[unl] > 0)))


def test_no_resume_recomputes_cached_draws(tmp_path, monkeypatch):
    """--no-resume recomputes the selected draws (and stores them again); --resume reuses."""
    import argparse
    import scipy.sparse as sp
    A = sp.csr_matrix(np.ones((6, 6)) - np.eye(6))
    y = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])
    calls = []

    def fake_draw(A, ysig, specs, cfg, rng, identity=False):
        calls.append(1)
        return {"n": 6, "edges": 15, "seconds": 0.0, **{k: 50.0 for k in exp.BASELINES},
                "spore": 50.0 + len(calls), "spore_path": [50.0], "spore_ties": [0.0],
                "spore_params": [1.0, 0.01], "identity_path": None}

    monkeypatch.setattr(exp, "run_draw", fake_draw)
    monkeypatch.setattr(exp, "uci_graph", lambda name, data_home=None: (A, y))
    monkeypatch.setattr(exp, "UCI", ("heart",))
    from semisup.experiments import _runner     # no data needed: the graph is given
    monkeypatch.setattr(_runner, "missing_data", lambda names, data_home=None: [])
    parser = argparse.ArgumentParser()
    exp.add_reproduce_parser(parser.add_subparsers())

    def run(*extra):
        args = parser.parse_args(["spore", "--quick", "--only", "1", "--datasets", "heart",
                                  "--reps", "2", "--out", str(tmp_path), *extra])
        assert args.func(args) == 0
        return (tmp_path / "spore.md").read_text()

    run()
    assert len(calls) == 2
    run()
    assert len(calls) == 2                  # --resume (default): both draws reused
    text = run("--no-resume")
    assert len(calls) == 4 and "| heart | 6 | 15 | 2 (of 5) |" in text
    assert "53.50" in text                  # the recomputed draws (51, 52 -> 53, 54)
