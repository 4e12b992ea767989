"""Projectivity signatures derived from set semantics by enumerating finite models.

How a semantic relation between arguments becomes a relation between whole
expressions (Geiger et al. 2019, §4.1 and Appendix B: a *joint projectivity
signature* P_{f/g} maps the relation of X to Y to the relation of f(X) to
g(Y)). Here every signature is computed, not copied:

* A *model* is a universe {0 .. n-1} with every predicate a subset of it,
  each neither empty nor universal (the papers' "no expression is empty or
  universal"; predicates are bit masks).
* An argument relation R is imposed by its first-order axiom in every model
  (⊏: ``X ⊆ Y``; ``|``: ``X ∩ Y = ∅``; ^: ``Y = U \\ X``; ‿: ``X ∪ Y = U``; #: nothing), as the
  papers' Prover9 premises did.
* The relation between two expressions is Table 2 applied to their
  denotations gathered over *all* models satisfying the axioms: which of the
  four Venn cells (both, only the first, only the second, neither) is ever
  non-empty (:func:`~interp.natural_logic.relations.relation_from_cells`).
  For sentences the "denotation" is the set of models where they are true,
  so ⊏ is entailment checked against every model.

A universe of 4 elements realizes every case for the signatures used here;
the tests repeat each derivation with 5 elements and get the same tables.
Quantifiers: every(A, B) = A ⊆ B, some = A ∩ B ≠ ∅, no = A ∩ B = ∅,
not every = A ⊄ B.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import product
from typing import Callable

import numpy as np

from interp.core.errors import ConfigError
from interp.natural_logic.relations import RELATIONS, Relation, relation_from_cells

#: Quantifiers of the MQNLI fragment, as functions of (restrictor, scope) bit masks -> bool arrays.
QUANTIFIERS: tuple[str, ...] = ("every", "some", "no", "not every")


def _masks(n: int) -> np.ndarray:
    """Bit masks of every non-empty, non-universal subset of {0 .. n-1}."""
    return np.arange(1, (1 << n) - 1, dtype=np.int64)


def axiom(relation: Relation, x: np.ndarray, y: np.ndarray, full: int) -> np.ndarray:
    """Where the first-order axiom of ``relation`` holds between masks x and y (bool array)."""
    if relation is Relation.EQUIVALENCE:
        return x == y
    if relation is Relation.FORWARD:
        return (x & ~y) == 0
    if relation is Relation.REVERSE:
        return (y & ~x) == 0
    if relation is Relation.NEGATION:
        return ((x & y) == 0) & ((x | y) == full)
    if relation is Relation.ALTERNATION:
        return (x & y) == 0
    if relation is Relation.COVER:
        return (x | y) == full
    return np.ones(np.broadcast(x, y).shape, dtype=bool)


def quantify(quantifier: str, restrictor: np.ndarray, scope: np.ndarray) -> np.ndarray:
    """Truth of ``quantifier restrictor scope`` in each model (bool array)."""
    meet = (restrictor & scope) != 0
    inside = (restrictor & ~scope) == 0
    return {"every": inside, "some": meet, "no": ~meet, "not every": ~inside}[quantifier]


def _predicate_relation(x: np.ndarray, y: np.ndarray, full: int) -> Relation:
    """Table 2 for predicates: Venn cells gathered over all models (arrays of masks)."""
    return relation_from_cells(
        bool(np.any(x & y)), bool(np.any(x & ~y)), bool(np.any(y & ~x)), bool(np.any(full & ~(x | y)))
    )


def _sentence_relation(p: np.ndarray, h: np.ndarray) -> Relation:
    """Table 2 for sentences: the sets of models where each is true."""
    return relation_from_cells(bool(np.any(p & h)), bool(np.any(p & ~h)), bool(np.any(h & ~p)), bool(np.any(~(p | h))))


def _grid(n: int, k: int) -> tuple[list[np.ndarray], int]:
    """All k-tuples of non-empty, non-universal masks over n elements, as k flat arrays."""
    masks = _masks(n)
    grids = np.meshgrid(*([masks] * k), indexing="ij")
    return [g.ravel() for g in grids], (1 << n) - 1


def negation_signature(premise_negated: bool, hypothesis_negated: bool, n: int = 4) -> dict[Relation, Relation]:
    """P_{f/g} for f, g ∈ {ε, not}: the relation of f(X) to g(Y) given X R Y.

    ``not`` is the complement. Returns ``{R: P(R)}`` for all seven R.
    """
    (x, y), full = _grid(n, 2)
    fx = (full & ~x) if premise_negated else x
    gy = (full & ~y) if hypothesis_negated else y
    return {r: _predicate_relation(fx[m], gy[m], full) for r in RELATIONS if (m := axiom(r, x, y, full)).any()}


#: Modifier pairs of the fragment: ε (no word), a word a, and a different word b of the same category.
MODIFIER_PAIRS: tuple[str, ...] = ("ε/ε", "ε/a", "a/ε", "a/a", "a/b")


def modifier_signature(pair: str, n: int = 4) -> dict[Relation, Relation]:
    """P_{m/m'} for intersective modifiers: relation of m(X) to m'(Y) given X R Y.

    ``pair`` is one of :data:`MODIFIER_PAIRS`; ε(X) = X, a(X) = A ∩ X,
    b(X) = B ∩ X for independent predicates A and B. Models where a phrase
    would be empty are left out (no expression is empty). Relations that no
    model realizes are absent from the result.
    """
    (a, b, x, y), full = _grid(n, 4)
    apply = {"ε": lambda z: z, "a": lambda z: a & z, "b": lambda z: b & z}
    left, right = pair.split("/")
    fx, gy = apply[left](x), apply[right](y)
    admissible = (fx != 0) & (gy != 0)
    out = {}
    for r in RELATIONS:
        m = axiom(r, x, y, full) & admissible
        if m.any():
            out[r] = _predicate_relation(fx[m], gy[m], full)
    return out


def modifier_relation(pair: str, n: int = 4) -> Relation:
    """REL of two modifiers: the relation of m(X) to m'(X), same head X (≡ ⊏ ⊐ or #)."""
    return modifier_signature(pair, n)[Relation.EQUIVALENCE]


def quantifier_argument_signature(premise: str, hypothesis: str, argument: int, n: int = 4) -> dict[Relation, Relation]:
    """Projectivity of a quantifier pair in one argument (Geiger et al. 2019, Figure 6).

    ``argument`` 1: relation of Q(A, B) to Q'(A', B) given A R A';
    ``argument`` 2: relation of Q(A, B) to Q'(A, B') given B R B'.

    Raises:
        ConfigError (a ValueError): ``argument`` is not 1 or 2.
    """
    if argument not in (1, 2):
        raise ConfigError("argument must be 1 or 2")
    (shared, x, y), full = _grid(n, 3)
    if argument == 1:
        p, h = quantify(premise, x, shared), quantify(hypothesis, y, shared)
    else:
        p, h = quantify(premise, shared, x), quantify(hypothesis, shared, y)
    return {r: _sentence_relation(p[m], h[m]) for r in RELATIONS if (m := axiom(r, x, y, full)).any()}


@lru_cache(maxsize=None)
def quantifier_signature(premise: str, hypothesis: str, n: int = 4) -> dict[tuple[Relation, Relation], Relation]:
    """The joint projectivity of a quantifier pair in both arguments at once.

    Relation of Q(A, B) to Q'(A', B') given A R A' and B S B', for all 49
    (R, S): what the MQNLI composition tree applies at a quantifier node
    (Geiger et al. 2019, Figure 3, COMP over the 16 signatures of 𝒬).
    """
    (a, a2, b, b2), full = _grid(n, 4)
    p, h = quantify(premise, a, b), quantify(hypothesis, a2, b2)
    first = {r: axiom(r, a, a2, full) for r in RELATIONS}
    second = {s: axiom(s, b, b2, full) for s in RELATIONS}
    return {(r, s): _sentence_relation(p[m], h[m]) for r, s in product(RELATIONS, RELATIONS) if (m := first[r] & second[s]).any()}


def compose_signatures(inner: dict, outer: dict) -> dict:
    """outer ∘ inner: apply ``inner`` then ``outer`` (for example P_{not/ε} ∘ P_{some/every})."""
    return {r: outer[v] for r, v in inner.items()}


def table(signature: Callable[[Relation], Relation] | dict) -> str:
    """A signature as a row of symbols in the papers' column order (≡ ⊏ ⊐ ^ | ‿ #)."""
    get = signature.get if isinstance(signature, dict) else signature
    return " ".join(getattr(get(r), "symbol", "-") for r in RELATIONS)
