"""Model-theoretic labels for the monotonicity fragment: truth in finite models, independent of the polarity calculus.

A *model* is a universe {0 .. n-1}, a subset for every noun, adjective,
intransitive verb and predicate adjective, and a relation for every
transitive verb and for "with" (``has``). The knowledge base is imposed as
axioms: ``x ≤ y`` makes x a subset of y, an antonym pair disjoint
(:mod:`~interp.tasks.fragments.monotonicity.lexicon`). A sentence is
evaluated compositionally: an NP's restrictor is the intersection of its
noun, adjective and modifier; ``Q A B`` is a test on ``|A ∩ B|`` and ``|A \\ B|``
(:data:`~interp.tasks.fragments.monotonicity.lexicon.DETERMINER_TRUTH`);
an object relative clause "who Q A V" is {y : Q(A, {x : V(x, y)})}.

Entailment is *Strawson* entailment (von Fintel 1999): only models where
the restrictor of every universal determiner (every, all, each), in premise
and hypothesis, is non-empty are counted (their existential import;
without it ``every ≤ most ≤ some`` fails on an empty restrictor). Then, over the models checked: no model with the premise true
and the hypothesis false is entailment; no model with both true is
contradiction; a model of each kind is neutral.

Which models (the docs repeat this): *exhaustively* every model over
universes of 1 and 2 elements of the symbols a pair uses (when there are at
most 2^16 of them), and a *sample* of complete models over universes of 1
to 10 elements (:func:`sample_models`). An entailment or contradiction is
therefore "no counter-model found", a neutral is proved by its two witnesses.

Usage::

    >>> from interp.tasks.fragments.monotonicity.grammar import NP, VP, Sentence
    >>> models = sample_models(200, seed=0)
    >>> p = Sentence(NP("every", None, "dog"), VP("intransitive", "ran"))
    >>> h = Sentence(NP("every", None, "poodle"), VP("intransitive", "moved"))
    >>> check_label(p, h, models).label
    'entailment'
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np

from interp.tasks.fragments.monotonicity import lexicon as L
from interp.tasks.fragments.monotonicity.grammar import NP, ORC, PP, SRC, VP, Sentence

UNARY: tuple[str, ...] = tuple(dict.fromkeys(chain(
    L.NOUN_ANIMATE, L.NOUN_INANIMATE, L.NOUN_SMELL, (a for a in L.ADJ_ANIMATE if " or " not in a), L.ADJ_INANIMATE,
    L.ADJ_SMELL, L.ADJ_PRED, L.VERB_INTRANSITIVE)))
BINARY: tuple[str, ...] = (*L.VERB_TRANSITIVE, "has")
EXHAUSTIVE_SIZES: tuple[int, ...] = (1, 2)
#: A sampled model's share of each parent set a predicate takes: a share (not 0) common to the model for half (or, in half the models, 95%) of the symbols, each symbol its own otherwise; at most 0.5 for the first of an antonym pair.
DENSITIES = (0.0, 0.3, 0.6, 0.85, 1.0)
MAX_EXHAUSTIVE = 1 << 16


def _category(symbol: str) -> str:
    if symbol in L.NOUN_ANIMATE or symbol in L.NOUN_INANIMATE or symbol in L.NOUN_SMELL:
        return "noun"
    if symbol in L.VERB_INTRANSITIVE or symbol in L.VERB_TRANSITIVE:
        return "verb"
    return "adj"


def axioms(symbols) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The knowledge base restricted to ``symbols``: (subset pairs ``(a, b)`` meaning a ⊆ b, disjoint pairs)."""
    symbols = list(symbols)
    subset = [(a, b) for a in symbols for b in symbols if a != b and b in L.greater(_category(a), a)]
    disjoint = [(a, b) for i, a in enumerate(symbols) for b in symbols[i + 1 :] if L.disjoint(a, b)]
    return subset, disjoint


class Models(dict):
    """A batch of models over one universe size: symbol -> bool array ``[M, n]`` (unary) or ``[M, n, n]`` (binary)."""

    @property
    def count(self) -> int:
        return next(iter(self.values())).shape[0]


def _order(symbols, subset) -> list[str]:
    """Symbols with every superset before its subsets."""
    depth = {s: sum(1 for a, _ in subset if a == s) for s in symbols}
    return sorted(symbols, key=lambda s: depth[s])


def _sample(symbols, m: int, n: int, rng: np.random.Generator) -> Models:
    subset, disjoint = axioms(symbols)
    out = Models()
    common = rng.choice(DENSITIES[1:], size=m)
    mixing = rng.choice((0.5, 0.95), size=m)
    for s in _order(symbols, subset):
        shape = (m, n, n) if s in BINARY else (m, n)
        own = rng.choice(DENSITIES, size=m)
        density = np.where(rng.random(m) < mixing, common, own)
        if any(s in pair and (pair[0] if pair[1] == s else pair[1]) not in out for pair in disjoint):
            density = np.minimum(density, 0.5)  # leave room for an antonym sampled later
        density = density.reshape((m,) + (1,) * (len(shape) - 1))
        value = rng.random(shape) < density
        for a, b in subset:
            if a == s and b in out:
                value &= out[b]
        for a, b in disjoint:
            other = b if a == s else a if b == s else None
            if other in out:
                value &= ~out[other]
        out[s] = value
    return out


def sample_models(per_size: int, seed: int = 0, sizes=range(1, 11)) -> list[Models]:
    """``per_size`` random models over every symbol for each universe size, satisfying the axioms (seeded)."""
    rng = np.random.default_rng(seed)
    return [_sample(UNARY + BINARY, per_size, n, rng) for n in sizes]


def all_models(symbols, n: int) -> Models | None:
    """Every model of ``symbols`` over ``n`` elements satisfying the axioms, or ``None`` if there are more than 2^16."""
    symbols = sorted(set(symbols))
    widths = [n * n if s in BINARY else n for s in symbols]
    bits = sum(widths)
    if bits > 16:
        return None
    codes = np.arange(1 << bits, dtype=np.int64)
    flat = ((codes[:, None] >> np.arange(bits)) & 1).astype(bool)
    out, start = Models(), 0
    for s, w in zip(symbols, widths):
        out[s] = flat[:, start : start + w].reshape((-1, n, n) if s in BINARY else (-1, n))
        start += w
    subset, disjoint = axioms(symbols)
    keep = np.ones(len(codes), dtype=bool)
    for a, b in subset:
        keep &= ~(out[a] & ~out[b]).reshape(len(codes), -1).any(1)
    for a, b in disjoint:
        keep &= ~(out[a] & out[b]).reshape(len(codes), -1).any(1)
    return Models({s: v[keep] for s, v in out.items()})


def symbols(node) -> set[str]:
    """The lexical symbols a sentence (or part) is evaluated with."""
    if isinstance(node, Sentence):
        return symbols(node.subject) | symbols(node.vp)
    if isinstance(node, NP):
        adj = set(node.adj.split(" or ")) if node.adj else set()
        return {node.noun} | adj | symbols(node.mod)
    if isinstance(node, VP):
        return {node.verb} | (symbols(node.obj) if node.obj else set())
    if isinstance(node, SRC):
        return symbols(node.vp)
    if isinstance(node, ORC):
        return {node.verb} | symbols(node.np)
    if isinstance(node, PP):
        return {"has", node.adj, node.noun}
    return set()


def _quantify(det: str, inside: np.ndarray, outside: np.ndarray) -> np.ndarray:
    return np.asarray(L.DETERMINER_TRUTH[det](inside, outside), dtype=bool)


def _adjective(adj: str, m: Models) -> np.ndarray:
    parts = adj.split(" or ")
    value = m[parts[0]]
    for p in parts[1:]:
        value = value | m[p]
    return value


def _restrictor(np_: NP, m: Models, defined: list) -> np.ndarray:
    value = m[np_.noun]
    if np_.adj:
        value = value & _adjective(np_.adj, m)
    mod = np_.mod
    if isinstance(mod, SRC):
        value = value & _vp(mod.vp, m, defined)
    elif isinstance(mod, ORC):
        inner = _restrictor(mod.np, m, defined)
        relation = m[mod.verb]  # [M, x, y]: x verb y
        a = inner[:, :, None]
        value = value & _quantify(mod.np.det, (a & relation).sum(1), (a & ~relation).sum(1))
    elif isinstance(mod, PP):
        target = m[mod.adj] & m[mod.noun]
        has = (m["has"] & target[:, None, :]).any(2)
        value = value & (has if mod.prep == "with" else ~has)
    if np_.det in L.IMPORT:
        defined.append(value.any(1))
    return value


def _vp(vp: VP, m: Models, defined: list) -> np.ndarray:
    if vp.kind == "transitive":
        obj = _restrictor(vp.obj, m, defined)[:, None, :]
        relation = m[vp.verb]
        value = _quantify(vp.obj.det, (relation & obj).sum(2), (~relation & obj).sum(2))
    else:
        value = m[vp.verb]
    return ~value if vp.neg else value


def truth(sentence: Sentence, m: Models) -> tuple[np.ndarray, np.ndarray]:
    """(truth ``[M]``, defined ``[M]``: every restrictor non-empty) of ``sentence`` in each model."""
    defined: list = []
    restrictor = _restrictor(sentence.subject, m, defined)
    scope = _vp(sentence.vp, m, defined)
    value = _quantify(sentence.subject.det, (restrictor & scope).sum(1), (restrictor & ~scope).sum(1))
    return value, np.logical_and.reduce(defined) if defined else np.ones_like(value)


@dataclass(frozen=True)
class Check:
    """A pair's model-theoretic verdict: ``label`` (or ``unsatisfiable`` premise), how many models counted, and how."""

    label: str
    models: int
    exhaustive: tuple[int, ...]
    witnesses: tuple[bool, bool]  # a model with P ∧ ¬H, a model with P ∧ H

    def verdict(self, expected: str) -> str:
        """``refuted`` (a model contradicts ``expected``), ``confirmed`` (every model ``expected`` needs was found), else ``unconfirmed``.

        Models can refute an entailment (P ∧ ¬H) or a contradiction (P ∧ H) and
        prove a neutral (both); an entailment or contradiction is confirmed when
        no counter-model turned up and the premise was satisfied.
        """
        counter, both = self.witnesses
        if expected == "entailment":
            return "refuted" if counter else "confirmed" if both else "unconfirmed"
        if expected == "contradiction":
            return "refuted" if both else "confirmed" if counter else "unconfirmed"
        return "confirmed" if counter and both else "unconfirmed"


def check_label(premise: Sentence, hypothesis: Sentence, sampled: list[Models] | None = None) -> Check:
    """The label finite models give the pair: exhaustive over small universes where feasible, then ``sampled``."""
    batches, exhaustive = [], []
    used = symbols(premise) | symbols(hypothesis)
    for n in EXHAUSTIVE_SIZES:
        every = all_models(used, n)
        if every is not None:
            batches.append(every)
            exhaustive.append(n)
    batches += list(sampled or ())
    counter = both = False
    counted = 0
    for m in batches:
        p, p_defined = truth(premise, m)
        h, h_defined = truth(hypothesis, m)
        ok = p_defined & h_defined & p
        counted += int(ok.sum())
        counter |= bool((ok & ~h).any())
        both |= bool((ok & h).any())
    if not counter and not both:
        label = "unsatisfiable"
    else:
        label = "neutral" if counter and both else "entailment" if both else "contradiction"
    return Check(label, counted, tuple(exhaustive), (counter, both))


def check_records(records, per_size: int = 1000, seed: int = 0, escalate: int = 10) -> dict:
    """Every record's label (from its stored trees) against finite models: verdict counts by setting and label, and the ids not confirmed.

    A pair whose sample lacks a model its label needs is checked again on
    ``escalate`` times as many fresh models (drawn once, only if needed).

    Raises:
        DataError: a record without readable ``premise_tree`` / ``hypothesis_tree``.
    """
    from interp.tasks.fragments.monotonicity.trees import from_json

    sampled = sample_models(per_size, seed)
    more = None
    counts: dict = {}
    refuted, unconfirmed = [], []
    for r in records:
        where = r.get("id", "?")
        pair = from_json(r.get("premise_tree"), f"{where}: premise_tree"), from_json(r.get("hypothesis_tree"), f"{where}: hypothesis_tree")
        verdict = check_label(*pair, sampled).verdict(r["label"])
        if verdict == "unconfirmed" and escalate > 1:
            more = more or sample_models(per_size * escalate, seed + 1)
            verdict = check_label(*pair, more).verdict(r["label"])
        key = f"{r.get('setting', '?')}/{r['label']}"
        counts.setdefault(key, {"confirmed": 0, "unconfirmed": 0, "refuted": 0})[verdict] += 1
        (refuted if verdict == "refuted" else unconfirmed if verdict == "unconfirmed" else []).append(where)
    return {"counts": dict(sorted(counts.items())), "refuted": refuted, "unconfirmed": unconfirmed, "models_per_size": per_size, "escalate": escalate, "sizes": "1-10 sampled; 1-2 exhaustive where at most 2^16 models"}
