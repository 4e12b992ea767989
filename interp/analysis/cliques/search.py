"""Greedy search for disjoint cliques with a causal edge (Geiger, Richardson & Potts 2020, Appendix A.3).

One search with threshold α:

1. remove the node with the fewest causal edges until every remaining node
   has at least α causal edges (the paper writes "until the node with the
   least number of causal edges has less than α"; read as the point where
   removal stops, which leaves the α-core of the causal-edge graph);
2. then remove the node with the fewest edges (causal or not) until the
   remaining nodes form a clique. Ties go to the lowest example index.

The clique is peeled off and the search repeated with the same α on what is
left, giving disjoint cliques, until no node has α causal edges (or, with
``min_size``, until a clique smaller than that turns up). Only
cliques with at least one causal edge are kept (without one, the subset
holds a single value of lexrel and says nothing about its causal role).
The paper ran α = 1..10 and kept the best: here the largest first clique,
then the most examples covered.

Usage::

    result = search(graph, alphas=range(1, 11))
    result.best_alpha, [len(c) for c in result.cliques[result.best_alpha]]

Speed: step 1 removes all nodes under α at once (the α-core is the same
whatever the order). Degrees are kept up to date across searches, never
recounted. Step 2 costs two numpy calls a removal (argmin, and subtracting
the removed node's adjacency row), and a step 2 already run on the same node
set at another α is looked up, not repeated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from interp.analysis.cliques.graph import InterventionGraph
from interp.core.checks import check_int
from interp.core.errors import ConfigError, named


def causal_core(causal: np.ndarray, alive: np.ndarray, alpha: int, degree: np.ndarray) -> np.ndarray:
    """Step 1: the nodes of ``alive`` with ≥ ``alpha`` causal edges among themselves, the α-core (bool ``[n]``).

    ``degree`` holds each node's causal-edge count within ``alive`` and is
    updated in place for the nodes removed.
    """
    alive = alive.copy()
    while True:
        drop = alive & (degree < alpha)
        if not drop.any():
            return alive
        alive &= ~drop
        degree -= causal[drop].sum(axis=0, dtype=degree.dtype)


class _Workspace:
    """What every search on one graph shares: the adjacency as signed rows, and step-2 results by node set."""

    def __init__(self, graph: InterventionGraph):
        n = graph.n_nodes
        self.gone = 2 * n + 2  # added to a removed node's degree, so argmin never picks it again
        self.dtype = np.int16 if 3 * n + 2 < np.iinfo(np.int16).max else np.int32
        rows = graph.edges.astype(self.dtype)
        np.fill_diagonal(rows, -self.gone)  # removing v subtracts row v: neighbours lose 1, v gains `gone`
        self.rows = list(rows)  # bound once: the step-2 loop is call-bound
        self.memo: dict[bytes, np.ndarray] = {}

    def peel_to_clique(self, alive: np.ndarray, degree: np.ndarray) -> np.ndarray:
        """Step 2: from ``alive`` (bool ``[n]``; ``degree`` its nodes' edge counts within it) remove the
        lowest-degree node, lowest index on ties, until a clique remains; its sorted indices."""
        key = alive.tobytes()
        if key in self.memo:
            return self.memo[key]
        n = len(alive)
        work = degree.astype(self.dtype)
        work[~alive] += self.gone
        argmin, subtract, rows = work.argmin, np.subtract, self.rows
        remaining = int(alive.sum())
        while remaining > 1:
            v = argmin()
            if work[v] == remaining - 1:
                break
            subtract(work, rows[v], out=work)
            remaining -= 1
        clique = np.flatnonzero(work < n)  # live nodes have at most n - 1, removed ones at least n + 2
        self.memo[key] = clique
        return clique


@dataclass(frozen=True)
class Clique:
    """A clique found by the search, as sorted node indices, with its causal-edge count."""

    nodes: np.ndarray
    causal_edges: int

    def __len__(self) -> int:
        return len(self.nodes)


def disjoint_cliques(
    graph: InterventionGraph, alpha: int, min_size: int | None = None, workspace: _Workspace | None = None
) -> list[Clique]:
    """The cliques with a causal edge that repeated searches at one α find, in the order found.

    Peeling goes on until no node has ``alpha`` causal edges, or, with
    ``min_size``, until a search ends in a clique smaller than that (it is
    not reported). Searches at several α on one graph share a workspace:
    in a dense graph their α-cores are often the same node sets, and step 2
    on a set already seen is looked up.
    """
    if alpha < 1:
        raise ConfigError(f"α must be at least 1, got {alpha}")
    space = workspace or _Workspace(graph)
    alive = np.ones(graph.n_nodes, dtype=bool)
    causal_degree = graph.causal.sum(axis=1, dtype=np.int32)
    degree = graph.edges.sum(axis=1, dtype=np.int32)
    found: list[Clique] = []
    while True:
        core = causal_core(graph.causal, alive, alpha, causal_degree)
        degree -= graph.edges[alive & ~core].sum(axis=0, dtype=np.int32)
        alive = core
        if not alive.any():
            return found
        clique = space.peel_to_clique(alive, degree)
        if min_size is not None and len(clique) < min_size:
            return found
        causal_edges = int(graph.causal[np.ix_(clique, clique)].sum() // 2)
        if causal_edges > 0:
            found.append(Clique(clique, causal_edges))
        alive = alive.copy()
        alive[clique] = False
        causal_degree -= graph.causal[clique].sum(axis=0, dtype=np.int32)
        degree -= graph.edges[clique].sum(axis=0, dtype=np.int32)


@dataclass(frozen=True)
class SearchResult:
    """Cliques per α, and the best α (largest first clique, then most examples covered, then smallest α)."""

    cliques: dict[int, list[Clique]]
    best_alpha: int | None

    @property
    def best(self) -> list[Clique]:
        return self.cliques[self.best_alpha] if self.best_alpha is not None else []


def check_alphas(alphas) -> list[int]:
    """``alphas`` as a non-empty list of integers of at least 1.

    Raises:
        ConfigError: naming ``alphas=``.
    """
    if isinstance(alphas, (str, bytes)) or not hasattr(alphas, "__iter__"):
        raise ConfigError(f"{named('alphas')} must be a list of α values (integers of at least 1, e.g. range(1, 11)), got {alphas!r}")
    alphas = list(alphas)
    if not alphas:
        raise ConfigError(f"{named('alphas')} is empty; give α values to search with (integers of at least 1, e.g. range(1, 11))")
    return [check_int(a, "alphas", least=1) for a in alphas]


def search(graph: InterventionGraph, alphas=range(1, 11), min_size: int | None = None) -> SearchResult:
    """Run :func:`disjoint_cliques` for each α and pick the best.

    Raises:
        ConfigError: naming ``alphas=`` (none given, or one not an integer of at least 1) or ``min_size=`` (below 2).
    """
    alphas = check_alphas(alphas)
    check_int(min_size, "min_size", least=2, optional=True)
    space = _Workspace(graph)
    cliques = {alpha: disjoint_cliques(graph, alpha, min_size, space) for alpha in alphas}

    def score(alpha: int) -> tuple[int, int, int]:
        found = cliques[alpha]
        return (len(found[0]) if found else 0, sum(len(c) for c in found), -alpha)

    best = max(alphas, key=score)
    return SearchResult(cliques, best if cliques[best] else None)
