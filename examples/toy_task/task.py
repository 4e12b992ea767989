"""A complete user task for interp: a JSONL file and a two-variable causal model (docs/guides/tasks.md)."""

import json
from dataclasses import dataclass
from pathlib import Path

from interp.causal import CausalModel, Mechanism
from interp.core.errors import DataError
from interp.tasks import Task

DATA = Path(__file__).with_name("pairs.jsonl")


@dataclass(frozen=True)
class Pair:  # a task's example: id, premise, hypothesis, label, split, words (role -> word; *_p premise, *_h hypothesis)
    id: str
    premise: str
    hypothesis: str
    label: str
    split: str
    words: dict
    relation: str


def load(splits):
    pairs = []
    for number, line in enumerate(DATA.read_text().splitlines(), 1):
        r = json.loads(line)
        if r["label"] not in ("entailment", "neutral") or r["relation"] not in ("up", "down"):
            raise DataError(f"{DATA}:{number}: bad label or relation")
        pairs.append(Pair(f"toy:{number}", r["premise"], r["hypothesis"], r["label"], "all", {"noun_p": r["w_p"], "noun_h": r["w_h"]}, r["relation"]))
    return pairs


def causal_model(pairs):  # up: the hypothesis noun is the more general; negation reverses it
    label = Mechanism(("up", "negated"), lambda up, negated: "entailment" if up != negated else "neutral")
    return CausalModel("toy", ("relation", "negated"), {"up": Mechanism(("relation",), lambda r: r == "up"), "label": label},
                       output="label", values={"up": (True, False), "negated": (False, True)})


def make_task():
    return Task(name="toy", labels=("entailment", "neutral"), splits=("all",), default_splits=("all",), load=load,
                roles=("cls", "noun_p", "noun_h"), causal_model=causal_model, alignment={"up": ("noun_h",), "negated": ("cls",)},
                inputs=lambda pair: {"relation": pair.relation, "negated": " not " in pair.premise})
