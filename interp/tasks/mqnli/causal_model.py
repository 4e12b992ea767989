"""The MQNLI natural-logic composition tree as a causal model (Geiger et al. 2019, Figure 3).

Sentences of the fragment ``Q_S Adj_S N_S Neg Adv V Q_O Adj_O N_O`` are
aligned position by position; the tree computes, bottom up:

==========  ===========================  ======================================
variable    children                     value
==========  ===========================  ======================================
q_s, q_o    quantifier words p/h         the quantifier pair ("every/some", 16)
neg         Neg words p/h                the negation pair ("ε/not", 4)
adj_s ...   modifier words p/h           REL of the modifiers: ≡ ⊏ ⊐ #
n_s, v ...  noun / verb words p/h        REL: ≡ if the same word, else #
subj_np     adj_s, n_s                   relation of the subject phrases
vp          adv, v                       relation of the adverb-verb phrases
obj_np      adj_o, n_o                   relation of the object phrases
obj_dp      q_o, obj_np, vp              relation of "Q_O Adj_O N_O" VPs
neg_vp      neg, obj_dp                  relation of the negated VPs
root        q_s, subj_np, neg_vp         relation of premise to hypothesis
label       root                         entailment / contradiction / neutral
==========  ===========================  ======================================

Every function is a table derived from set semantics
(:mod:`interp.natural_logic.semantics`); nothing calls a theorem prover. The
papers' lexicon makes distinct open-class words independent (#), so REL is
a comparison of words; ε as a modifier is the universal set, so ``a/ε`` is ⊏.

Usage::

    model = mqnli_causal_model()
    run_forward(model, inputs_of(premise_words, hypothesis_words))["label"]
    run_interchange(model, base, {"neg_vp": source})["label"]
"""

from __future__ import annotations

from functools import lru_cache
from typing import Mapping

from interp.causal.base import CausalModel, Mechanism, run_forward
from interp.core.errors import ConfigError
from interp.natural_logic.composition import CompositionTree, Tree
from interp.natural_logic.relations import LABEL_OF, RELATIONS, Relation
from interp.natural_logic.semantics import (
    QUANTIFIERS,
    modifier_relation,
    modifier_signature,
    negation_signature,
    quantifier_signature,
)

EMPTY = "ε"
NEGATION_WORD = "does not"
#: Positions of the fragment in surface order.
POSITIONS: tuple[str, ...] = ("q_s", "adj_s", "n_s", "neg", "adv", "v", "q_o", "adj_o", "n_o")
MODIFIERS = ("adj_s", "adv", "adj_o")
HEADS = ("n_s", "v", "n_o")
#: Phrase nodes: each combines a modifier with its head.
PHRASES: dict[str, tuple[str, str]] = {"subj_np": ("adj_s", "n_s"), "vp": ("adv", "v"), "obj_np": ("adj_o", "n_o")}
#: Every variable above the words, children before parents.
NODES: tuple[str, ...] = (*POSITIONS, *PHRASES, "obj_dp", "neg_vp", "root")

MODIFIER_RELATIONS = (Relation.EQUIVALENCE, Relation.FORWARD, Relation.REVERSE, Relation.INDEPENDENCE)
HEAD_RELATIONS = (Relation.EQUIVALENCE, Relation.INDEPENDENCE)
QUANTIFIER_PAIRS: tuple[str, ...] = tuple(f"{p}/{h}" for p in QUANTIFIERS for h in QUANTIFIERS)
NEGATION_PAIRS: tuple[str, ...] = ("ε/ε", "ε/not", "not/ε", "not/not")


def head_relation(premise_word: str, hypothesis_word: str) -> Relation:
    """REL of two nouns or verbs: ≡ if the same word, else # (the fragment's lexicon)."""
    return Relation.EQUIVALENCE if premise_word == hypothesis_word else Relation.INDEPENDENCE


def modifier_pair(premise_word: str, hypothesis_word: str) -> str:
    """Which of ε/ε, ε/a, a/ε, a/a, a/b two aligned modifiers are."""
    if premise_word == EMPTY or hypothesis_word == EMPTY:
        return f"{'ε' if premise_word == EMPTY else 'a'}/{'ε' if hypothesis_word == EMPTY else 'a'}"
    return "a/a" if premise_word == hypothesis_word else "a/b"


def modifier_rel(premise_word: str, hypothesis_word: str) -> Relation:
    """REL of two modifiers: the relation of m(X) to m'(X) (a/ε is ⊏, ε/a is ⊐, a/b is #)."""
    return _modifier_relations()[modifier_pair(premise_word, hypothesis_word)]


@lru_cache(maxsize=None)
def _modifier_relations() -> dict[str, Relation]:
    return {pair: modifier_relation(pair) for pair in ("ε/ε", "ε/a", "a/ε", "a/a", "a/b")}


@lru_cache(maxsize=None)
def phrase_table() -> dict[tuple[Relation, Relation], Relation]:
    """COMP for modifier + head: (REL of modifiers, REL of heads) -> relation of the phrases.

    Derived from :func:`~interp.natural_logic.semantics.modifier_signature`
    of every modifier pair; within the fragment (heads ≡ or #) the result
    depends on the modifier pair only through its REL, which is what lets
    the tree pass a relation instead of the words.

    Raises:
        ConfigError: two modifier pairs with the same REL project a head
            relation differently (the factorization would not hold).
    """
    table: dict[tuple[Relation, Relation], Relation] = {}
    for pair, rel in _modifier_relations().items():
        signature = modifier_signature(pair)
        for head in HEAD_RELATIONS:
            value = signature[head]
            if table.setdefault((rel, head), value) is not value:
                raise ConfigError(f"modifier pairs with REL {rel.symbol} disagree on head relation {head.symbol}")
    return table


def quantifier_pair(premise_word: str, hypothesis_word: str) -> str:
    """The value of a quantifier node: ``"premise/hypothesis"`` (e.g. ``"every/some"``).

    Raises:
        ConfigError: a word that is not one of MQNLI's quantifiers.
    """
    for word in (premise_word, hypothesis_word):
        if word not in QUANTIFIERS:
            raise ConfigError(f"MQNLI: {word!r} is not a quantifier ({', '.join(QUANTIFIERS)})")
    return f"{premise_word}/{hypothesis_word}"


def negation_pair(premise_word: str, hypothesis_word: str) -> str:
    """The value of a negation node: ``"not/ε"``, ``"ε/not"``, ``"not/not"`` or ``"ε/ε"``.

    Raises:
        ConfigError: a word other than the empty word or the negation word.
    """
    for word in (premise_word, hypothesis_word):
        if word not in (EMPTY, NEGATION_WORD):
            raise ConfigError(f"MQNLI: Neg must be {EMPTY!r} or {NEGATION_WORD!r}, got {word!r}")
    return "/".join("not" if w == NEGATION_WORD else "ε" for w in (premise_word, hypothesis_word))


def apply_quantifier(pair: str, restrictor: Relation, scope: Relation) -> Relation:
    """The joint projectivity of a quantifier pair applied to both argument relations."""
    premise, hypothesis = pair.split("/")
    return quantifier_signature(premise, hypothesis)[(restrictor, scope)]


def apply_negation(pair: str, relation: Relation) -> Relation:
    """The relation after a negation node with value ``pair`` (:func:`negation_pair`) acts on ``relation``.

    The projectivity signature of *not* (or of none) on each side, derived
    from finite models by :func:`interp.natural_logic.semantics.negation_signature`.
    """
    premise, hypothesis = (p == "not" for p in pair.split("/"))
    return _negation(premise, hypothesis)[relation]


@lru_cache(maxsize=None)
def _negation(premise: bool, hypothesis: bool) -> dict[Relation, Relation]:
    return negation_signature(premise, hypothesis)


def _phrase(modifier: Relation, head: Relation) -> Relation:
    return phrase_table()[(modifier, head)]


#: Above the lexical level: each node's children and function.
_UPPER: dict[str, tuple[tuple[str, ...], object]] = {
    "subj_np": (("adj_s", "n_s"), _phrase),
    "vp": (("adv", "v"), _phrase),
    "obj_np": (("adj_o", "n_o"), _phrase),
    "obj_dp": (("q_o", "obj_np", "vp"), apply_quantifier),
    "neg_vp": (("neg", "obj_dp"), apply_negation),
    "root": (("q_s", "subj_np", "neg_vp"), apply_quantifier),
}

_LEXICAL = {
    "q_s": quantifier_pair,
    "q_o": quantifier_pair,
    "neg": negation_pair,
    **{m: modifier_rel for m in MODIFIERS},
    **{h: head_relation for h in HEADS},
}


def abstract_tree() -> CompositionTree:
    """The tree from the lexical relations up: leaves q_s, adj_s, n_s, neg, q_o, adj_o, n_o, adv, v.

    Its input space (16·4·2·4·16·4·2·4·2 = 524,288 tuples) is what fair
    generation and the fairness check run over; the words only realize it.
    """
    tree = Tree("root", {node: children for node, (children, _) in _UPPER.items()})
    domains = {
        "q_s": QUANTIFIER_PAIRS,
        "q_o": QUANTIFIER_PAIRS,
        "neg": NEGATION_PAIRS,
        **{m: MODIFIER_RELATIONS for m in MODIFIERS},
        **{h: HEAD_RELATIONS for h in HEADS},
    }
    return CompositionTree(tree, domains, {node: function for node, (_, function) in _UPPER.items()})


def inputs_of(premise: Mapping[str, str], hypothesis: Mapping[str, str]) -> dict[str, str]:
    """The causal model's input variables (``p_q_s`` ... ``h_n_o``) from two word dicts keyed by position."""
    return {**{f"p_{k}": premise[k] for k in POSITIONS}, **{f"h_{k}": hypothesis[k] for k in POSITIONS}}


def mqnli_causal_model() -> CausalModel:
    """MQNLI's composition tree over words: inputs ``p_<position>`` and ``h_<position>``.

    Variables, in order: the lexical nodes (one per position), the phrases,
    ``obj_dp``, ``neg_vp``, ``root`` (a :class:`Relation`) and ``label``.
    """
    inputs = tuple(f"{side}_{k}" for side in ("p", "h") for k in POSITIONS)
    mechanisms: dict[str, Mechanism] = {k: Mechanism((f"p_{k}", f"h_{k}"), _LEXICAL[k]) for k in POSITIONS}
    for node, (children, function) in _UPPER.items():
        mechanisms[node] = Mechanism(children, function)
    mechanisms["label"] = Mechanism(("root",), LABEL_OF.__getitem__)
    domains = abstract_tree().domains
    return CausalModel(
        name="mqnli",
        inputs=inputs,
        mechanisms=mechanisms,
        output="label",
        values={**domains, **{n: RELATIONS for n in _UPPER}, "label": tuple(dict.fromkeys(LABEL_OF.values()))},
    )


#: The open-class positions: the modifiers and the heads.
OPEN_CLASS: tuple[str, ...] = ("adj_s", "n_s", "adv", "v", "adj_o", "n_o")


def collapsed_label(premise: Mapping[str, str], hypothesis: Mapping[str, str]) -> str:
    """The label had every pair of aligned non-empty open-class words been the same word.

    Geiger et al. (2018, §4.2): models that cannot use the identity of the
    open-class words read "every Swiss baker madly rubs some rock" and "every
    wild baker sells some rock" as ``every Adj_S N_S Adv V some N_O`` and
    ``every Adj_S N_S V some N_O``, an entailment. This is that reading: the
    hypothesis takes the premise's word wherever both sides have one (ε stays ε).
    """
    collapsed = {k: premise[k] if k in OPEN_CLASS and premise[k] != EMPTY and hypothesis[k] != EMPTY else hypothesis[k] for k in POSITIONS}
    return run_forward(_model(), inputs_of(premise, collapsed))["label"]


@lru_cache(maxsize=1)
def _model() -> CausalModel:
    return mqnli_causal_model()


def informative(premise: Mapping[str, str], hypothesis: Mapping[str, str], label: str) -> bool:
    """Whether a pair is in the informative open-class subset (Geiger et al. 2018, Table 1): labelled neutral solely
    because aligned open-class words are independent, i.e. neutral, while :func:`collapsed_label` is not.

    >>> p = dict(q_s="every", adj_s="swiss", n_s="baker", neg="ε", adv="madly", v="rubs", q_o="some", adj_o="ε", n_o="rock")
    >>> informative(p, {**p, "adj_s": "wild", "adv": "ε", "v": "sells"}, "neutral")
    True
    >>> informative(p, {**p, "adv": "ε"}, "entailment")
    False
    """
    return label == "neutral" and collapsed_label(premise, hypothesis) != "neutral"
