"""A generated systematicity file as a :class:`~interp.tasks.base.Task`: ``--task monotonicity --data-file FILE``.

Causal model (Yanaka et al. 2020, §2; van Benthem's monotonicity calculus)::

    monotonicity  (↑ / ↓)  of the quantifier whose argument holds the replaced phrase
    context       (↑ / ↓)  the polarity of that quantifier's clause (the product of the quantifiers above; ↑ at depth 1)
    direction     (↑ / ↓)  ↑ when the premise has the specific phrase and the hypothesis the general one
    polarity      = context ∘ monotonicity
    label         = entailment when direction = polarity, else neutral (non-entailment)

Roles: ``cls`` and ``target.p`` / ``target.h``, the replaced noun (or IV1)
in premise and hypothesis. Default alignment: polarity and monotonicity at
``target.p``, direction at ``target.h``, context and label at ``cls``.
Labels are MoNLI's two, so a MoNLI model can be scored as is. Every
accuracy is also given for upward and downward inferences apart (the
``polarity`` breakdown): the paper finds downward ones harder (§4).

Usage::

    task = systematicity_task("runs/sys/productivity1.jsonl")
    task.load(("test_d3",))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from interp.causal.base import CausalModel, Mechanism
from interp.core.errors import ConfigError, DataError, named
from interp.core.jsonlines import json_record, read_lines
from interp.natural_logic.polarity import compose, compose_all, entailment_label
from interp.tasks.base import NOT_ENTAILED, Task
from interp.tasks.systematicity import grammar as G
from interp.tasks.systematicity.generate import direction_of, from_tree

NAME = "monotonicity"
LABELS = ("entailment", "neutral")
SPLITS = ("train", "test", "test_adverb", "test_preposition", "test_object", *(f"test_d{d}" for d in range(1, 6)))
ROLES = ("cls", "target.p", "target.h")
ALIGNMENT = {"polarity": ("target.p",), "monotonicity": ("target.p",), "direction": ("target.h",), "context": ("cls",), "label": ("cls",)}
DIRECTIONS = ("up", "down")


@dataclass(frozen=True)
class SystematicityPair:
    """One generated pair and its causal inputs."""

    id: str
    premise: str
    hypothesis: str
    label: str
    split: str
    monotonicity: str
    context: str
    direction: str
    words: dict = field(default_factory=dict, hash=False)


def _target_word(tree: dict, position: str) -> str:
    s = from_tree(tree)
    if position == "verb":
        return s.verb
    np_ = s.obj if position == "object" else s.nps[-1]
    return G.plural(np_.noun)


def causal_inputs(record: dict) -> tuple[str, str]:
    """(monotonicity, context) of a record's replaced position, from its quantifiers."""
    qs = record["quantifiers"]
    governing = qs[0] if record["position"] == "verb" else qs[-1]
    above = [] if record["position"] == "verb" else qs[:-1]
    return direction_of(governing), compose_all(map(direction_of, above))


def read_systematicity(path: str | Path, splits: Sequence[str]) -> list[SystematicityPair]:
    """The pairs of ``splits`` in a file ``interp monotonicity generate`` wrote.

    Raises:
        DataError: an unknown split, a missing file, a malformed line or a label the causal model does not give (naming ``file:line``), no pairs.
    """
    unknown = [s for s in splits if s not in SPLITS]
    if unknown or not splits:
        raise DataError(f"unknown split {(unknown or [''])[0]!r}; a systematicity file has {', '.join(SPLITS)}")
    out = []
    for i, line in enumerate(read_lines(path, "interp monotonicity generate"), start=1):
        where = f"{path}:{i}"
        r = json_record(line, where, ("premise", "hypothesis", "label", "split", "direction"), "interp monotonicity generate",
                        strings=("id", "premise", "hypothesis", "label", "split", "direction", "position"))
        if r.get("split") not in splits:
            continue
        try:
            monotonicity, context = causal_inputs(r)
            words = {"target.p": _target_word(r["premise_tree"], r["position"]), "target.h": _target_word(r["hypothesis_tree"], r["position"])}
            direction = r["direction"]
        except (KeyError, TypeError, IndexError, ValueError, AttributeError) as exc:
            raise DataError(f"{where}: not a systematicity record ({type(exc).__name__}: {exc})") from None
        if r.get("label") not in LABELS or direction not in DIRECTIONS:
            raise DataError(f"{where}: label {r.get('label')!r} / direction {direction!r} not one of {LABELS} / {DIRECTIONS}")
        if r["label"] != entailment_label(compose(context, monotonicity), direction):
            raise DataError(f"{where}: label {r['label']!r} disagrees with its quantifiers {r.get('quantifiers')} and direction {direction}")
        out.append(SystematicityPair(r.get("id", where), r["premise"], r["hypothesis"], r["label"], r["split"], monotonicity, context, direction, words))
    if not out:
        raise DataError(f"{path}: no pairs in split(s) {', '.join(splits)}")
    return out


def systematicity_causal_model(examples: Sequence = ()) -> CausalModel:
    """The causal model above (its whole truth table has 8 rows)."""
    return CausalModel(
        name="monotonicity-systematicity",
        inputs=("monotonicity", "context", "direction"),
        mechanisms={
            "polarity": Mechanism(("context", "monotonicity"), compose),
            "label": Mechanism(("polarity", "direction"), entailment_label),
        },
        output="label",
        values={"monotonicity": DIRECTIONS, "context": DIRECTIONS, "direction": DIRECTIONS, "polarity": DIRECTIONS, "label": LABELS},
    )


def systematicity_task(data_file: str | Path | None) -> Task:
    """The systematicity task on ``data_file``.

    Raises:
        ConfigError: no ``data_file``.
    """
    if not data_file:
        raise ConfigError(f"{named('task', NAME)} needs `data_file=`, a file written by interp monotonicity generate")
    return Task(
        name=NAME,
        labels=LABELS,
        label_mapping=NOT_ENTAILED,
        splits=SPLITS,
        load=lambda splits: read_systematicity(data_file, tuple(splits)),
        roles=ROLES,
        default_splits=("test",),
        causal_model=systematicity_causal_model,
        inputs=lambda e: {"monotonicity": e.monotonicity, "context": e.context, "direction": e.direction},
        alignment=ALIGNMENT,
        breakdown={"polarity": polarity_of},
    )


def polarity_of(example: SystematicityPair) -> str:
    """``up`` or ``down``: the polarity of the example's replaced position (its context composed with its quantifier)."""
    return compose(example.context, example.monotonicity)
