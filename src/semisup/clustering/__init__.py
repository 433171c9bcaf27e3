"""Learning with clustering structure (Roulet, Fogel, d'Aspremont & Bach 2016).

Linear models whose weights take few distinct values (clustered features, optionally
sparse) or whose training samples split into groups with one expert each (clustered
samples), fitted by projected gradient with exact projections, Frank–Wolfe on equivalence
matrices, or alternating minimisation.
"""

from .alternating import alternating_minimization
from .estimator import ClusteredClassifier, ClusteredRegressor
from .frank_wolfe import fw_feature_clustering, fw_sample_clustering
from .multitask import multitask_penalty, pg_clustered_multitask
from .projected_gradient import projected_gradient
from .projections import project_clustered, project_kmeans, project_sparse_clustered

__all__ = [
    "ClusteredRegressor",
    "ClusteredClassifier",
    "project_clustered",
    "project_sparse_clustered",
    "project_kmeans",
    "projected_gradient",
    "fw_feature_clustering",
    "fw_sample_clustering",
    "alternating_minimization",
    "multitask_penalty",
    "pg_clustered_multitask",
]
