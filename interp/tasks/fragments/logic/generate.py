"""Generate a logic fragment (Richardson, Hu, Moss & Sabharwal 2020, §3): seeded, label-balanced, every label checked in finite models.

For each pair a label is chosen in turn (entailment, contradiction,
neutral, so labels are balanced 1:1:1), the fragment's causal inputs are
drawn until its causal model gives that label
(:mod:`~interp.tasks.fragments.logic.causal`), and sentences realizing them
are written from the split's vocabulary (:mod:`~interp.tasks.fragments.logic.templates`;
test names disjoint from train and dev, as in the paper). Before a record is
kept its label is decided again from its logical forms alone, by
searching every finite model (:mod:`~interp.tasks.fragments.logic.semantics`);
a disagreement stops the run. No pair is in two splits.

Usage::

    >>> records = generate_records(LogicConfig(fragment="counting", n_train=6, n_dev=0, n_test=3, seed=0))
    >>> sorted({r["label"] for r in records}), len(records), records[0]["id"]
    (['contradiction', 'entailment', 'neutral'], 9, 'counting/train:1')
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from interp.causal import run_forward
from interp.core.checks import check_int
from interp.core.errors import ConfigError, DataError, named
from interp.core.outputs import generate_into
from interp.tasks.fragments.data import LOGIC
from interp.tasks.fragments.logic.causal import CAUSAL_MODELS, LABELS, SPLITS
from interp.tasks.fragments.logic.lexicon import vocabulary
from interp.tasks.fragments.logic.semantics import label as model_label
from interp.tasks.fragments.logic.templates import REALIZE

#: The most pairs one split may ask for (the released fragments have 3,000 / 1,000 / 1,000), checked before any work.
MAX_PER_SPLIT = 20_000
#: Draws in a row that may repeat a pair already made before a split is declared exhausted.
MAX_REPEATS = 10_000


@dataclass(frozen=True)
class LogicConfig:
    """Which fragment, how many pairs per split (the released sizes by default), and the seed."""

    fragment: str = "negation"
    n_train: int = 3000
    n_dev: int = 1000
    n_test: int = 1000
    seed: int = 0

    def validate(self) -> None:
        """Raises ConfigError naming the bad field."""
        if self.fragment not in LOGIC:
            raise ConfigError(f"{named('fragment', repr(self.fragment))}: choose from {', '.join(LOGIC)}")
        for name in ("n_train", "n_dev", "n_test"):
            check_int(getattr(self, name), name, least=0, most=MAX_PER_SPLIT)
        if self.n_train + self.n_dev + self.n_test == 0:
            raise ConfigError("`n_train=`, `n_dev=` and `n_test=` are all 0: nothing to generate")


def _inputs(causal, target: str, rng: random.Random) -> dict:
    while True:
        inputs = {v: rng.choice(causal.values[v]) for v in causal.inputs}
        if run_forward(causal, inputs)[causal.output] == target:
            return inputs


def check_record(record: dict) -> str:
    """The label the record's logical forms have in finite models (:func:`~interp.tasks.fragments.logic.semantics.label`).

    Raises:
        DataError: a missing or malformed field.
    """
    try:
        return model_label(record["premise_lf"], record["hypothesis_lf"], people=record["people"], places=record["places"])
    except (KeyError, TypeError) as exc:
        raise DataError(f"record {record.get('id')!r}: no usable premise_lf, hypothesis_lf, people and places ({exc})") from None


def generate_records(config: LogicConfig) -> list[dict]:
    """The pairs of every split, train first (seeded: the same config gives the same records).

    Raises:
        ConfigError: a bad field of ``config``.
        DataError: a generated label that the finite-model check contradicts (a template error).
    """
    config.validate()
    rng = random.Random(config.seed)
    causal, realize = CAUSAL_MODELS[config.fragment], REALIZE[config.fragment]
    seen: set[tuple[str, str]] = set()
    records = []
    for split, n in zip(SPLITS, (config.n_train, config.n_dev, config.n_test)):
        vocab = vocabulary(split)
        made = repeats = 0
        while made < n:
            target = LABELS[made % len(LABELS)]
            inputs = _inputs(causal, target, rng)
            draft = realize(inputs, rng, vocab)
            if (draft.premise, draft.hypothesis) in seen:
                repeats += 1
                if repeats > MAX_REPEATS:
                    raise ConfigError(f"{named('n_' + split)} {n}: the {config.fragment} templates gave only {made} distinct {split} "
                                      f"pairs before {MAX_REPEATS} draws in a row repeated one; ask for fewer")
                continue
            repeats = 0
            seen.add((draft.premise, draft.hypothesis))
            made += 1
            record = {
                "id": f"{config.fragment}/{split}:{made}", "split": split, "fragment": config.fragment,
                "premise": draft.premise, "hypothesis": draft.hypothesis, "label": target, "inputs": inputs,
                "spans": {role: list(span) for role, span in draft.spans.items()},
                "premise_lf": draft.premise_lf, "hypothesis_lf": draft.hypothesis_lf,
                "people": draft.people, "places": draft.places,
            }  # fmt: skip
            checked = check_record(record)
            if checked != target:
                raise DataError(f"{record['id']}: the template gives {target} but finite models give {checked}: "
                                f"{draft.premise!r} / {draft.hypothesis!r}")  # fmt: skip
            records.append(record)
    return records


def statistics(records: list[dict]) -> dict:
    """Sizes, label shares and each causal input's values, by split."""
    out = {}
    for split in SPLITS:
        rows = [r for r in records if r["split"] == split]
        if rows:
            out[split] = {
                "pairs": len(rows),
                "premises": len({r["premise"] for r in rows}),
                "labels": dict(Counter(r["label"] for r in rows)),
                "inputs": {v: dict(Counter(str(r["inputs"][v]) for r in rows)) for v in rows[0]["inputs"]},
            }
    return out


def generate_logic_fragment(config: LogicConfig, out: str | Path, *, overwrite: bool = False) -> dict:
    """Write the records to ``out`` (JSONL) and their statistics to ``<out stem>.stats.json``; returns the statistics.

    Raises:
        ConfigError: a bad field of ``config``.
        OutputError: as :func:`~interp.core.outputs.generate_into`.
    """
    config.validate()
    return generate_into(out, overwrite, lambda: generate_records(config), lambda records: {"config": asdict(config), **statistics(records)})
