"""MQNLI files: one JSON object per line, read back with every label checked against the tree.

A record holds ``id``, ``split`` (train, test, or dev), ``premise``, ``hypothesis``,
``label``, the value of every node of :data:`interp.tasks.mqnli.causal_model.NODES`
(relation symbols) and the words at each position (``premise_words``,
``hypothesis_words``). :func:`interp.tasks.mqnli.generate.generate_mqnli` writes them
(through :func:`interp.core.outputs.write_jsonl_atomic`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from interp.causal.base import run_forward
from interp.core.errors import ConfigError, DataError
from interp.core.jsonlines import json_record, read_lines
from interp.tasks.mqnli.causal_model import NODES, POSITIONS, inputs_of, mqnli_causal_model

#: MQNLI's labels in a classifier's label-id order.
MQNLI_LABELS: tuple[str, ...] = ("entailment", "neutral", "contradiction")
#: The splits a generated file holds (``dev`` where it was generated with ``n_dev``).
MQNLI_SPLITS: tuple[str, ...] = ("train", "dev", "test")


@dataclass(frozen=True)
class MQNLIExample:
    """One generated pair: text, label, the words at each position, every node's value."""

    id: str
    premise: str
    hypothesis: str
    label: str
    split: str
    source: str
    premise_words: dict = field(hash=False)
    hypothesis_words: dict = field(hash=False)
    nodes: dict = field(hash=False)

    @property
    def label_id(self) -> int:
        return MQNLI_LABELS.index(self.label)

    @property
    def words(self) -> dict[str, str]:
        """Role -> word: ``q_s.p`` ... ``n_o.p`` in the premise, ``q_s.h`` ... ``n_o.h`` in the hypothesis."""
        return {**{f"{k}.p": self.premise_words[k] for k in POSITIONS}, **{f"{k}.h": self.hypothesis_words[k] for k in POSITIONS}}

    @property
    def spans(self) -> dict[str, tuple[int, int]]:
        """Role -> character span of its word in its sentence (words repeat, ε above all, so they are not searched for)."""
        out = {}
        for side, words in (("p", self.premise_words), ("h", self.hypothesis_words)):
            start = 0
            for k in POSITIONS:
                out[f"{k}.{side}"] = (start, start + len(words[k]))
                start += len(words[k]) + 1
        return out


def read_mqnli(path: str | Path, splits: Sequence[str] = MQNLI_SPLITS) -> list[MQNLIExample]:
    """Read a generated MQNLI file, keeping the named splits, and check every label against the tree.

    Raises:
        DataError: missing file, malformed JSON, a missing field, an unknown
            label or split, words the fragment does not allow, or a label
            the natural-logic tree does not give (names ``file:line``).
    """
    path = Path(path)
    lines = read_lines(path, "interp mqnli")
    model = mqnli_causal_model()
    examples = []
    for lineno, text in enumerate(lines, start=1):
        where = f"{path}:{lineno}"
        record = json_record(text, where, strings=("id", "premise", "hypothesis", "label", "split", *NODES),
                             objects=("premise_words", "hypothesis_words"))
        try:
            p, h = record["premise_words"], record["hypothesis_words"]
            fields = (record["id"], record["premise"], record["hypothesis"], record["label"], record["split"])
        except (KeyError, TypeError) as exc:
            raise DataError(f"{where}: missing field {exc}") from None
        if record["label"] not in MQNLI_LABELS:
            raise DataError(f"{where}: unknown label {record['label']!r}; MQNLI labels are {', '.join(MQNLI_LABELS)}")
        if record["split"] not in MQNLI_SPLITS:
            raise DataError(f"{where}: unknown split {record['split']!r} ({', '.join(MQNLI_SPLITS)})")
        try:
            values = run_forward(model, inputs_of(p, h))
        except (ConfigError, KeyError, TypeError, ValueError) as exc:
            raise DataError(f"{where}: not a pair of the MQNLI fragment ({exc})") from None
        for side, words in (("premise", p), ("hypothesis", h)):
            if record[side] != " ".join(words[k] for k in POSITIONS):
                raise DataError(f"{where}: the {side} is not its {side}_words joined in the order {' '.join(POSITIONS)}")
        if values["label"] != record["label"]:
            raise DataError(f"{where}: label {record['label']!r}, but the natural-logic tree gives {values['label']!r}")
        if record["split"] in splits:
            nodes = {n: record.get(n) for n in NODES}
            examples.append(MQNLIExample(*fields, source=str(path), premise_words=p, hypothesis_words=h, nodes=nodes))
    return examples

