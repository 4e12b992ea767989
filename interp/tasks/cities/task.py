"""City attributes as a :class:`~interp.tasks.base.Task`: RAVEL's ``Country`` and ``Continent``, read by a causal LM
through each answer's first token.

Usage::

    task = city_task(tokenizer=model_tokenizer)   # each answer read as its first token (answers that share one: dropped, said)
    lab = interp.IntervenableModel("smollm2-135m", task)
    lab.evaluate(task.load(("test",)))             # accuracy among every country and continent the table has

The labels are every country and every continent of the table. A causal LM reads each through the first token of
its name after a space (MIB's rule, Mueller et al. 2025, §4.1: ``United States`` is read as `` United``), so an
answer of several tokens is scored by its first; two answers whose first tokens are one token to a model cannot both
be labels, and :func:`first_token_words` drops them, with their cities, saying which (``task.dropped``). Without a
tokenizer each label's word is its whole name after a space, which a model reads only where every name is one token.

The causal model (:func:`city_causal_model`): the inputs are the city and the attribute asked; ``Country`` and
``Continent`` are the city's (the table's lookups), and the answer is the one asked. An interchange of ``Country``
from a source city changes the answer of a base that asks the country (RAVEL's *Cause*) and leaves one that asks the
continent alone (*Isolate*; Huang et al. 2024, §3.2); the task's breakdown ``attribute`` splits any IIA that way.
Variables are aligned to the city's position (``city_p``); intervals resample cities.
"""

from __future__ import annotations

from typing import Any, Sequence

from interp.causal import CausalModel, Mechanism
from interp.core.errors import ConfigError
from interp.tasks.base import Groups, Task
from interp.tasks.cities.data import ATTRIBUTES, SPLITS, TABLE, City, city_examples, read_cities

NAME = "city-attributes"
TEMPLATE = "{premise} {hypothesis}"
ROLES = ("cls", "city_p")
#: Each variable's attribute, as :attr:`CityExample.attribute` names it.
VARIABLES = {"Country": "country", "Continent": "continent"}
ALIGNMENT = {"Country": ("city_p",), "Continent": ("city_p",)}
CITIES = Groups("cities", lambda e: e.city)


def city_causal_model(table: Sequence[City]) -> CausalModel:
    """``(city, attribute) -> Country, Continent -> answer`` over ``table`` (module docstring); ``values`` lists both
    inputs' values for a truth-table test."""
    country = {c.city: c.country for c in table}
    continent = {c.city: c.continent for c in table}
    return CausalModel(
        name="city-attributes",
        inputs=("city", "attribute"),
        mechanisms={
            "Country": Mechanism(("city",), country.__getitem__),
            "Continent": Mechanism(("city",), continent.__getitem__),
            "answer": Mechanism(("attribute", "Country", "Continent"), lambda a, k, c: k if a == "country" else c),
        },
        output="answer",
        values={"city": tuple(country), "attribute": ATTRIBUTES},
    )


def _inputs(e) -> dict[str, Any]:
    return {"city": e.city, "attribute": e.attribute}


def first_token_words(tokenizer, answers: Sequence[str]) -> tuple[dict[str, str], tuple[str, ...]]:
    """Each answer's word as ``tokenizer`` reads it first (the first token of `` answer``, decoded), and the answers
    dropped: those whose first token another answer shares, or that does not read back as one token."""
    first = {}
    for a in answers:
        ids = tokenizer(" " + a, add_special_tokens=False)["input_ids"]
        word = tokenizer.decode(ids[:1])
        first[a] = word if tokenizer(word, add_special_tokens=False)["input_ids"] == ids[:1] else None
    taken = [w for w in first.values() if w is not None]
    kept = {a: w for a, w in first.items() if w is not None and taken.count(w) == 1}
    return kept, tuple(a for a in answers if a not in kept)


def city_task(table: str | None = None, *, tokenizer=None) -> Task:
    """The city-attributes task over ``table`` (a ``city,country,continent`` CSV; the committed
    :data:`~interp.tasks.cities.data.TABLE` by default), its answers read through ``tokenizer``'s first tokens where
    given (:func:`first_token_words`; ``task.dropped`` names the answers dropped, and their cities go with them).

    Raises:
        DataError: as :func:`~interp.tasks.cities.data.read_cities`.
        ConfigError: fewer than two cities or continents left once answers were dropped.
    """
    rows = read_cities(table)
    answers = tuple(dict.fromkeys([c.country for c in rows] + [c.continent for c in rows]))
    words, dropped = ({a: " " + a for a in answers}, ()) if tokenizer is None else first_token_words(tokenizer, answers)
    rows = tuple(c for c in rows if c.country in words and c.continent in words)
    if len(rows) < 2 or len({c.continent for c in rows}) < 2:
        raise ConfigError(f"task {NAME!r}: {len(rows)} cities are left once the answers a tokenizer cannot tell apart by their "
                          f"first token are dropped ({', '.join(dropped)}); give a table whose answers it can")  # fmt: skip
    labels = tuple(a for a in answers if any(a in (c.country, c.continent) for c in rows))
    task = Task(
        name=NAME,
        labels=labels,
        splits=SPLITS,
        load=lambda chosen: city_examples(tuple(chosen), rows),
        roles=ROLES,
        default_splits=("test",),
        causal_model=lambda examples: city_causal_model(rows),
        inputs=_inputs,
        alignment=ALIGNMENT,
        groups=CITIES,
        eval_splits=("test",),
        breakdown={"attribute": lambda e: e.attribute},
        reading={"template": TEMPLATE, "label_words": {a: words[a] for a in labels}},
        for_tokenizer=lambda tok: city_task(table, tokenizer=tok),
    )
    object.__setattr__(task, "dropped", dropped)  # answers a tokenizer could not tell apart, said by the caller
    return task


__all__ = ["ALIGNMENT", "NAME", "TABLE", "TEMPLATE", "VARIABLES", "city_causal_model", "city_task", "first_token_words"]
