"""How many k-cliques chance alone would give (Geiger, Richardson & Potts 2020, Appendix A.3).

In the random graph G(n, p) the expected number of k-cliques is
C(n, k) · p^C(k, 2). The paper puts p = 1/2, as if an intervention
randomized a binary output; but an edge needs four agreements (both
interchanges and both self-interchanges), so 1/2 flatters the network. The
same expectation with the graph's observed edge density for p is the fairer
baseline. Both are computed in log space (they range over hundreds of
orders of magnitude).
"""

from __future__ import annotations

import math


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
