"""Labels of the logic fragments by truth in finite models, decided by an SMT solver, independent of the templates.

A pair's premise and hypothesis are written as logical forms (nested JSON
lists, stored in each generated record) over a signature of people and
places (Richardson, Hu, Moss & Sabharwal 2020, §3 and Figure 3: predicates,
``only``, quantifiers, boolean connectives, comparisons and counts)::

    ["visit", a, b]                      a visited b (a person; b a person or a place)
    ["not", f]  ["and", f, ...]  ["or", f, ...]  ["if", f, g]
    ["only", a, [b1, ..., bn]]           a visited each b_i and nothing else of their sort
    ["all", "?x", sort, f]  ["some", "?x", sort, f]     f with "?x" for each person or place
    ["count", a, sort, op, n]            |{y of sort : a visited y}| op n, op one of = > < >= <=
    ["taller", a, b]  ["as_tall", a, b]  heights compared (integers)

A *model* has a universe of the pair's named people and places plus fresh
ones (two people, and one place more than the largest count the pair
states), a ``visit`` relation and a height for every person. Every model of
that universe is searched, not sampled: the solver (z3) decides whether
premise and not-hypothesis, and premise and hypothesis, have a model. No model
of the first: entailment; none of the second: contradiction; both: neutral.
A premise with no model at all is refused. The sentences of these templates
quantify over one sort at a time with named constants, so a countermodel in
any universe restricts to one of these.

Usage::

    >>> p = ["only", "Ann", ["Peru"]]
    >>> label(p, ["not", ["visit", "Ann", "Chile"]], people=["Ann"], places=["Peru", "Chile"])
    'entailment'
    >>> label(p, ["not", ["visit", "Bob", "Chile"]], people=["Ann", "Bob"], places=["Peru", "Chile"])
    'neutral'
"""

from __future__ import annotations

from typing import Any, Sequence

import z3

from interp.core.errors import DataError

SORTS = ("person", "place")
#: ``|{true visits}| op n`` as the solver's pseudo-Boolean constraints.
COUNTS = {
    "=": lambda visits, n: z3.PbEq([(v, 1) for v in visits], n),
    ">": lambda visits, n: z3.AtLeast(*visits, n + 1),
    ">=": lambda visits, n: z3.AtLeast(*visits, n),
    "<": lambda visits, n: z3.AtMost(*visits, n - 1) if n > 0 else z3.BoolVal(False),
    "<=": lambda visits, n: z3.AtMost(*visits, n),
}


def _numbers(form: Any) -> list[int]:
    if isinstance(form, list):
        if form and form[0] == "count":
            return [int(form[4])]
        return [n for part in form for n in _numbers(part)]
    return []


class _Model:
    """z3 terms of one pair's universe: a Bool per (visitor, visited) and an Int height per person, made on first use."""

    def __init__(self, people: Sequence[str], places: Sequence[str], fresh_places: int) -> None:
        self.domain = {"person": [*people, "_person0", "_person1"], "place": [*places, *(f"_place{i}" for i in range(fresh_places))]}
        self.sort = {name: sort for sort, names in self.domain.items() for name in names}
        self._visit: dict[tuple[str, str], z3.BoolRef] = {}
        self._height: dict[str, z3.ArithRef] = {}

    def name(self, term: Any, bound: dict[str, str]) -> str:
        name = bound.get(term, term) if isinstance(term, str) else term
        if name not in self.sort:
            raise DataError(f"logical form names {term!r}, which is neither a person nor a place of the pair")
        return name

    def visit(self, a: str, b: str) -> z3.BoolRef:
        if self.sort[a] != "person":
            raise DataError(f"logical form: {a!r} visits, but is not a person")
        return self._visit.setdefault((a, b), z3.Bool(f"visit({a},{b})"))

    def height(self, a: str) -> z3.ArithRef:
        if self.sort[a] != "person":
            raise DataError(f"logical form: {a!r} has a height, but is not a person")
        return self._height.setdefault(a, z3.Int(f"height({a})"))

    def formula(self, form: Any, bound: dict[str, str] | None = None) -> z3.BoolRef:
        bound = bound or {}
        if not isinstance(form, list) or not form or not isinstance(form[0], str):
            raise DataError(f"logical form {form!r} is not a list starting with an operator")
        op, args = form[0], form[1:]
        try:
            if op == "visit":
                return self.visit(self.name(args[0], bound), self.name(args[1], bound))
            if op == "not":
                return z3.Not(self.formula(args[0], bound))
            if op in ("and", "or"):
                parts = [self.formula(a, bound) for a in args]
                return (z3.And if op == "and" else z3.Or)(*parts) if parts else z3.BoolVal(op == "and")
            if op == "if":
                return z3.Implies(self.formula(args[0], bound), self.formula(args[1], bound))
            if op == "only":
                a, listed = self.name(args[0], bound), [self.name(b, bound) for b in args[1]]
                sort = self.sort[listed[0]]
                return z3.And(*(self.visit(a, b) if b in listed else z3.Not(self.visit(a, b)) for b in self.domain[sort]))
            if op in ("all", "some"):
                variable, sort, body = args
                parts = [self.formula(body, {**bound, variable: x}) for x in self.domain[sort]]
                return (z3.And if op == "all" else z3.Or)(*parts)
            if op == "count":
                a, sort, comparison, n = self.name(args[0], bound), args[1], args[2], int(args[3])
                visits = [self.visit(a, y) for y in self.domain[sort]]
                return COUNTS[comparison](visits, n)
            if op == "taller":
                return self.height(self.name(args[0], bound)) > self.height(self.name(args[1], bound))
            if op == "as_tall":
                return self.height(self.name(args[0], bound)) == self.height(self.name(args[1], bound))
        except (IndexError, KeyError, TypeError, ValueError) as exc:
            raise DataError(f"logical form {form!r} is malformed ({type(exc).__name__}: {exc})") from None
        raise DataError(f"logical form {form!r}: unknown operator {op!r}")


def _satisfiable(*formulas: z3.BoolRef) -> bool:
    solver = z3.Solver()
    solver.add(*formulas)
    return solver.check() == z3.sat


def label(premise: Any, hypothesis: Any, *, people: Sequence[str], places: Sequence[str]) -> str:
    """``entailment``, ``contradiction`` or ``neutral``: what every finite model of the pair's universe says.

    Raises:
        DataError: a malformed logical form, or a premise no model satisfies.
    """
    model = _Model(people, places, max(_numbers([premise, hypothesis]), default=0) + 1)
    p, h = model.formula(premise), model.formula(hypothesis)
    if not _satisfiable(p):
        raise DataError(f"premise {premise!r} has no model")
    if not _satisfiable(p, z3.Not(h)):
        return "entailment"
    if not _satisfiable(p, h):
        return "contradiction"
    return "neutral"
