import numpy as np

from semisup.datasets.splits import lapsvm_splits
from semisup.experiments import lapsvm as exp


def test_demo_rows_have_the_contract_keys_and_learn():
    rows = exp.demo_rows()
    assert len(rows) == 3
    for r in rows:
        assert set(r) == {"method", "data", "metric", "score", "seconds"}
        assert r["score"] > 0.85


def test_run_split_on_synthetic_data_runs_every_method():
    from sklearn.datasets import make_moons
    X, t = make_moons(240, noise=0.1, random_state=0)
    y = np.where(t == 1, 1, -1)
    cfg = dict(label="moons", kernel="rbf", sigma=0.35, nn=6, p=1, sizes=(6, 10),
               newton=(1e-2, 1.0), laprls=(1e-2, 1.0), dual=(1e-2, 1.0), svm=1e-2, rlsc=1e-2,
               pcg={r: (1e-2, 1.0) for r in exp.RULES})
    split = lapsvm_splits(y, 6, 10, random_state=0)[0]
    S = exp.setup_split(cfg, X, y, split)
    res = exp.run_split(cfg, S, exp.METHODS, dict(newton=cfg["newton"], pcg=cfg["pcg"]))
    assert set(res) == set(exp.METHODS)
    for m in ("LapRLSC", "LapSVM Newton", "PCG stability"):
        assert res[m]["err"][2] < 20
    assert res["PCG stability"]["iters"] >= 1


def test_cli_parsers_register():
    from semisup.cli import build_parser
    p = build_parser()
    a = p.parse_args(["reproduce", "lapsvm", "--datasets", "g50c", "--quick"])
    assert a.datasets == ["g50c"] and a.quick
    b = p.parse_args(["bench", "lapsvm", "--parts", "scaling", "--sizes", "1000"])
    assert b.sizes == [1000]
