"""Natural logic: every table derived from set definitions over small finite sets and checked.

Relations, join, the joint projectivity signatures of Geiger et al. 2019
(Figure 6, Appendix B) and the label mapping.
"""

from itertools import combinations, product

import pytest

from interp.core.errors import ConfigError
from interp.natural_logic.relations import (
    LABEL_OF,
    RELATIONS,
    Relation,
    join,
    join_sets,
    relation_of,
)
from interp.natural_logic.semantics import (
    MODIFIER_PAIRS,
    QUANTIFIERS,
    compose_signatures,
    modifier_relation,
    modifier_signature,
    negation_signature,
    quantifier_argument_signature,
    quantifier_signature,
    table,
)

R = {r.symbol: r for r in RELATIONS}


def subsets(n):
    items = range(n)
    return [frozenset(c) for k in range(1, n) for c in combinations(items, k)]


def table_2(x, y, u):
    """Table 2 read literally: every definition that holds (the naive reference)."""
    holds = {
        "≡": x == y,
        "⊏": x < y,
        "⊐": x > y,
        "^": not (x & y) and (x | y) == u,
        "|": not (x & y) and (x | y) != u,
        "‿": bool(x & y) and (x | y) == u,
    }
    return [s for s, ok in holds.items() if ok] or ["#"]


def test_exactly_one_relation_holds_and_relation_of_finds_it():
    u = frozenset(range(4))
    counts = {r: 0 for r in RELATIONS}
    for x, y in product(subsets(4), repeat=2):
        literal = table_2(x, y, u)
        assert len(literal) == 1, (x, y, literal)
        assert relation_of(x, y, u).symbol == literal[0]
        counts[relation_of(x, y, u)] += 1
    assert all(counts.values()), "every relation is realized in a universe of 4"


def test_empty_or_universal_sets_have_no_relation():
    u = {0, 1, 2}
    with pytest.raises(ConfigError):
        relation_of(set(), {1}, u)
    with pytest.raises(ConfigError):
        relation_of(u, {1}, u)


def test_join_matches_a_naive_triple_loop_and_is_stable_in_universe_size():
    u = frozenset(range(4))
    naive = {(r, s): set() for r in RELATIONS for s in RELATIONS}
    sets = subsets(4)
    rel = {(a, b): relation_of(a, b, u) for a in sets for b in sets}
    for x, y, z in product(sets, repeat=3):
        naive[(rel[(x, y)], rel[(y, z)])].add(rel[(x, z)])
    assert {k: frozenset(v) for k, v in naive.items()} == join_sets(4)
    assert join_sets(4) != join_sets(5), "a universe of 4 misses cases (# ⋈ # cannot be ⊏ there)"
    assert join_sets(5) == join_sets(6)


def test_join_against_macCartney_and_its_collapse_to_independence():
    # Deterministic joins of MacCartney & Manning (2009, Table 3).
    expected = {
        ("^", "^"): "≡", ("⊏", "^"): "|", ("⊐", "^"): "‿", ("|", "^"): "⊏", ("‿", "^"): "⊐",
        ("^", "⊏"): "‿", ("^", "⊐"): "|", ("⊏", "|"): "|", ("⊐", "‿"): "‿", ("|", "‿"): "⊏",
    }
    for (a, b), c in expected.items():
        assert join_sets()[(R[a], R[b])] == {R[c]}
        assert join(R[a], R[b]) is R[c]
    for r in RELATIONS:
        assert join(Relation.EQUIVALENCE, r) is r and join(r, Relation.EQUIVALENCE) is r
    assert join_sets()[(R["⊏"], R["⊐"])] == {R[s] for s in "≡⊏⊐|#"}
    assert join(R["⊏"], R["⊐"]) is Relation.INDEPENDENCE
    assert join_sets()[(R["#"], R["#"])] == set(RELATIONS)


#: Figure 6 of Geiger et al. 2019 as printed (columns ≡ ⊏ ⊐ ^ | ‿ #).
FIGURE_6 = {
    ("some", "every", 1): "⊐ ⊐ ⊐ # # # #",
    ("some", "every", 2): "⊐ # ⊐ ^ | ‿ #",
    ("every", "some", 1): "⊏ ⊏ ⊏ # # # #",
    ("every", "some", 2): "⊏ ⊏ # ^ | ‿ #",
    ("every", "every", 1): "≡ ⊐ ⊏ | # | #",
    ("every", "every", 2): "≡ ⊏ ⊐ | | # #",
    ("some", "some", 1): "≡ ⊏ ⊐ ‿ # ‿ #",
    ("some", "some", 2): "≡ ⊏ ⊐ ‿ # ‿ #",
}
FIGURE_6_NEGATION = {
    (True, False): "^ ‿ | ≡ ⊐ ⊏ #",
    (False, True): "^ ‿ | ≡ ⊏ ⊐ #",  # printed; the set definitions give ^ | ‿ ≡ ⊏ ⊐ #
    (True, True): "≡ ⊐ ⊏ ^ ‿ | #",
    (False, False): "≡ ⊏ ⊐ ^ | ‿ #",
}


def test_quantifier_signatures_derived_equal_figure_6():
    for (p, h, argument), printed in FIGURE_6.items():
        assert table(quantifier_argument_signature(p, h, argument)) == printed, (p, h, argument)


def test_negation_signatures_derived_equal_figure_6_except_the_printed_eps_not_row():
    for key, printed in FIGURE_6_NEGATION.items():
        derived = table(negation_signature(*key))
        if key != (False, True):
            assert derived == printed, key
    eps_not = negation_signature(False, True)
    differ = [r for r, shown in zip(RELATIONS, FIGURE_6_NEGATION[(False, True)].split()) if eps_not[r].symbol != shown]
    assert differ == [Relation.FORWARD, Relation.REVERSE]
    # X ⊏ Y: X and not-Y are disjoint and miss Y \ X: alternation; X ⊐ Y: they cover U and meet: cover.
    assert eps_not[Relation.FORWARD] is Relation.ALTERNATION and eps_not[Relation.REVERSE] is Relation.COVER
    # The signature of ε/not is the converse of not/ε's, read from the other side.
    not_eps = negation_signature(True, False)
    converse = {Relation.FORWARD: Relation.REVERSE, Relation.REVERSE: Relation.FORWARD}
    for r in RELATIONS:
        assert eps_not[converse.get(r, r)] is converse.get(not_eps[r], not_eps[r])


def test_other_quantifier_pairs_compose_from_every_some_and_negation():
    # Appendix B: no = not some, not every = not every; P_{q/q'} = P_{neg/neg'} ∘ P_{base/base'}.
    split = {"every": (False, "every"), "some": (False, "some"), "no": (True, "some"), "not every": (True, "every")}
    for p, h in product(QUANTIFIERS, repeat=2):
        (neg_p, base_p), (neg_h, base_h) = split[p], split[h]
        outer = negation_signature(neg_p, neg_h)
        for argument in (1, 2):
            composed = compose_signatures(quantifier_argument_signature(base_p, base_h, argument), outer)
            assert quantifier_argument_signature(p, h, argument) == composed, (p, h, argument)


def test_signatures_are_the_same_in_a_larger_universe():
    for p, h in product(QUANTIFIERS, repeat=2):
        assert quantifier_signature(p, h, 4) == quantifier_signature(p, h, 5)
    for pair in MODIFIER_PAIRS:
        assert modifier_signature(pair, 4) == modifier_signature(pair, 5)
    for a, b in product((False, True), repeat=2):
        assert negation_signature(a, b, 4) == negation_signature(a, b, 5)


def test_joint_quantifier_signature_agrees_with_one_argument_at_a_time():
    # Holding one argument at ≡ leaves the other argument's Figure 6 signature.
    for p, h in product(QUANTIFIERS, repeat=2):
        joint = quantifier_signature(p, h)
        first, second = (quantifier_argument_signature(p, h, k) for k in (1, 2))
        for r in RELATIONS:
            assert joint[(r, Relation.EQUIVALENCE)] is first[r]
            assert joint[(Relation.EQUIVALENCE, r)] is second[r]


def test_modifier_relations_and_phrases():
    rel = {pair: modifier_relation(pair).symbol for pair in MODIFIER_PAIRS}
    assert rel == {"ε/ε": "≡", "ε/a": "⊐", "a/ε": "⊏", "a/a": "≡", "a/b": "#"}
    for pair in MODIFIER_PAIRS:
        # With different heads (#) every modifier pair gives #.
        assert modifier_signature(pair)[Relation.INDEPENDENCE] is Relation.INDEPENDENCE
    # ε/ε and a/a share REL ≡ but differ on a head in ^: the tree may pass REL only because heads are ≡ or #.
    assert modifier_signature("ε/ε")[Relation.NEGATION] is Relation.NEGATION
    assert modifier_signature("a/a")[Relation.NEGATION] is Relation.ALTERNATION


def test_labels_of_relations():
    by_label = {label: {r.symbol for r in RELATIONS if LABEL_OF[r] == label} for label in set(LABEL_OF.values())}
    assert by_label == {"entailment": {"≡", "⊏"}, "contradiction": {"^", "|"}, "neutral": {"⊐", "‿", "#"}}
    assert Relation.parse("‿") is Relation.COVER and Relation.parse("alternation") is Relation.ALTERNATION
    with pytest.raises(ConfigError):
        Relation.parse("⊆")
