"""The graph Poisson equation of Poisson learning (Calder, Cook, Thorpe & Slepčev 2020).

With ``m`` labelled nodes ``x_j`` of one-hot labels ``y_j`` and their mean
``ybar = (1/m) sum_j y_j``, Poisson learning solves (their eq. 5; Algorithm 1)

.. math:: L U = \\sum_{j=1}^m (y_j - \\bar y)\\, \\delta_{x_j}^T, \\qquad
          \\sum_i d_i U_{ik} = 0 \\ \\ (k = 1, \\dots, K),

with ``L = D - W`` the unnormalized Laplacian and ``d = W 1`` the degrees. The sources sum
to zero, so the singular system is solvable on a connected graph; its solution is unique up
to a constant per column, fixed by the degree-weighted mean zero that Algorithm 1's
iteration ``U <- U + D^{-1}(B - L U)`` (started at 0) keeps, and that GraphLearning's
conjugate gradient on ``D^{-1/2} L D^{-1/2}`` keeps implicitly.

Unlike the harmonic (Laplace) solution, which flattens to a constant away from the labels as
``n`` grows with ``m`` fixed, the Poisson solution keeps its shape (their Theorem 2.3), so the
decision ``argmax_k s_k U_ik`` stays informative at one label per class.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

from .._validation import divide
from ..graph import connected_components
from ..linalg.spd import block_pcg

__all__ = ["PoissonResult", "poisson_source", "poisson_solve"]


class PoissonResult:
    """Record of :func:`poisson_solve`.

    Attributes
    ----------
    U : ndarray of shape (n, K)
        Poisson scores of every node (before any class-prior scaling); rows sum to zero.
    unreached : ndarray of int
        Nodes in components without any labelled node (their rows are zero).
    n_iter : int
        CG iterations (0 when nothing needed solving).
    converged : bool
    residual : float
        Largest relative residual of a class column on the Jacobi-scaled system.
    """

    def __init__(self, U, unreached, n_iter, converged, residual):
        self.U = U
        self.unreached = unreached
        self.n_iter = n_iter
        self.converged = converged
        self.residual = residual


def poisson_source(n, labeled_idx, y_idx, n_classes, comp=None):
    """The centred sources ``B = sum_j (e_{y_j} - ybar) delta_j`` as an ``n x K`` array.

    ``ybar`` is the mean label of the labelled nodes of the same connected component
    (``comp``: component of each node; ``None``: one component), so that the sources of
    every component sum to zero and its Poisson problem is solvable. On a connected graph
    this is the paper's global centring.
    """
    labeled_idx = np.asarray(labeled_idx, dtype=np.int64)
    y_idx = np.asarray(y_idx, dtype=np.int64)
    B = np.zeros((n, n_classes))
    np.add.at(B, (labeled_idx, y_idx), 1.0)
    c = np.zeros(n, dtype=np.int64) if comp is None else np.asarray(comp)
    cl = c[labeled_idx]
    n_comp = int(c.max()) + 1 if n else 0
    counts = np.bincount(cl, minlength=n_comp).astype(np.float64)
    mean = np.zeros((n_comp, n_classes))
    np.add.at(mean, (cl, y_idx), 1.0)
    mean /= np.where(counts > 0, counts, 1.0)[:, None]
    np.subtract.at(B, labeled_idx, mean[cl])
    return B


def poisson_solve(W, labeled_idx, y_idx, n_classes, *, tol: float = 1e-4,
                  max_iter: int | None = None) -> PoissonResult:
    """Solve the graph Poisson equation of Poisson learning on a sparse graph.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Symmetric non-negative affinity (validated by the caller), zero diagonal.
    labeled_idx : array of int of shape (m,)
        The labelled nodes (distinct).
    y_idx : array of int of shape (m,)
        Their classes, in ``0 .. n_classes - 1``.
    n_classes : int
    tol : float
        Relative residual tolerance of CG on ``L U = B``, measured on all class columns
        together: each column's residual is at most ``tol ||B||_F / sqrt(K - 1)``, so
        ``||R||_F <= tol ||B||_F``. (In the Jacobi-scaled system a labelled node of tiny
        degree would dominate ``||D^{-1/2} B||`` and stop CG before it started.)
    max_iter : int, optional
        CG iteration cap (default ``10 n``).

    Returns
    -------
    PoissonResult

    Notes
    -----
    Each connected component is its own Poisson problem: the sources are centred by the
    mean label of the component's labelled nodes (:func:`poisson_source`; the paper's
    global centring on a connected graph) and its columns get degree-weighted mean zero.
    A component whose labels all belong to one class has zero centred sources; its rows are
    set to the constant ``e_y - ybar`` (``ybar`` the global mean label), so that it takes
    that class. Components without labels get zero rows and are listed in ``unreached``.

    Every component is solved at once by Jacobi-preconditioned block CG on ``L = D - W``
    (the iterates of plain CG on the symmetric scaling ``I - D^{-1/2} W D^{-1/2}``, the
    system GraphLearning solves). ``L`` is singular with null vectors ``1_C``, to which
    the right-hand side is orthogonal, so CG started at zero stays in ``L``'s range. Rows
    of the solution sum to zero, so ``K - 1`` columns are solved and the last is minus
    their sum. Cost per iteration O(nnz(W) (K - 1)); memory O(nnz(W) + n K).
    """
    n = W.shape[0]
    K = int(n_classes)
    labeled_idx = np.asarray(labeled_idx, dtype=np.int64)
    y_idx = np.asarray(y_idx, dtype=np.int64)
    if W.nnz and not 1e-150 < W.data.max() < 1e150:
        # U scales as 1/W; degrees of weights near the float64 limits would overflow
        W = divide(W, W.data.max())   # not W * (1 / max): overflows when subnormal
    n_comp, comp = connected_components(W)
    B = poisson_source(n, labeled_idx, y_idx, K, comp)
    U = np.zeros((n, K))
    labeled_comp = np.bincount(comp[labeled_idx], minlength=n_comp) > 0
    unreached = np.nonzero(~labeled_comp[comp])[0]
    # components whose centred sources vanish (one class among their labels) need no solve
    comp_classes = np.zeros((n_comp, K), dtype=bool)
    comp_classes[comp[labeled_idx], y_idx] = True
    mixed = comp_classes.sum(axis=1) > 1
    single = labeled_comp & ~mixed
    if single.any():
        ybar = np.bincount(y_idx, minlength=K) / max(labeled_idx.size, 1)
        rows = np.nonzero(single[comp])[0]
        first_class = np.argmax(comp_classes, axis=1)
        U[rows] = np.eye(K)[first_class[comp[rows]]] - ybar
    u = np.nonzero(mixed[comp])[0]
    if u.size == 0 or K == 1:
        return PoissonResult(U, unreached, 0, True, 0.0)
    # Number the unknowns in reverse Cuthill-McKee order: the sparse block products of CG
    # then read neighbouring rows from cache (as in harmonic_solve). Order-independent.
    W_u = W[u][:, u].tocsr()
    order = reverse_cuthill_mckee(W_u, symmetric_mode=True)
    u = u[order]
    W_u = W_u[order][:, order].tocsr()
    deg = np.asarray(W_u.sum(axis=1)).ravel()   # > 0: a component with two labels has edges
    Bu = B[u, :-1]
    # one tolerance for all columns together (||R||_F), on the residual of L U = B itself:
    # measured in the Jacobi-scaled system, a labelled node of tiny degree (far from its
    # neighbours) weighs 1/sqrt(d) in ||D^{-1/2} B|| and CG stopped at once (standardised
    # digits, 3 labels per class: one iteration, every point one class)
    atol = tol * float(np.linalg.norm(Bu))
    Uu, info = block_pcg((sp.diags(deg) - W_u).tocsr(), Bu, M_diag=deg, rtol=0.0,
                         atol=atol / np.sqrt(Bu.shape[1]), maxiter=max_iter)
    # fix each component's constant: degree-weighted mean zero per column (also removes the
    # null-space drift that rounding lets into CG)
    cu = comp[u]
    vol = np.bincount(cu, weights=deg, minlength=n_comp)
    for k in range(Uu.shape[1]):
        mean_k = np.bincount(cu, weights=deg * Uu[:, k], minlength=n_comp) / \
            np.where(vol > 0, vol, 1.0)
        Uu[:, k] -= mean_k[cu]
    U[u, :-1] = Uu
    U[u, -1] = -Uu.sum(axis=1)
    residual = float(np.max(info.residuals)) if info.residuals.size else 0.0
    return PoissonResult(U, unreached, int(info.n_iter), bool(info.converged), residual)
