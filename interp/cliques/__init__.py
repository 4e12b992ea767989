"""The intervention graph, greedy clique search (Appendix A.3), chance baselines and exports."""

from interp.cliques.baselines import chance_clique_size, expected_cliques, log10_expected_cliques
from interp.cliques.graph import InterventionGraph, build_graph
from interp.cliques.report import CliqueConfig, format_cliques, parse_alphas, run_cliques
from interp.cliques.search import Clique, SearchResult, disjoint_cliques, search

__all__ = [
    "Clique",
    "CliqueConfig",
    "InterventionGraph",
    "SearchResult",
    "build_graph",
    "chance_clique_size",
    "disjoint_cliques",
    "expected_cliques",
    "format_cliques",
    "log10_expected_cliques",
    "parse_alphas",
    "run_cliques",
    "search",
]
