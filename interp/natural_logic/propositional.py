"""The propositional toy task of Geiger et al. 2019 (§3.4, Figure 1, Table 1).

Sentences ``V1 ⇒ U V2`` with V1, V2 ∈ {T, F} and U ∈ {¬, ε}: eight in all.
The tree computes C1(U, V2) = U(V2) and C2(V1, ⇒, C1) = V1 ⇒ C1.

Usage::

    C = propositional_tree()
    is_fair(C, TABLE_1_TRAIN)        # True
"""

from __future__ import annotations

from interp.natural_logic.composition import CompositionTree, Tree

IMPLIES = "⇒"


def _c1(operator: str, value: bool) -> bool:
    return (not value) if operator == "¬" else value


def _c2(antecedent: bool, _implies: str, consequent: bool) -> bool:
    return (not antecedent) or consequent


def propositional_tree() -> CompositionTree:
    """Figure 1's composition tree; inputs are (V1, ⇒, U, V2) with truth values as bools."""
    tree = Tree("C2", {"C2": ("V1", "implies", "C1"), "C1": ("U", "V2")})
    domains = {"V1": (True, False), "implies": (IMPLIES,), "U": ("¬", "ε"), "V2": (True, False)}
    return CompositionTree(tree, domains, {"C1": _c1, "C2": _c2})


def sentence(text: str) -> tuple:
    """``"T ⇒ εF"`` -> (True, '⇒', 'ε', False), an input of :func:`propositional_tree`."""
    left, right = (part.strip() for part in text.split(IMPLIES))
    return (left == "T", IMPLIES, right[0], right[1] == "T")


#: Table 1 of the paper: the fair training half, and the test half.
TABLE_1_TRAIN: tuple[tuple, ...] = tuple(sentence(s) for s in ("T ⇒ εF", "T ⇒ ¬F", "F ⇒ ¬T", "F ⇒ εT"))
TABLE_1_TEST: tuple[tuple, ...] = tuple(sentence(s) for s in ("T ⇒ ¬T", "T ⇒ εT", "F ⇒ ¬F", "F ⇒ εF"))
