"""Indirect-object identification prompts, written here: names, places, objects and templates, and their examples.

Usage::

    examples = ioi_examples(("test",))
    examples[0].premise, examples[0].hypothesis    # 'When Mary and John went to the store,', 'John gave a drink to'
    examples[0].label, examples[0].words            # 'Mary', {'io_p': 'Mary', 's1_p': 'John', 's2_h': 'John'}

Each prompt is two clauses (Wang et al. 2023, "Interpretability in the Wild", §2; MIB's IOI task, Mueller et al.
2025): the first names two people, A and B (the premise); the second has one of them, the subject, give something
(the hypothesis, ending before the answer). The answer, the label, is the other name, the indirect object. A draw of
two names, a template, a place and an object gives four prompts: A and B in either order in the first clause, and
either of them as the subject (ABBA and BABA, Wang et al.'s two orders, and their subject-swapped twins); the four
share names, so an interchange between them is one of MIB's counterfactuals (the first clause's order flipped,
``s1_io_flip``; the subject replaced, ``s2_io_flip``; both), and an interchange between draws replaces the names.

Names are split between ``train`` and ``test`` (a name pair in one split only, its names in both): a figure on
``test`` is about name pairs the training never saw together. Everything is generated from the lists here, seeded,
with no file and nothing downloaded.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from interp.core.errors import ConfigError

#: First names common in English text, each one token with a leading space in GPT-2's, Llama's and Gemma's
#: tokenizers for the most part; :func:`interp.tasks.ioi.task.one_token_names` keeps those a model reads as one.
NAMES = (
    "Mary", "John", "Alice", "Bob", "James", "Michael", "David", "Sarah", "Paul", "Mark", "Anna", "Lisa", "Peter", "Tom",
    "Kate", "Jack", "Emma", "Laura", "Daniel", "Chris", "Sam", "Ben", "Steve", "Rachel", "Linda", "Susan", "Karen",
    "George", "Frank", "Henry", "Jane", "Adam", "Eric", "Kevin", "Brian", "Jason", "Amy", "Ryan", "Mike", "Joe", "Andrew",
    "Robert", "William", "Richard", "Thomas", "Charles", "Jennifer", "Maria", "Emily", "Jessica",
)  # fmt: skip
PLACES = ("store", "park", "school", "hospital", "station", "office", "garden", "restaurant", "library", "beach")
OBJECTS = ("drink", "book", "ring", "letter", "bone", "basketball", "computer", "necklace", "kiss", "snack")

#: (first clause, second clause): {A} and {B} in the first, {S} (the subject) in the second; {place}, {object}.
TEMPLATES = (
    ("When {A} and {B} went to the {place},", "{S} gave a {object} to"),
    ("After {A} and {B} went to the {place},", "{S} handed a {object} to"),
    ("While {A} and {B} were working at the {place},", "{S} passed a {object} to"),
    ("Then, {A} and {B} had a long day at the {place}.", "{S} gave a {object} to"),
    ("When {A} and {B} got a {object} at the {place},", "{S} decided to give it to"),
    ("Friends {A} and {B} found a {object} at the {place}.", "{S} gave it to"),
    ("After the lunch, {A} and {B} went to the {place}.", "{S} brought a {object} to"),
    ("{A} and {B} were thinking about going to the {place}.", "{S} wanted to give a {object} to"),
)

SPLITS = ("train", "test")
#: Draws of (two names, template, place, object) per split; each gives four prompts.
DRAWS = {"train": 150, "test": 60}
SEED = 0


@dataclass(frozen=True)
class IOIExample:
    """One prompt: the first clause (``premise``) and the second up to the answer (``hypothesis``).

    Attributes:
        label: the indirect object, the name the model should say next.
        words: ``io_p`` (the indirect object in the first clause), ``s1_p`` (the subject there), ``s2_h`` (the
            subject in the second clause).
        name_a, name_b: the first clause's names in order; ``subject``: the second clause's.
        template: the template's index in :data:`TEMPLATES`; ``draw``: which draw of names, template, place and object.
    """

    id: str
    premise: str
    hypothesis: str
    label: str
    split: str
    words: Mapping[str, str] = field(hash=False)
    name_a: str = ""
    name_b: str = ""
    subject: str = ""
    template: int = 0
    draw: str = ""

    @property
    def order(self) -> str:
        """``ABBA`` where the indirect object is named first in the first clause, else ``BABA`` (Wang et al. 2023)."""
        return "ABBA" if self.label == self.name_a else "BABA"


def _pairs(names: Sequence[str], seed: int) -> dict[str, list[tuple[str, str]]]:
    """Every unordered pair of ``names``, shuffled (seeded) and split: a fifth to ``test``, the rest to ``train``."""
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    random.Random(seed).shuffle(pairs)
    cut = len(pairs) // 5
    return {"test": pairs[:cut], "train": pairs[cut:]}


def ioi_examples(splits: Sequence[str], names: Sequence[str] = NAMES, draws: Mapping[str, int] | None = None, seed: int = SEED) -> list[IOIExample]:
    """The prompts of ``splits`` over ``names``: ``draws[split]`` draws each, four prompts a draw (module docstring).

    Raises:
        ConfigError: a split the task lacks, fewer than 4 names, a name that is not one capitalised word.
    """
    unknown = [s for s in splits if s not in SPLITS]
    if unknown:
        raise ConfigError(f"task 'ioi' has no split {unknown[0]!r}; its splits are {', '.join(SPLITS)}")
    odd = [n for n in names if not (isinstance(n, str) and n.isalpha() and n[:1].isupper())]
    if odd or len(set(names)) < 4:
        raise ConfigError(f"the IOI names must be 4 or more distinct capitalised words, got {odd[0]!r}" if odd else "the IOI task needs 4 or more names")
    counts = {**DRAWS, **(draws or {})}
    pairs = _pairs(list(dict.fromkeys(names)), seed)
    out = []
    for split in splits:
        rng = random.Random(f"{seed}:{split}")
        for d in range(counts[split]):
            a, b = pairs[split][rng.randrange(len(pairs[split]))]
            if rng.random() < 0.5:
                a, b = b, a
            t = rng.randrange(len(TEMPLATES))
            place, thing = rng.choice(PLACES), rng.choice(OBJECTS)
            first, second = TEMPLATES[t]
            premise = first.format(A=a, B=b, place=place, object=thing)
            for subject in (b, a):  # ABBA (the subject is B, the answer A) then BABA's twin
                io = a if subject == b else b
                for flipped in (False, True):  # the first clause's order as drawn, then flipped (s1_io_flip)
                    x, y = (b, a) if flipped else (a, b)
                    text = first.format(A=x, B=y, place=place, object=thing) if flipped else premise
                    n = len(out)
                    out.append(IOIExample(
                        id=f"ioi:{split}:{n}", premise=text, hypothesis=second.format(S=subject, object=thing), label=io, split=split,
                        words={"io_p": io, "s1_p": subject, "s2_h": subject}, name_a=x, name_b=y, subject=subject, template=t,
                        draw=f"{split}:{d}",
                    ))  # fmt: skip
    return out
