"""How many k-cliques chance alone would give (Geiger, Richardson & Potts 2020, Appendix A.3).

In the random graph G(n, p) the expected number of k-cliques is
C(n, k) · p^C(k, 2). The paper puts p = 1/2, as if an intervention
randomized a binary output; but an edge needs four agreements (both
interchanges and both self-interchanges), so 1/2 flatters the network. The
same expectation with the graph's observed edge density for p is the fairer
baseline. Both are computed in log space (they range over hundreds of
orders of magnitude).

A third baseline keeps the structure that interchanges give by
construction: between two examples with the same value of the variable an
interchange rarely changes the output, so same-value blocks are dense. The
block model draws each edge with the observed density of its block (within
a value, or across two values), and the expected number of cliques with a
clique's own value composition (k_v examples of each value v) is
∏_v C(n_v, k_v) · ∏_v p_vv^C(k_v, 2) · ∏_{v<w} p_vw^(k_v k_w).
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np


def log10_expected_cliques(n: int, k: int, p: float) -> float:
    """log10 of C(n, k) · p^C(k, 2); ``-inf`` when the expectation is 0 (k > n, or p = 0 with k ≥ 2)."""
    if k > n or k < 0:
        return -math.inf
    pairs = k * (k - 1) // 2
    if pairs and p <= 0:
        return -math.inf
    log_binomial = (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)) / math.log(10)
    return log_binomial + (pairs * math.log10(p) if pairs else 0.0)


def expected_cliques(n: int, k: int, p: float) -> float:
    """C(n, k) · p^C(k, 2) as a float (``inf`` past the float range, 0 below it)."""
    value = log10_expected_cliques(n, k, p)
    if value == -math.inf:
        return 0.0
    return math.inf if value > 308 else 10.0**value


def chance_clique_size(n: int, p: float) -> int:
    """The smallest k ≥ 2 with fewer than one k-clique expected in G(n, p): cliques this large are not chance's.

    ``n + 1`` when even an n-clique is expected (p = 1).
    """
    for k in range(2, n + 1):
        if log10_expected_cliques(n, k, p) < 0:
            return k
    return n + 1


def _log10_binomial(n: int, k: int) -> float:
    if k < 0 or k > n:
        return -math.inf
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)) / math.log(10)


def block_densities(edges: np.ndarray, values: np.ndarray) -> dict[tuple[int, int], float]:
    """Observed edge density within each value (``(v, v)``) and across each pair of values (``(v, w)``, v < w).

    Args:
        edges: bool ``[n, n]`` symmetric adjacency, empty diagonal.
        values: int ``[n]`` each node's value code.
    """
    codes = sorted(set(values.tolist()))
    out = {}
    for a, v in enumerate(codes):
        for w in codes[a:]:
            rows, cols = values == v, values == w
            block = edges[np.ix_(rows, cols)]
            possible = rows.sum() * (rows.sum() - 1) if v == w else rows.sum() * cols.sum()
            out[(v, w)] = float(block.sum() / possible) if possible else 0.0
    return out


def log10_expected_block_cliques(
    sizes: Mapping[int, int], composition: Mapping[int, int], densities: Mapping[tuple[int, int], float]
) -> float:
    """log10 of the expected number of cliques with ``composition`` (value -> k_v) in the block model.

    Args:
        sizes: value -> n_v, the nodes of that value in the graph.
        composition: value -> k_v, the clique's nodes of that value.
        densities: from :func:`block_densities`.

    Returns ``-inf`` where the expectation is 0 (an empty block the clique needs, or k_v > n_v).
    """
    total = 0.0
    values: Sequence[int] = sorted(v for v, k in composition.items() if k)
    for a, v in enumerate(values):
        k = composition[v]
        total += _log10_binomial(sizes.get(v, 0), k)
        for w in values[a:]:
            pairs = k * (k - 1) // 2 if v == w else k * composition[w]
            if pairs:
                p = densities.get((v, w), 0.0)
                if p <= 0:
                    return -math.inf
                total += pairs * math.log10(p)
    return total
