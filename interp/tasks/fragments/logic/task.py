"""A generated logic fragment as a :class:`~interp.tasks.base.Task`: ``--task logic-fragment --data-file FILE``.

``interp fragments generate``, given a logic fragment, writes the pairs
(:mod:`~interp.tasks.fragments.logic.generate`); this reads them, with the
fragment's causal model (:mod:`~interp.tasks.fragments.logic.causal`) and
its variables aligned to token roles, so that probes, interchange
interventions and DAS can ask where a model keeps, say, the compared
numbers of the counting fragment. Three labels; a two-label MoNLI model is
scored through the fragments' ``contradiction -> neutral`` mapping. Splits
``train``, ``dev``, ``test`` (test names disjoint from train's). Each
split's accuracy is also given per causal input value that matters most to
the fragment (:attr:`~interp.tasks.base.Task.breakdown`).

Usage::

    task = logic_task("runs/counting.jsonl")
    examples = task.load(("test",))
    causal = task.build_causal_model(examples)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from interp.causal import run_forward
from interp.core.errors import ConfigError, DataError, named
from interp.core.jsonlines import json_record, read_lines
from interp.tasks.base import Task
from interp.tasks.fragments.data import LABELS, LOGIC
from interp.tasks.fragments.logic.causal import ALIGNMENTS, CAUSAL_MODELS, SPLITS
from interp.tasks.fragments.task import LABEL_MAPPING

NAME = "logic-fragment"
#: The causal input each fragment's accuracies are broken down by.
BREAKDOWN = {"negation": "person", "boolean": "person", "quantifier": "quantifier", "counting": "exact",
             "conditional": "antecedent", "comparative": "first"}  # fmt: skip


@dataclass(frozen=True)
class LogicPair:
    """One generated pair: its causal inputs, and the character span of each token role in its sentence."""

    id: str
    premise: str
    hypothesis: str
    label: str
    split: str
    fragment: str
    inputs: dict = field(hash=False)
    spans: dict = field(default_factory=dict, hash=False)

    @property
    def words(self) -> dict[str, str]:
        """Role -> its words (``.p`` roles in the premise, ``.h`` in the hypothesis)."""
        text = {"p": self.premise, "h": self.hypothesis}
        return {role: text[role[-1]][a:b] for role, (a, b) in self.spans.items()}


def _pair(record: dict, where: str) -> LogicPair:
    for name in ("id", "premise", "hypothesis", "label", "split", "fragment"):
        if not isinstance(record.get(name), str) or not record[name]:
            raise DataError(f"{where}: field {name!r} must be a non-empty string, got {record.get(name)!r}")
    if record["fragment"] not in LOGIC:
        raise DataError(f"{where}: unknown fragment {record['fragment']!r}; the logic fragments are {', '.join(LOGIC)}")
    if record["split"] not in SPLITS:
        raise DataError(f"{where}: unknown split {record['split']!r}; choose from {', '.join(SPLITS)}")
    causal = CAUSAL_MODELS[record["fragment"]]
    inputs = record.get("inputs")
    if not isinstance(inputs, dict) or set(inputs) != set(causal.inputs) or any(
        inputs[v] not in causal.values[v] for v in causal.inputs
    ):  # fmt: skip
        raise DataError(f"{where}: inputs {inputs!r} are not values of {', '.join(causal.inputs)} ({record['fragment']}'s causal model)")
    if record["label"] != run_forward(causal, inputs)[causal.output]:
        raise DataError(f"{where}: label {record['label']!r} disagrees with the causal model on inputs {inputs}")
    text = {"p": record["premise"], "h": record["hypothesis"]}
    roles = {r for roles in ALIGNMENTS[record["fragment"]].values() for r in roles} - {"cls"}
    spans = record.get("spans")
    if not isinstance(spans, dict) or not roles <= set(spans):
        raise DataError(f"{where}: spans must give {', '.join(sorted(roles))}, got {spans!r}")
    for role, span in spans.items():
        if not (role[-2:] in (".p", ".h") and isinstance(span, list) and len(span) == 2 and all(isinstance(i, int) for i in span)
                and 0 <= span[0] < span[1] <= len(text[role[-1]])):  # fmt: skip
            raise DataError(f"{where}: span of {role} {span!r} is not [start, end) inside its sentence")
    return LogicPair(record["id"], record["premise"], record["hypothesis"], record["label"], record["split"], record["fragment"],
                     inputs, {k: tuple(v) for k, v in spans.items()})  # fmt: skip


def read_logic(path: str | Path, splits: Sequence[str] = SPLITS) -> list[LogicPair]:
    """The pairs of ``splits`` from a file ``interp fragments generate (a logic fragment)`` wrote, in file order.

    Raises:
        DataError: a missing file, a malformed line (naming ``file:line``), two fragments in one file, an unknown split, or no pairs.
    """
    unknown = [s for s in splits if s not in SPLITS]
    if unknown or not splits:
        raise DataError(f"unknown split {(unknown or [''])[0]!r} of a generated logic fragment; choose from {', '.join(SPLITS)}")
    path = Path(path)
    lines = read_lines(path, "interp fragments generate (a logic fragment)")
    pairs = [_pair(json_record(line, f"{path}:{i}"), f"{path}:{i}") for i, line in enumerate(lines, start=1)]
    fragments = sorted({p.fragment for p in pairs})
    if len(fragments) > 1:
        raise DataError(f"{path}: holds pairs of several fragments ({', '.join(fragments)}); one file is one fragment")
    out = [p for s in splits for p in pairs if p.split == s]
    if not out:
        raise DataError(f"{path}: no pairs in split(s) {', '.join(splits)}")
    return out


def file_fragment(path: str | Path) -> str:
    """The fragment of a generated logic file, read from its first line.

    Raises:
        DataError: a missing or empty file, or a first line that is not a logic fragment's pair.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            first = handle.readline()
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read ({exc}); interp fragments generate (a logic fragment) writes such files") from None
    record = json_record(first, f"{path}:1")
    if record.get("fragment") not in LOGIC:
        raise DataError(f"{path}:1: no logic fragment named in field 'fragment'; is this a file of interp fragments generate (a logic fragment)?")
    return record["fragment"]


def is_logic_file(path: str | Path) -> bool:
    """Whether ``path``'s first line is a generated logic fragment's pair (:func:`file_fragment`; False where it is refused)."""
    try:
        file_fragment(path)
    except DataError:
        return False
    return True


def logic_task(data_file: str | Path | None) -> Task:
    """The generated logic fragment in ``data_file``, with its causal model.

    Raises:
        ConfigError: no ``data_file``.
        DataError: as :func:`file_fragment`.
    """
    if not data_file:
        raise ConfigError(f"{named('task', NAME)} needs `data_file=`, a file written by interp fragments generate (a logic fragment)")
    fragment = file_fragment(data_file)
    causal, alignment = CAUSAL_MODELS[fragment], ALIGNMENTS[fragment]
    roles = ("cls", *sorted({r for rs in alignment.values() for r in rs} - {"cls"}))
    by = BREAKDOWN[fragment]

    def build(examples):
        wrong = [e for e in examples if getattr(e, "fragment", None) != fragment]
        if wrong:
            raise ConfigError(f"example {wrong[0].id} is not a pair of the {fragment} fragment, so its causal model does not cover it")
        return causal

    return Task(
        name=NAME,
        labels=LABELS,
        splits=SPLITS,
        load=lambda splits: read_logic(data_file, tuple(splits)),
        roles=roles,
        default_splits=("test",),
        eval_splits=("test",),
        causal_model=build,
        inputs=lambda e: dict(e.inputs),
        alignment=alignment,
        label_mapping=LABEL_MAPPING,
        breakdown={by: lambda e: str(e.inputs[by])},
    )
