"""GridSearchCV over a semisup estimator with joblib's dask backend (the cluster's workers)."""

import numpy as np
import pytest

pytest.importorskip("dask.distributed", reason="the [dask] extra is not installed")

from joblib import parallel_backend  # noqa: E402
from sklearn.datasets import make_moons  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402

from semisup import HarmonicFunction  # noqa: E402
from semisup.model_selection import (TransductiveSplit, labeled_scorer,  # noqa: E402
                                     transductive_target)


def test_grid_search_runs_on_the_dask_cluster(client):
    X, y = make_moons(300, noise=0.08, random_state=0)
    rng = np.random.default_rng(0)
    y_semi = np.full_like(y, -1)
    lab = rng.choice(300, 40, replace=False)
    y_semi[lab] = y[lab]
    grid = {"n_neighbors": [5, 10, 20], "weights": ["heat", "binary"]}

    def search(n_jobs):
        return GridSearchCV(HarmonicFunction(), grid, n_jobs=n_jobs,
                            cv=TransductiveSplit(n_splits=4, random_state=0),
                            scoring=labeled_scorer()).fit(X, transductive_target(y_semi))

    ref = search(None)
    before = sum(client.run(lambda dask_worker: len(dask_worker.data) +
                            dask_worker.state.executed_count).values())
    with parallel_backend("dask"):
        got = search(-1)
    after = sum(client.run(lambda dask_worker: len(dask_worker.data) +
                           dask_worker.state.executed_count).values())
    assert after > before  # the fits ran as tasks on the workers
    np.testing.assert_allclose(got.cv_results_["mean_test_score"],
                               ref.cv_results_["mean_test_score"], atol=1e-12)
    assert got.best_params_ == ref.best_params_
    np.testing.assert_array_equal(got.best_estimator_.transduction_,
                                  ref.best_estimator_.transduction_)
