"""Predictions and accuracy of a sequence classifier on any NLI pairs, given the dataset's label names.

Usage::

    model, tokenizer = load_classifier("runs/demo/model", require_head=True)
    evaluate(model, tokenizer, examples, labels=("entailment", "neutral"))
    # {'nmonli_test': {'accuracy': 0.89, 'correct': 178, 'n': 200}}

An example is any object with ``id``, ``premise``, ``hypothesis``, ``label``
and ``split``; nothing here knows a task.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

import torch
from tqdm.auto import tqdm

from interp.core.errors import ConfigError, ModelError
from interp.hooks.encoding import Encoded, collate, encode_pair

#: A prediction outside MoNLI's two labels is read as MoNLI's non-entailment ("neutral").
_NON_ENTAILMENT = {"contradiction": "neutral", "not_entailment": "neutral", "non-entailment": "neutral"}


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
        logits = model(
            input_ids=batch["input_ids"].to(device),
            token_type_ids=batch["token_type_ids"].to(device),
            attention_mask=batch["attention_mask"].to(device),
        ).logits
        out[idx] = logits.float().cpu()
    return out


def predicted_labels(model, logits: torch.Tensor, labels: Sequence[str]) -> list[str]:
    """Label names of the dataset (``labels``) for ``logits`` ``[n, num_labels]``, via the model's ``id2label``.

    For MoNLI's two labels, a three-way NLI model's ``contradiction`` is read
    as ``neutral`` (not entailed), so SNLI/MNLI classifiers can be evaluated
    as the paper's challenge-set experiment (§5.1) does. With three labels
    (MQNLI) the model's names are kept.

    Raises:
        ModelError: the model has no ``entailment`` label.
    """
    names = [str(model.config.id2label[i]).lower() for i in range(model.config.num_labels)]
    if "entailment" not in names:
        raise ModelError(f"model labels {names} include no 'entailment'; cannot score it on this dataset")
    mapped = names if "contradiction" in labels else [_NON_ENTAILMENT.get(n, n) for n in names]
    return [mapped[i] for i in logits.argmax(dim=-1).tolist()]


def evaluate(
    model,
    tokenizer,
    examples: Sequence,
    batch_size: int = 128,
    progress: bool = False,
    *,
    labels: Sequence[str],
) -> dict[str, dict[str, float | int]]:
    """Accuracy per split of any NLI pairs with ``split`` and ``label``.

    ``labels`` is the dataset's label set in the classifier's id order (a task's ``labels``).

    Returns:
        ``{split: {"accuracy": float in [0, 1], "correct": int, "n": int}}``
        in the order splits first appear in ``examples``.
    """
    encoded = [encode_pair(e, tokenizer, labels) for e in examples]
    logits = predict_logits(model, encoded, tokenizer.pad_token_id, batch_size, progress)
    predictions = predicted_labels(model, logits, labels)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for example, predicted in zip(examples, predictions):
        counts[example.split][0] += int(predicted == example.label)
        counts[example.split][1] += 1
    return {split: {"accuracy": c / n, "correct": c, "n": n} for split, (c, n) in counts.items()}


def evaluate_task(spec: str, task, splits: Sequence[str], batch_size: int = 128, progress: bool = False) -> dict[str, dict]:
    """Accuracy per split of the classifier ``spec`` on ``task``'s ``splits``, reading gold labels through the task's mapping.

    A model with the task's labels is scored as is; a model whose labels are
    the task's :attr:`~interp.tasks.base.Task.label_mapping` image (MoNLI's
    two labels on a semantic fragment) is scored against the mapped gold
    labels (:meth:`~interp.tasks.base.Task.scored_labels`).

    Returns:
        ``{split: {"accuracy", "correct", "n"}}``, as :func:`evaluate`.

    Raises:
        ModelError: the model cannot be loaded, has no head, or has labels the task cannot be scored with.
        ConfigError: ``splits`` names a split the task lacks.
        DataError, ConfigError: as ``task.load``.
    """
    from interp.models.loading import load_classifier

    unknown = [s for s in splits if s not in (*task.splits, *task.extra_splits)]
    if unknown:
        raise ConfigError(f"unknown split {unknown[0]!r}; choose from {', '.join((*task.splits, *task.extra_splits))}")
    examples = task.load(tuple(splits))
    # Without a mapping the model must have the task's labels: the loader says so in its own words.
    model, tokenizer = load_classifier(spec, labels=None if task.label_mapping else task.labels, require_head=True)
    gold_to_model(model, task, spec)
    return score_task(model, tokenizer, task, examples, batch_size, progress, spec)


def gold_to_model(model, task, spec: str = "the model") -> dict[str, str]:
    """How ``task``'s gold labels read as ``model``'s labels (:meth:`~interp.tasks.base.Task.scored_labels`).

    Raises:
        ModelError: the model's labels are neither the task's nor its mapping's image.
    """
    from interp.models.loading import checkpoint_labels

    have = checkpoint_labels(model.config)
    mapping = task.scored_labels(have)
    if mapping is None:
        wanted = " or ".join(str(tuple(dict.fromkeys(m))) for m in (task.labels, [task.label_mapping.get(x, x) for x in task.labels]) if m)
        raise ModelError(f"model {spec!r} has labels {have}; task {task.name!r} is scored with labels {wanted}")
    return mapping


def score_task(model, tokenizer, task, examples: Sequence, batch_size: int = 128, progress: bool = False, spec: str = "the model") -> dict[str, dict]:
    """Accuracy per split of an in-memory classifier on ``task``'s ``examples``, gold labels read by :func:`gold_to_model`.

    Returns:
        ``{split: {"accuracy" (0..1), "correct", "n"}}`` in the order splits first appear.

    Raises:
        ModelError: the model's labels cannot score this task.
    """
    mapping = gold_to_model(model, task, spec)
    encoded = [encode_pair(e, tokenizer, task.labels) for e in examples]
    logits = predict_logits(model, encoded, tokenizer.pad_token_id, batch_size, progress)
    names = [str(model.config.id2label[i]).lower() for i in range(model.config.num_labels)]
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for example, predicted in zip(examples, logits.argmax(-1).tolist()):
        counts[example.split][0] += int(names[predicted] == mapping[example.label])
        counts[example.split][1] += 1
    return {split: {"accuracy": c / n, "correct": c, "n": n} for split, (c, n) in counts.items()}
