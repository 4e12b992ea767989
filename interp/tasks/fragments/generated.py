"""A generated monotonicity fragment as a :class:`~interp.tasks.base.Task`, with polarity as a causal variable.

``interp fragments generate --out FILE`` writes the pairs; ``--task
monotonicity-fragment --data-file FILE`` reads them. All pairs score
behaviorally (three labels; a two-label MoNLI model through the fragments'
``contradiction -> neutral`` mapping). The *lexical* pairs, made by one word
substitution, carry the causal model (Richardson et al. 2020, §3; the
monotonicity calculus of van Benthem 1986)::

    polarity   (↑ / ↓)  the substituted position's polarity in the premise
    direction  (↑ / ↓)  ↑ when the premise's word ≤ the hypothesis's (generalize)
    label      entailment when direction = polarity, else neutral

so probes and interchange interventions can ask whether a model represents
polarity. Roles: ``cls``, ``sub.p`` and ``sub.h`` (the substituted word in
premise and hypothesis; lexical pairs only). Default alignment: polarity at
``sub.p``, direction at ``sub.h`` (as MoNLI's lexrel at w_h), label at
``cls``. Splits ``train``, ``dev``, ``test`` and their lexical parts
``lexical_train`` ... (premises never cross splits).

Usage::

    task = generated_task("runs/mono/simple.jsonl")
    examples = task.load(("lexical_test",))
    causal = task.build_causal_model(examples)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

from interp.causal.base import CausalModel, Mechanism
from interp.core.errors import ConfigError, DataError, named
from interp.core.jsonlines import json_record, read_lines
from interp.natural_logic.polarity import entailment_label
from interp.tasks.base import Task
from interp.tasks.fragments.data import LABELS
from interp.tasks.fragments.task import LABEL_MAPPING

NAME = "monotonicity-fragment"
BASE_SPLITS = ("train", "dev", "test")
SPLITS: tuple[str, ...] = (*BASE_SPLITS, *(f"lexical_{s}" for s in BASE_SPLITS))
ROLES: tuple[str, ...] = ("cls", "sub.p", "sub.h")
ALIGNMENT = {"polarity": ("sub.p",), "direction": ("sub.h",), "label": ("cls",)}
DIRECTIONS = ("up", "down")


@dataclass(frozen=True)
class GeneratedPair:
    """One generated pair; ``polarity`` and ``direction`` are ``None`` unless it is lexical."""

    id: str
    premise: str
    hypothesis: str
    label: str
    split: str
    setting: str
    polarity: str | None = None
    direction: str | None = None
    spans: dict = field(default_factory=dict, hash=False)

    @property
    def lexical(self) -> bool:
        return self.polarity is not None

    @property
    def words(self) -> dict[str, str]:
        """``sub.p`` / ``sub.h`` -> the substituted words (lexical pairs)."""
        text = {"sub.p": self.premise, "sub.h": self.hypothesis}
        return {role: text[role][a:b] for role, (a, b) in self.spans.items()}


def polarity_causal_model(examples: Sequence = ()) -> CausalModel:
    """The lexical pairs' causal model: inputs polarity and direction, output label.

    Raises:
        ConfigError: an example is not lexical (naming it).
    """
    for e in examples:
        if not getattr(e, "lexical", False):
            raise ConfigError(
                f"example {e.id} is not a one-word substitution, so the polarity causal model does not cover it; "
                "use the lexical_train / lexical_dev / lexical_test splits"
            )
    return CausalModel(
        name="monotonicity",
        inputs=("polarity", "direction"),
        mechanisms={"label": Mechanism(("polarity", "direction"), entailment_label)},
        output="label",
        values={"polarity": DIRECTIONS, "direction": DIRECTIONS, "label": ("entailment", "neutral")},
    )


def _pair(record: dict, where: str) -> GeneratedPair:
    for name in ("id", "premise", "hypothesis", "label", "split", "setting"):
        if not isinstance(record.get(name), str) or not record[name]:
            raise DataError(f"{where}: field {name!r} must be a non-empty string, got {record.get(name)!r}")
    if record["label"] not in LABELS:
        raise DataError(f"{where}: unknown label {record['label']!r}; choose from {', '.join(LABELS)}")
    if record["split"] not in BASE_SPLITS:
        raise DataError(f"{where}: unknown split {record['split']!r}; choose from {', '.join(BASE_SPLITS)}")
    if "polarity" not in record:
        return GeneratedPair(record["id"], record["premise"], record["hypothesis"], record["label"], record["split"], record["setting"])
    polarity, direction, spans = record.get("polarity"), record.get("direction"), record.get("spans")
    if polarity not in DIRECTIONS or direction not in DIRECTIONS:
        raise DataError(f"{where}: polarity and direction must each be one of {', '.join(DIRECTIONS)}, got {polarity!r}, {direction!r}")
    if record["label"] != entailment_label(polarity, direction):
        raise DataError(f"{where}: label {record['label']!r} disagrees with polarity {polarity} and direction {direction}")
    text = {"sub.p": record["premise"], "sub.h": record["hypothesis"]}
    if not isinstance(spans, dict) or set(spans) != set(text):
        raise DataError(f"{where}: a lexical pair needs spans for sub.p and sub.h, got {spans!r}")
    for role, span in spans.items():
        if not (isinstance(span, list) and len(span) == 2 and all(isinstance(i, int) for i in span) and 0 <= span[0] < span[1] <= len(text[role])):
            raise DataError(f"{where}: span of {role} {span!r} is not [start, end) inside its sentence")
    return GeneratedPair(record["id"], record["premise"], record["hypothesis"], record["label"], record["split"], record["setting"],
                         polarity, direction, {k: tuple(v) for k, v in spans.items()})


def read_generated(path: str | Path, splits: Sequence[str] = BASE_SPLITS) -> list[GeneratedPair]:
    """The pairs of ``splits`` (``lexical_X``: the lexical pairs of X, with ``split`` set to ``lexical_X``) from a file ``interp fragments generate`` wrote.

    Raises:
        DataError: a missing file, a malformed line (naming ``file:line``), an unknown split, or no pairs.
    """
    unknown = [s for s in splits if s not in SPLITS]
    if unknown or not splits:
        raise DataError(f"unknown split {(unknown or [''])[0]!r} of a generated fragment; choose from {', '.join(SPLITS)}")
    path = Path(path)
    lines = read_lines(path, "interp fragments generate")
    pairs = [_pair(json_record(line, f"{path}:{i}"), f"{path}:{i}") for i, line in enumerate(lines, start=1)]
    out = [p for s in splits for p in pairs if p.split == s]
    out += [replace(p, split=s) for s in splits for p in pairs if s == f"lexical_{p.split}" and p.lexical]
    if not out:
        raise DataError(f"{path}: no pairs in split(s) {', '.join(splits)}")
    return out


def generated_task(data_file: str | Path | None) -> Task:
    """The generated monotonicity fragment in ``data_file``.

    Raises:
        ConfigError: no ``data_file``.
    """
    if not data_file:
        raise ConfigError(f"{named('task', NAME)} needs `data_file=`, a file written by interp fragments generate")
    causal = polarity_causal_model()
    return Task(
        name=NAME,
        labels=LABELS,
        splits=SPLITS,
        load=lambda splits: read_generated(data_file, tuple(splits)),
        roles=ROLES,
        optional_roles=tuple(r for r in ROLES if r != "cls"),  # only a one-word substitution has them
        default_splits=("lexical_test",),
        eval_splits=("test", "lexical_test"),
        causal_model=lambda examples: polarity_causal_model(examples) and causal,
        inputs=lambda e: {"polarity": e.polarity, "direction": e.direction},
        alignment=ALIGNMENT,
        label_mapping=LABEL_MAPPING,
    )
