"""Greedy search for disjoint cliques with a causal edge (Geiger, Richardson & Potts 2020, Appendix A.3).

One search with threshold α:

1. remove the node with the fewest causal edges until every remaining node
   has at least α causal edges (the paper writes "until the node with the
   least number of causal edges has less than α"; read as the point where
   removal stops, which leaves the α-core of the causal-edge graph);
2. then remove the node with the fewest edges (causal or not) until the
   remaining nodes form a clique. Ties go to the lowest example index.

The clique is peeled off and the search repeated with the same α on what is
left, giving disjoint cliques, until no node has α causal edges. Only
cliques with at least one causal edge are kept (without one, the subset
holds a single value of lexrel and says nothing about its causal role).
The paper ran α = 1..10 and kept the best: here the largest first clique,
then the most examples covered.

Usage::

    result = search(graph, alphas=range(1, 11))
    result.best_alpha, [len(c) for c in result.cliques[result.best_alpha]]

Speed: step 1 removes all nodes under α at once (the α-core is the same
whatever the order), step 2 keeps degrees in a vector updated by one
adjacency row per removal, on the α-core only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from interp.cliques.graph import InterventionGraph
from interp.errors import ConfigError

_REMOVED = np.iinfo(np.int32).max


def causal_core(causal: np.ndarray, alive: np.ndarray, alpha: int) -> np.ndarray:
    """The nodes of ``alive`` left after step 1: each with ≥ ``alpha`` causal edges among them (bool ``[n]``)."""
    alive = alive.copy()
    degree = causal[:, alive].sum(axis=1)
    while True:
        drop = alive & (degree < alpha)
        if not drop.any():
            return alive
        alive &= ~drop
        degree -= causal[:, drop].sum(axis=1)


def peel_to_clique(edges: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """Step 2 on ``nodes`` (sorted indices): remove the lowest-degree node (lowest index on ties) until a clique remains.

    Returns:
        The clique's node indices, sorted.
    """
    sub = edges[np.ix_(nodes, nodes)].astype(np.int32)
    degree = sub.sum(axis=1)
    remaining = len(nodes)
    alive = np.ones(len(nodes), dtype=bool)
    while remaining > 1:
        v = int(np.argmin(degree))
        if degree[v] == remaining - 1:
            break
        alive[v] = False
        degree -= sub[v]
        degree[v] = _REMOVED
        remaining -= 1
    return nodes[alive]


@dataclass(frozen=True)
class Clique:
    """A clique found by the search, as sorted node indices, with its causal-edge count."""

    nodes: np.ndarray
    causal_edges: int

    def __len__(self) -> int:
        return len(self.nodes)


def disjoint_cliques(graph: InterventionGraph, alpha: int) -> list[Clique]:
    """Every clique with a causal edge that repeated searches at one α find, in the order found."""
    if alpha < 1:
        raise ConfigError(f"α must be at least 1, got {alpha}")
    alive = np.ones(graph.n_nodes, dtype=bool)
    found: list[Clique] = []
    while True:
        alive = causal_core(graph.causal, alive, alpha)
        if not alive.any():
            return found
        clique = peel_to_clique(graph.edges, np.flatnonzero(alive))
        causal_edges = int(graph.causal[np.ix_(clique, clique)].sum() // 2)
        if causal_edges > 0:
            found.append(Clique(clique, causal_edges))
        alive[clique] = False


@dataclass(frozen=True)
class SearchResult:
    """Cliques per α, and the best α (largest first clique, then most examples covered, then smallest α)."""

    cliques: dict[int, list[Clique]]
    best_alpha: int | None

    @property
    def best(self) -> list[Clique]:
        return self.cliques[self.best_alpha] if self.best_alpha is not None else []


def search(graph: InterventionGraph, alphas=range(1, 11)) -> SearchResult:
    """Run :func:`disjoint_cliques` for each α and pick the best.

    Raises:
        ConfigError: no α given, or one below 1.
    """
    alphas = list(alphas)
    if not alphas:
        raise ConfigError("no α value to search with")
    cliques = {alpha: disjoint_cliques(graph, alpha) for alpha in alphas}

    def score(alpha: int) -> tuple[int, int, int]:
        found = cliques[alpha]
        return (len(found[0]) if found else 0, sum(len(c) for c in found), -alpha)

    best = max(alphas, key=score)
    return SearchResult(cliques, best if cliques[best] else None)
