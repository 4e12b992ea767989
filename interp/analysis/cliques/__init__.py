"""The intervention graph, greedy clique search (Appendix A.3) and chance baselines."""

from interp.analysis.cliques.baselines import (
    chance_clique_size,
    expected_cliques,
    log10_expected_cliques,
)
from interp.analysis.cliques.graph import InterventionGraph, build_graph
from interp.analysis.cliques.search import (
    Clique,
    SearchResult,
    disjoint_cliques,
    search,
)

__all__ = [
    "Clique",
    "InterventionGraph",
    "SearchResult",
    "build_graph",
    "chance_clique_size",
    "disjoint_cliques",
    "expected_cliques",
    "log10_expected_cliques",
    "search",
]
