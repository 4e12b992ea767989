"""The monotonicity fragment's lexicon and knowledge base (Richardson et al. 2020, Appendix, Figure 8).

Words by category, their surface forms, and the hand-coded pre-order
``≤`` ("is at least as specific as") and antonyms (``⊥``, disjoint) that
substitutions follow. Figure 8 gives the lexicon and "example" relations;
where it is silent this module adds the relations a reader would expect
and says so: ``stallion ≤ horse``, ``newborn ≤ young``, ``odor, scent ≤
smell``, ``happy ⊥ sad``.

Determiners are the 14 of Figure 8 with fixed readings, so that a finite
model decides every sentence: ``several`` = at least 3, ``many`` = at least
4, ``few`` = fewer than half, ``the`` = exactly one, and all of them in
:data:`DETERMINER_TRUTH`. Numerals n are 2 and 3 (the released files use 3 to 6; smaller numbers
keep the finite models of the label check small).

Usage::

    >>> sorted(greater("noun", "poodle"))
    ['animal', 'dog', 'mammal']
    >>> DETERMINERS["every"].monotonicity
    ('down', 'up')
    >>> contradicts("some", "no")
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

NUMERALS: tuple[int, ...] = (2, 3)

NOUN_ANIMATE = ("dog", "cat", "rabbit", "animal", "mammal", "poodle", "beagle", "bulldog", "bat", "horse", "stallion", "badger", "quadruped")
NOUN_INANIMATE = ("table", "wagon", "chair", "door", "object", "wheel", "box", "mailbox", "wheelbarrow", "fence")
ADJ_ANIMATE = ("old", "young", "newborn", "brown", "black", "brown or black")
ADJ_INANIMATE = ("wooden", "hardwood", "metal", "plastic", "iron", "steel")
ADJ_PRED = ("happy", "sad")
ADJ_SMELL = ("strong", "faint")
NOUN_SMELL = ("smell", "odor", "scent")
VERB_TRANSITIVE = ("saw", "stared at", "inspected", "hit", "touched", "moved towards", "moved away from", "scratched", "sniffed")
VERB_INTRANSITIVE = ("slept", "ran", "moved", "swam", "waltzed", "danced")
PREPOSITIONS = ("with", "without")

#: Base form after "did not".
BASE_FORM = {
    "saw": "see", "stared at": "stare at", "inspected": "inspect", "hit": "hit", "touched": "touch",
    "moved towards": "move towards", "moved away from": "move away from", "scratched": "scratch", "sniffed": "sniff",
    "slept": "sleep", "ran": "run", "moved": "move", "swam": "swim", "waltzed": "waltz", "danced": "dance",
}


@dataclass(frozen=True)
class Determiner:
    """A determiner: its words, whether its noun is plural, and its monotonicity in (restrictor, scope): ``up``, ``down`` or ``none``."""

    words: str
    plural: bool
    monotonicity: tuple[str, str]


def _numeral_determiners() -> dict[str, Determiner]:
    out = {}
    for n in NUMERALS:
        out[f"at least {n}"] = Determiner(f"at least {n}", True, ("up", "up"))
        out[f"at most {n}"] = Determiner(f"at most {n}", True, ("down", "down"))
        out[f"exactly {n}"] = Determiner(f"exactly {n}", True, ("none", "none"))
    return out


#: The determiners, with each one's monotonicity (van Benthem 1986; Icard & Moss 2014).
DETERMINERS: dict[str, Determiner] = {
    "every": Determiner("every", False, ("down", "up")),
    "all": Determiner("all", True, ("down", "up")),
    "each": Determiner("each", False, ("down", "up")),
    "a": Determiner("a", False, ("up", "up")),
    "some": Determiner("some", False, ("up", "up")),
    "many": Determiner("many", True, ("up", "up")),
    "several": Determiner("several", True, ("up", "up")),
    "few": Determiner("few", True, ("none", "down")),
    "most": Determiner("most", True, ("none", "up")),
    "some but not all": Determiner("some but not all", True, ("up", "none")),
    "no": Determiner("no", True, ("down", "down")),
    **_numeral_determiners(),
}


def _truth() -> dict:
    """Each determiner as a test on (``|A ∩ B|``, ``|A \\ B|``): the counts of restrictor members inside and outside the scope."""
    table = {
        "every": lambda i, o: o == 0, "all": lambda i, o: o == 0, "each": lambda i, o: o == 0,
        "a": lambda i, o: i > 0, "some": lambda i, o: i > 0,
        "many": lambda i, o: i >= 4, "several": lambda i, o: i >= 3,
        "few": lambda i, o: i < o, "most": lambda i, o: i > o,
        "some but not all": lambda i, o: (i > 0) & (o > 0),
        "no": lambda i, o: i == 0,
    }
    for n in NUMERALS:
        table[f"at least {n}"] = lambda i, o, n=n: i >= n
        table[f"at most {n}"] = lambda i, o, n=n: i <= n
        table[f"exactly {n}"] = lambda i, o, n=n: i == n
    return table


#: Determiner -> truth as a function of (``|A ∩ B|``, ``|A \ B|``) (numpy arrays in, bool arrays out); used by the model check only.
DETERMINER_TRUTH = _truth()

#: Determiners with existential import: their restrictor is presupposed non-empty (Strawson entailment, see semantics).
IMPORT: tuple[str, ...] = ("every", "all", "each")

#: The simple setting's five determiners (those of the released monotonicity_simple); hard uses all 14 kinds.
SIMPLE_DETERMINERS = ("every", "some", "a", "no", "most")

# The pre-order, as "x ≤ y" edges by category; equivalences are edges both ways.
_NOUN_EDGES = [
    *((x, "animal") for x in NOUN_ANIMATE if x != "animal"),
    *((x, "mammal") for x in ("dog", "cat", "rabbit", "poodle", "beagle", "bulldog", "bat", "horse", "stallion", "badger")),
    *((x, "dog") for x in ("poodle", "beagle", "bulldog")),
    ("stallion", "horse"),
    *((x, "object") for x in NOUN_INANIMATE if x != "object"),
    ("odor", "smell"), ("scent", "smell"),
]
_ADJ_EDGES = [
    ("brown", "brown or black"), ("black", "brown or black"), ("newborn", "young"),
    ("iron", "metal"), ("steel", "metal"), ("steel", "iron"), ("hardwood", "wooden"),
]
_VERB_EDGES = [
    *((x, "moved") for x in ("ran", "swam", "waltzed", "danced")), ("waltzed", "danced"),
    ("stared at", "saw"), ("hit", "touched"),
]


def _determiner_edges() -> list[tuple[str, str]]:
    edges = [("every", "all"), ("all", "every"), ("each", "every"), ("every", "each"), ("some", "a"), ("a", "some"),
             ("several", "at least 3"), ("at least 3", "several"),
             ("every", "most"), ("most", "some"), ("some but not all", "some"),
             ("many", f"at least {max(NUMERALS)}")]
    for n in NUMERALS:
        edges += [(f"exactly {n}", f"at least {n}"), (f"exactly {n}", f"at most {n}"), ("no", f"at most {n}"), (f"at least {n}", "some")]
        edges += [(f"at least {m}", f"at least {n}") for m in NUMERALS if m > n]
        edges += [(f"at most {n}", f"at most {m}") for m in NUMERALS if m > n]
    return edges


EDGES: dict[str, list[tuple[str, str]]] = {"noun": _NOUN_EDGES, "adj": _ADJ_EDGES, "verb": _VERB_EDGES, "det": _determiner_edges()}

#: Disjoint pairs (antonyms, Figure 8): closed downward by ≤ when used.
ANTONYMS: tuple[tuple[str, str], ...] = (("moved", "slept"), ("moved towards", "moved away from"), ("happy", "sad"))


@lru_cache(maxsize=None)
def _closure(category: str) -> dict[str, frozenset[str]]:
    up: dict[str, set[str]] = {}
    for x, y in EDGES[category]:
        up.setdefault(x, set()).add(y)
    changed = True
    while changed:
        changed = False
        for x, ys in up.items():
            more = set().union(*(up.get(y, set()) for y in ys)) - ys - {x}
            if more:
                ys |= more
                changed = True
    return {x: frozenset(ys - {x}) for x, ys in up.items()}


def greater(category: str, word: str) -> frozenset[str]:
    """Every ``y`` with ``word ≤ y`` (strictly more general, or equivalent), ``word`` excluded."""
    return _closure(category).get(word, frozenset())


def less(category: str, word: str) -> frozenset[str]:
    """Every ``y`` with ``y ≤ word``, ``word`` excluded."""
    return frozenset(x for x, ys in _closure(category).items() if word in ys)


def equivalent(category: str, a: str, b: str) -> bool:
    """``a ≤ b`` and ``b ≤ a``."""
    return b in greater(category, a) and a in greater(category, b)


def disjoint(a: str, b: str) -> bool:
    """Whether the knowledge base makes ``a`` and ``b`` disjoint (an antonym pair, or below one)."""
    for x, y in ANTONYMS:
        for p, q in ((x, y), (y, x)):
            if (a == p or p in greater("verb", a) or p in greater("adj", a)) and (b == q or q in greater("verb", b) or q in greater("adj", b)):
                return True
    return False


def _contradictory() -> frozenset[tuple[str, str]]:
    """The contradiction rules for a subject determiner: Q is replaced by one that excludes it (both directions)."""
    pairs = [("every", "no"), ("all", "no"), ("each", "no"), ("every", "some but not all"), ("all", "some but not all"),
             ("each", "some but not all"), ("some", "no"), ("a", "no"), ("most", "no"), ("most", "few"),
             ("some but not all", "no"), ("several", "no"), ("many", "no")]
    for n in NUMERALS:
        pairs += [(f"at least {n}", "no"), (f"exactly {n}", "no"), ("many", f"at most {n}")]
        pairs += [(f"at least {m}", f"at most {n}") for m in NUMERALS if m > n]
        pairs += [(f"exactly {m}", f"at most {n}") for m in NUMERALS if m > n]
        pairs += [(f"exactly {n}", f"at least {m}") for m in NUMERALS if m > n]
        pairs += [(f"exactly {n}", f"exactly {m}") for m in NUMERALS if m != n]
    return frozenset(pairs + [(b, a) for a, b in pairs])


#: Pairs (Q, Q') such that "Q A B" and "Q' A B" cannot both hold for a non-empty A: the determiner contradiction rules.
CONTRADICTORY = _contradictory()


def contradicts(q1: str, q2: str) -> bool:
    """Whether replacing the subject determiner ``q1`` by ``q2`` is a contradiction rule (:data:`CONTRADICTORY`)."""
    return (q1, q2) in CONTRADICTORY


def needs_import(a: str, b: str) -> bool:
    """Whether the relation of determiners ``a`` and ``b`` (either order) holds only for a non-empty restrictor: one is true of an empty restrictor, the other not (``every`` / ``some``)."""
    return bool(DETERMINER_TRUTH[a](0, 0)) != bool(DETERMINER_TRUTH[b](0, 0))


def plural(noun: str) -> str:
    """The plural: ``box`` -> ``boxes``, ``dog`` -> ``dogs``."""
    return noun + ("es" if noun.endswith(("x", "s")) else "s")


def is_animate(noun: str) -> bool:
    """Whether ``noun`` is an animate noun (one that takes relative clauses and PPs)."""
    return noun in NOUN_ANIMATE
