"""Harmonic-function label propagation (Laplace learning).

Zhu, Ghahramani & Lafferty (2003), "Semi-supervised learning using Gaussian fields and
harmonic functions", ICML. With the unnormalized Laplacian ``L = D - W`` split into labeled
(``l``) and unlabeled (``u``) blocks and the labels one-hot in ``Y_l``, the harmonic function
minimises ``tr(F^T L F)`` with ``F_l = Y_l`` fixed (their eq. 3), i.e. it solves the
Dirichlet problem (their eq. 5)

.. math:: L_{uu} F_u = W_{ul} Y_l .

``F_u`` rows lie in the probability simplex (maximum principle; spec ``lass.md`` §7,
Thm 5.1), so they are label distributions without any projection.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee
from numbers import Integral, Real

from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._base import SemiSupervisedMixin, _fit_context, _store_init_params
from .._progress import log
from .._validation import check_semisup_labels, divide, warn_convergence
from ..engines import array_namespace, engine_for
from ..graph import connected_components
from ..graph.degeneracy import warn_if_flat
from ..graph.frontend import GRAPH_PARAMETER_CONSTRAINTS, GraphMixin
from ..linalg.spd import SPDSolver, block_pcg

__all__ = ["HarmonicFunction", "harmonic_solve", "HarmonicResult"]


class HarmonicResult:
    """Record of :func:`harmonic_solve`.

    Attributes
    ----------
    F : ndarray of shape (n, K)
        Label distributions of every node (labeled rows are their one-hot labels).
    unreached : ndarray of int
        Unlabeled nodes in components without any labeled node (their rows are uniform).
    n_iter : int
        CG iterations (0 for a direct solve).
    converged : bool
    method : str
        The linear solver used ("dense-cholesky", "splu", "cg" or "none").
    """

    def __init__(self, F, unreached, n_iter, converged, method):
        self.F = F
        self.unreached = unreached
        self.n_iter = n_iter
        self.converged = converged
        self.method = method


def harmonic_solve(W, labeled, Y_l, *, solver: str = "auto", tol: float = 1e-8,
                   max_iter: int | None = None) -> HarmonicResult:
    """Solve the harmonic (Dirichlet) problem ``L_uu F_u = W_ul Y_l`` on a sparse graph.

    Unlabeled nodes whose connected component holds no labeled node (isolated points
    included) make ``L_uu`` singular; they get the uniform distribution and are listed in
    ``unreached``. The remaining system is block diagonal with one positive definite block per
    component that holds a label, so it is solved once for all components.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Symmetric non-negative affinity (validated by the caller), zero diagonal.
    labeled : ndarray of bool of shape (n,)
    Y_l : ndarray of shape (n_labeled, K)
        Label distributions of the labeled nodes (rows in the probability simplex, e.g.
        one-hot), in the order of ``np.nonzero(labeled)``.
    solver : {"auto", "direct", "cg"}
        See :class:`semisup.linalg.spd.SPDSolver`: Cholesky (dense for small systems, sparse
        when the fill is low) or Jacobi-preconditioned block CG; ``auto`` picks by size and
        fill (kNN graphs of real data go to CG).
    tol : float
        Relative residual tolerance of CG, per class column, measured on the Jacobi-scaled
        system ``D_uu^{-1/2} L_uu D_uu^{-1/2}``.
    max_iter : int, optional
        CG iteration cap (default ``10 * n_u``).

    Returns
    -------
    HarmonicResult

    Notes
    -----
    Cost: direct, one sparse/dense Cholesky of ``L_uu``; CG, O(nnz(W) (K - 1)) per
    iteration, with ``K - 1`` right-hand sides since rows sum to one.
    """
    n = W.shape[0]
    K = Y_l.shape[1]
    if W.nnz and not 1e-150 < W.data.max() < 1e150:
        # the solution does not change when W is scaled; degrees of weights near the
        # float64 limits would overflow (or lose their digits) otherwise
        W = divide(W, W.data.max())
    if Y_l.size and (Y_l.min() < 0 or not np.allclose(Y_l.sum(axis=1), 1.0)):
        raise ValueError("Y_l rows must be label distributions (non-negative, summing to 1).")
    F = np.empty((n, K))
    F[labeled] = Y_l
    n_comp, comp = connected_components(W)
    has_label = np.bincount(comp[labeled], minlength=n_comp) > 0
    unlabeled = ~labeled
    reached = unlabeled & has_label[comp]
    unreached = np.nonzero(unlabeled & ~has_label[comp])[0]
    F[unreached] = 1.0 / K
    u = np.nonzero(reached)[0]
    if u.size == 0:
        return HarmonicResult(F, unreached, 0, True, "none")
    if K == 1:
        F[u] = 1.0
        return HarmonicResult(F, unreached, 0, True, "none")
    l_idx = np.nonzero(labeled)[0]
    # Number the unknowns in reverse Cuthill-McKee order: neighbours get nearby indices, so
    # the sparse block products of CG read their rows from cache (on the exact 10-NN graph of
    # MNIST this halved the product time). The solution does not depend on the order.
    W_u = W[u]
    order = reverse_cuthill_mckee(W_u[:, u].tocsr(), symmetric_mode=True)
    u = u[order]
    W_u = W_u[order]
    # Rows of the solution sum to one (L 1 = 0, lass.md §7), so the last class column is
    # 1 - (sum of the others): one right-hand side less to carry through the solve.
    B = np.asarray(W_u[:, l_idx] @ Y_l[:, :-1])
    # Every reached node has an edge (its component holds a label), so d_u > 0. Solving the
    # symmetrically scaled system (I - S W_uu S) Z = S B, F_u = S Z with S = D_uu^{-1/2} is
    # Jacobi-preconditioned CG with a unit diagonal: the same iterates, one pass less per
    # iteration (the preconditioner application disappears).
    scale = 1.0 / np.sqrt(np.asarray(W_u.sum(axis=1)).ravel())
    S = sp.diags(scale)
    A = (sp.identity(u.size, format="csr") - S @ W_u[:, u] @ S).tocsr()
    B *= scale[:, None]
    try:
        Z, n_iter, converged, method = _solve_scaled(A, B, solver, tol, max_iter)
    except np.linalg.LinAlgError:
        # Numerically singular: some unlabeled nodes reach the labels only through weights
        # that vanish next to their degree (e.g. a heat width far below the point spacing),
        # so 1 - lambda_max(S W_uu S) rounds to 0. Solve the leaky problem
        # (L_uu + delta D_uu) F = W_ul Y_l + delta D_uu / K instead: an M-matrix system whose
        # rows still sum to one and stay non-negative, and that differs from the harmonic
        # solution by O(delta) wherever the labels are reachable in floating point.
        delta = _LEAK
        A = (A + delta * sp.identity(u.size, format="csr")).tocsr()
        B = B + (delta / K) / scale[:, None]     # S (delta D_uu / K) = delta D^{1/2} / K
        Z, n_iter, converged, method = _solve_scaled(A, B, solver, tol, max_iter)
        warnings.warn("the graph is numerically disconnected: some unlabeled points reach "
                      "the labeled ones only through edge weights that vanish next to their "
                      f"degree, so the harmonic problem is singular in floating point; it was "
                      f"solved with a leak of {delta:g} toward the uniform distribution. "
                      "Increase graph_sigma (heat weights) or n_neighbors.", UserWarning,
                      stacklevel=4)
    F_u = Z * scale[:, None]
    F[u, :-1] = F_u
    F[u, -1] = 1.0 - F_u.sum(axis=1)
    # rounding (ill-conditioned graphs) can leave rows a few ulps off the simplex, where the
    # maximum principle puts the exact solution: clip and renormalise
    Fu = np.clip(F[u], 0.0, 1.0)
    F[u] = Fu / Fu.sum(axis=1, keepdims=True)
    return HarmonicResult(F, unreached, n_iter, converged, method)


#: relative leak of the fallback for numerically singular harmonic problems
_LEAK = 1e-10


def _solve_scaled(A, B, solver, tol, max_iter):
    spd = SPDSolver(A, method=solver, rtol=tol, maxiter=max_iter)
    if spd.method_ == "cg":
        Z, info = block_pcg(A, B, rtol=tol, maxiter=max_iter)
        return Z, info.n_iter, info.converged, "cg"
    return spd.solve(B), 0, True, spd.method_


def class_mass_normalize(F, unlabeled, prior) -> np.ndarray:
    """Class mass normalization (Zhu et al. 2003, §4).

    Column ``k`` of the unlabeled rows is rescaled so that its mass is proportional to the
    class prior ``q_k``; rows are then renormalized to sum to one. Columns with no mass are
    left as they are.
    """
    xp = array_namespace(F)                # F where it lives (numpy, or e.g. CuPy)
    unlabeled = xp.asarray(unlabeled)
    prior = xp.asarray(prior)
    F = F.copy()
    Fu = F[unlabeled]
    mass = Fu.sum(axis=0)
    scale = xp.where(mass > 0, prior / xp.where(mass > 0, mass, 1.0), 1.0)
    Fu = Fu * scale
    rows = Fu.sum(axis=1, keepdims=True)
    K = F.shape[1]
    F[unlabeled] = xp.where(rows > 0, Fu / xp.where(rows > 0, rows, 1.0), 1.0 / K)
    return F


class HarmonicFunction(SemiSupervisedMixin, GraphMixin, ClassifierMixin, BaseEstimator):
    """Harmonic-function label propagation on a sparse graph (Laplace learning).

    Minimises the graph energy ``tr(F^T L F)`` with the labeled rows of ``F`` clamped to
    their one-hot labels (Zhu, Ghahramani & Lafferty 2003, eqs. 3-5), by solving the sparse
    Dirichlet problem ``L_uu F_u = W_ul Y_l`` with ``L = D - W``. Unlike scikit-learn's
    ``LabelPropagation`` it never forms a dense kernel, accepts a precomputed sparse graph and
    gives isolated points and unlabeled components the uniform distribution (with a warning)
    instead of NaN.

    Parameters
    ----------
    affinity, n_neighbors, weights, graph_sigma, threshold, metric, knn_method, n_jobs, \
random_state :
        The graph parameters, shared by every graph-based estimator
        (:mod:`semisup.graph.frontend`): ``affinity="knn"`` (default) builds the symmetric
        ``n_neighbors``-NN graph of ``X`` with heat weights of width ``graph_sigma`` (None:
        the mean kNN distance); ``"precomputed"`` takes ``X`` as the ``N x N`` affinity in
        ``fit`` and the ``N_new x N`` affinities to the training points in ``predict``.
    class_mass_normalization : bool, default=False
        Rescale the class columns so that their masses match the labeled class proportions
        (Zhu et al. 2003, §4).
    solver : {"auto", "direct", "cg"}, default="auto"
        Linear solver of the Dirichlet problem: sparse/dense Cholesky (``direct``) or
        Jacobi-preconditioned block CG (``cg``); ``auto`` lets
        :class:`semisup.linalg.spd.SPDSolver` decide by size and fill.
    tol : float, default=1e-8
        Relative residual tolerance of CG (on the Jacobi-scaled system, per class).
    max_iter : int, optional
        CG iteration cap (default ten times the number of unknowns).
    verbose : bool, default=False
        Report the graph and the solve on stderr.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
    label_distributions_ : ndarray of shape (n_samples, K)
        Harmonic solution on the training points; rows sum to one.
    transduction_ : ndarray of shape (n_samples,)
        ``classes_[argmax]`` of ``label_distributions_``.
    affinity_matrix_ : scipy.sparse.csr_matrix
        The graph used.
    graph_sigma_ : float or None
        Heat-kernel width used (``weights="heat"``).
    n_iter_ : int
        CG iterations (0 for direct solves).
    solver_ : str
        The linear solver used.
    n_unreached_ : int
        Unlabeled training points in components without labels (given uniform rows).

    Notes
    -----
    Cost: the kNN graph (O(n^2 d) exact, or NN-descent), then one sparse solve with K - 1
    right-hand sides: O(nnz(W) K) per CG iteration. Memory O(nnz(W) + n K). On the exact
    10-NN graph of MNIST (70 000 points, 10 labels per class) the solve takes about 130 CG
    iterations at ``tol=1e-8`` (``docs/benchmarks/foundation.md``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from semisup import HarmonicFunction
    >>> X, y = make_moons(200, noise=0.05, random_state=0)
    >>> y_train = np.full_like(y, -1)                  # -1: unlabeled
    >>> y_train[:5] = y[:5]
    >>> hf = HarmonicFunction(n_neighbors=10).fit(X, y_train)
    >>> float((hf.transduction_ == y).mean()) > 0.95
    True
    """

    _device_fit = True     # a CuPy X: graph and CG on the device (semisup.engines.cupy)

    _parameter_constraints = {
        **GRAPH_PARAMETER_CONSTRAINTS,
        "class_mass_normalization": ["boolean"],
        "solver": [StrOptions({"auto", "direct", "cg"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "verbose": ["verbose"],
    }

    def __init__(self, *, affinity="knn", n_neighbors=10, weights="heat", graph_sigma=None,
                 threshold=None, metric="euclidean", knn_method="auto", n_jobs=None,
                 random_state=None, class_mass_normalization=False, solver="auto", tol=1e-8,
                 max_iter=None, verbose=False):
        _store_init_params(self, locals())

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the harmonic function.

        Parameters
        ----------
        X : array-like or sparse of shape (n_samples, n_features), or (n_samples, n_samples)
            Training points, or the affinity ``W`` when ``affinity="precomputed"``.
        y : array-like of shape (n_samples,)
            Labels of any type; ``-1`` marks unlabeled points.

        Returns
        -------
        self
        """
        y = self._host_labels(y)
        y = check_semisup_labels(y, estimator="HarmonicFunction")[0]  # before the graph
        if self.solver == "direct" and not engine_for(X).host_arrays:
            raise ValueError(f"solver='direct' is not available on the {engine_for(X).name} "
                             "engine, which solves by CG; use solver='auto' or 'cg'.")
        t0 = time.perf_counter()
        W, _ = self._fit_graph(X)
        n = W.shape[0]
        y, classes, labeled = check_semisup_labels(y, n, estimator="HarmonicFunction")
        log(f"[HarmonicFunction] graph: {n} points, {W.nnz // 2} edges "
            f"({time.perf_counter() - t0:.2f} s)", self.verbose)
        self.classes_ = classes
        K = classes.size
        Y_l = np.zeros((int(labeled.sum()), K))
        Y_l[np.arange(Y_l.shape[0]), np.searchsorted(classes, y[labeled])] = 1.0

        engine = self._engine()
        solve = getattr(engine, "harmonic_solve", None)
        if solve is None:
            res = harmonic_solve(W, labeled, Y_l, solver=self.solver, tol=self.tol,
                                 max_iter=self.max_iter)
        else:   # the engine's CG where the graph lives (e.g. on the GPU)
            F, n_iter, converged, unreached = solve(W, labeled, Y_l, tol=self.tol,
                                                    max_iter=self.max_iter)
            res = HarmonicResult(F, unreached, n_iter, converged, "cg")
        xp = engine.xp
        log(f"[HarmonicFunction] {res.method} solve: {res.n_iter} iterations, "
            f"converged={res.converged} ({time.perf_counter() - t0:.2f} s)", self.verbose)
        if not res.converged:
            warn_convergence(f"HarmonicFunction: CG stopped after {res.n_iter} iterations "
                             "before reaching tol; increase max_iter or use solver='direct'.")
        self._warn_unreached(W, labeled, "they get the uniform label distribution.",
                             n_unreached=res.unreached.size)
        F = res.F
        solved = np.ones(n, dtype=bool)
        solved[res.unreached] = False          # their uniform rows are not the solution's
        warn_if_flat(F[xp.asarray(solved)], labeled[solved], "HarmonicFunction")
        if self.class_mass_normalization:
            prior = Y_l.mean(axis=0)
            solved = ~labeled
            solved[res.unreached] = False
            F = class_mass_normalize(F, solved, prior)
        self.label_distributions_ = F
        self.transduction_ = engine.take_labels(classes, xp.argmax(F, axis=1))
        self.n_iter_ = int(res.n_iter)
        self.solver_ = res.method
        self.n_unreached_ = int(res.unreached.size)
        return self

    def predict_proba(self, X):
        """Label distributions of new points by the out-of-sample mapping.

        ``z(x) = sum_j w_j F_j / sum_j w_j`` over the training points with the graph's
        affinities to ``x`` (its ``n_neighbors`` nearest training points for
        ``affinity="knn"``; spec ``lass.md`` §7). With ``affinity="precomputed"``, ``X`` is
        the ``N_new x N_train`` affinity. A point whose affinities sum to zero falls back to
        the plain average of its kNN neighbours, or (no neighbour at all) the uniform
        distribution, with a warning.

        Returns
        -------
        P : ndarray of shape (n_new, K)
        """
        check_is_fitted(self, "label_distributions_")
        return self._in_input_type(self._query_proba(X), X)

    def _query_proba(self, X):
        """:meth:`predict_proba` in the fitted engine's array type."""
        Wq = self._query_affinity(X)
        F = self.label_distributions_
        xp = self._engine().xp
        s, num = self._affinity_average(Wq, F)
        empty = s <= 0
        if bool(empty.any()):
            warnings.warn(f"{int(empty.sum())} new point(s) have no affinity to any training "
                          "point; they get the uniform label distribution.", UserWarning,
                          stacklevel=3)
        K = self.classes_.size
        P = xp.where(s[:, None] > 0, num / xp.where(s > 0, s, 1.0)[:, None], 1.0 / K)
        # rounding can leave a row a few ulps off the simplex: clip and renormalise
        P = xp.clip(P, 0.0, 1.0)
        return P / P.sum(axis=1, keepdims=True)

    def predict(self, X):
        """Most probable class of new points (see :meth:`predict_proba`)."""
        check_is_fitted(self, "label_distributions_")
        engine = self._engine()
        labels = engine.take_labels(self.classes_, engine.xp.argmax(self._query_proba(X),
                                                                      axis=1))
        return self._in_input_type(labels, X)

