"""One substitution step on a polarized sentence (Richardson et al. 2020, Appendix, Algorithm 1's SUBSTITUTE).

At an ↑ slot a word is replaced by a more general one (``poodle`` ->
``dog``), an adjective or modifier dropped; at a ↓ slot the reverse
(specialize, insert): each is an *entailment* step. The *reversed* steps
(specialize at ↑, generalize at ↓) make neutrals; an equivalent
determiner (``every`` / ``all`` / ``each``, ``some`` / ``a``, ``several`` /
``at least 3``) is an entailment step at any polarity. Contradictions
come from rules applied at the root (:func:`contradiction_steps`), listed in
the docs:

1. the subject's determiner replaced by one that excludes it
   (:data:`~interp.tasks.fragments.monotonicity.lexicon.CONTRADICTORY`:
   some / no, every / some but not all, at least 4 / at most 3,
   exactly 3 / exactly 5, most / few, ...);
2. the main verb phrase negated or un-negated, when the subject's
   determiner is every, all, each or most;
3. the main verb replaced by an antonym (an intransitive verb of motion /
   slept, happy / sad, moved towards / moved away from with an object
   determiner every, all, each or most), when the verb phrase is not
   negated and the subject's determiner is every, all, each or most.

Each holds because Q(A, B) and Q'(A, B) (or Q(A, B) and Q(A, B') with B,
B' disjoint) cannot both be true of a non-empty A. A contradiction of a
sentence the premise entails contradicts the premise.

Usage::

    >>> import random
    >>> from interp.tasks.fragments.monotonicity.grammar import NP, VP, Sentence, render
    >>> s = Sentence(NP("some", None, "poodle"), VP("intransitive", "ran"))
    >>> sorted(render(t) for _, t in word_steps(s, "simple", forward=True) if _.path == ("subject", "noun"))
    ['some animal ran', 'some dog ran', 'some mammal ran']
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from interp.tasks.fragments.monotonicity import lexicon as L
from interp.tasks.fragments.monotonicity.grammar import MAX_CLAUSES, NP, PP, Path, Sentence, clauses, coherent, determiners, get, random_mod, replace
from interp.tasks.fragments.monotonicity.polarity import polarities

#: Subject determiners under which rule 2 (negation) and rule 3 (antonyms) are contradictions.
STRONG_NEGATION = ("every", "all", "each", "most")
STRONG_ANTONYM = STRONG_NEGATION
MOVERS = ("ran", "swam", "waltzed", "danced", "moved")


@dataclass(frozen=True)
class Step:
    """One change: at ``path``, ``old`` -> ``new`` (``None`` for an absent adjective or modifier).

    ``kind``: ``word``, ``insert``, ``delete`` or ``rule1`` / ``rule2`` / ``rule3`` (contradictions);
    ``polarity``: the slot's (``up``, ``down``, ``none``); ``direction``: ``up`` (old ≤ new,
    generalize), ``down`` (specialize), ``equal``, or ``none`` for a rule.
    """

    path: Path
    kind: str
    old: str | None
    new: str | None
    polarity: str
    direction: str

    def record(self) -> dict:
        """The step as written in a generated file."""
        return {"slot": ".".join(self.path), "kind": self.kind, "old": self.old, "new": self.new, "polarity": self.polarity, "direction": self.direction}


def _category(path: Path) -> str:
    last = path[-1]
    if last == "det":
        return "det"
    if last in ("noun", "adj"):
        return last
    return "verb"


def _name(value) -> str:
    if isinstance(value, PP):
        return f"{value.prep} {value.adj} {value.noun}"
    return type(value).__name__


def word_steps(sentence: Sentence, setting: str, *, forward: bool, rng: random.Random | None = None) -> list[tuple[Step, Sentence]]:
    """Every entailment step (``forward``) or reversed, neutral step of ``sentence``, with the sentence it makes.

    An insertion draws its adjective or clause from ``rng`` (one per empty slot); without ``rng`` there are none.
    """
    out = []
    allowed = set(determiners(setting))
    for path, polarity in polarities(sentence).items():
        last = path[-1]
        parent = get(sentence, path[:-1])
        if last == "mod" and not isinstance(parent, NP):
            continue
        if last in ("det", "noun", "adj", "verb"):
            old = getattr(parent, last)
            if old is None:
                continue
            category = _category(path)
            general, special = L.greater(category, old), L.less(category, old)
            for new in sorted(general | special):
                if category == "det" and new not in allowed:
                    continue
                if new in general and new in special:
                    direction = "equal"
                else:
                    direction = "up" if new in general else "down"
                entails = direction == "equal" or direction == polarity
                reverse = direction != "equal" and polarity != "none" and direction != polarity
                if (forward and entails) or (not forward and reverse):
                    out.append((Step(path, "word", old, new, polarity, direction), replace(sentence, path, new)))
        if last in ("adj", "mod") and polarity != "none" and isinstance(parent, NP):
            old = getattr(parent, last)
            if old is not None and (polarity == "up") == forward:
                out.append((Step(path, "delete", old if last == "adj" else _name(old), None, polarity, "up"), replace(sentence, path, None)))
            if old is None and rng is not None and (polarity == "down") == forward:
                if last == "adj":
                    new = rng.choice(L.ADJ_ANIMATE if L.is_animate(parent.noun) else L.ADJ_INANIMATE)
                elif L.is_animate(parent.noun) and clauses(sentence) < MAX_CLAUSES[setting]:
                    new = random_mod(rng, setting, 1)
                else:
                    continue
                out.append((Step(path, "insert", None, new if last == "adj" else _name(new), polarity, "down"), replace(sentence, path, new)))
    return [(step, t) for step, t in out if coherent(t)]


def needs_import(step: Step) -> bool:
    """Whether ``step`` is valid only for a non-empty restrictor of a universal determiner.

    A determiner step between a universal and a determiner false of an empty
    restrictor (``every`` <-> ``some``, ``a`` <-> ``every``), and rule 1 between two
    determiners true of an empty restrictor (``every`` / ``no``). See :func:`allowed`.
    """
    if step.path[-1] != "det" or step.kind not in ("word", "rule1"):
        return False
    if step.kind == "rule1":
        return bool(L.DETERMINER_TRUTH[step.old](0, 0) and L.DETERMINER_TRUTH[step.new](0, 0))
    return L.needs_import(step.old, step.new)


def allowed(step: Step, before) -> bool:
    """Whether an entailment walk that took ``before`` may take ``step`` (Strawson entailment is not transitive).

    An import step at an NP needs that NP's restrictor as it was in the premise
    (nothing under the NP touched before); after a step that brings in a
    universal, nothing under that NP, and no modifier holding it, may change.
    """
    np_path = step.path[:-1] if step.path[-1] == "det" else None
    if np_path is not None and needs_import(step) and any(s.path[: len(np_path)] == np_path for s in before):
        return False
    for s in before:
        if needs_import(s) and s.new in L.IMPORT:
            frozen = s.path[:-1]
            if step.path[: len(frozen)] == frozen and step.path != s.path or frozen[: len(step.path)] == step.path:
                return False
    return True


def contradiction_steps(sentence: Sentence, setting: str) -> list[tuple[Step, Sentence]]:
    """Every contradiction of ``sentence`` by the three rules above."""
    out = []
    det = sentence.subject.det
    for new in determiners(setting):
        if L.contradicts(det, new):
            out.append((Step(("subject", "det"), "rule1", det, new, "up", "none"), replace(sentence, ("subject", "det"), new)))
    vp = sentence.vp
    if det in STRONG_NEGATION:
        step = Step(("vp", "neg"), "rule2", "not" if vp.neg else None, None if vp.neg else "not", "up", "none")
        out.append((step, replace(sentence, ("vp", "neg"), not vp.neg)))
    if det in STRONG_ANTONYM and not vp.neg:
        if vp.kind == "intransitive":
            news = ("slept",) if vp.verb in MOVERS else MOVERS if vp.verb == "slept" else ()
        elif vp.kind == "predicate":
            news = ("sad",) if vp.verb == "happy" else ("happy",)
        else:
            pair = ("moved towards", "moved away from")
            news = (pair[1 - pair.index(vp.verb)],) if vp.verb in pair and vp.obj.det in STRONG_ANTONYM else ()
        for new in news:
            out.append((Step(("vp", "verb"), "rule3", vp.verb, new, "up", "none"), replace(sentence, ("vp", "verb"), new)))
    return [(step, t) for step, t in out if coherent(t)]
