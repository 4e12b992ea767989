"""Appendix A.3's greedy search read literally, one node at a time: the reference the fast search is tested against.

Degrees are recounted from scratch after every removal, with Python sets,
so the cost is cubic in the number of nodes; this is the shape of the
original code (69 s on 400 nodes). Use :func:`interp.analysis.cliques.search.disjoint_cliques`.
"""

from __future__ import annotations

import numpy as np


def reference_cliques(edges: np.ndarray, causal: np.ndarray, alpha: int, min_size: int | None = None) -> list[list[int]]:
    """Disjoint cliques with a causal edge at threshold ``alpha``, as sorted index lists, in the order found.

    With ``min_size``, peeling stops at the first clique smaller than that.
    """
    n = len(edges)
    remaining, found = set(range(n)), []
    while True:
        alive = set(remaining)
        while alive:
            causal_degree = {v: sum(bool(causal[v, u]) for u in alive) for v in alive}
            v = min(alive, key=lambda v: (causal_degree[v], v))
            if causal_degree[v] >= alpha:
                break
            alive.remove(v)
        if not alive:
            return found
        while True:
            degree = {v: sum(bool(edges[v, u]) for u in alive if u != v) for v in alive}
            if all(d == len(alive) - 1 for d in degree.values()):
                break
            alive.remove(min(alive, key=lambda v: (degree[v], v)))
        clique = sorted(alive)
        if min_size is not None and len(clique) < min_size:
            return found
        if any(causal[i, j] for i in clique for j in clique):
            found.append(clique)
        remaining -= alive
