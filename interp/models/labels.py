"""How a classifier's labels read as a task's: by name, in any order, with the usual NLI spellings, extra labels folded.

Usage::

    reading = read_labels(("CONTRADICTION", "NEUTRAL", "ENTAILMENT"), ("entailment", "neutral"), {"contradiction": "neutral"})
    reading.read        # (1, 1, 0): the model's contradiction and neutral read as the task's neutral
    reading.predict(logits)          # the task's label ids of the model's argmax
    read_labels(("LABEL_0", "LABEL_1"), ("entailment", "neutral"), label_map="0=entailment,1=neutral")

A three-label SNLI or MNLI classifier is scored on two-label MoNLI by
reading its contradiction as non-entailment (Geiger, Richardson & Potts 2020,
§5.1): the task declares the fold (``Task.label_mapping``), this module applies
it. The reverse, a model with fewer labels than the data (a two-label MoNLI
model on three-label semantic fragments, Richardson et al. 2020, §4), scores
each gold label the model lacks as the label it folds into. Nothing here
knows a task: the task's labels and its fold come in as names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import torch

from interp.core.errors import ConfigError, ModelError

#: The spellings NLI checkpoints use, lower-cased, and the one name each stands for.
SPELLINGS: dict[str, str] = {
    **dict.fromkeys(("entailment", "entails", "entail", "entailed"), "entailment"),
    **dict.fromkeys(("neutral",), "neutral"),
    **dict.fromkeys(("contradiction", "contradicts", "contradict", "contradictory"), "contradiction"),
    **dict.fromkeys(
        ("non-entailment", "non_entailment", "nonentailment", "not_entailment", "not-entailment", "not entailment", "non entailment"),
        "non-entailment",
    ),
}
_GENERIC = re.compile(r"label_\d+")


def canonical_label(name: str) -> str:
    """One label name as this module compares it: lower-cased, trimmed, a usual NLI spelling replaced by its name
    (``ENTAILMENT``, ``entails`` -> ``entailment``; ``not_entailment`` -> ``non-entailment``)."""
    key = str(name).strip().lower()
    return SPELLINGS.get(key, key)


def parse_label_map(label_map: str | Mapping[int, str] | Sequence[str], n_labels: int | None = None) -> tuple[str, ...]:
    """The label names a ``label_map`` gives, in id order.

    Args:
        label_map: ``"0=contradiction,1=neutral,2=entailment"``, ``{0: "contradiction", ...}``, or the names in id order.
        n_labels: the model's number of labels; every id from 0 to ``n_labels - 1`` must be named once.

    Raises:
        ConfigError: naming ``label_map=``: an entry that is not ``ID=NAME``, an id named twice, a name given
            twice, an id the model lacks, or an id left out.
    """
    if isinstance(label_map, str):
        entries: dict[int, str] = {}
        for part in filter(None, (p.strip() for p in label_map.split(","))):
            key, sep, name = part.partition("=")
            if not sep or not key.strip().isdigit() or not name.strip():
                raise ConfigError(f"`label_map=`: {part!r} is not ID=NAME (e.g. 0=contradiction,1=neutral,2=entailment)")
            if int(key) in entries:
                raise ConfigError(f"`label_map=`: id {int(key)} is named twice")
            entries[int(key)] = name.strip()
    elif isinstance(label_map, Mapping):
        entries = {int(k): str(v) for k, v in label_map.items()}
    else:
        entries = dict(enumerate(str(v) for v in label_map))
    if not entries:
        raise ConfigError("`label_map=` names no label")
    n = len(entries) if n_labels is None else n_labels
    invented = sorted(k for k in entries if not 0 <= k < n)
    if invented:
        raise ConfigError(f"`label_map=`: the model has {n} labels (ids 0 to {n - 1}); there is no id {invented[0]}")
    missing = [k for k in range(n) if k not in entries]
    if missing:
        raise ConfigError(f"`label_map=` leaves out id {missing[0]}; name all {n} of the model's labels")
    names = tuple(entries[k] for k in range(n))
    repeated = sorted({canonical_label(x) for x in names if [canonical_label(y) for y in names].count(canonical_label(x)) > 1})
    if repeated:
        raise ConfigError(f"`label_map=` names {repeated[0]!r} twice")
    return names


#: The attribute a loaded module carries when a ``label_map=`` named its labels (never saved with the weights).
MAPPED = "_interp_label_map"


def check_label_map(config_labels: Sequence[str], names: Sequence[str], model: str) -> None:
    """A ``label_map=`` may name labels a config leaves as ``LABEL_k``; it may not rename labels the config already names.

    A map that gives the config's own names again (in any spelling) is accepted.

    Raises:
        ConfigError: naming ``label_map=``, the config's names and the map's.
    """
    if all(re.fullmatch(r"LABEL_\d+", str(x)) for x in config_labels):
        return
    if [canonical_label(x) for x in config_labels] == [canonical_label(x) for x in names]:
        return
    given = ",".join(f"{i}={x}" for i, x in enumerate(config_labels))
    asked = ",".join(f"{i}={x}" for i, x in enumerate(names))
    raise ConfigError(f"`label_map=` {asked}: model {model!r} already names its labels ({given}) in its config; a map is only for "
                      "a head whose labels are LABEL_0, LABEL_1, ... (if the config is wrong, correct its id2label)")


def mapped_reading(read, module, model: str):
    """``read()`` (a label reading of ``module``), its :class:`ModelError` blamed on ``label_map=`` where one named the labels.

    Raises:
        ConfigError: naming ``label_map=`` when the module's labels came from one; else what ``read`` raises.
    """
    try:
        return read()
    except ModelError as exc:
        given = getattr(module, MAPPED, None)
        if given is None:
            raise
        raise ConfigError(f"`label_map=` {given}: {exc}".replace(" give the model's labels with `label_map=`", " correct the map")) from None


def label_config(names: Sequence[str]) -> dict[str, dict]:
    """A config's ``id2label`` and ``label2id`` for label ``names`` in id order (what ``from_pretrained`` and a config take)."""
    return {"id2label": dict(enumerate(names)), "label2id": {name: i for i, name in enumerate(names)}}


@dataclass(frozen=True)
class LabelReading:
    """How one classifier's output ids read as one task's labels.

    Attributes:
        model_labels: the model's label names in id order, as compared (:func:`canonical_label`).
        task_labels: the task's labels in the task's id order.
        read: per model id, the task label id it is read as (``len(model_labels)`` entries).
        scored: per task label id, the task label id a prediction must equal to be right (itself, unless
            the model lacks that label and it folds into another).
        target: per task label id, the model id fine-tuning and DAS train toward for it.
    """

    model_labels: tuple[str, ...]
    task_labels: tuple[str, ...]
    read: tuple[int, ...]
    scored: tuple[int, ...]
    target: tuple[int, ...]

    @property
    def identity(self) -> bool:
        """Whether the model's labels are the task's, in the task's order (nothing is read or folded)."""
        return self.model_labels == tuple(canonical_label(x) for x in self.task_labels) and self.read == tuple(range(len(self.read)))

    @property
    def complete(self) -> bool:
        """Whether every task label has a model label read as it (what interchange interventions need)."""
        return self.scored == tuple(range(len(self.task_labels)))

    @property
    def folded(self) -> dict[str, str]:
        """The model labels read as a task label of another name: ``{model label: task label}``."""
        return {m: self.task_labels[j] for m, j in zip(self.model_labels, self.read) if m != canonical_label(self.task_labels[j])}

    @property
    def label_ids(self) -> dict[str, int]:
        """Each task label -> the model id trained toward for it (what :func:`interp.hooks.encoding.encode_pair` takes)."""
        return dict(zip(self.task_labels, self.target))

    def predict(self, logits: torch.Tensor | np.ndarray) -> np.ndarray:
        """The task's label id of each row's largest logit: int8 ``[...]`` for logits ``[..., n_model_labels]``."""
        ids = logits.argmax(-1)
        ids = ids.cpu().numpy() if isinstance(ids, torch.Tensor) else np.asarray(ids)
        return np.asarray(self.read, dtype=np.int8)[ids]

    def targets(self, task_ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """The model ids to train toward for task label ids: int64, the same shape."""
        return np.asarray(self.target, dtype=np.int64)[np.asarray(task_ids, dtype=np.int64)]


def read_labels(model_labels: Sequence[str], task_labels: Sequence[str], fold: Mapping[str, str] | None = None, *,
                model: str = "the model", task: str = "the task") -> LabelReading:  # fmt: skip
    """Match a classifier's labels to a task's by name.

    A model label is read as the task label of the same name
    (:func:`canonical_label`), else as the task label ``fold`` maps it to
    (MoNLI: ``contradiction`` and ``non-entailment`` -> ``neutral``). A task label
    the model lacks is scored as the label ``fold`` maps it to, when the model
    has that one (fewer labels than the data).

    Args:
        model_labels: the model's label names in id order (its ``id2label``, or a ``label_map``'s names).
        task_labels: the task's labels in id order.
        fold: a label either side may lack -> the task label it reads as (``Task.label_mapping``).
        model, task: what error messages call them.

    Raises:
        ModelError: the model names its labels ``LABEL_k`` (say what they mean with ``label_map=``), names one
            twice, has a label the task neither has nor folds, or lacks a task label that folds nowhere it has.
    """
    names = tuple(canonical_label(x) for x in model_labels)
    wanted = tuple(canonical_label(x) for x in task_labels)
    fold = {canonical_label(k): canonical_label(v) for k, v in (fold or {}).items()}
    if any(_GENERIC.fullmatch(x) for x in names) and not set(names) <= set(wanted):
        example = ",".join(f"{i}=NAME" for i in range(len(names)))
        raise ModelError(f"model {model!r} names its labels {', '.join(map(str, model_labels))}; say what each means with "
                         f"`label_map=` ({example}, e.g. 0=contradiction,1=neutral,2=entailment)")  # fmt: skip
    if len(set(names)) != len(names):
        raise ModelError(f"model {model!r} has labels {tuple(model_labels)}: two read as the same name")
    read = []
    for original, name in zip(model_labels, names):
        j = wanted.index(name) if name in wanted else wanted.index(fold[name]) if fold.get(name) in wanted else None
        if j is None:
            folds = ", ".join(f"{k} -> {v}" for k, v in fold.items()) or "none"
            raise ModelError(f"model {model!r} has label {str(original)!r}, which task {task!r} neither has ({', '.join(task_labels)}) "
                             f"nor folds (its folds: {folds}); give the model's labels with `label_map=`")  # fmt: skip
        read.append(j)
    scored, target = [], []
    for j, name in enumerate(wanted):
        mine = [i for i, r in enumerate(read) if r == j]
        if mine:
            scored.append(j)
            target.append(names.index(name) if name in names else mine[0] if len(mine) == 1 else -1)
        elif fold.get(name) in wanted and any(r == wanted.index(fold[name]) for r in read):
            k = wanted.index(fold[name])
            scored.append(k)
            target.append(names.index(fold[name]) if fold[name] in names else read.index(k))
        else:
            raise ModelError(f"model {model!r} has labels {tuple(model_labels)}: none reads as task {task!r}'s label {task_labels[j]!r}")
        if target[-1] == -1:
            raise ModelError(f"model {model!r} has labels {tuple(model_labels)}: several read as task {task!r}'s label "
                             f"{task_labels[j]!r} and none is named so; say which with `label_map=`")  # fmt: skip
    return LabelReading(names, tuple(task_labels), tuple(read), tuple(scored), tuple(target))
