"""Premise-hypothesis pairs D_d^{Q,R} (Yanaka et al. 2020, §2.1) with gold labels from polarity and replacement direction.

A pair applies one replacement function (Table 2) at one position: the
subject's N or IV1 at depth 1, the innermost N deeper. The position's
polarity is the product of the monotonicities of the quantifiers above it
(all eight are monotone the same way in both arguments: no, at most three,
less than three, few ↓; some, at least three, more than three, a few ↑).
The premise holds the specific phrase and the hypothesis the general one
(direction ↑), or the reverse (↓); the label is entailment when the
direction equals the polarity, else non-entailment (written ``neutral``, as
MoNLI's two labels). Labels and polarities are balanced 1:1 where the
quantifier set allows; premises repeat no content word (the paper's filter).

Usage::

    >>> import random
    >>> pairs = sample_pairs(random.Random(0), 1, ("some", "no"), ("hyponym",), 4)
    >>> sorted({p["label"] for p in pairs}), sorted({p["polarity"] for p in pairs})
    (['entailment', 'neutral'], ['down', 'up'])
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Sequence

from interp.core.errors import ConfigError, named
from interp.natural_logic.polarity import compose_all
from interp.tasks.systematicity import grammar as G


def direction_of(q: str) -> str:
    """``up`` or ``down``: the quantifier's monotonicity (the same in both arguments)."""
    return "up" if q in G.UP_QUANTIFIERS else "down"


def polarity_at(quantifiers: Sequence[str]) -> str:
    """The polarity of a position under ``quantifiers`` (outermost first): the product of their monotonicities.

    >>> polarity_at(["no", "some"]), polarity_at(["no", "few"])
    ('down', 'up')
    """
    return compose_all(map(direction_of, quantifiers))


def _distinct(rng: random.Random, pool: Sequence[str], k: int) -> list[str]:
    return rng.sample(list(pool), k)


def _base(rng: random.Random, quantifiers: Sequence[str], variant: str) -> G.Sentence:
    depth = len(quantifiers) if variant != "object" else 1
    nouns = _distinct(rng, G.NOUNS, depth + 1)
    nps = tuple(G.NP(q, n) for q, n in zip(quantifiers[:depth], nouns))
    verbs = tuple(_distinct(rng, G.TV, max(depth - 1, 1)))
    sentence = G.Sentence(
        nps=nps,
        embeddings=tuple(rng.choice(G.EMBEDDINGS) for _ in range(depth - 1)),
        verbs=verbs[: depth - 1],
        verb=rng.choice(G.IV1),
        wh=tuple(rng.choice(G.WH) for _ in range(depth - 1)),
    )
    if variant == "object":
        sentence = replace(sentence, verb=verbs[0], obj=G.NP(quantifiers[1], nouns[1]))
    elif variant == "adverb":
        sentence = replace(sentence, front=rng.choice(G.ADVERBS).capitalize())
    elif variant == "preposition":
        sentence = replace(sentence, front=rng.choice(G.FRONTED_PPS).capitalize())
    return sentence


def specific_and_general(s: G.Sentence, replacement: str, target: int, rng: random.Random) -> tuple[G.Sentence, G.Sentence]:
    """The (more specific, more general) versions of ``s`` under ``replacement`` at NP ``target`` (-1: the object) or the verb."""
    if replacement == "hyponym":
        return s, G.with_np(s, target, noun=rng.choice(G.HYPERNYMS))
    if replacement == "adjective":
        return G.with_np(s, target, adj=rng.choice(G.ADJECTIVES)), s
    if replacement == "preposition":
        return G.with_np(s, target, post=rng.choice(G.PPS)), s
    if replacement == "relative clause":
        return G.with_np(s, target, post=rng.choice(G.RELCS)), s
    if replacement == "adverb":
        return replace(s, vmod=rng.choice(G.ADVERBS)), s
    if replacement == "disjunction":
        return s, replace(s, vmod="or " + rng.choice(G.IV2))
    if replacement == "conjunction":
        return replace(s, vmod="and " + rng.choice(G.IV2)), s
    raise ConfigError(f"unknown replacement {replacement!r}; choose from {', '.join(G.REPLACEMENTS)}")


def sample_pairs(rng: random.Random, depth: int, quantifiers: Sequence[str], replacements: Sequence[str], n: int, variant: str = "subject") -> list[dict]:
    """``n`` distinct pairs of D_depth with quantifiers and replacements from the given sets (labels 1:1; polarities 1:1 where possible).

    ``variant``: ``subject`` (the grammar's own sentences), or the robustness sets of §2.2 at depth 1:
    ``adverb`` / ``preposition`` (fronted), ``object`` (``Q N TV Q N``, the replacement in the object).

    Raises:
        ConfigError: depth below 1, an unknown quantifier or replacement, or no replacement that applies at this depth.
    """
    if depth < 1:
        raise ConfigError(f"{named('depth', depth)}: at least 1")
    bad = [q for q in quantifiers if q not in G.QUANTIFIERS] + [r for r in replacements if r not in G.REPLACEMENTS]
    if bad or not quantifiers:
        raise ConfigError(f"unknown quantifier or replacement {(bad or [''])[0]!r}; quantifiers: {', '.join(G.QUANTIFIERS)}; replacements: {', '.join(G.REPLACEMENTS)}")
    usable = [r for r in replacements if depth == 1 and variant != "object" or G.REPLACEMENTS[r] == "noun"]
    if not usable:
        raise ConfigError(f"no replacement of {', '.join(replacements)} applies at depth {depth} (deeper, only the innermost noun is replaced)")
    levels = 2 if variant == "object" else depth
    can_flip = bool(set(map(direction_of, quantifiers)) == {"up", "down"})
    out, seen, attempts = [], set(), 0
    while len(out) < n:
        attempts += 1
        if attempts > 200 * n + 1000:
            raise ConfigError(f"cannot draw {n} distinct pairs of depth {depth} from quantifiers {', '.join(quantifiers)}")
        want_polarity = ("up", "down")[len(out) % 2] if can_flip else None
        want_label = ("entailment", "neutral")[(len(out) // 2) % 2]
        qs = [rng.choice(quantifiers) for _ in range(levels)]
        if want_polarity and polarity_at(qs) != want_polarity:
            flip = [q for q in quantifiers if direction_of(q) != direction_of(qs[-1])]
            qs[-1] = rng.choice(flip)
        replacement = rng.choice(usable)
        on_verb = G.REPLACEMENTS[replacement] == "verb"
        target = -1 if variant == "object" else depth - 1
        polarity = polarity_at(qs[:1] if on_verb else qs)
        base = _base(rng, qs, variant)
        specific, general = specific_and_general(base, replacement, target, rng)
        direction = polarity if want_label == "entailment" else ("down" if polarity == "up" else "up")
        premise, hypothesis = (specific, general) if direction == "up" else (general, specific)
        key = (G.render(premise), G.render(hypothesis))
        if key in seen:
            continue
        seen.add(key)
        out.append({
            "premise": key[0], "hypothesis": key[1], "label": want_label, "depth": depth, "quantifiers": qs,
            "replacement": replacement, "argument": "second" if on_verb else "first", "position": variant if variant != "subject" else ("verb" if on_verb else "noun"),
            "polarity": polarity, "direction": direction, "premise_tree": _tree(premise), "hypothesis_tree": _tree(hypothesis),
        })
    return out


def _tree(s: G.Sentence) -> dict:
    return {"nps": [[np.q, np.noun, np.adj, np.post] for np in s.nps], "embeddings": list(s.embeddings), "verbs": list(s.verbs),
            "verb": s.verb, "vmod": s.vmod, "obj": None if s.obj is None else [s.obj.q, s.obj.noun, s.obj.adj, s.obj.post],
            "front": s.front, "wh": list(s.wh)}


def from_tree(t: dict) -> G.Sentence:
    """The sentence a record's ``premise_tree`` / ``hypothesis_tree`` stores."""
    return G.Sentence(tuple(G.NP(*x) for x in t["nps"]), tuple(t["embeddings"]), tuple(t["verbs"]), t["verb"], t["vmod"],
                      None if t["obj"] is None else G.NP(*t["obj"]), t["front"], tuple(t["wh"]))
