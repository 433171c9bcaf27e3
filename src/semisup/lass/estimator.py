"""``LaplacianAssignment``: the scikit-learn face of the LASS solver."""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.neighbors import NearestNeighbors
from sklearn.utils.validation import check_is_fitted

from .._validation import check_affinity, check_finite
from ..graph import laplacian
from ..graph.neighbors import edge_weights, graph_from_neighbors, heat_sigma, knn_search
from .admm import solve
from .outofsample import lass_transform


class LaplacianAssignment(BaseEstimator):
    """Soft assignment of items to categories with Laplacian smoothing (LASS).

    Solves (Carreira-Perpiñán & Wang 2014, eq. 1)::

        min_Z  lam * tr(Z^T L Z) - tr(G^T Z)   s.t.  Z 1_K = 1_N,  Z >= 0

    where ``L = D - W`` is the unnormalised Laplacian of an item-item affinity ``W`` (the
    "wisdom of the crowd") and ``G`` holds item-category affinities of any sign (the "wisdom
    of the expert": > 0 associate, < 0 dissociate, 0 unknown). Rows of ``Z`` are points of
    the probability simplex. Training is ADMM (paper eq. 17) with a cached factorisation or
    warm-started inexact CG for the Z-updates; see :func:`semisup.lass.admm.solve`.

    Parameters
    ----------
    lam : float, default=1.0
        Weight of the Laplacian term (>= 0; 0 is solved in closed form). The paper scales G
        into [-1, 1] and tunes only ``lam``.
    rho : float or "auto", default="auto"
        ADMM penalty; "auto" is ``2 lam sqrt(mu_2 mu_N)`` per connected component (Ghadimi et
        al. 2013). The authors' code uses 1.0.
    tol : float, default=1e-5
        ADMM: stop when ``max|Z - Zold| < tol`` and ``max|Z - Y| < tol`` (spec §5.2).
        APG: stop when the certified objective gap is at most ``tol |F(Z)|``.
    max_iter : int, default=1000
    solver : {"auto", "direct", "cg", "apg"}, default="auto"
        "direct"/"cg": ADMM whose Z-update uses a cached factorisation or inexact
        warm-started Jacobi-PCG. "apg": accelerated projected gradient (FISTA with restart,
        one product with L per iteration; ``rho`` unused). "auto": APG from
        :data:`semisup.lass.admm.APG_MIN_N` items, else ADMM with the Z-update chosen by
        size and measured fill (:class:`semisup.linalg.spd.SPDSolver`).
    affinity : {"knn", "precomputed"}, default="knn"
        "knn": ``fit`` builds a symmetric kNN graph of ``X``. "precomputed": ``X`` is the
        N x N affinity ``W`` (symmetric, non-negative) and ``transform`` takes the M x N
        affinities of the new items to the training items.
    n_neighbors : int, default=10
    weights : {"binary", "heat"}, default="binary"
        kNN edge weights; "heat" is ``exp(-d^2 / (2 sigma^2))``.
    sigma : float, optional
        Heat-kernel width; None uses the mean kNN distance of the training set.
    metric : {"euclidean", "cosine"}, default="euclidean"
    knn_method : {"auto", "exact", "approx"}, default="auto"
        Neighbour search of :func:`semisup.graph.knn_graph`.
    stopping : {"two-part", "change"}, default="two-part"
    check_every : int, default=1
    warm_start : bool, default=False
        Reuse the ADMM state (Y, U) of the previous ``fit`` (same shapes), e.g. along a
        ``lam`` path.
    verbose : bool, default=False
    random_state : int, optional
        Seed of the approximate neighbour search.

    Attributes
    ----------
    assignments_ : ndarray (N, K)
        Training assignments, rows on the simplex.
    multipliers_ : tuple (mu, Xi)
        Lagrange multipliers of ``assignments_`` (KKT: ``2 lam L Z - G - mu 1^T - Xi = 0``,
        ``Xi >= 0``, ``Xi o Z = 0``).
    n_iter_ : int
    converged_ : bool
    objective_history_ : ndarray
        Objective at each checked ADMM iterate (before projection).
    residual_history_ : dict
        ``"change"`` (max|Z - Zold|) and ``"primal"`` (max|Z - Y|) per check.
    objective_ : float
        Objective of ``assignments_``.
    rho_ : float or ndarray (N,)
        Penalty used (an array when it differs between components).
    solver_ : str
    timings_ : dict
        Seconds spent on the graph, on choosing rho, on the solver setup and iterating.
    affinity_matrix_ : scipy.sparse.csr_matrix (N, N)
    n_categories_ : int
    """

    def __init__(self, lam=1.0, *, rho="auto", tol=1e-5, max_iter=1000, solver="auto",
                 affinity="knn", n_neighbors=10, weights="binary", sigma=None,
                 metric="euclidean", knn_method="auto", stopping="two-part", check_every=1,
                 warm_start=False, verbose=False, random_state=None):
        self.lam = lam
        self.rho = rho
        self.tol = tol
        self.max_iter = max_iter
        self.solver = solver
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.sigma = sigma
        self.metric = metric
        self.knn_method = knn_method
        self.stopping = stopping
        self.check_every = check_every
        self.warm_start = warm_start
        self.verbose = verbose
        self.random_state = random_state

    # ------------------------------------------------------------------ graph
    def _check_options(self):
        if self.affinity not in ("knn", "precomputed"):
            raise ValueError(f"affinity must be 'knn' or 'precomputed', got {self.affinity!r}.")
        if self.weights not in ("binary", "heat"):
            raise ValueError(f"weights must be 'binary' or 'heat', got {self.weights!r}.")

    def _build_graph(self, X):
        if self.affinity == "precomputed":
            self.sigma_ = None
            return check_affinity(X, "X (precomputed affinity)")
        dist, ind = knn_search(X, self.n_neighbors, metric=self.metric,
                               method=self.knn_method, random_state=self.random_state)
        self.sigma_ = (self.sigma if self.sigma is not None else heat_sigma(dist)) \
            if self.weights == "heat" else None
        self.X_fit_ = X
        self.n_features_in_ = X.shape[1]
        return graph_from_neighbors(dist, ind, weights=self.weights, sigma=self.sigma_)

    def _query_affinity(self, X_new):
        """M x N affinities of new items to the training items."""
        if self.affinity == "precomputed":
            W = X_new if sp.issparse(X_new) else np.asarray(X_new, dtype=np.float64)
            if W.ndim != 2 or W.shape[1] != self.assignments_.shape[0]:
                raise ValueError("With affinity='precomputed', transform takes the affinities "
                                 f"of the new items to the {self.assignments_.shape[0]} "
                                 f"training items, shape (M, {self.assignments_.shape[0]}); "
                                 f"got {W.shape}.")
            return W
        X_new = X_new if sp.issparse(X_new) else np.asarray(X_new, dtype=np.float64)
        if X_new.ndim != 2 or X_new.shape[1] != self.n_features_in_:
            raise ValueError(f"X_new must have {self.n_features_in_} features, got shape "
                             f"{X_new.shape}.")
        check_finite(X_new, "X_new")
        if not hasattr(self, "_nn"):
            self._nn = NearestNeighbors(n_neighbors=self.n_neighbors, metric=self.metric)
            self._nn.fit(self.X_fit_)
        dist, ind = self._nn.kneighbors(X_new)
        vals = edge_weights(dist, self.weights, self.sigma_)
        m, k = ind.shape
        return sp.csr_matrix((vals.ravel(), ind.ravel(), np.arange(0, m * k + 1, k)),
                             shape=(m, self.X_fit_.shape[0]))

    # ------------------------------------------------------------------ API
    def fit(self, X, G):
        """Fit the assignments of the training items.

        Parameters
        ----------
        X : array-like (N, d) or sparse; or (N, N) affinity if ``affinity="precomputed"``
        G : array-like or sparse (N, K)
            Item-category affinities (any sign; 0 = no information).

        Returns
        -------
        self
        """
        self._check_options()
        if hasattr(self, "_nn"):
            del self._nn
        t0 = time.perf_counter()
        W = self._build_graph(X)
        L = laplacian(W, check=False)
        t_graph = time.perf_counter() - t0
        warm = {}
        if self.warm_start and hasattr(self, "state_"):
            Y, U = self.state_
            if Y.shape == (W.shape[0], np.shape(G)[1]):
                warm = {"Y0": Y, "U0": U}
        res = solve(L, G, self.lam, rho=self.rho, tol=self.tol, max_iter=self.max_iter,
                    solver=self.solver, stopping=self.stopping, check_every=self.check_every,
                    verbose=self.verbose, **warm)
        self.affinity_matrix_ = W
        self.assignments_ = res.Z
        self.multipliers_ = (res.mu, res.Xi)
        self.n_iter_ = res.n_iter
        self.converged_ = res.converged
        self.objective_history_ = res.history.get("objective", np.zeros(0))
        self.residual_history_ = {k: res.history.get(k, np.zeros(0))
                                  for k in ("change", "primal")}
        Gd = G.toarray() if sp.issparse(G) else np.asarray(G, dtype=np.float64)
        self.objective_ = float(self.lam * np.einsum("ij,ij->", res.Z, L @ res.Z)
                                - np.einsum("ij,ij->", Gd, res.Z))
        self.rho_ = float(res.rho[0]) if np.ptp(res.rho) == 0 else res.rho
        self.solver_ = res.solver
        self.timings_ = {"graph": t_graph, **res.timings}
        self.state_ = (res.Y, res.U)
        self.n_categories_ = res.Z.shape[1]
        return self

    def fit_transform(self, X, G):
        """Fit and return ``assignments_``."""
        return self.fit(X, G).assignments_

    def transform(self, X_new, G_new=None, lam=None):
        """Out-of-sample assignments of new items (paper §4).

        ``z = Pi(z_bar + g / (2 lam 1^T w))`` with ``z_bar`` the affinity-weighted average of
        the training assignments of the item's neighbours.

        Parameters
        ----------
        X_new : array-like (M, d), or (M, N) affinities if ``affinity="precomputed"``
        G_new : array-like or sparse (M, K), optional
            The new items' category affinities (default 0: the SSL neighbour average). Vary
            it to explore "what-if" scenarios; the neighbours are what costs.
        lam : float or ndarray (M,), optional
            Override the trained ``lam`` (per query if an array): small trusts ``G_new``,
            large trusts the neighbours.

        Returns
        -------
        ndarray (M, K), rows on the simplex. A query without neighbours (all affinities 0)
        gets the ``lam = 0`` answer from ``G_new``.
        """
        check_is_fitted(self, "assignments_")
        Wq = self._query_affinity(X_new)
        return lass_transform(self.assignments_, Wq, G_new,
                              self.lam if lam is None else lam)

    def predict(self, X_new, G_new=None, lam=None):
        """Most-assigned category of each new item (argmax of :meth:`transform`)."""
        return np.argmax(self.transform(X_new, G_new, lam), axis=1)
