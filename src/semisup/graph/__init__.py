"""Everything that turns data into a graph: kNN and threshold graphs, Laplacians, components."""

from .components import connected_components, split_by_component
from .laplacian import degrees, laplacian
from .neighbors import edge_weights, graph_from_neighbors, heat_sigma, knn_graph, knn_search
from .weights import cosine_threshold_graph, rbf_threshold_graph, symmetrize_graph

__all__ = [
    "knn_graph",
    "knn_search",
    "graph_from_neighbors",
    "edge_weights",
    "heat_sigma",
    "rbf_threshold_graph",
    "cosine_threshold_graph",
    "symmetrize_graph",
    "laplacian",
    "degrees",
    "connected_components",
    "split_by_component",
]
