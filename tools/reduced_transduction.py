"""Why the reduced expansion trails the full LapRLS on the training points (issue #31).

On 16 000 MNIST points (a seeded draw, 10 labels per class, the exact 10-NN graph, the
estimators' defaults) this prints, for the full model and the reduced expansion at m =
2000, 4000 and 8000: the error on the unlabelled training points (the transduction), the
error on 5 000 held-out points (``predict``: induction) and the fit's time; and the error
of the graph alone, ``(J + gamma_I L) F = J Y`` with LapRLS's ``gamma_I`` and normalised
Laplacian (no kernel). At the default ``gamma_A = 1e-6`` the full model's transduction is
that graph solution, which a rank-m kernel span reproduces only as m approaches n. Also the
peak memory of loading the points and building the graph (a floor under any fit's peak).

    python tools/reduced_transduction.py      # about 5 minutes on two cores
"""

import resource
import time
import warnings

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from semisup import LapRLS
from semisup.experiments._bench import load_mnist
from semisup.experiments.reduced import hide_labels
from semisup.graph import knn_graph


def _peak_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20


def main(n=16_000, n_test=5_000, per_class=10, seed=0, bases=(2000, 4000, 8000)):
    X_all, y_all = load_mnist(None)
    perm = np.random.default_rng(seed).permutation(y_all.size)
    X, y = X_all[perm[:n]], y_all[perm[:n]]
    Xt, yt = X_all[perm[n:n + n_test]], y_all[perm[n:n + n_test]]
    del X_all
    y_train = hide_labels(y, per_class, seed)
    U = y_train == -1
    W = knn_graph(X, 10, method="exact")
    print(f"n = {n}, {per_class} labels per class, {n_test} held-out points; peak memory "
          f"after loading and the graph: {_peak_gib():.2f} GiB")
    gamma_I = LapRLS().gamma_I
    s = 1.0 / np.sqrt(np.asarray(W.sum(axis=1)).ravel())
    L = sp.eye(n) - sp.diags(s) @ W @ sp.diags(s)
    Y = np.where(~U[:, None], np.where(y[:, None] == np.arange(10), 1.0, -1.0), 0.0)
    F = spla.splu((sp.diags((~U).astype(float)) + gamma_I * L).tocsc()).solve(Y)
    print(f"| model | error on U (%) | held-out error (%) | fit (s) |\n|---|---:|---:|---:|\n"
          f"| graph alone, (J + {gamma_I:g} L) F = J Y | "
          f"{100 * (F.argmax(1) != y)[U].mean():.2f} | – | – |")
    for m in (None, *bases):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = LapRLS(n_basis=m, affinity="precomputed", random_state=seed).fit(
                X, y_train, W=W)
        t = time.perf_counter() - t0
        name = "full (defaults: PCG, stability stop)" if m is None else f"reduced, n_basis={m}"
        print(f"| LapRLS {name} | {100 * (est.transduction_ != y)[U].mean():.2f} | "
              f"{100 * (est.predict(Xt) != yt).mean():.2f} | {t:.1f} |", flush=True)


if __name__ == "__main__":
    main()
