"""The monotonicity fragment's regular grammar (Richardson et al. 2020, Appendix, Figure 8) as trees.

::

    S          -> NP_animate VP
    NP         -> NP_animate | NP_inanimate
    NP_animate -> Det (Adj_animate) Nbar_animate
    NP_inan.   -> Det (Adj_inanimate) N_inanimate
    Nbar       -> N_animate | N_animate SRC | N_animate ORC | N_animate PP
    SRC        -> who VP            ORC -> who NP_animate Vt
    PP         -> P Adj_smell N_smell
    VP         -> VPbar | do not VPbar | be (not) Adj_pred
    VPbar      -> Vi | Vt NP

A sentence is a :class:`Sentence` of frozen nodes; a *slot* is a path to
one word or optional part (``("subject", "det")``, ``("vp", "obj", "noun")``,
``("subject", "mod")``). The ``simple`` setting has at most one relative
clause or PP and the five determiners of the released simple fragment; the
``hard`` one up to three and all fourteen (with numerals).

Usage::

    >>> s = Sentence(NP("every", None, "dog"), VP("intransitive", "ran"))
    >>> render(s)
    'every dog ran'
    >>> render(replace(s, ("subject", "det"), "most"))
    'most dogs ran'
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace as _replace
from typing import Iterator, Union

from interp.tasks.fragments.monotonicity import lexicon as L

SETTINGS: tuple[str, ...] = ("simple", "hard")
#: Most relative clauses / PPs in a premise, by setting.
MAX_CLAUSES = {"simple": 1, "hard": 3}
#: How often an animate NP with room for one takes a relative clause or PP.
MOD_RATE = {"simple": 0.5, "hard": 0.8}


@dataclass(frozen=True)
class NP:
    """``det (adj) noun (mod)``; ``mod`` only on an animate noun."""

    det: str
    adj: str | None
    noun: str
    mod: Union["SRC", "ORC", "PP", None] = None


@dataclass(frozen=True)
class VP:
    """``kind`` is ``intransitive`` (``verb`` a Vi), ``transitive`` (a Vt with ``obj``) or ``predicate`` (``verb`` an Adj_pred)."""

    kind: str
    verb: str
    neg: bool = False
    obj: NP | None = None


@dataclass(frozen=True)
class SRC:
    """Subject relative clause: ``who VP``."""

    vp: VP


@dataclass(frozen=True)
class ORC:
    """Object relative clause: ``who NP Vt``."""

    np: NP
    verb: str


@dataclass(frozen=True)
class PP:
    """``with|without Adj_smell N_smell``."""

    prep: str
    adj: str
    noun: str


@dataclass(frozen=True)
class Sentence:
    subject: NP
    vp: VP


Path = tuple[str, ...]


def get(node, path: Path):
    """The part of ``node`` at ``path``."""
    for step in path:
        node = getattr(node, step)
    return node


def replace(node, path: Path, value):
    """A copy of ``node`` with the part at ``path`` set to ``value`` (nodes are immutable)."""
    if not path:
        return value
    return _replace(node, **{path[0]: replace(getattr(node, path[0]), path[1:], value)})


def clauses(node) -> int:
    """How many relative clauses and PPs ``node`` holds."""
    if isinstance(node, Sentence):
        return clauses(node.subject) + clauses(node.vp)
    if isinstance(node, NP):
        return (node.mod is not None) + clauses(node.mod)
    if isinstance(node, VP):
        return clauses(node.obj)
    if isinstance(node, SRC):
        return clauses(node.vp)
    if isinstance(node, ORC):
        return clauses(node.np)
    return 0


# ---------------------------------------------------------------- rendering


def _np_words(np: NP, out: list, path: Path) -> bool:
    """Append (text, slot) pieces of ``np``; returns whether it is plural."""
    det = L.DETERMINERS[np.det]
    first = (np.adj or (L.plural(np.noun) if det.plural else np.noun))
    text = "an" if np.det == "a" and first[0] in "aeiou" else np.det
    out.append((text, path + ("det",)))
    if np.adj:
        out.append((np.adj, path + ("adj",)))
    out.append((L.plural(np.noun) if det.plural else np.noun, path + ("noun",)))
    if isinstance(np.mod, SRC):
        out.append(("who", path + ("mod",)))
        _vp_words(np.mod.vp, out, path + ("mod", "vp"), det.plural)
    elif isinstance(np.mod, ORC):
        out.append(("who", path + ("mod",)))
        _np_words(np.mod.np, out, path + ("mod", "np"))
        out.append((np.mod.verb, path + ("mod", "verb")))
    elif isinstance(np.mod, PP):
        out.append((np.mod.prep, path + ("mod",)))
        out.append((np.mod.adj, path + ("mod", "adj")))
        out.append((np.mod.noun, path + ("mod", "noun")))
    return det.plural


def _vp_words(vp: VP, out: list, path: Path, plural: bool) -> None:
    if vp.kind == "predicate":
        out.append(("were" if plural else "was", path))
        if vp.neg:
            out.append(("not", path + ("neg",)))
        out.append((vp.verb, path + ("verb",)))
        return
    if vp.neg:
        out.append(("did not", path + ("neg",)))
    out.append((L.BASE_FORM[vp.verb] if vp.neg else vp.verb, path + ("verb",)))
    if vp.kind == "transitive":
        _np_words(vp.obj, out, path + ("obj",))


def pieces(sentence: Sentence) -> list[tuple[str, Path]]:
    """The sentence as (text, slot path) pieces in order; multiword items ("stared at") are one piece."""
    out: list = []
    plural = _np_words(sentence.subject, out, ("subject",))
    _vp_words(sentence.vp, out, ("vp",), plural)
    return out


def render(sentence: Sentence) -> str:
    """The sentence's text, lower case, no punctuation (as the released fragment)."""
    return " ".join(text for text, _ in pieces(sentence))


def span(sentence: Sentence, path: Path) -> tuple[int, int]:
    """Character span in :func:`render`'s text of the piece at ``path`` (an inserted or kept slot's word).

    Raises:
        KeyError: no piece of the sentence has that path.
    """
    start = 0
    for text, where in pieces(sentence):
        if where == path:
            return start, start + len(text)
        start += len(text) + 1
    raise KeyError(path)


# ---------------------------------------------------------------- sampling


def determiners(setting: str) -> tuple[str, ...]:
    """The determiners a setting draws from."""
    return L.SIMPLE_DETERMINERS if setting == "simple" else tuple(L.DETERMINERS)


def random_np(rng: random.Random, setting: str, animate: bool, budget: int) -> NP:
    """A random NP with at most ``budget`` relative clauses / PPs inside."""
    det = rng.choice(determiners(setting))
    if not animate:
        return NP(det, rng.choice(L.ADJ_INANIMATE) if rng.random() < 0.5 else None, rng.choice(L.NOUN_INANIMATE))
    adj = rng.choice(L.ADJ_ANIMATE) if rng.random() < 0.4 else None
    mod = random_mod(rng, setting, budget) if budget > 0 and rng.random() < MOD_RATE[setting] else None
    return NP(det, adj, rng.choice(L.NOUN_ANIMATE), mod)


def random_mod(rng: random.Random, setting: str, budget: int) -> SRC | ORC | PP:
    """A random relative clause or PP using at most ``budget`` clauses (itself included)."""
    kind = rng.choice(("src", "orc", "pp") if setting == "hard" else ("src", "orc"))
    if kind == "pp":
        return PP(rng.choice(L.PREPOSITIONS), rng.choice(L.ADJ_SMELL), rng.choice(L.NOUN_SMELL))
    if kind == "orc":
        return ORC(random_np(rng, setting, True, budget - 1), rng.choice(L.VERB_TRANSITIVE))
    return SRC(random_vp(rng, setting, budget - 1))


def random_vp(rng: random.Random, setting: str, budget: int) -> VP:
    """A random VP (negated one time in four)."""
    neg = rng.random() < 0.25
    kind = rng.choice(("intransitive", "transitive", "predicate"))
    if kind == "intransitive":
        return VP(kind, rng.choice(L.VERB_INTRANSITIVE), neg)
    if kind == "predicate":
        return VP(kind, rng.choice(L.ADJ_PRED), neg)
    return VP(kind, rng.choice(L.VERB_TRANSITIVE), neg, random_np(rng, setting, rng.random() < 0.5, budget))


def random_sentence(rng: random.Random, setting: str) -> Sentence:
    """A random premise of the setting (Figure 8's grammar)."""
    budget = MAX_CLAUSES[setting]
    while True:
        subject_budget = rng.randint(0, budget)
        s = Sentence(random_np(rng, setting, True, subject_budget), random_vp(rng, setting, budget - subject_budget))
        if clauses(s) <= budget and coherent(s):
            return s


def predicates(node) -> list[str]:
    """The verbs and predicate adjectives of a tree, in order (with repeats)."""
    return [part.verb for _, part in walk(node) if isinstance(part, (VP, ORC))]


def coherent(sentence: Sentence) -> bool:
    """The grammar's filter: no two verbs or predicate adjectives of the sentence are equal, ordered by ≤ or antonyms.

    Without it a premise can be unsatisfiable ("every dog who was happy was
    sad") or valid ("every dog who ran moved"), and a substitution's label
    would not follow from its polarity.
    """
    words = predicates(sentence)
    for i, a in enumerate(words):
        for b in words[i + 1 :]:
            if a == b or b in L.greater("verb", a) or a in L.greater("verb", b) or L.disjoint(a, b):
                return False
    return True


def walk(node, path: Path = ()) -> Iterator[tuple[Path, object]]:
    """Every (path, part) of a tree, parents before children."""
    yield path, node
    if isinstance(node, (Sentence, NP, VP, SRC, ORC)):
        for name in node.__dataclass_fields__:
            child = getattr(node, name)
            if isinstance(child, (NP, VP, SRC, ORC, PP)):
                yield from walk(child, path + (name,))
