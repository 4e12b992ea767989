"""Sentences that realize a logic fragment's causal inputs: text, logical forms and the character span of each token role.

One function per fragment (Richardson, Hu, Moss & Sabharwal 2020, §3,
Figure 3, in the shapes of the released files), each taking the inputs
drawn for the pair (:mod:`~interp.tasks.fragments.logic.causal`), a seeded
``random.Random`` and the split's vocabulary
(:mod:`~interp.tasks.fragments.logic.lexicon`)::

    negation     Dave has only visited Israel, Ann has only visited Peru        Dave didn't visit Peru
    boolean      Dave, Ann and Bob have only visited Israel                     Bob did visit Israel
    quantifier   Everyone has visited every place                               Dave didn't visit Perry
    counting     Dave has visited Peru, Chile and Cuba                          Dave has visited more than two places
    conditional  Dave has visited Reno, Ann has not visited Omaha and if Dave has visited Reno then Bob has visited Tulsa
                                                                                Bob has not visited Tulsa
    comparative  Dave is as tall as Ann , Ann is taller than Bob                Ann is taller than Dave

Usage::

    >>> import random
    >>> from interp.tasks.fragments.logic.lexicon import vocabulary
    >>> d = REALIZE["negation"]({"person": "in", "place": "in", "negated": True}, random.Random(0), vocabulary("train"))
    >>> d.hypothesis[d.spans["verb.h"][0]:d.spans["verb.h"][1]]
    "didn't"
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable

from interp.tasks.fragments.logic.lexicon import Vocabulary, number_word


@dataclass
class Draft:
    """A realized pair: sentences, logical forms, the named people and places, and each role's span ``[start, end)``."""

    premise: str
    hypothesis: str
    premise_lf: Any
    hypothesis_lf: Any
    people: list[str]
    places: list[str]
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)


class _Text:
    """A sentence built piece by piece, recording the span of each piece given a role."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.spans: dict[str, tuple[int, int]] = {}

    def add(self, text: str, role: str | None = None) -> "_Text":
        start = sum(map(len, self.parts))
        self.parts.append(text)
        if role is not None:
            self.spans[role] = (start, start + len(text))
        return self

    def listing(self, names: list[str], last_role: str | None = None, conjunction: str = "and") -> "_Text":
        """``A, B and C`` (or ``A, B or C``; the last name given ``last_role``)."""
        for i, name in enumerate(names):
            if i:
                self.add(f" {conjunction} " if i == len(names) - 1 else ", ")
            self.add(name, last_role if i == len(names) - 1 else None)
        return self

    def __str__(self) -> str:
        return "".join(self.parts)


def _draft(p: _Text, h: _Text, p_lf, h_lf, people, places) -> Draft:
    return Draft(str(p), str(h), p_lf, h_lf, list(dict.fromkeys(people)), list(dict.fromkeys(places)), {**p.spans, **h.spans})


def _visit_hypothesis(person: str, place: str, negated: bool) -> tuple[_Text, list]:
    h = _Text().add(person, "person.h").add(" ").add("didn't" if negated else "did", "verb.h").add(" visit ").add(place, "place.h")
    atom = ["visit", person, place]
    return h, (["not", atom] if negated else atom)


def negation(inputs: dict, rng: random.Random, vocab: Vocabulary) -> Draft:
    """``x1 has only visited p1, ..., xn has only visited pn`` / ``x did(n't) visit q``."""
    n = rng.randint(2, 12)
    people = rng.sample(vocab.people, n + 1)
    places = rng.sample(vocab.countries, n + 1)
    listed, other_person, other_place = people[:n], people[n], places[n]
    p = _Text()
    for i, (x, y) in enumerate(zip(listed, places)):
        p.add(", " if i else "").add(f"{x} has only visited {y}")
    j = rng.randrange(n)
    if inputs["person"] == "out":  # place: one the premise names, or not
        person, place = other_person, (rng.choice(places[:n]) if inputs["place"] == "in" else other_place)
    elif inputs["place"] == "in":
        person, place = listed[j], places[j]
    else:  # another listed person's place, or one no one is said to have visited
        person, place = listed[j], rng.choice([y for k, y in enumerate(places[:n]) if k != j] + [other_place])
    h, h_lf = _visit_hypothesis(person, place, inputs["negated"])
    p_lf = ["and", *(["only", x, [y]] for x, y in zip(listed, places))]
    return _draft(p, h, p_lf, h_lf, people, places)


def boolean(inputs: dict, rng: random.Random, vocab: Vocabulary) -> Draft:
    """``x1, ..., and xn have only visited p`` or ``x has only visited p1, ..., and pn`` / ``y did(n't) visit q``."""
    n = rng.randint(2, 20)
    people = rng.sample(vocab.people, n + 1)
    places = rng.sample(vocab.countries, n + 1)
    p = _Text()
    if rng.random() < 0.5:  # a conjunction of people
        subjects, place = people[:n], places[0]
        p.listing(subjects).add(f" have only visited {place}")
        p_lf = ["and", *(["only", x, [place]] for x in subjects)]
        person = rng.choice(subjects) if inputs["person"] == "in" else people[n]
        target = place if inputs["place"] == "in" else rng.choice(places[1:])
    else:  # a conjunction of places
        subject, visited = people[0], places[:n]
        p.add(f"{subject} has only visited ").listing(visited)
        p_lf = ["only", subject, visited]
        person = subject if inputs["person"] == "in" else rng.choice(people[1:])
        target = rng.choice(visited) if inputs["place"] == "in" else places[n]
    h, h_lf = _visit_hypothesis(person, target, inputs["negated"])
    return _draft(p, h, p_lf, h_lf, people, places)


def quantifier(inputs: dict, rng: random.Random, vocab: Vocabulary) -> Draft:
    """``Everyone | Someone has visited every place | every person | p1, ..., and pn``, ``No one has visited p1, ..., or pn`` /
    ``x did(n't) visit y``."""
    q = inputs["quantifier"]
    people = rng.sample(vocab.people, 2)
    places = rng.sample(vocab.countries, 24)
    p = _Text().add({"every": "Everyone", "no": "No one", "some": "Someone"}[q], "quantifier.p").add(" has visited ")
    if q == "no" or rng.random() < 0.5:  # a list of places
        n = rng.randint(1, 20)
        in_scope, out_of_scope = places[:n], places[n:] + people[1:]
        p.listing(in_scope, conjunction="or" if q == "no" else "and")
        visits = [["visit", "?x", y] for y in in_scope]
        body = ["and", *(["not", v] for v in visits)] if q == "no" else ["and", *visits]
    else:
        sort = rng.choice(("person", "place"))
        p.add(f"every {sort}")
        in_scope, out_of_scope = (people[1:], places) if sort == "person" else (places, people[1:])
        body = ["all", "?y", sort, ["visit", "?x", "?y"]]
    p_lf = ["some" if q == "some" else "all", "?x", "person", body]
    target = rng.choice(in_scope if inputs["scope"] == "in" else out_of_scope)
    h = _Text().add(people[0], "person.h").add(" ").add("didn't" if inputs["negated"] else "did", "verb.h").add(" visit ")
    h.add(target, "object.h")
    atom = ["visit", people[0], target]
    return _draft(p, h, p_lf, ["not", atom] if inputs["negated"] else atom, people, places)


def counting(inputs: dict, rng: random.Random, vocab: Vocabulary) -> Draft:
    """``x has visited (only) N places`` or ``x has visited (only) p1, ..., pk`` / ``x has visited more|less than M places``."""
    count, bound = inputs["count"], inputs["bound"]
    person = rng.choice(vocab.people)
    p = _Text().add(f"{person} has visited ")
    listed = count <= 30 and (rng.random() < 0.6 or not inputs["exact"])
    places: list[str] = []
    if inputs["exact"]:
        p.add("only ")
    if listed:
        places = rng.sample(vocab.countries, count)
        p.listing(places, "count.p")
        visited = ["and", *(["visit", person, y] for y in places)]
        p_lf = ["only", person, places] if inputs["exact"] else visited
    else:
        p.add(number_word(count), "count.p").add(" place" if count == 1 else " places")
        p_lf = ["count", person, "place", "=" if inputs["exact"] else ">=", count]
    h = _Text().add(f"{person} has visited ").add(inputs["comparison"], "comparison.h").add(" than ")
    h.add(number_word(bound), "bound.h").add(" place" if bound == 1 else " places")
    h_lf = ["count", person, "place", ">" if inputs["comparison"] == "more" else "<", bound]
    return _draft(p, h, p_lf, h_lf, [person], places)


def conditional(inputs: dict, rng: random.Random, vocab: Vocabulary) -> Draft:
    """Three facts ``x has (not) visited c`` and ``if A then B`` / ``B`` or its denial."""
    people = rng.sample(vocab.people, 5)
    cities = rng.sample(vocab.cities, 5)
    truths = [rng.random() < 0.5 for _ in range(3)]

    def clause(x: str, c: str, true: bool, role: str | None = None, text: _Text | None = None) -> _Text:
        text = text or _Text()
        return text.add(f"{x} has {'' if true else 'not '}visited ").add(c, role)

    p = _Text()
    for i in range(3):
        clause(people[i], cities[i], truths[i], text=p.add(", " if i else ""))
    k = rng.randrange(3)
    if inputs["antecedent"] == "unknown":
        a_person, a_city, a_true = people[3], cities[3], rng.random() < 0.5
    else:
        a_person, a_city = people[k], cities[k]
        a_true = truths[k] if inputs["antecedent"] == "true" else not truths[k]
    c_true = rng.random() < 0.5
    p.add(" and if ")
    clause(a_person, a_city, a_true, "antecedent.p", p).add(" then ")
    clause(people[4], cities[4], c_true, text=p)
    h_true = c_true != inputs["negated"]
    h = _Text().add(f"{people[4]} has {'' if h_true else 'not '}").add("visited", "verb.h").add(f" {cities[4]}")

    def literal(x: str, c: str, true: bool) -> list:
        return ["visit", x, c] if true else ["not", ["visit", x, c]]

    p_lf = ["and", *(literal(people[i], cities[i], truths[i]) for i in range(3)),
            ["if", literal(a_person, a_city, a_true), literal(people[4], cities[4], c_true)]]  # fmt: skip
    return _draft(p, h, p_lf, literal(people[4], cities[4], h_true), people, cities)


def comparative(inputs: dict, rng: random.Random, vocab: Vocabulary) -> Draft:
    """A chain ``a is as tall as b , ..., y is taller than z`` or ``x is taller than y1, ..., yk , z is as tall as x`` / ``u is taller than v``."""
    n = rng.randint(3, 11)
    people = rng.sample(vocab.people, n + 2)
    chosen, outside = people[:n], people[n:]
    p = _Text()
    if rng.random() < 0.5 or (inputs["first"] == inputs["second"] == "bottom"):
        if inputs["first"] == inputs["second"] == "bottom" and n < 4:
            chosen, outside = people[: n + 1], people[n + 1 :]
        top, bottom = [chosen[0], chosen[-1]], chosen[1:-1]  # x taller than the ys, z as tall as x
        p.add(f"{top[0]} is taller than ").listing(bottom).add(f" , {top[1]} is as tall as {top[0]}")
        p_lf = ["and", *(["taller", top[0], y] for y in bottom), ["as_tall", top[1], top[0]]]
    else:
        top, bottom = chosen[:-1], chosen[-1:]
        for a, b in zip(top, top[1:]):
            p.add(f"{a} is as tall as {b} , ")
        p.add(f"{top[-1]} is taller than {bottom[0]}")
        p_lf = ["and", *(["as_tall", a, b] for a, b in zip(top, top[1:])), ["taller", top[-1], bottom[0]]]
    groups = {"top": top, "bottom": bottom, "outside": outside}
    first = rng.choice(groups[inputs["first"]])
    second = rng.choice([x for x in groups[inputs["second"]] if x != first])
    h = _Text().add(first, "first.h").add(" is taller than ").add(second, "second.h")
    return _draft(p, h, p_lf, ["taller", first, second], people, [])


REALIZE: dict[str, Callable[[dict, random.Random, Vocabulary], Draft]] = {
    "boolean": boolean, "comparative": comparative, "conditional": conditional,
    "counting": counting, "negation": negation, "quantifier": quantifier,
}  # fmt: skip
