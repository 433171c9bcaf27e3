"""``semisup bench lowlabel`` end to end on a tiny synthetic problem (no MNIST needed)."""

import argparse
import json
import os
import re

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from semisup.experiments import lowlabel


def _args(tmp_path, *extra):
    sub = argparse.ArgumentParser().add_subparsers()
    lowlabel.add_bench_parser(sub)
    return sub.choices["lowlabel"].parse_args(["--out", str(tmp_path), *extra])


def _data():
    X, y = make_blobs(240, centers=3, n_features=5, cluster_std=2.0, random_state=0)
    return X, y


def _table(text, heading):
    """Rows ``{method: [cells]}`` of the first table after ``heading``."""
    block = next(b for b in text.split(heading, 1)[1].split("\n\n") if b.startswith("|"))
    rows = [line.strip("|").split("|") for line in block.splitlines()[2:]]
    return {r[0].strip(): [c.strip() for c in r[1:]] for r in rows}


def test_records_every_method_on_the_library_graph(tmp_path, monkeypatch):
    monkeypatch.setattr(lowlabel, "_graph_learning", lambda: None)
    args = _args(tmp_path, "--rates", "1,2", "--reps", "3", "--mbo-reps", "2")
    assert lowlabel._bench(args, data=_data()) == 0
    text = open(os.path.join(tmp_path, "lowlabel.md")).read()
    assert "not importable here" in text              # the peer skipped, and said so
    acc = _table(text, "## Accuracy (%) on the lib graph")
    ours = [m for m in lowlabel.METHODS if not m.startswith("gl.")]
    assert set(acc) == {lowlabel.METHODS[m] for m in ours}
    for method, cells in acc.items():
        means = [float(re.match(r"([\d.]+) ± [\d.]+ \((\d+)\)", c).group(1)) for c in cells]
        draws = [int(re.search(r"\((\d+)\)", c).group(1)) for c in cells]
        slow = "MBO" in method or "LaplacianAssignment" in method
        assert draws == ([2, 2] if slow else [3, 3]), (method, cells)
        assert all(0 <= a <= 100 for a in means)
        if "Poisson" in method:                       # well-separated blobs
            assert min(means) > 90, (method, cells)
    # solve times at both thread counts, the graph timed apart
    times = _table(text, "Solve seconds on the lib graph")
    assert all(len(c) == 4 and all(float(v) >= 0 for v in c) for c in times.values())
    graphs = _table(text, "## Graphs")
    assert list(graphs) == ["lib"] and int(graphs["lib"][1]) > 0
    raw = json.load(open(os.path.join(tmp_path, "lowlabel.json")))
    key = "lib|1|PoissonLearning"
    assert len(raw["acc"][key]) == 3


def test_the_accuracies_are_those_of_the_estimators(tmp_path, monkeypatch):
    # the recorded accuracy of a draw is that of a direct fit on X with that draw's labels
    from semisup import PoissonLearning
    from semisup.datasets.splits import labeled_per_class
    monkeypatch.setattr(lowlabel, "_graph_learning", lambda: None)
    X, y = _data()
    args = _args(tmp_path, "--rates", "1", "--reps", "2", "--methods", "PoissonLearning",
                 "--threads", "1")
    lowlabel._bench(args, data=(X, y))
    raw = json.load(open(os.path.join(tmp_path, "lowlabel.json")))
    for d, got in enumerate(raw["acc"]["lib|1|PoissonLearning"]):
        ys = np.full_like(y, -1)
        lab = labeled_per_class(y, 1, random_state=d)
        ys[lab] = y[lab]
        pred = PoissonLearning().fit(X, ys).transduction_
        assert got == pytest.approx(np.mean(pred[ys == -1] == y[ys == -1]))


def test_self_tuned_rows_get_their_own_graph(tmp_path, monkeypatch):
    from semisup import PoissonLearning
    monkeypatch.setattr(lowlabel, "_graph_learning", lambda: None)
    X, y = _data()
    args = _args(tmp_path, "--rates", "1", "--reps", "1", "--threads", "1", "--methods",
                 "PoissonLearning,PoissonLearning-self_tuning")
    lowlabel._bench(args, data=(X, y))
    text = open(os.path.join(tmp_path, "lowlabel.md")).read()
    assert "weights='self_tuning'" in text and "weights='heat'" in text   # two graphs
    raw = json.load(open(os.path.join(tmp_path, "lowlabel.json")))
    ys = np.full_like(y, -1)
    from semisup.datasets.splits import labeled_per_class
    lab = labeled_per_class(y, 1, random_state=0)
    ys[lab] = y[lab]
    pred = PoissonLearning(weights="self_tuning").fit(X, ys).transduction_
    assert raw["acc"]["lib|1|PoissonLearning-self_tuning"][0] == pytest.approx(
        np.mean(pred[ys == -1] == y[ys == -1]))


def test_graphlearning_peer_on_both_graphs(tmp_path):
    pytest.importorskip("graphlearning")
    pytest.importorskip("annoy")
    args = _args(tmp_path, "--rates", "1", "--reps", "1", "--threads", "1", "--methods",
                 "PoissonLearning,gl.poisson,gl.poisson_mbo")
    lowlabel._bench(args, data=_data())
    text = open(os.path.join(tmp_path, "lowlabel.md")).read()
    for g in ("lib", "gl"):
        acc = _table(text, f"## Accuracy (%) on the {g} graph")
        assert set(acc) == {lowlabel.METHODS[m] for m in
                            ("PoissonLearning", "gl.poisson", "gl.poisson_mbo")}


def test_a_partial_run_never_writes_the_record(tmp_path, monkeypatch):
    monkeypatch.setattr(lowlabel, "_graph_learning", lambda: None)
    args = _args(tmp_path, "--rates", "1", "--reps", "1", "--methods", "PoissonLearning",
                 "--threads", "1")
    lowlabel._bench(args, data=_data())
    assert os.path.exists(os.path.join(tmp_path, "lowlabel.md"))


def test_bad_options_are_refused(tmp_path):
    with pytest.raises(SystemExit):
        _args(tmp_path, "--methods", "PoissonLearning,Nope")
    with pytest.raises(SystemExit):
        _args(tmp_path, "--rates", "0")
