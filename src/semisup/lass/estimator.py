"""``LaplacianAssignment``: the scikit-learn face of the LASS solver."""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._base import SemiSupervisedMixin, _fit_context, _store_init_params
from .._progress import log
from .._validation import (_as_numeric_matrix, check_finite, check_memory,
                           check_semisup_labels)
from ..engines import engine_for
from ..graph import laplacian
from ..graph.degeneracy import warn_if_flat
from ..graph.frontend import GRAPH_PARAMETER_CONSTRAINTS, GraphMixin
from ..linalg.xp import array_modules, to_host
from .admm import N_WORK_ARRAYS, solve
from .outofsample import lass_transform

__all__ = ["LaplacianAssignment"]


def _reads_as_G(y) -> bool:
    """Whether the target of :meth:`LaplacianAssignment.fit` is an item-category matrix ``G``.

    Sparse or 2-D with several columns: ``G``. 1-D: class labels. An ``(N, 1)`` column is
    ambiguous (scikit-learn reads it as a column vector of labels): it is read as labels
    unless it is float and either holds a value that is not an integer or has no ``-1``
    (no unlabeled item, as one column of a one-hot ``G`` has), and is then the ``G`` of a
    single category (refused: LASS needs two).
    """
    if y is None:
        return False
    if sp.issparse(y):
        return True
    if np.ndim(y) != 2:
        return False
    if np.shape(y)[1] != 1:
        return True
    y = np.asarray(y)
    if y.dtype.kind != "f" or not np.isfinite(y).all():
        return False
    return bool(np.any(y != np.round(y)) or not np.any(y == -1))


def _expert_matrix(y, n):
    """``(G, classes, labels)`` from the target of :meth:`LaplacianAssignment.fit`.

    A 1-D ``y`` holds class labels with ``-1`` for unlabeled items: ``G`` is their one-hot
    rows (0 for unlabeled items). A 2-D ``y`` is the paper's item-category affinity ``G``
    itself (any sign: > 0 associates, < 0 dissociates, 0 is no information); an ``(N, 1)``
    column is read as in :func:`_reads_as_G`.
    """
    if _reads_as_G(y):
        what = "G (y as an item-category matrix)"
        shape = y.shape if sp.issparse(y) else np.shape(y)
        if len(shape) == 2 and shape[0] == n:
            # before densifying a sparse G: the solver's working arrays are N x K
            check_memory(N_WORK_ARRAYS * 8.0 * shape[0] * shape[1],
                         f"LASS on {shape[0]} items x {shape[1]} categories",
                         "Reduce the number of categories or split the items into batches.")
        if sp.issparse(y):
            G = sp.csr_matrix(y, dtype=np.float64, copy=True).toarray()
        else:
            G = np.array(_as_numeric_matrix(y, what), dtype=np.float64)
        if G.shape[0] != n:
            raise ValueError(f"{what} has shape {G.shape} but there are {n} items: its shape "
                             f"must be ({n}, n_categories).")
        if G.shape[1] < 2:
            raise ValueError(
                f"{what} needs at least 2 categories (columns), got {G.shape[1]}: with one "
                "category every item is assigned to it. (A float (N, 1) y with a non-integer "
                "value or no -1 is read as one column of G; for class labels pass a 1-D y "
                "with -1 marking unlabeled items.)")
        check_finite(G, what)
        return G, np.arange(G.shape[1]), None
    y, classes, labeled = check_semisup_labels(y, n, estimator="LaplacianAssignment")
    G = np.zeros((n, classes.size))
    G[np.flatnonzero(labeled), np.searchsorted(classes, y[labeled])] = 1.0
    return G, classes, y


def _full_rows(path, Z, active):
    """The iterates of :func:`solve`'s callback as (N, K) arrays: the solver iterates over
    the ``active`` items (not isolated, not solved in closed form), the others keep their
    closed-form rows of ``Z``."""
    if not path or path[0].shape[0] == Z.shape[0]:
        return path
    xp, _ = array_modules(Z)
    active = xp.asarray(active)
    full = []
    for Zt in path:
        F = Z.copy()
        F[active] = Zt
        full.append(F)
    return full


def _device_laplacian(W):
    """``L = D - W`` in ``W``'s sparse module (cupyx on a device): float64 CSR, sorted; built
    on a host copy of ``W`` (O(nnz), once per fit: the host fit's very ``L``) and moved back,
    since ``D - W`` is a sparse-sparse sum there (cuSPARSE's csrgeam2, which failed on an
    H200 under CUDA 13; :func:`semisup.lass.admm._check_laplacian`)."""
    _, xsp = array_modules(W)
    return xsp.csr_matrix(laplacian(to_host(W), check=False))


class LaplacianAssignment(SemiSupervisedMixin, GraphMixin, TransformerMixin, ClassifierMixin,
                          BaseEstimator):
    """Soft assignment of items to categories with Laplacian smoothing (LASS).

    Solves (Carreira-Perpiñán & Wang 2014, eq. 1)

    .. math:: \\min_Z \\; \\lambda \\operatorname{tr}(Z^T L Z) - \\operatorname{tr}(G^T Z)
              \\quad \\text{s.t.} \\quad Z 1_K = 1_N,\\; Z \\ge 0,

    where ``L = D - W`` is the unnormalised Laplacian of an item-item affinity ``W`` (the
    "wisdom of the crowd") and ``G`` holds item-category affinities of any sign (the "wisdom
    of the expert": > 0 associate, < 0 dissociate, 0 unknown). Rows of ``Z`` are points of
    the probability simplex. ``fit(X, y)`` takes either class labels (``-1`` = unlabeled;
    ``G`` is then their one-hot rows, semi-supervised learning as in the paper's §3) or the
    matrix ``G`` itself (partial tagging). Training is ADMM (paper eq. 17) with a cached
    factorisation or warm-started inexact CG for the Z-updates, or an accelerated projected
    gradient with a certified gap; see :func:`semisup.lass.admm.solve`.

    Parameters
    ----------
    lam : float, default=0.01
        Weight ``lambda`` of the Laplacian term (>= 0; 0 is solved in closed form). The
        paper scales ``G`` into [-1, 1] and tunes only ``lam``. The default suits one-hot
        labels on the default kNN graph (degrees of order ``n_neighbors``): on two moons,
        breast cancer, digits and iris with 3-10 labels per class it matches
        HarmonicFunction's accuracy, where ``lam=1`` let the smoothing swamp the labels
        (breast cancer 0.63, digits 0.79; ``tests/test_defaults.py``).
    affinity, n_neighbors, weights, graph_sigma, threshold, metric, knn_method, n_jobs, \
random_state :
        The graph parameters shared by every graph-based estimator
        (:mod:`semisup.graph.frontend`): ``affinity="knn"`` (default) builds the symmetric
        ``n_neighbors``-NN graph of ``X`` with heat weights of width ``graph_sigma`` (None:
        the mean kNN distance); ``"precomputed"`` takes ``X`` as the ``N x N`` affinity in
        ``fit`` and the ``M x N`` affinities of new items in ``transform``/``predict``.
    rho : float or "auto", default="auto"
        ADMM penalty; "auto" is ``2 lam sqrt(mu_2 mu_N)`` per connected component (Ghadimi et
        al. 2013). The authors' code uses 1.0.
    tol : float, default=1e-5
        ADMM: stop when ``max|Z - Zold| < tol`` and ``max|Z - Y| < tol`` (spec §5.2), then
        certified by the objective gap. APG: stop when the certified objective gap is at
        most ``tol |F(Z)|``.
    max_iter : int, default=5000
    solver : {"auto", "direct", "cg", "apg"}, default="auto"
        "direct"/"cg": ADMM whose Z-update uses a cached factorisation or inexact
        warm-started Jacobi-PCG. "apg": accelerated projected gradient (FISTA with restart,
        one product with L per iteration; ``rho`` unused). "auto": APG (an equal or lower
        objective than ADMM on every graph measured, and faster where ADMM is slow), or
        ADMM when ``rho`` is a number (below :data:`semisup.lass.admm.APG_MIN_N` items).
    stopping : {"two-part", "change"}, default="two-part"
        ADMM stopping test (spec §5.2).
    check_every : int, default=1
    warm_start : bool, default=False
        Reuse the solver state (Y, U) of the previous ``fit`` (same shapes), e.g. along a
        ``lam`` path.
    keep_path : bool, default=False
        Record the iterates: after each iteration a copy of the training assignments goes
        to ``history_["scores"]`` (one (N, K) array per iteration; ADMM's Z-update, whose
        rows sum to 1 but may dip below 0 by the ADMM residual, or APG's feasible iterate).
        ``assignments_`` is the last one projected onto the simplex (APG: the last one).
        :meth:`staged_transform` and :meth:`staged_predict` evaluate the iterates on new
        items. Costs one N x K array per iteration; the fit is unchanged. Closed-form
        solutions (``lam = 0``, a graph without edges) have no iterations.
    verbose : bool, default=False
        Report the graph and the solver's progress on stderr.

    On a device (a CuPy ``X``, or a ``cupyx`` / CuPy affinity with
    ``affinity="precomputed"``; :mod:`semisup.engines`) the graph, the solver's iterations
    (APG, or ADMM with block-CG Z-updates) and the fitted arrays stay there, and
    ``transform``/``predict`` answer in the input's type. ``solver="direct"`` (a sparse
    Cholesky factor) is refused there; a numeric ``rho`` with ``solver="auto"`` below
    :data:`semisup.lass.admm.APG_MIN_N` items takes ADMM with CG (the host may factor).

    Attributes
    ----------
    assignments_ : ndarray of shape (N, K)
        Training assignments, rows on the simplex (the label distributions).
    classes_ : ndarray of shape (K,)
        The classes (``arange(K)`` when ``y`` is a ``G`` matrix).
    transduction_ : ndarray of shape (N,)
        ``classes_[argmax]`` of ``assignments_``.
    multipliers_ : tuple (mu, Xi)
        Lagrange multipliers of ``assignments_`` (KKT: ``2 lam L Z - G - mu 1^T - Xi = 0``,
        ``Xi >= 0``, ``Xi o Z = 0``).
    n_iter_ : int
    converged_ : bool
    history_ : dict
        The solver's records per check, as in LapSVM's and SPORE's ``history_`` (ADMM:
        ``"objective"``, ``"change"`` = max|Z - Zold|, ``"primal"`` = max|Z - Y|; APG:
        ``"objective"``, ``"gap"``, the certified bound on ``F - F*``)
        and, with ``keep_path``, the iterates ``"scores"``: entry ``i`` is the assignments
        after iteration ``i + 1``.
    objective_ : float
        Objective of ``assignments_``.
    rho_ : float or ndarray (N,)
        Penalty used (an array when it differs between components).
    solver_ : str
    timings_ : dict
        Seconds spent on the graph, on choosing rho, on the solver setup and iterating.
    affinity_matrix_ : scipy.sparse.csr_matrix (N, N)
    graph_sigma_ : float or None
    n_categories_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from semisup import LaplacianAssignment
    >>> X, y = make_moons(200, noise=0.05, random_state=0)
    >>> y_train = np.full_like(y, -1)                  # -1: unlabeled
    >>> y_train[:6] = y[:6]
    >>> lass = LaplacianAssignment(lam=10.0).fit(X, y_train)
    >>> lass.assignments_.shape, bool(np.allclose(lass.assignments_.sum(axis=1), 1))
    ((200, 2), True)
    >>> float((lass.transduction_ == y).mean()) > 0.9
    True
    """

    _device_fit = True     # a CuPy X: graph, APG / ADMM-CG on the device (semisup.engines.cupy)

    _parameter_constraints = {
        **GRAPH_PARAMETER_CONSTRAINTS,
        "lam": [Interval(Real, 0, None, closed="left")],
        "rho": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions({"auto", "direct", "cg", "apg"})],
        "stopping": [StrOptions({"two-part", "change"})],
        "check_every": [Interval(Integral, 1, None, closed="left")],
        "warm_start": ["boolean"],
        "keep_path": ["boolean"],
        "verbose": ["verbose"],
    }

    def __init__(self, lam=0.01, *, affinity="knn", n_neighbors=10, weights="heat",
                 graph_sigma=None, threshold=None, metric="euclidean", knn_method="auto",
                 n_jobs=None, random_state=None, rho="auto", tol=1e-5, max_iter=5000,
                 solver="auto", stopping="two-part", check_every=1, warm_start=False,
                 keep_path=False, verbose=False):
        _store_init_params(self, locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the assignments of the training items.

        Parameters
        ----------
        X : array-like or sparse of shape (N, d), or (N, N) if ``affinity="precomputed"``
            Training items, or their affinity ``W``.
        y : array-like of shape (N,), or array-like / sparse of shape (N, K)
            Class labels with ``-1`` for unlabeled items, or the item-category affinities
            ``G`` (any sign; 0 = no information; K >= 2). An ``(N, 1)`` column is read as
            class labels (scikit-learn's column vector, with a warning) unless it is float
            with a non-integer value or without any ``-1``: then it is one column of ``G``
            and refused (one category assigns every item to it).

        Returns
        -------
        self
        """
        y = self._host_labels(y)        # labels or G of a device: validated on the host
        if y is not None and not sp.issparse(y):
            y = np.asarray(y)
        if not _reads_as_G(y):
            check_semisup_labels(y, estimator="LaplacianAssignment")   # before the graph
        if self.solver == "direct" and not engine_for(X).host_arrays:
            raise ValueError(f"solver='direct' (ADMM with a sparse Cholesky factor) is not "
                             f"available on the {engine_for(X).name} engine; use "
                             "solver='cg' (ADMM with block-CG Z-updates there), 'auto' or "
                             "'apg'.")
        t0 = time.perf_counter()
        W, _ = self._fit_graph(X)
        engine = self._engine()
        xp = engine.xp
        device = not engine.host_arrays
        N = W.shape[0]
        G, classes, _ = _expert_matrix(y, N)
        given = np.any(G != 0, axis=1)          # host: items with expert information
        if device:    # the N x K arrays and the iterations where the graph lives
            L = _device_laplacian(W)
            G = xp.asarray(G)
        else:
            L = laplacian(W, check=False)
        t_graph = time.perf_counter() - t0
        log(f"[LaplacianAssignment] graph: {N} items, {W.nnz // 2} edges ({t_graph:.2f} s)",
            self.verbose)
        warm = {}
        if self.warm_start and hasattr(self, "state_"):
            Y, U = self.state_
            # a state of the same shape, where this fit's arrays live (host or device)
            if Y.shape == G.shape and array_modules(Y)[0] is xp:
                warm = {"Y0": Y, "U0": U}
        path = [] if self.keep_path else None
        res = solve(L, G, self.lam, rho=self.rho, tol=self.tol, max_iter=self.max_iter,
                    solver=self.solver, stopping=self.stopping, check_every=self.check_every,
                    verbose=self.verbose,
                    callback=None if path is None else
                    (lambda t, Z, Y, U: path.append(xp.array(Z, dtype=xp.float64))),
                    backend="xp" if device else "auto", **warm)
        self.classes_ = classes
        self.assignments_ = res.Z
        warn_if_flat(res.Z, given, "LaplacianAssignment")
        self.transduction_ = engine.take_labels(classes, xp.argmax(res.Z, axis=1))
        self.multipliers_ = (res.mu, res.Xi)
        self.n_iter_ = int(res.n_iter)
        self.converged_ = bool(res.converged)
        self.history_ = dict(res.history)
        if path is not None:
            self.history_["scores"] = _full_rows(path, res.Z, res.active)
        self.objective_ = float(self.lam * xp.einsum("ij,ij->", res.Z, L @ res.Z)
                                - xp.einsum("ij,ij->", G, res.Z))
        self.rho_ = float(res.rho[0]) if np.ptp(res.rho) == 0 else res.rho
        self.solver_ = res.solver
        self.timings_ = {"graph": t_graph, **res.timings}
        self.state_ = (res.Y, res.U)
        self.n_categories_ = res.Z.shape[1]
        log(f"[LaplacianAssignment] {res.solver}: {res.n_iter} iterations, "
            f"converged={res.converged} ({time.perf_counter() - t0:.2f} s)", self.verbose)
        return self

    def fit_transform(self, X, y=None, **fit_params):
        """Fit and return ``assignments_``."""
        return self.fit(X, y).assignments_

    def transform(self, X, G_new=None, lam=None):
        """Out-of-sample assignments of new items (paper §4).

        ``z = Pi(z_bar + g / (2 lam 1^T w))`` with ``z_bar`` the affinity-weighted average of
        the training assignments of the item's neighbours.

        Parameters
        ----------
        X : array-like (M, d), or (M, N) affinities if ``affinity="precomputed"``
        G_new : array-like or sparse (M, K), optional
            The new items' category affinities (default 0: the SSL neighbour average). Vary
            it to explore "what-if" scenarios; the neighbours are what costs.
        lam : float or ndarray (M,), optional
            Override the trained ``lam`` (per query if an array): small trusts ``G_new``,
            large trusts the neighbours.

        Returns
        -------
        ndarray (M, K), rows on the simplex, in the type of ``X`` (CuPy for a CuPy ``X``). A
        query without neighbours (all affinities 0) gets the ``lam = 0`` answer from
        ``G_new``.
        """
        check_is_fitted(self, "assignments_")
        return self._in_input_type(self._transform(X, G_new, lam), X)

    def _transform(self, X, G_new=None, lam=None):
        """:meth:`transform` in the fitted engine's array type."""
        Wq = self._query_affinity(X)
        return lass_transform(self.assignments_, Wq, G_new,
                              self.lam if lam is None else lam)

    def predict_proba(self, X, G_new=None, lam=None):
        """Assignments of new items (:meth:`transform`), as class probabilities."""
        return self.transform(X, G_new, lam)

    def predict(self, X, G_new=None, lam=None):
        """Most-assigned class of each new item (``classes_[argmax]`` of :meth:`transform`)."""
        check_is_fitted(self, "assignments_")
        return self._in_input_type(self._labels(self._transform(X, G_new, lam)), X)

    def _labels(self, Z):
        """``classes_[argmax]`` of assignments in the fitted engine's array type."""
        engine = self._engine()
        return engine.take_labels(self.classes_, engine.xp.argmax(Z, axis=1))

    def staged_transform(self, X, G_new=None, lam=None):
        """Out-of-sample assignments after each iteration (needs ``keep_path=True``).

        Yields :meth:`transform` computed from the training assignments
        ``history_["scores"][i]`` instead of ``assignments_``, for ``i = 0, 1, ...``, as
        scikit-learn's ``staged_*`` methods of boosting. The affinities of ``X`` to the
        training items are computed once. Parameters as :meth:`transform`.

        Yields
        ------
        ndarray (M, K), rows on the simplex
        """
        for Zq in self._staged(X, G_new, lam):
            yield self._in_input_type(Zq, X)

    def staged_predict(self, X, G_new=None, lam=None):
        """Most-assigned class of each new item after each iteration (needs
        ``keep_path=True``); see :meth:`staged_transform`.

        Yields
        ------
        ndarray (M,)
        """
        for Zq in self._staged(X, G_new, lam):
            yield self._in_input_type(self._labels(Zq), X)

    def _staged(self, X, G_new, lam):
        """The out-of-sample assignments of each recorded iterate (where they live)."""
        check_is_fitted(self, "assignments_")
        if "scores" not in self.history_:
            raise ValueError("LaplacianAssignment was fitted with keep_path=False: refit "
                             "with keep_path=True to record the iterates.")
        Wq = self._query_affinity(X)
        for Z in self.history_["scores"]:
            yield lass_transform(Z, Wq, G_new, self.lam if lam is None else lam)
