"""A two-process dask.distributed LocalCluster on 127.0.0.1 shared by the package's tests.

Each test module that needs dask skips itself (``pytest.importorskip``) when the ``[dask]``
extra is not installed (the minimum-versions environment has no extras).
"""

import pytest


@pytest.fixture(scope="package")
def client():
    distributed = pytest.importorskip("dask.distributed", reason="the [dask] extra is not "
                                      "installed (pip install 'semisup[dask]')")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=None, protocol="tcp", silence_logs=50,
        env={"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()
