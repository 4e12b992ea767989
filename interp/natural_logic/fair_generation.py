"""Fair training data with a difficulty ratio: Algorithm 3 of Geiger et al. 2019 (Appendix C).

``generate_inputs(C, ratio)`` returns, for every value of the root, the
training inputs that realize it; their union is a training set that exposes
every node function to every local input (fair by construction), and
``ratio`` ∈ [0, 1] sets how much more than that it holds: 0 gives a minimal
fair set, 1 the whole input space.

At each non-leaf node a, for every local input (i_1 .. i_m), the partial
inputs realizing i_k below child c_k are split among the values of c_k's
siblings by ``random_even_split``: a share ``ratio`` of them goes to every
sibling context, the rest are dealt out evenly, so that which partial
inputs realize i_k depends on what the siblings hold (as Table 1 of the
paper ties V2's realization to V1's value).

Two details the printed pseudocode leaves out, done here:

* ``ratio`` is passed down the recursive call (the pseudocode drops it);
* each child's classes and each split are computed once and reused
  (memoized): recomputing them inside the loop, as printed, costs time
  exponential in the depth and draws a different random split for every
  local input, which breaks the even distribution.

Usage::

    classes = generate_inputs(C, ratio=0.0, seed=0)    # {root value: [input tuple, ...]}
    train = sorted({x for xs in classes.values() for x in xs})
"""

from __future__ import annotations

import random
from itertools import product
from typing import Any, Hashable, Sequence

from interp.core.errors import ConfigError
from interp.natural_logic.composition import CompositionTree


def random_even_split(items: Sequence, contexts: Sequence[Hashable], ratio: float, rng: random.Random) -> dict:
    """F: contexts -> subsets of ``items`` (Appendix C's ``random_even_split``).

    ``items`` is partitioned into P1 (a share ``ratio``, rounded) and P2.
    Every F(d) contains P1; P2's members are dealt to the contexts evenly in
    a random order, so the F(d) are non-empty and cover ``items``. Where P1
    is empty and P2 has fewer members than there are contexts, members are
    dealt again (some appear under several contexts) so that none is empty.

    Returns:
        ``{context: list of items}``.
    """
    pool = list(items)
    rng.shuffle(pool)
    cut = round(ratio * len(pool))
    shared, rest = pool[:cut], pool[cut:]
    out: dict = {d: list(shared) for d in contexts}
    order = list(contexts)
    rng.shuffle(order)
    if not rest:
        return out
    deals = max(len(rest), 0 if shared else len(order))
    for k in range(deals):
        out[order[k % len(order)]].append(rest[k % len(rest)])
    return out


def generate_inputs(C: CompositionTree, ratio: float, seed: int = 0) -> dict[Any, list[tuple]]:
    """Algorithm 3 on the root of ``C``: every root value's training inputs (tuples in leaf order).

    Raises:
        ConfigError: ``ratio`` is outside [0, 1].
    """
    if not 0.0 <= ratio <= 1.0:
        raise ConfigError(f"`ratio=` must be between 0 and 1, got {ratio}")
    rng = random.Random(seed)
    memo: dict[str, dict[Any, list[tuple]]] = {}
    tree = C.tree

    def classes(node: str) -> dict[Any, list[tuple]]:
        if node in memo:
            return memo[node]
        if tree.is_leaf(node):
            memo[node] = {value: [(value,)] for value in C.domains[node]}
            return memo[node]
        kids = tree.children[node]
        below = [classes(k) for k in kids]
        values = [list(b) for b in below]
        splits: dict[tuple[int, Any], dict] = {}
        for k, kid_classes in enumerate(below):
            siblings = list(product(*(values[j] for j in range(len(kids)) if j != k)))
            for value, partial in kid_classes.items():
                splits[(k, value)] = random_even_split(partial, siblings, ratio, rng)
        out: dict[Any, list[tuple]] = {}
        for local in product(*values):
            result = C.apply(node, local)
            parts = [splits[(k, local[k])][local[:k] + local[k + 1 :]] for k in range(len(kids))]
            bucket = out.setdefault(result, [])
            bucket.extend(sum(combo, ()) for combo in product(*parts))
        memo[node] = {value: list(dict.fromkeys(xs)) for value, xs in out.items()}
        return memo[node]

    return classes(tree.root)


def fair_training_set(C: CompositionTree, ratio: float, seed: int = 0) -> list[tuple]:
    """The union of :func:`generate_inputs`' classes: a fair training set, sorted for reproducibility."""
    return sorted({x for xs in generate_inputs(C, ratio, seed).values() for x in xs}, key=repr)
