"""Yanaka et al. (2020)'s premise grammar, lexicon and replacement functions (Appendix, Table 6) as trees.

::

    S    -> NP IV1                      NP -> Q N | Q N S̄
    S̄    -> WhNP TV NP                  (peripheral embedding)
          | WhNP NP TV                  (centre embedding)
          | NP TV                       (centre embedding, no relative pronoun)

Depth d is the number of NPs on the subject's chain: 1 is "Q N IV1", each
embedded clause adds one. The seven replacement functions (Table 2) turn a
*specific* phrase into a *general* one or back: hyponym (dogs ⊑ animals),
adjective (small dogs ⊑ dogs), preposition (dogs in the area ⊑ dogs),
relative clause (dogs which ate dinner ⊑ dogs) on N; adverb (ran quickly ⊑
ran), disjunction (ran ⊑ ran or cried), conjunction (ran and cried ⊑ ran)
on IV1. At depth 1 they apply to the subject's N or to IV1; deeper, to the
innermost N (the paper's embedding monotonicity). Verbs are in the past
tense and nouns plural.

Usage::

    >>> s = Sentence((NP("some", "dog"), NP("no", "cat")), ("peripheral",), ("kissed",), "ran")
    >>> render(s)
    'some dogs which kissed no cats ran'
"""

from __future__ import annotations

from dataclasses import dataclass, replace

UP_QUANTIFIERS: tuple[str, ...] = ("some", "at least three", "more than three", "a few")
DOWN_QUANTIFIERS: tuple[str, ...] = ("no", "at most three", "less than three", "few")
QUANTIFIERS: tuple[str, ...] = UP_QUANTIFIERS + DOWN_QUANTIFIERS
NOUNS = ("dog", "rabbit", "lion", "cat", "bear", "tiger", "elephant", "fox", "monkey", "wolf")
IV1 = ("ran", "walked", "came", "waltzed", "swam", "rushed", "danced", "dawdled", "escaped", "left")
IV2 = ("laughed", "groaned", "roared", "screamed", "cried")
TV = ("kissed", "kicked", "hit", "cleaned", "touched", "loved", "accepted", "hurt", "licked", "followed")
WH = ("that", "which")
HYPERNYMS = ("animal", "creature", "mammal", "beast")
ADJECTIVES = ("small", "large", "crazy", "polite", "wild")
PPS = ("in the area", "on the ground", "at the park", "near the shore", "around the island")
RELCS = ("which ate dinner", "that liked flowers", "which hated the sun", "that stayed up late")
ADVERBS = ("slowly", "quickly", "seriously", "suddenly", "lazily")
EMBEDDINGS = ("peripheral", "centre", "reduced")
#: Replacement functions (Table 2) and the argument they rewrite.
REPLACEMENTS: dict[str, str] = {
    "hyponym": "noun", "adjective": "noun", "preposition": "noun", "relative clause": "noun",
    "adverb": "verb", "disjunction": "verb", "conjunction": "verb",
}
#: Fronted material of the robustness test sets T' (§2.2): an adverb or a three-word PP before the sentence.
FRONTED_PPS = ("near the shore", "in the area", "at the park", "around the island")


def plural(noun: str) -> str:
    """dog -> dogs, fox -> foxes, wolf -> wolves."""
    if noun.endswith("f"):
        return noun[:-1] + "ves"
    return noun + ("es" if noun.endswith(("x", "s")) else "s")


@dataclass(frozen=True)
class NP:
    """``Q N`` with an optional modifier of N from a replacement: ``adj`` before it, ``post`` (PP or relative clause) after it."""

    q: str
    noun: str
    adj: str | None = None
    post: str | None = None

    def words(self) -> list[str]:
        return [self.q, *([self.adj] if self.adj else []), plural(self.noun), *([self.post] if self.post else [])]


@dataclass(frozen=True)
class Sentence:
    """``nps[0]`` is the subject; ``nps[k]`` is embedded in ``nps[k-1]`` by ``embeddings[k-1]`` with verb ``verbs[k-1]``.

    ``verb`` is IV1 with an optional ``vmod`` (an adverb, a PP, ``or IV2``, ``and IV2``); ``obj`` an object NP
    for the object-position test set (``Q N TV Q N``, then ``verb`` is a TV); ``front`` a fronted adverb or PP.
    """

    nps: tuple[NP, ...]
    embeddings: tuple[str, ...]
    verbs: tuple[str, ...]
    verb: str
    vmod: str | None = None
    obj: NP | None = None
    front: str | None = None
    wh: tuple[str, ...] = ()

    @property
    def depth(self) -> int:
        return len(self.nps)


def _np_chain(s: Sentence, k: int) -> list[str]:
    words = s.nps[k].words()
    if k + 1 < len(s.nps):
        kind, verb = s.embeddings[k], s.verbs[k]
        wh = s.wh[k] if k < len(s.wh) else "which"
        inner = _np_chain(s, k + 1)
        if kind == "peripheral":
            words += [wh, verb, *inner]
        elif kind == "centre":
            words += [wh, *inner, verb]
        else:
            words += [*inner, verb]
    return words


def render(s: Sentence) -> str:
    """The sentence's text, lower case, no final stop."""
    words = _np_chain(s, 0)
    if s.obj is not None:
        words += [s.verb, *s.obj.words()]
    else:
        words += [s.verb, *([s.vmod] if s.vmod else [])]
    text = " ".join(words)
    return f"{s.front}, {text}" if s.front else text


def with_np(s: Sentence, k: int, **changes) -> Sentence:
    """``s`` with NP ``k`` changed (``k = -1``: the object NP)."""
    if k == -1:
        return replace(s, obj=replace(s.obj, **changes))
    nps = list(s.nps)
    nps[k] = replace(nps[k], **changes)
    return replace(s, nps=tuple(nps))
