"""Everything that turns data into a graph: kNN and threshold graphs, Laplacians, components."""

from .components import connected_components, split_by_component
from .laplacian import degrees, laplacian
from .neighbors import knn_graph
from .weights import cosine_threshold_graph, rbf_threshold_graph, symmetrize_graph

__all__ = [
    "knn_graph",
    "rbf_threshold_graph",
    "cosine_threshold_graph",
    "symmetrize_graph",
    "laplacian",
    "degrees",
    "connected_components",
    "split_by_component",
]
