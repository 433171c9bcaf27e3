"""A two-process dask.distributed LocalCluster on 127.0.0.1 shared by the module's tests."""

import pytest

pytest.importorskip("dask.distributed", reason="the [dask] extra is not installed "
                    "(pip install 'semisup[dask]')")


@pytest.fixture(scope="package")
def client():
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address=None, protocol="tcp",
                           silence_logs=50, env={"OPENBLAS_NUM_THREADS": "1",
                                                 "OMP_NUM_THREADS": "1"})
    with Client(cluster) as c:
        yield c
    cluster.close()
