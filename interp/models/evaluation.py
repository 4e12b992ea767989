"""Predictions and accuracy of a sequence classifier on any NLI pairs, given the dataset's label names.

Usage::

    model, tokenizer = load_classifier("runs/demo/model", require_head=True)
    evaluate(model, tokenizer, examples, labels=("entailment", "neutral"))
    # {'nmonli_test': {'accuracy': 0.89, 'correct': 178, 'n': 200}}

An example is any object with ``id``, ``premise``, ``hypothesis``, ``label``
and ``split``; nothing here knows a task.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import torch
from tqdm.auto import tqdm

from interp.core.estimates import wilson
from interp.core.errors import ConfigError, ModelError, named, warn
from interp.core.outputs import read_json
from interp.hooks.architecture import batch_inputs
from interp.hooks.encoding import INPUTS, Encoded, collate, encode_pair
from interp.models.decoders import template_of
from interp.models.labels import LabelReading, read_labels
from interp.models.loading import checkpoint_labels, resolve_model
from interp.models.training import TRAINING_FILE


@torch.no_grad()
def predict_logits(
    model, encoded: Sequence[Encoded], pad_token_id: int, batch_size: int = 128, progress: bool = False
) -> torch.Tensor:
    """Classifier logits for each encoded example, in input order.

    Examples are batched by length (less padding); the result is unsorted back.

    Returns:
        float32 ``[n_examples, num_labels]`` on CPU.
    """
    model.eval()
    device = next(model.parameters()).device
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i].input_ids))
    out = torch.empty((len(encoded), model.config.num_labels), dtype=torch.float32)
    starts = range(0, len(order), batch_size)
    for start in tqdm(starts, desc="evaluate", unit="batch", disable=not progress, leave=False):
        idx = order[start : start + batch_size]
        batch = collate([encoded[i] for i in idx], pad_token_id)
        logits = model(**batch_inputs(model, batch, device)).logits
        out[idx] = logits.float().cpu()
    return out


def evaluate(
    model,
    tokenizer,
    examples: Sequence,
    batch_size: int = 128,
    progress: bool = False,
    *,
    labels: Sequence[str] | None = None,
    fold: Mapping[str, str] | None = None,
    reading: LabelReading | None = None,
    groups: Mapping[str, Callable[[Any], str]] | None = None,
    answers: bool = False,
) -> dict[str, dict[str, Any]]:
    """Accuracy per split of any NLI pairs with ``split`` and ``label``, and within each split per group.

    The model's labels are read as the dataset's by name
    (:func:`interp.models.labels.read_labels`): ``labels`` is the dataset's label
    set and ``fold`` how a label one side lacks reads (a task's
    ``label_mapping``: a three-label SNLI model on two-label MoNLI reads its
    contradiction as neutral, Geiger, Richardson & Potts 2020, §5.1); or give
    the ``reading`` itself. ``groups``: a name -> ``example -> value``
    (a task's :attr:`~interp.tasks.base.Task.breakdown`, e.g. the polarity
    of the replaced position, Yanaka et al. 2020, §4: downward inferences
    are harder); each split's accuracy is then also given per value.

    Returns:
        ``{split: {"accuracy": float in [0, 1], "correct": int, "n": int, "low", "high", "majority"}}`` (``low``,
        ``high``: the accuracy's 95% Wilson score interval, :func:`interp.core.estimates.wilson`; ``majority``: the
        most common gold label's share of the split as scored, a folded label counted as the label it reads as: the
        null an accuracy must beat) in the order splits first appear in ``examples``; with ``groups``,
        each split also has ``"by": {name: {value: {...the same keys}}}``,
        values in the order they first appear; with ``answers``, each split also has ``"answers"``: one record per
        example, ``{"id", "gold", "predicted", "logits": {model label: logit}}`` (the model's own labels, a causal LM's
        label words' logits), in the examples' order.

    Raises:
        ModelError: the model's labels cannot be read as ``labels``.
        DataError: an example's label is not among the dataset's.
    """
    if reading is None:
        if labels is None:
            raise ConfigError("evaluate: give the dataset's `labels=` (or a `reading=`)")
        reading = read_labels(checkpoint_labels(model.config), labels, fold)
    encoded = [encode_pair(e, tokenizer, reading.label_ids, template_of(model)) for e in examples]
    logits = predict_logits(model, encoded, tokenizer.pad_token_id, batch_size, progress)
    predicted = reading.predict(logits)
    gold = {label: reading.scored[j] for j, label in enumerate(reading.task_labels)}
    groups = dict(groups or {})
    counts: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    labels_seen: dict[tuple, Counter] = defaultdict(Counter)
    for example, p in zip(examples, predicted.tolist()):
        right = int(p == gold[example.label])
        for key in [(example.split,), *((example.split, name, str(of(example))) for name, of in groups.items())]:
            counts[key][0] += right
            counts[key][1] += 1
            labels_seen[key][gold[example.label]] += 1  # as scored: a folded label counts as the one it reads as
    out: dict[str, dict[str, Any]] = {}
    for key, (c, n) in counts.items():
        interval = wilson(c, n)
        score = {"accuracy": c / n, "correct": c, "n": n, "low": interval.low, "high": interval.high,
                 "majority": max(labels_seen[key].values()) / n}  # fmt: skip
        if len(key) == 1:
            out[key[0]] = {**score, **({"by": {name: {} for name in groups}} if groups else {})}
        else:
            out[key[0]]["by"][key[1]][key[2]] = score
    if answers:
        names = reading.model_labels
        for split in out:
            out[split]["answers"] = []
        for example, p, row in zip(examples, predicted.tolist(), logits.tolist()):
            out[example.split]["answers"].append({
                "id": example.id, "gold": example.label, "predicted": reading.task_labels[p],
                "logits": {name: round(float(v), 4) for name, v in zip(names, row)}})  # fmt: skip
    return out


def trained_input(spec: str) -> str:
    """What the checkpoint ``spec`` was fine-tuned to read (``pair`` or ``hypothesis``; its ``training.json`` says), else ``pair``."""
    source = resolve_model(spec)
    record = read_json(Path(source.location) / TRAINING_FILE) if source.local else None
    settings = record.get("config") if isinstance(record, dict) else None
    found = settings.get("input") if isinstance(settings, dict) else None
    return found if found in INPUTS else "pair"


def check_fold(reading: LabelReading, task: str, spec: str, fold_labels: bool) -> None:
    """Refuse, or with ``fold_labels`` warn, where a model has fewer labels than the task it is scored on.

    Such a model cannot predict one of the task's labels: a gold label it lacks is scored as the label the task folds
    it into (a two-label MoNLI model on a three-label fragment reads gold contradiction as neutral, Richardson et al.
    2020, §3), so its accuracy is that of a coarser reading, not comparable with a model that has every label.

    Raises:
        ModelError: the reading is not complete and ``fold_labels`` is false.
    """
    if reading.complete:
        return
    labels = reading.task_labels
    folded = "; ".join(f"gold {x} is scored as {labels[reading.scored[j]]}" for j, x in enumerate(labels) if reading.scored[j] != j)
    what = (f"model {spec!r} has {len(reading.model_labels)} labels ({', '.join(reading.model_labels)}), task {task!r} "
            f"has {len(labels)} ({', '.join(labels)})")  # fmt: skip
    if not fold_labels:
        raise ModelError(f"{what}: it cannot predict every gold label; pass {named('fold_labels', True)} to score it with the task's "
                         f"fold ({folded}), a {len(reading.model_labels)}-way reading")  # fmt: skip
    warn(f"{what}: {folded}, so its accuracy is that of a {len(reading.model_labels)}-way reading, not comparable with a "
         f"{len(labels)}-label model's")  # fmt: skip
