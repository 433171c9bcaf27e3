"""Projected gradient with backtracking (Roulet et al. 2016, Algorithm 3 and §4.3; spec §4).

Each step moves along the negative gradient and projects onto the clustered set (an exact
dynamic program for vectors, k-means++ for matrices). A step is accepted only if the
objective *after projection* decreases; the step then grows by ``grow``, otherwise it
shrinks by ``shrink`` and the step is retried.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from .._progress import log
from .._validation import warn_convergence
from .problems import FeatureProblem, SampleProblem
from .projections import Projection, project_clustered, project_kmeans, project_sparse_clustered

__all__ = ["PGResult", "projected_gradient", "feature_projector", "sample_projector",
           "pg_feature_clustering", "pg_sample_clustering"]


class PGResult(NamedTuple):
    """Solution ``W`` (feasible), its clustering, objective value and iteration record."""

    W: np.ndarray
    labels: np.ndarray
    centers: np.ndarray
    objective: float
    n_iter: int
    history: list
    converged: bool


def projected_gradient(objective: Callable, gradient: Callable, project: Callable, W0, step,
                       *, grow=2.0, shrink=0.5, min_step=1e-10, tol=1e-12, max_iter=1000,
                       verbose=False, advice="increase max_iter or tol.") -> PGResult:
    """Minimise ``objective`` over a clustered set by projected gradient with backtracking.

    Algorithm 3 of the paper with the backtracking of §4.3: ``W+ = P(W - step * grad(W))``;
    accept if ``objective(W+) < objective(W)`` (then ``step *= grow``), else
    ``step *= shrink`` and retry. Stops when an accepted step changes the objective by at
    most ``tol``, or when no step above ``min_step`` decreases it (a fixed point).

    Parameters
    ----------
    objective, gradient : callables on arrays shaped like ``W0``
    project : callable returning a :class:`~semisup.clustering.projections.Projection`
    W0 : ndarray
        Starting point; it is projected first, so LS weights give the LSK start.
    step : float
        Initial step (1/L is the natural choice).
    grow, shrink : float
        Step multipliers on acceptance (a > 1) and rejection (0 < b < 1).
    min_step, tol : float
    max_iter : int
        Maximal number of accepted steps.
    verbose : bool
    advice : str
        What the ConvergenceWarning (at ``max_iter``) recommends.

    Returns
    -------
    PGResult
        ``history`` holds the objective after each accepted step (non-increasing).

    Notes
    -----
    Cost per trial: one gradient, one projection, one objective.
    """
    proj = project(np.asarray(W0, dtype=np.float64))
    W, f = proj.point, objective(proj.point)
    history = [f]
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        G = gradient(W)
        while True:
            cand = project(W - step * G)
            f_new = objective(cand.point)
            if f_new < f:
                step *= grow
                break
            step *= shrink
            if step < min_step:
                cand = None
                break
        if cand is None:  # no decreasing step: W is a fixed point of the projected step
            converged = True
            it -= 1
            break
        done = abs(f - f_new) <= tol
        W, f, proj = cand.point, f_new, cand
        history.append(f)
        if verbose and it % 10 == 0:
            log(f"[pg] iter {it} objective {f:.6g} step {step:.3g}")
        if done:
            converged = True
            break
    if not converged:
        warn_convergence(f"projected gradient stopped after max_iter={max_iter} accepted steps "
                         f"with the objective still changing by more than {tol:.3g} per step "
                         "(the estimators' tol times the objective at 0); " + advice)
    return PGResult(W, proj.labels, proj.centers, f, it, history, converged)


def feature_projector(n_clusters, sparsity=None, intercept=False, *, random_state=None,
                      n_init=10):
    """Projection of a (d [+1], K) variable whose d first rows are clustered.

    K = 1: exact DP (plain, or sparse+clustered when ``sparsity`` is set); K > 1: k-means++
    on the rows. The intercept row, if any, is left untouched.
    """
    state = {"centers": None}

    def project(T):
        W = T[:-1] if intercept else T
        if W.shape[1] == 1:
            w = W[:, 0]
            p = (project_clustered(w, n_clusters) if sparsity is None
                 else project_sparse_clustered(w, sparsity, n_clusters))
            point = p.point[:, None]
            centers = p.centers[:, None]
        else:
            if sparsity is not None:
                raise ValueError("sparsity is only supported with a single weight vector "
                                 "(regression or binary classification).")
            # restarts only for the first projection; later ones warm-start from the last
            p = project_kmeans(W, n_clusters, random_state=random_state,
                               n_init=n_init if state["centers"] is None else 0,
                               init=state["centers"])
            point, centers = p.point, p.centers
            state["centers"] = centers
        if intercept:
            point = np.vstack([point, T[-1:]])
        return Projection(point, p.labels, centers)

    return project


def sample_projector(n_clusters, *, random_state=None, n_init=10):
    """k-means++ projection of an (n, d, K) per-sample variable onto <= Q distinct matrices."""
    state = {"centers": None}

    def project(W):
        n = W.shape[0]
        p = project_kmeans(W.reshape(n, -1), n_clusters, random_state=random_state,
                           n_init=n_init if state["centers"] is None else 0,
                           init=state["centers"])
        state["centers"] = p.centers
        return Projection(p.point.reshape(W.shape), p.labels, p.centers.reshape(-1, *W.shape[1:]))

    return project


def _step(problem) -> float:
    """1 / L, or 1 when L = 0: a zero (e.g. one-sample, centred) design makes the smooth
    part constant, and any step is exact."""
    L = problem.lipschitz()
    return 1.0 / L if L > 0 else 1.0


def pg_feature_clustering(problem: FeatureProblem, n_clusters, W0, *, sparsity=None,
                          random_state=None, **kw) -> PGResult:
    """PG for feature clustering (spec §4), step 1/L; ``kw`` goes to :func:`projected_gradient`."""
    project = feature_projector(n_clusters, sparsity, problem.intercept,
                                random_state=random_state)
    return projected_gradient(problem.objective, problem.gradient, project, W0,
                              _step(problem), **kw)


def pg_sample_clustering(problem: SampleProblem, n_clusters, W0, *, random_state=None,
                         n_init=3, **kw) -> PGResult:
    """PG for sample clustering (spec §4): W has shape (n, d, K); k-means++ projections."""
    project = sample_projector(n_clusters, random_state=random_state, n_init=n_init)
    return projected_gradient(problem.objective, problem.gradient, project, W0,
                              _step(problem), **kw)
