"""The causal models of the six logic fragments: a few named variables each, and the label as a pure function of them.

Each fragment's templates (Richardson, Hu, Moss & Sabharwal 2020, §3,
Figure 3) decide the label from a few facts about the pair; the generator
draws these input values first and writes sentences that realize them
(:mod:`~interp.tasks.fragments.logic.templates`), and the finite-model
check confirms every label independently (:mod:`~interp.tasks.fragments.logic.semantics`).

* negation, boolean: ``person`` (is the hypothesis's person one the
  premise speaks of: ``in`` / ``out``), ``place`` (is its place one the
  premise gives that person; for a person it does not speak of, one it
  names at all), ``negated`` (does the hypothesis deny the visit); ``fact``
  is what the premise says of that visit.
* quantifier: ``quantifier`` (every / no / some), ``scope`` (is the
  hypothesis's object in the quantified range), ``negated``; ``fact``.
* counting: ``count`` (the premise's number, or the length of its list),
  ``exact`` (``only``: no more), ``comparison`` (more / less), ``bound``
  (the hypothesis's number).
* conditional: ``antecedent`` (the facts make the if-clause true, false,
  or say nothing of it), ``negated`` (the hypothesis denies the consequent).
* comparative: ``first`` and ``second``, where the hypothesis's two people
  stand in the premise (``top``: the equally tall group; ``bottom``:
  those it is taller than; ``outside``).

Usage::

    >>> from interp.causal import run_forward
    >>> run_forward(CAUSAL_MODELS["negation"], {"person": "in", "place": "out", "negated": True})["label"]
    'entailment'
"""

from __future__ import annotations

from interp.causal.base import CausalModel, Mechanism

LABELS = ("entailment", "contradiction", "neutral")
#: The splits of a generated logic fragment file.
SPLITS = ("train", "dev", "test")
IN_OUT = ("in", "out")
NEGATED = (False, True)
FACTS = ("visited", "not_visited", "unknown")
NUMBERS = tuple(range(1, 41))


def visit_label(fact: str, negated: bool) -> str:
    """The hypothesis "x (didn't) visit y" against what the premise says of that visit."""
    if fact == "unknown":
        return "neutral"
    return "entailment" if (fact == "visited") != negated else "contradiction"


def listed_fact(person: str, place: str) -> str:
    """Negation and boolean: the premise says only of its people, and of each exactly which places."""
    if person == "out":
        return "unknown"
    return "visited" if place == "in" else "not_visited"


def quantified_fact(quantifier: str, scope: str) -> str:
    """Quantifier: everyone visited (every / no one visited) what is in scope; "someone" names nobody."""
    if scope == "out" or quantifier == "some":
        return "unknown"
    return "visited" if quantifier == "every" else "not_visited"


def count_label(count: int, exact: bool, comparison: str, bound: int) -> str:
    """Counting: the premise bounds the count to [count, count] (exact) or [count, ∞); the hypothesis says more / less than bound."""
    high = count if exact else float("inf")
    if comparison == "more":
        return "entailment" if count > bound else "contradiction" if high <= bound else "neutral"
    return "entailment" if high < bound else "contradiction" if count >= bound else "neutral"


def conditional_label(antecedent: str, negated: bool) -> str:
    """Conditional: modus ponens when the facts make the if-clause true; nothing follows otherwise."""
    return visit_label("visited" if antecedent == "true" else "unknown", negated)


def comparative_label(first: str, second: str) -> str:
    """Comparative, "first is taller than second": the top group is equally tall and taller than each in the bottom group."""
    if "outside" in (first, second):
        return "neutral"
    return {("top", "bottom"): "entailment", ("bottom", "top"): "contradiction",
            ("top", "top"): "contradiction", ("bottom", "bottom"): "neutral"}[first, second]  # fmt: skip


def _visits(name: str, first: str, values: tuple, fact) -> CausalModel:
    return CausalModel(
        name=name,
        inputs=(first, "place" if first == "person" else "scope", "negated"),
        mechanisms={
            "fact": Mechanism((first, "place" if first == "person" else "scope"), fact),
            "label": Mechanism(("fact", "negated"), visit_label),
        },
        output="label",
        values={first: values, ("place" if first == "person" else "scope"): IN_OUT, "negated": NEGATED,
                "fact": FACTS, "label": LABELS},  # fmt: skip
    )


CAUSAL_MODELS: dict[str, CausalModel] = {
    "negation": _visits("negation", "person", IN_OUT, listed_fact),
    "boolean": _visits("boolean", "person", IN_OUT, listed_fact),
    "quantifier": _visits("quantifier", "quantifier", ("every", "no", "some"), quantified_fact),
    "counting": CausalModel(
        name="counting",
        inputs=("count", "exact", "comparison", "bound"),
        mechanisms={"label": Mechanism(("count", "exact", "comparison", "bound"), count_label)},
        output="label",
        values={"count": NUMBERS, "exact": NEGATED, "comparison": ("more", "less"), "bound": NUMBERS, "label": LABELS},
    ),
    "conditional": CausalModel(
        name="conditional",
        inputs=("antecedent", "negated"),
        mechanisms={"label": Mechanism(("antecedent", "negated"), conditional_label)},
        output="label",
        values={"antecedent": ("true", "false", "unknown"), "negated": NEGATED, "label": LABELS},
    ),
    "comparative": CausalModel(
        name="comparative",
        inputs=("first", "second"),
        mechanisms={"label": Mechanism(("first", "second"), comparative_label)},
        output="label",
        values={"first": ("top", "bottom", "outside"), "second": ("top", "bottom", "outside"), "label": LABELS},
    ),
}

#: Each variable's token roles: a role ending ``.p`` is in the premise, ``.h`` in the hypothesis; ``cls`` is [CLS].
ALIGNMENTS: dict[str, dict[str, tuple[str, ...]]] = {
    "negation": {"person": ("person.h",), "place": ("place.h",), "negated": ("verb.h",), "fact": ("place.h",), "label": ("cls",)},
    "boolean": {"person": ("person.h",), "place": ("place.h",), "negated": ("verb.h",), "fact": ("place.h",), "label": ("cls",)},
    "quantifier": {"quantifier": ("quantifier.p",), "scope": ("object.h",), "negated": ("verb.h",), "fact": ("object.h",),
                   "label": ("cls",)},
    "counting": {"count": ("count.p",), "comparison": ("comparison.h",), "bound": ("bound.h",), "label": ("cls",)},
    "conditional": {"antecedent": ("antecedent.p",), "negated": ("verb.h",), "label": ("cls",)},
    "comparative": {"first": ("first.h",), "second": ("second.h",), "label": ("cls",)},
}  # fmt: skip
