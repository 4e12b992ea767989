"""City attributes, written here: a table of cities with their country and continent, the prompts that ask for them.

Usage::

    table = read_cities()                        # the committed table, or read_cities("my_cities.csv")
    examples = city_examples(("test",), table)
    examples[0].premise, examples[0].hypothesis  # 'Paris', 'is a city in the country of'
    examples[0].label, examples[0].attribute     # 'France', 'country'

RAVEL's city entity and two of its attributes (Huang et al. 2024, "RAVEL", §3; MIB's localization track, Mueller et
al. 2025, §4.1): each prompt asks one attribute of one city, and ends where the answer's first token is read. The
premise holds the city (role ``city_p``), the hypothesis the rest of the question. Cities are split between
``train`` and ``test`` (a fifth to ``test``, seeded), so a figure on ``test`` is about cities no training saw.

The table (:data:`TABLE`, ``cities.csv`` beside this module) was written for this project from general geographic
knowledge, not downloaded: 102 cities of 60 countries on six continents, large cities whose country and continent
are not in dispute (London's country is written ``England``, as the prompts' readers say it; Korea for South Korea, so
that no country's first token is a continent's). A table of one's own has the same three columns
(``city,country,continent``), one city a row.
"""

from __future__ import annotations

import csv
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from interp.core.errors import ConfigError, DataError

#: The committed table: ``city,country,continent``, one city a row.
TABLE = Path(__file__).with_name("cities.csv")
COLUMNS = ("city", "country", "continent")
#: The two attributes asked, in the order of the causal model's variables ``Country`` and ``Continent``.
ATTRIBUTES = ("country", "continent")
#: (premise ending with the city, the rest of the question) per attribute; a space joins them.
TEMPLATES = {
    "country": (
        ("{city}", "is a city in the country of"),
        ("The city of {city}", "is located in the country of"),
        ("Q: Which country is {city}", "in?\nA:"),
        ("I live in {city},", "which is a city in the country of"),
    ),
    "continent": (
        ("{city}", "is a city on the continent of"),
        ("The city of {city}", "is located on the continent of"),
        ("Q: Which continent is {city}", "in?\nA:"),
        ("I live in {city},", "which is a city on the continent of"),
    ),
}
SPLITS = ("train", "test")
SEED = 0


@dataclass(frozen=True)
class City:
    """One row of the table: the city and its two attributes; ``line``: where the table has it (1: the header)."""

    city: str
    country: str
    continent: str
    line: int = 0


@dataclass(frozen=True)
class CityExample:
    """One prompt asking ``attribute`` of ``city``; ``label`` is the answer (the attribute's value).

    Attributes:
        words: ``city_p``, the city in the premise (its last token is RAVEL's and MIB's entity position).
        template: the template's index among :data:`TEMPLATES` of its attribute.
    """

    id: str
    premise: str
    hypothesis: str
    label: str
    split: str
    words: Mapping[str, str] = field(hash=False)
    city: str = ""
    country: str = ""
    continent: str = ""
    attribute: str = ""
    template: int = 0


def read_cities(path: str | Path | None = None) -> tuple[City, ...]:
    """The rows of a city table (:data:`TABLE` by default), in order.

    Raises:
        DataError: naming the file (and line): it is missing or not UTF-8, a column of :data:`COLUMNS` is missing, a
            field is empty, a city occurs twice, fewer than two cities or continents.
    """
    path = Path(path) if path is not None else TABLE
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise DataError(f"{path}: no such city table") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot be read as UTF-8 text ({type(exc).__name__})") from None
    reader = csv.DictReader(text.splitlines())
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or ())]
    if missing:
        raise DataError(f"{path}:1: the city table has no column {missing[0]!r}; its header must name {', '.join(COLUMNS)}")
    rows, seen = [], {}
    for line, row in enumerate(reader, start=2):
        values = {c: (row.get(c) or "").strip() for c in COLUMNS}
        empty = [c for c in COLUMNS if not values[c]]
        if empty:
            raise DataError(f"{path}:{line}: the {empty[0]} is empty")
        if values["city"] in seen:
            raise DataError(f"{path}:{line}: city {values['city']!r} is also on line {seen[values['city']]}; each city once")
        seen[values["city"]] = line
        rows.append(City(**values, line=line))
    if len(rows) < 2 or len({r.continent for r in rows}) < 2:
        raise DataError(f"{path}: a city table needs at least two cities on two continents, it has {len(rows)}")
    return tuple(rows)


def split_cities(table: Sequence[City], seed: int = SEED) -> dict[str, list[City]]:
    """The table's cities shuffled (seeded) and split: a fifth (at least one) to ``test``, the rest to ``train``."""
    cities = list(table)
    random.Random(seed).shuffle(cities)
    cut = max(1, len(cities) // 5)
    return {"test": cities[:cut], "train": cities[cut:]}


def city_examples(splits: Sequence[str], table: Sequence[City], seed: int = SEED) -> list[CityExample]:
    """Every prompt of ``splits``: each city of the split asked each attribute in each template (8 prompts a city).

    Raises:
        ConfigError: a split the task lacks.
    """
    unknown = [s for s in splits if s not in SPLITS]
    if unknown:
        raise ConfigError(f"task 'city-attributes' has no split {unknown[0]!r}; its splits are {', '.join(SPLITS)}")
    parts = split_cities(table, seed)
    out = []
    for split in splits:
        for c in parts[split]:
            for attribute in ATTRIBUTES:
                for t, (first, second) in enumerate(TEMPLATES[attribute]):
                    out.append(CityExample(
                        id=f"cities:{split}:{len(out)}", premise=first.format(city=c.city), hypothesis=second, label=getattr(c, attribute),
                        split=split, words={"city_p": c.city}, city=c.city, country=c.country, continent=c.continent,
                        attribute=attribute, template=t,
                    ))  # fmt: skip
    return out
