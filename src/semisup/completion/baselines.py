"""Impute-then-SVM baselines of Goldberg et al. (2010), §5 "Baselines" (spec §9).

Each baseline imputes the missing features of ``X`` (items as rows, ``M`` the observed
mask), then trains one linear SVM per task on the items whose label is observed, with the
regularisation ``C`` chosen by 5-fold CV per task. The "oracle" SVM sees every feature.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import LinearSVC

from .fpc import continuation_grid, fpc_path, initial_point
from .model_selection import cv_imputation_errors

__all__ = ["impute_zero", "impute_mean", "impute_em", "impute_fpc", "svm_per_task",
           "C_GRID"]

#: SVM regularisation grid (the paper's endpoints are lost; spec §9 default)
C_GRID = tuple(10.0 ** np.arange(-3, 4))


def impute_zero(X, M):
    """Missing features <- 0."""
    return np.where(M, X, 0.0)


def impute_mean(X, M):
    """Missing feature k <- mean of feature k's observed entries (0 if none)."""
    cnt = M.sum(axis=0)
    mean = np.where(M, X, 0.0).sum(axis=0) / np.maximum(cnt, 1)
    return np.where(M, X, mean)


def impute_em(X, M, n_components=1, *, max_iter=100, tol=1e-4, reg_covar=1e-6,
              random_state=None):
    """EM for a Gaussian mixture with missing values; impute by conditional expectations.

    The missing entries, component parameters and memberships are latent (Ghahramani &
    Jordan 1994). E-step per item and component: marginal likelihood of the observed part,
    conditional mean ``mu_m + S_mo S_oo^{-1}(x_o - mu_o)`` and covariance
    ``S_mm - S_mo S_oo^{-1} S_om`` of the missing part; the M-step adds the conditional
    covariances to the scatter. Stops when the log-likelihood gains less than
    ``tol * |loglik|``. Imputation: responsibility-weighted conditional means.

    Cost per iteration: ``O(n k d^3)`` (one Cholesky of ``S_oo`` per item and component).
    """
    X = np.asarray(X, dtype=float)
    M = np.asarray(M, dtype=bool)
    n, d = X.shape
    k = int(n_components)
    rng = np.random.default_rng(random_state)
    Xf = impute_mean(X, M)
    scale = max(float(Xf.var(axis=0).mean()), 1e-12)
    # start from k-means on the mean-imputed data (random items often start two components
    # in one cluster and EM stays in that local optimum)
    if k > 1:
        from sklearn.cluster import KMeans
        km = KMeans(k, n_init=3, random_state=int(rng.integers(2**31))).fit(Xf)
        means = km.cluster_centers_.copy()
        labels = km.labels_
    else:
        means, labels = Xf.mean(axis=0)[None], np.zeros(n, dtype=int)
    covs = np.empty((k, d, d))
    weights = np.empty(k)
    for c in range(k):
        Xc = Xf[labels == c]
        D = Xc - means[c]
        covs[c] = D.T @ D / max(len(Xc), 1) + reg_covar * scale * np.eye(d) + \
            (1e-3 * scale * np.eye(d) if len(Xc) <= d else 0.0)
        weights[c] = max(len(Xc), 1) / n
    prev = -np.inf
    Xhat = np.empty((k, n, d))
    for _ in range(max_iter):
        logp = np.empty((n, k))
        cond_cov = [[None] * k for _ in range(n)]
        for i in range(n):
            o = M[i]
            mi = ~o
            for c in range(k):
                mu, S = means[c], covs[c]
                xh = Xhat[c, i]
                xh[o] = X[i, o]
                if o.any():
                    cf = sla.cho_factor(S[np.ix_(o, o)], check_finite=False)
                    r = X[i, o] - mu[o]
                    a = sla.cho_solve(cf, r, check_finite=False)
                    logdet = 2.0 * np.log(np.diag(cf[0])).sum()
                    logp[i, c] = (np.log(weights[c]) - 0.5 * (r @ a + logdet
                                                              + o.sum() * np.log(2 * np.pi)))
                    if mi.any():
                        Smo = S[np.ix_(mi, o)]
                        xh[mi] = mu[mi] + Smo @ a
                        cond_cov[i][c] = S[np.ix_(mi, mi)] - Smo @ sla.cho_solve(
                            cf, Smo.T, check_finite=False)
                else:
                    logp[i, c] = np.log(weights[c])
                    xh[:] = mu
                    cond_cov[i][c] = S.copy()
        ll = np.logaddexp.reduce(logp, axis=1)
        resp = np.exp(logp - ll[:, None])
        Nk = resp.sum(axis=0) + 1e-12
        weights = Nk / n
        for c in range(k):
            means[c] = resp[:, c] @ Xhat[c] / Nk[c]
            D = Xhat[c] - means[c]
            S = (D * resp[:, c:c + 1]).T @ D
            for i in range(n):
                C = cond_cov[i][c]
                if C is not None:
                    mi = ~M[i]
                    S[np.ix_(mi, mi)] += resp[i, c] * C
            covs[c] = S / Nk[c] + reg_covar * scale * np.eye(d)
        total = float(ll.sum())
        if abs(total - prev) < tol * abs(total):
            break
        prev = total
    Ximp = np.einsum("nc,cnd->nd", resp, Xhat)
    return np.where(M, X, Ximp)


def impute_fpc(X, M, *, mu="cv", mu_final=1e-5, eta=0.25, n_folds=5, random_state=None,
               **fpc_kw):
    """Nuclear-norm completion of ``X`` alone by FPC (the FPC+SVM baseline).

    ``mu="cv"`` picks the path value with the lowest held-out imputation error (5-fold
    split of the observed entries, shared grid as in spec §7). Observed entries are kept.

    Returns ``(X_imputed, info)`` with ``info = {"mu": ..., "grid": ..., "cv_errors": ...}``.
    """
    X = np.asarray(X, dtype=float)
    M = np.asarray(M, dtype=bool)
    Xt, Mt = np.where(M, X, 0.0).T, M.T
    rng = np.random.default_rng(random_state)
    sigma1 = initial_point(Xt)[1]
    if mu == "cv":
        grid = continuation_grid(sigma1, mu_final, eta)
        errs, _ = cv_imputation_errors(Xt, Mt, grid=grid, n_folds=n_folds, rng=rng,
                                       random_state=rng, **fpc_kw)
        j = int(np.nanargmin(errs))
    else:
        grid, errs = continuation_grid(sigma1, mu, eta), None
        j = grid.size - 1
    path = fpc_path(Xt, Mt, mus=grid[:j + 1], random_state=rng, **fpc_kw)
    return np.where(M, X, path.Z.T), {"mu": float(grid[j]), "grid": grid, "cv_errors": errs}


#: liblinear's coordinate order is drawn from this seed (unset, it came from numpy's global
#: RNG, and fits stopped at max_iter differed from run to run)
LIBLINEAR_SEED = 0


def _fit_svm(F, y, Cs, n_folds, rng):
    classes, counts = np.unique(y, return_counts=True)
    if classes.size == 0:
        return None, 1.0            # no observed label: sign(0) = +1 convention
    if classes.size < 2:
        return None, float(classes[0])
    folds = min(n_folds, int(counts.min()))
    if folds >= 2:
        skf = StratifiedKFold(folds, shuffle=True, random_state=int(rng.integers(2**31)))
        acc = np.zeros(len(Cs))
        for tr, va in skf.split(F, y):
            for q, C in enumerate(Cs):
                clf = LinearSVC(C=C, loss="hinge", max_iter=1000,
                                random_state=LIBLINEAR_SEED).fit(F[tr], y[tr])
                acc[q] += (clf.predict(F[va]) == y[va]).sum()
        C = Cs[int(np.argmax(acc))]
    else:
        C = 1.0
    return LinearSVC(C=C, loss="hinge", max_iter=1000,
                     random_state=LIBLINEAR_SEED).fit(F, y), None


def svm_per_task(F, Y, MY, *, Cs=C_GRID, n_folds=5, random_state=None):
    """One linear SVM per task on the items with an observed label; scores for all items.

    ``LinearSVC(loss="hinge")`` with intercept; ``C`` by stratified ``n_folds``-fold CV on
    accuracy (fewer folds when a class has fewer items; ``C = 1`` when a class has one).
    A task whose observed labels are all one class predicts that class.

    Returns scores of shape ``(n, t)`` (their sign is the prediction).
    """
    rng = np.random.default_rng(random_state)
    n, t = Y.shape
    S = np.empty((n, t))
    with warnings.catch_warnings():
        # liblinear at large C on non-separable data stops at max_iter; the CV picks C
        warnings.simplefilter("ignore", ConvergenceWarning)
        for j in range(t):
            idx = np.flatnonzero(MY[:, j])
            clf, const = _fit_svm(F[idx], Y[idx, j], Cs, n_folds, rng)
            S[:, j] = const if clf is None else clf.decision_function(F)
    return S
