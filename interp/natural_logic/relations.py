"""The seven basic semantic relations of natural logic, their set definitions, join, and NLI labels.

MacCartney & Manning (2009), as used by Geiger et al. 2019 (Table 2) and
Geiger et al. 2018 (Figure 1):

======  ============  ==================================  =============
symbol  name          set definition (x, y ⊆ U)           NLI label
======  ============  ==================================  =============
≡       equivalence   x = y                               entailment
⊏       forward       x ⊂ y                               entailment
⊐       reverse       x ⊃ y                               neutral
^       negation      x ∩ y = ∅ and x ∪ y = U             contradiction
|       alternation   x ∩ y = ∅ and x ∪ y ≠ U             contradiction
‿       cover         x ∩ y ≠ ∅ and x ∪ y = U             neutral
#       independence  all other cases                     neutral
======  ============  ==================================  =============

With x and y neither empty nor universal (the papers' assumption: "no
expression is empty or universal"), exactly one relation holds.

Usage::

    relation_of({1}, {1, 2}, universe={1, 2, 3})      # Relation.FORWARD
    join(Relation.FORWARD, Relation.NEGATION)        # Relation.ALTERNATION
    LABEL_OF[Relation.COVER]                         # 'neutral'
"""

from __future__ import annotations

from enum import Enum
from functools import lru_cache
from typing import AbstractSet

from interp.core.errors import ConfigError


class Relation(str, Enum):
    """One of the seven basic semantic relations (Geiger et al. 2019, Table 2)."""

    EQUIVALENCE = "equivalence"
    FORWARD = "forward"
    REVERSE = "reverse"
    NEGATION = "negation"
    ALTERNATION = "alternation"
    COVER = "cover"
    INDEPENDENCE = "independence"

    @property
    def symbol(self) -> str:
        return _SYMBOLS[self]

    @classmethod
    def parse(cls, text: str) -> "Relation":
        """A relation from its name or symbol (``"⊏"``, ``"forward"``, ``"|"`` ...).

        Raises:
            ConfigError: no relation has that name or symbol.
        """
        for relation in cls:
            if text in (relation.value, relation.symbol):
                return relation
        raise ConfigError(f"unknown semantic relation {text!r}; use one of {', '.join(r.symbol for r in cls)}")


_SYMBOLS = {
    Relation.EQUIVALENCE: "≡",
    Relation.FORWARD: "⊏",
    Relation.REVERSE: "⊐",
    Relation.NEGATION: "^",
    Relation.ALTERNATION: "|",
    Relation.COVER: "‿",
    Relation.INDEPENDENCE: "#",
}

#: The relations in the papers' column order.
RELATIONS: tuple[Relation, ...] = tuple(Relation)

#: Three-way NLI label of the relation between premise and hypothesis (Geiger et al. 2019, §4.2).
LABEL_OF: dict[Relation, str] = {
    Relation.EQUIVALENCE: "entailment",
    Relation.FORWARD: "entailment",
    Relation.NEGATION: "contradiction",
    Relation.ALTERNATION: "contradiction",
    Relation.REVERSE: "neutral",
    Relation.COVER: "neutral",
    Relation.INDEPENDENCE: "neutral",
}

#: The relation of y to x when x stands in R to y (⊏ and ⊐ swap; the rest are symmetric).
CONVERSE: dict[Relation, Relation] = {
    **{r: r for r in RELATIONS},
    Relation.FORWARD: Relation.REVERSE,
    Relation.REVERSE: Relation.FORWARD,
}


def relation_from_cells(both: bool, only_x: bool, only_y: bool, neither: bool) -> Relation:
    """The relation of x to y from which of the four Venn cells are non-empty.

    ``both`` is x ∩ y ≠ ∅, ``only_x`` is x \\ y ≠ ∅, ``only_y`` is y \\ x ≠ ∅,
    ``neither`` is U \\ (x ∪ y) ≠ ∅: Table 2's definitions, read in order.

    Raises:
        ConfigError: x or y is empty or universal (no relation is defined).
    """
    if not (both or only_x) or not (both or only_y) or not (only_y or neither) or not (only_x or neither):
        raise ConfigError("a semantic relation needs both sets to be neither empty nor universal")
    if not only_x and not only_y:
        return Relation.EQUIVALENCE
    if not only_x:
        return Relation.FORWARD
    if not only_y:
        return Relation.REVERSE
    if not both:
        return Relation.ALTERNATION if neither else Relation.NEGATION
    return Relation.INDEPENDENCE if neither else Relation.COVER


def relation_of(x: AbstractSet, y: AbstractSet, universe: AbstractSet) -> Relation:
    """The relation of set ``x`` to set ``y`` inside ``universe`` (Table 2).

    Raises:
        ConfigError: x or y is not a subset of the universe, or is empty or universal.
    """
    x, y, universe = frozenset(x), frozenset(y), frozenset(universe)
    if not (x <= universe and y <= universe):
        raise ConfigError("relation_of: x and y must be subsets of the universe")
    return relation_from_cells(bool(x & y), bool(x - y), bool(y - x), bool(universe - (x | y)))


@lru_cache(maxsize=None)
def join_sets(universe_size: int = 5) -> dict[tuple[Relation, Relation], frozenset[Relation]]:
    """Every relation x may stand in to z when x R y and y S z, found by enumeration.

    All triples of non-empty, non-universal subsets of a universe of
    ``universe_size`` elements are tried (MacCartney & Manning 2009, §5:
    the join ⋈). Size 4 is too small (# ⋈ # misses ⊏ there); size 5
    realizes every possibility, and the tests check that size 6 gives the
    same sets.

    Returns:
        ``{(R, S): frozenset of relations}`` for all 49 pairs.
    """
    import numpy as np

    full = (1 << universe_size) - 1
    masks = np.arange(1, full, dtype=np.int64)
    x, y = (g.ravel() for g in np.meshgrid(masks, masks, indexing="ij"))
    codes = _relation_codes(x, y, full)  # relation of x to y, for every pair
    table = codes.reshape(len(masks), len(masks))
    out: dict[tuple[Relation, Relation], set[Relation]] = {(r, s): set() for r in RELATIONS for s in RELATIONS}
    # For each (x, z): the relations R = rel(x, y), S = rel(y, z) over all y.
    for i in range(len(masks)):
        r_codes = table[i]  # rel(x_i, y) for all y
        for k in range(len(masks)):
            xz = RELATIONS[table[i, k]]
            for pair in set(zip(r_codes.tolist(), table[:, k].tolist())):
                out[(RELATIONS[pair[0]], RELATIONS[pair[1]])].add(xz)
    return {key: frozenset(value) for key, value in out.items()}


def _relation_codes(x, y, full: int):
    """Index in :data:`RELATIONS` of the relation of mask x to mask y, vectorized (numpy arrays)."""
    import numpy as np

    both, only_x, only_y, neither = (x & y) != 0, (x & ~y) != 0, (y & ~x) != 0, (full & ~(x | y)) != 0
    code = np.full(x.shape, RELATIONS.index(Relation.INDEPENDENCE))
    code[both & ~neither & only_x & only_y] = RELATIONS.index(Relation.COVER)
    code[~both & neither] = RELATIONS.index(Relation.ALTERNATION)
    code[~both & ~neither] = RELATIONS.index(Relation.NEGATION)
    code[~only_y & only_x] = RELATIONS.index(Relation.REVERSE)
    code[~only_x & only_y] = RELATIONS.index(Relation.FORWARD)
    code[~only_x & ~only_y] = RELATIONS.index(Relation.EQUIVALENCE)
    return code


def join(r: Relation, s: Relation) -> Relation:
    """The join R ⋈ S: the relation of x to z when x R y and y S z.

    Derived from the set definitions by :func:`join_sets`. The seeds print no
    join table; where more than one relation is possible (e.g. ⊏ ⋈ ⊐ can be
    any of ≡ ⊏ ⊐ | #), the join is collapsed to # (independence), the
    relation that claims nothing, as MacCartney & Manning do.
    """
    options = join_sets()[(r, s)]
    return next(iter(options)) if len(options) == 1 else Relation.INDEPENDENCE
