"""The logic fragments' vocabulary: people, countries and cities, with the test split's names disjoint from training's.

Richardson, Hu, Moss & Sabharwal (2020), §3: "the people and place names for
testing are drawn from an entirely disjoint set from training" (after
Salvatore, Finger & Hirata 2019). Here every list is split in two by
position: even positions are the training (and dev) vocabulary, odd ones the
test vocabulary, so each half keeps a mix of short and multi-word names.

Usage::

    >>> vocabulary("test").people[:3]
    ('Arthur', 'Bruce', 'Clifford')
    >>> set(vocabulary("train").people) & set(vocabulary("test").people)
    set()
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

PEOPLE: tuple[str, ...] = (
    "Aaron", "Arthur", "Barry", "Bruce", "Calvin", "Clifford", "Dale", "Dennis", "Derek", "Douglas", "Edgar", "Eugene",
    "Felix", "Francis", "Gary", "Gilbert", "Gordon", "Harold", "Hector", "Howard", "Ivan", "Jacob", "Jerome", "Julian",
    "Keith", "Kenneth", "Lawrence", "Leon", "Lloyd", "Marcus", "Martin", "Milton", "Nathan", "Neil", "Oscar", "Owen",
    "Patrick", "Perry", "Philip", "Ralph", "Raymond", "Roland", "Russell", "Samuel", "Sergio", "Stanley", "Theodore",
    "Travis", "Victor", "Vincent", "Wallace", "Walter", "Warren", "Wesley", "Alvin", "Byron", "Cecil", "Clyde",
    "Dwight", "Elmer", "Floyd", "Glen", "Herbert", "Homer", "Irving", "Jasper", "Lester", "Lionel", "Morris", "Norman",
)
COUNTRIES: tuple[str, ...] = (
    "Albania", "Argentina", "Armenia", "Austria", "Bolivia", "Brazil", "Bulgaria", "Cambodia", "Canada", "Chile",
    "Colombia", "Costa Rica", "Croatia", "Cuba", "Denmark", "Ecuador", "Egypt", "El Salvador", "Estonia", "Ethiopia",
    "Finland", "France", "Georgia", "Ghana", "Greece", "Guatemala", "Honduras", "Hungary", "Iceland", "India",
    "Indonesia", "Ireland", "Jamaica", "Japan", "Jordan", "Kenya", "Latvia", "Lebanon", "Lithuania", "Malaysia", "Mali",
    "Malta", "Mexico", "Mongolia", "Morocco", "Nepal", "New Zealand", "Nigeria", "Norway", "Oman", "Panama", "Peru",
    "Poland", "Portugal", "Romania", "Rwanda", "Senegal", "Serbia", "Slovakia", "South Africa", "South Korea", "Spain",
    "Sri Lanka", "Sweden", "Tanzania", "Thailand", "Tunisia", "Turkey", "Uganda", "Ukraine", "Uruguay", "Vietnam",
)
CITIES: tuple[str, ...] = (
    "Albany", "Anchorage", "Austin", "Baltimore", "Boise", "Boston", "Buffalo", "Charleston", "Chicago", "Cleveland",
    "Dallas", "Denver", "Detroit", "El Paso", "Eureka", "Fresno", "Hartford", "Houston", "Jackson", "Las Vegas",
    "Lincoln", "Madison", "Memphis", "Miami", "Mobile", "Nashville", "New Haven", "Newark", "Oakland", "Omaha",
    "Orlando", "Phoenix", "Portland", "Providence", "Raleigh", "Reno", "Richmond", "Sacramento", "Salem", "San Diego",
    "Santa Fe", "Savannah", "Seattle", "Spokane", "Tacoma", "Tampa", "Toledo", "Topeka", "Tucson", "Tulsa",
)  # fmt: skip

SPLIT_VOCABULARY = {"train": 0, "dev": 0, "test": 1}  # which half of each list a split draws from


@dataclass(frozen=True)
class Vocabulary:
    """The names one split draws from: people, countries (the places of most fragments) and cities (the conditional's)."""

    people: tuple[str, ...]
    countries: tuple[str, ...]
    cities: tuple[str, ...]


def vocabulary(split: str) -> Vocabulary:
    """The vocabulary of ``split`` (``train`` and ``dev`` share one half of each list, ``test`` has the other).

    Raises:
        KeyError: an unknown split.
    """
    half = SPLIT_VOCABULARY[split]
    return Vocabulary(PEOPLE[half::2], COUNTRIES[half::2], CITIES[half::2])


@cache
def _inflect():
    """inflect's engine, made on first use: importing inflect takes about 2 s (its type-checked functions), which a
    process that only lists the tasks should not pay."""
    import inflect

    return inflect.engine()


def number_word(n: int) -> str:
    """``26`` -> ``'twenty-six'``: a count as the fragments write it (inflect's ``number_to_words``)."""
    return str(_inflect().number_to_words(n))
