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

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.neighbors import NearestNeighbors
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from .._validation import check_affinity, check_semisup_labels, warn_convergence
from ..graph import connected_components, edge_weights, graph_from_neighbors, heat_sigma
from ..graph import knn_search
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
    spd = SPDSolver(A, method=solver, rtol=tol, maxiter=max_iter)
    if spd.method_ == "cg":
        Z, info = block_pcg(A, B, rtol=tol, maxiter=max_iter)
        n_iter, converged = info.n_iter, info.converged
    else:
        Z = spd.solve(B)
        n_iter, converged = 0, True
    F_u = Z * scale[:, None]
    F[u, :-1] = F_u
    F[u, -1] = 1.0 - F_u.sum(axis=1)
    return HarmonicResult(F, unreached, n_iter, converged, spd.method_)


def class_mass_normalize(F, unlabeled, prior) -> np.ndarray:
    """Class mass normalization (Zhu et al. 2003, §4).

    Column ``k`` of the unlabeled rows is rescaled so that its mass is proportional to the
    class prior ``q_k``; rows are then renormalized to sum to one. Columns with no mass are
    left as they are.
    """
    F = F.copy()
    Fu = F[unlabeled]
    mass = Fu.sum(axis=0)
    scale = np.where(mass > 0, prior / np.where(mass > 0, mass, 1.0), 1.0)
    Fu = Fu * scale
    rows = Fu.sum(axis=1, keepdims=True)
    K = F.shape[1]
    F[unlabeled] = np.where(rows > 0, Fu / np.where(rows > 0, rows, 1.0), 1.0 / K)
    return F


class HarmonicFunction(ClassifierMixin, BaseEstimator):
    """Harmonic-function label propagation on a sparse graph (Laplace learning).

    Minimises the graph energy ``tr(F^T L F)`` with the labeled rows of ``F`` clamped to
    their one-hot labels (Zhu, Ghahramani & Lafferty 2003, eqs. 3-5), by solving the sparse
    Dirichlet problem ``L_uu F_u = W_ul Y_l`` with ``L = D - W``. Unlike scikit-learn's
    ``LabelPropagation`` it never forms a dense kernel, accepts a precomputed sparse graph and
    gives isolated points and unlabeled components the uniform distribution (with a warning)
    instead of NaN.

    Parameters
    ----------
    n_neighbors : int, default=10
        Neighbours of the kNN graph (``affinity="knn"``) and of the out-of-sample mapping.
    weights : {"binary", "heat", "distance"}, default="binary"
        Edge weights of the kNN graph (see :func:`semisup.graph.knn_graph`).
    sigma : float, optional
        Heat-kernel width; ``None`` uses the mean directed kNN distance.
    affinity : {"knn", "precomputed"}, default="knn"
        ``"precomputed"``: ``X`` in ``fit`` is the symmetric non-negative ``N x N`` affinity
        ``W`` and ``X`` in ``predict`` the ``N_new x N`` affinity to the training points.
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
    n_jobs : int, optional
        Parallel jobs of the neighbour searches.
    random_state : int, optional
        Seed of the approximate neighbour search (used for large ``n`` when pynndescent is
        installed, see :func:`semisup.graph.knn_graph`).

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
    label_distributions_ : ndarray of shape (n_samples, K)
        Harmonic solution on the training points; rows sum to one.
    transduction_ : ndarray of shape (n_samples,)
        ``classes_[argmax]`` of ``label_distributions_``.
    affinity_matrix_ : scipy.sparse.csr_matrix
        The graph used.
    sigma_ : float or None
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
    """

    def __init__(self, n_neighbors=10, weights="binary", sigma=None, affinity="knn",
                 class_mass_normalization=False, solver="auto", tol=1e-8, max_iter=None,
                 n_jobs=None, random_state=None):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.sigma = sigma
        self.affinity = affinity
        self.class_mass_normalization = class_mass_normalization
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = self.affinity == "precomputed"
        return tags

    def _check_params(self):
        if self.affinity not in ("knn", "precomputed"):
            raise ValueError(f"affinity must be 'knn' or 'precomputed', got {self.affinity!r}.")
        if self.weights not in ("binary", "heat", "distance"):
            raise ValueError("weights must be 'binary', 'heat' or 'distance', "
                             f"got {self.weights!r}.")
        if self.solver not in ("auto", "direct", "cg"):
            raise ValueError(f"solver must be 'auto', 'direct' or 'cg', got {self.solver!r}.")
        if not (isinstance(self.n_neighbors, (int, np.integer)) and self.n_neighbors >= 1):
            raise ValueError(f"n_neighbors must be a positive integer, got {self.n_neighbors!r}.")
        if self.sigma is not None and not self.sigma > 0:
            raise ValueError(f"sigma must be positive, got {self.sigma!r}.")
        if not self.tol > 0:
            raise ValueError(f"tol must be positive, got {self.tol!r}.")

    def _n_neighbors(self, n):
        """``n_neighbors``, reduced (with a warning) when there are too few points."""
        if self.n_neighbors < n:
            return self.n_neighbors
        warnings.warn(f"n_neighbors={self.n_neighbors} is not smaller than the number of "
                      f"points ({n}); using {n - 1}.", UserWarning, stacklevel=3)
        return n - 1

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
        self._check_params()
        if y is None:
            raise ValueError("HarmonicFunction requires y to be passed, but the target y is "
                             "None; mark unlabeled points with -1.")
        y = column_or_1d(y, warn=True)
        if self.affinity == "precomputed":
            W = check_affinity(X)
            self.n_features_in_ = W.shape[1]
            self._nn_index = None
            self.sigma_ = None
        else:
            X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                              ensure_min_samples=2)
            k = self._n_neighbors(X.shape[0])
            dist, ind = knn_search(X, k, method="auto", n_jobs=self.n_jobs,
                                   random_state=self.random_state)
            self.sigma_ = ((self.sigma if self.sigma is not None else heat_sigma(dist))
                           if self.weights == "heat" else None)
            W = graph_from_neighbors(dist, ind, weights=self.weights, sigma=self.sigma_)
            self._nn_index = NearestNeighbors(n_neighbors=k, algorithm="brute",
                                        n_jobs=self.n_jobs).fit(X)
        n = W.shape[0]
        y, classes, labeled = check_semisup_labels(y, n)
        if type_of_target(y[labeled]) == "continuous":
            raise ValueError("Unknown label type: continuous. HarmonicFunction is a classifier; "
                             "y must hold class labels (-1 for unlabeled).")
        self.classes_ = classes
        K = classes.size
        Y_l = np.zeros((int(labeled.sum()), K))
        Y_l[np.arange(Y_l.shape[0]), np.searchsorted(classes, y[labeled])] = 1.0

        res = harmonic_solve(W, labeled, Y_l, solver=self.solver, tol=self.tol,
                             max_iter=self.max_iter)
        if not res.converged:
            warn_convergence(f"HarmonicFunction: CG stopped after {res.n_iter} iterations "
                             "before reaching tol; increase max_iter or use solver='direct'.")
        if res.unreached.size:
            warnings.warn(f"{res.unreached.size} unlabeled point(s) lie in graph components "
                          "without any labeled point (isolated points included); they get "
                          "the uniform label distribution. Increase n_neighbors or label "
                          "a point in each component.", UserWarning, stacklevel=2)
        F = res.F
        if self.class_mass_normalization:
            prior = Y_l.mean(axis=0)
            solved = ~labeled
            solved[res.unreached] = False
            F = class_mass_normalize(F, solved, prior)
        self.label_distributions_ = F
        self.transduction_ = classes[np.argmax(F, axis=1)]
        self.affinity_matrix_ = W
        self.n_iter_ = res.n_iter
        self.solver_ = res.method
        self.n_unreached_ = int(res.unreached.size)
        return self

    def predict_proba(self, X):
        """Label distributions of new points by the out-of-sample mapping.

        ``z(x) = sum_j w_j F_j / sum_j w_j`` over the ``n_neighbors`` nearest training points
        with the graph's edge weights (spec ``lass.md`` §7); a point whose weights sum to zero
        falls back to the plain neighbour average. With ``affinity="precomputed"``, ``X`` is
        the ``N_new x N_train`` affinity and all its non-zero entries are the weights; rows
        without any weight get the uniform distribution (with a warning).

        Returns
        -------
        P : ndarray of shape (n_new, K)
        """
        check_is_fitted(self, "label_distributions_")
        F = self.label_distributions_
        if self.affinity == "precomputed":
            return self._predict_precomputed(X)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                          reset=False)
        dist, ind = self._nn_index.kneighbors(X)
        w = edge_weights(np.maximum(dist, 0.0), self.weights, self.sigma_)
        s = w.sum(axis=1, keepdims=True)
        w = np.where(s > 0, w, 1.0)
        w /= w.sum(axis=1, keepdims=True)
        return np.einsum("nk,nkc->nc", w, F[ind])

    def _predict_precomputed(self, W_new):
        n_train = self.label_distributions_.shape[0]
        if sp.issparse(W_new):
            W_new = sp.csr_matrix(W_new, dtype=np.float64)
        else:
            W_new = np.asarray(W_new, dtype=np.float64)
            if W_new.ndim != 2:
                raise ValueError(f"X must be a 2-D affinity to the training points, got shape "
                                 f"{W_new.shape}.")
        if W_new.shape[1] != n_train:
            raise ValueError(f"X has {W_new.shape[1]} columns but the model was trained on "
                             f"{n_train} points; pass the N_new x N_train affinity.")
        data = W_new.data if sp.issparse(W_new) else W_new
        if not np.isfinite(data).all():
            raise ValueError("X contains NaN or infinite value(s).")
        if data.size and data.min() < 0:
            raise ValueError("X has negative affinities; affinities must be non-negative.")
        num = np.asarray(W_new @ self.label_distributions_)
        s = np.asarray(W_new.sum(axis=1)).reshape(-1, 1)
        K = self.classes_.size
        empty = s[:, 0] <= 0
        if empty.any():
            warnings.warn(f"{int(empty.sum())} new point(s) have no affinity to any training "
                          "point; they get the uniform label distribution.", UserWarning,
                          stacklevel=3)
        return np.where(s > 0, num / np.where(s > 0, s, 1.0), 1.0 / K)

    def predict(self, X):
        """Most probable class of new points (see :meth:`predict_proba`)."""
        check_is_fitted(self, "label_distributions_")
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
