"""Truth of Yanaka et al.'s sentences in finite models, to check every generated label without the polarity calculus (and without a prover).

A model gives each noun, hypernym, adjective, PP, relative clause, IV1,
IV2 and "IV1 + adverb" a subset of a universe {0 .. n-1} and each
transitive verb a relation. Axioms: every noun ⊆ mammal ⊆ animal ⊆
creature, every noun ⊆ beast ⊆ animal, and "ran quickly" ⊆ "ran".
Modifiers intersect; "ran or cried" is the union, "ran and cried" the
intersection. Quantifiers read ``|A ∩ B| = i``: some i ≥ 1, a few i ≥ 2, at
least three i ≥ 3, more than three i ≥ 4, no i = 0, few i ≤ 1 (a cardinal
reading with the paper's polarity, as its lambda term for *few* has),
less than three i ≤ 2, at most three i ≤ 3. A fronted adverb or PP is
read as not changing the truth conditions. An entailment holds when no
model makes the premise true and the hypothesis false; the sample covers
universes of 1 to 10 elements (:func:`sample_models`), so an entailment is
"no counter-model found" and a non-entailment is proved by its model.

Usage::

    >>> from interp.tasks.systematicity.grammar import NP, Sentence
    >>> p = Sentence((NP("some", "dog"),), (), (), "ran")
    >>> h = Sentence((NP("some", "animal"),), (), (), "ran")
    >>> entailed(p, h, sample_models(100, seed=0))
    (True, True)
"""

from __future__ import annotations

import os

import numpy as np

from interp.core.errors import ConfigError, named
from interp.core.jsonlines import read_records
from interp.tasks.systematicity import grammar as G

COUNTS = {
    "some": lambda i: i >= 1, "a few": lambda i: i >= 2, "at least three": lambda i: i >= 3, "more than three": lambda i: i >= 4,
    "no": lambda i: i == 0, "few": lambda i: i <= 1, "less than three": lambda i: i <= 2, "at most three": lambda i: i <= 3,
}
_VERB_ADVERB = tuple(f"{v}+{a}" for v in G.IV1 for a in G.ADVERBS)
UNARY = ("creature", "animal", "mammal", "beast", *G.NOUNS, *G.ADJECTIVES, *G.PPS, *G.RELCS, *G.IV1, *G.IV2, *_VERB_ADVERB)
PARENTS = {
    "animal": ("creature",), "mammal": ("animal",), "beast": ("animal",),
    **{n: ("mammal", "beast") for n in G.NOUNS},
    **{va: (va.split("+")[0],) for va in _VERB_ADVERB},
}
DENSITIES = (0.0, 0.3, 0.6, 0.85, 1.0)


def sample_models(per_size: int, seed: int = 0, sizes=range(1, 11)) -> list[dict]:
    """``per_size`` random models per universe size satisfying the axioms: symbol -> bool ``[M, n]`` or ``[M, n, n]``."""
    rng = np.random.default_rng(seed)
    batches = []
    for n in sizes:
        m, out = per_size, {}
        common = rng.choice(DENSITIES[1:], size=m)
        mixing = rng.choice((0.5, 0.95), size=m)
        for s in (*UNARY, *G.TV):
            shape = (m, n, n) if s in G.TV else (m, n)
            density = np.where(rng.random(m) < mixing, common, rng.choice(DENSITIES, size=m)).reshape((m,) + (1,) * (len(shape) - 1))
            value = rng.random(shape) < density
            for parent in PARENTS.get(s, ()):
                value &= out[parent]
            out[s] = value
        batches.append(out)
    return batches


def _restrictor(np_: G.NP, m: dict) -> np.ndarray:
    value = m[np_.noun]
    for extra in (np_.adj, np_.post):
        if extra:
            value = value & m[extra]
    return value


def _quantify(q: str, restrictor: np.ndarray, scope: np.ndarray, axis: int) -> np.ndarray:
    return COUNTS[q]((restrictor & scope).sum(axis))


def _chain(s: G.Sentence, k: int, m: dict) -> np.ndarray:
    """The set NP ``k`` of the chain denotes as a restrictor (its N, modifiers and embedded clause): ``[M, n]``."""
    value = _restrictor(s.nps[k], m)
    if k + 1 < len(s.nps):
        inner = _chain(s, k + 1, m)  # the embedded NP's restrictor, over y
        relation = m[s.verbs[k]]
        if s.embeddings[k] == "peripheral":  # x TV y: {x : Q(inner, {y : TV(x, y)})}
            clause = _quantify(s.nps[k + 1].q, inner[:, None, :], relation, 2)
        else:  # y TV x: {x : Q(inner, {y : TV(y, x)})}
            clause = _quantify(s.nps[k + 1].q, inner[:, :, None], relation, 1)
        value = value & clause
    return value


def _scope(s: G.Sentence, m: dict) -> np.ndarray:
    if s.obj is not None:
        return _quantify(s.obj.q, _restrictor(s.obj, m)[:, None, :], m[s.verb], 2)
    verb = m[s.verb]
    if not s.vmod:
        return verb
    if s.vmod.startswith("or "):
        return verb | m[s.vmod[3:]]
    if s.vmod.startswith("and "):
        return verb & m[s.vmod[4:]]
    return m[f"{s.verb}+{s.vmod}"]


def truth(s: G.Sentence, m: dict) -> np.ndarray:
    """Whether ``s`` is true in each model of the batch: bool ``[M]``."""
    return _quantify(s.nps[0].q, _chain(s, 0, m), _scope(s, m), 1)


def entailed(premise: G.Sentence, hypothesis: G.Sentence, batches) -> tuple[bool, bool]:
    """(no model has the premise true and the hypothesis false, some model has the premise true)."""
    counter = satisfied = False
    for m in batches:
        p = truth(premise, m)
        satisfied |= bool(p.any())
        counter |= bool((p & ~truth(hypothesis, m)).any())
    return not counter, satisfied


def check_records(records, per_size: int = 500, seed: int = 0) -> dict:
    """Every record's label against finite models, by split and depth: ``confirmed`` / ``unconfirmed`` / ``refuted``.

    An entailment is refuted by a model with the premise true and the hypothesis false, and confirmed when
    none turns up and the premise was satisfied; a non-entailment is confirmed by such a model.
    """
    from interp.tasks.systematicity.generate import from_tree

    batches = sample_models(per_size, seed)
    counts: dict = {}
    refuted = []
    for r in records:
        ok, satisfied = entailed(from_tree(r["premise_tree"]), from_tree(r["hypothesis_tree"]), batches)
        if r["label"] == "entailment":
            verdict = "refuted" if not ok else "confirmed" if satisfied else "unconfirmed"
        else:
            verdict = "confirmed" if not ok else "unconfirmed"
        key = f"{r['split']}/depth {r['depth']}"
        counts.setdefault(key, {"confirmed": 0, "unconfirmed": 0, "refuted": 0})[verdict] += 1
        if verdict == "refuted":
            refuted.append(r.get("id", "?"))
    return {"counts": counts, "refuted": refuted}


def check_file(data_file: str | os.PathLike, per_size: int = 500, seed: int = 0) -> dict:
    """Every label of a file ``interp monotonicity generate`` wrote, checked as :func:`check_records` does.

    Raises:
        ConfigError: naming ``per_size=`` below 1.
        DataError: no such file, or a line that is not a generated pair (naming ``file:line``).
    """
    if per_size < 1:
        raise ConfigError(f"{named('per_size', per_size)} must be at least 1")
    fields = ("premise_tree", "hypothesis_tree", "label", "split", "depth")
    return check_records(read_records(data_file, "interp monotonicity generate", fields), per_size, seed)
