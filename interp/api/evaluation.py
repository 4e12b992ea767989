"""A classifier's accuracy on a task's examples, its labels read as the task's: the one scoring behind ``interp train``,
``interp evaluate`` and ``interp inoculate``.

Usage::

    from interp.api.evaluation import score, score_checkpoint
    score_checkpoint("runs/demo/model", interp.load_task("monli"), ("nmonli_test",))   # {split: {"accuracy", "correct", "n"}}
    score(model, task, examples, fold_labels=True)                                     # a Classifier in memory

Accuracy per split, read by :func:`interp.models.evaluation.evaluate` (batched, padded to each batch's longest pair);
:func:`interp.analysis.chance.accuracy_lines` prints it with each split's 95% Wilson interval. For a model bound to
a task (:class:`~interp.api.example_set.Binding`), :func:`split_accuracies` and :func:`evaluation_frame` read its own
predictions beside chance, as :meth:`IntervenableModel.evaluate <interp.api.intervenable.IntervenableModel.evaluate>`
shows them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Collection, Mapping, Sequence

import numpy as np

from interp.analysis.chance import chance_messages
from interp.analysis.chance import split_accuracies as accuracy_rows
from interp.api.loading import IN_MEMORY, Classifier, load_model
from interp.core.devices import pick_device
from interp.core.errors import ConfigError, named, warn
from interp.hooks.encoding import input_view
from interp.models.evaluation import check_fold, evaluate, trained_input
from interp.models.labels import LabelReading
from interp.models.loading import is_bare_causal_lm, load_classifier
from interp.tasks import Task

if TYPE_CHECKING:  # pragma: no cover
    import pandas

    from interp.api.example_set import Binding


def labels_for(model: Classifier, task: Task, *, fold_labels: bool = False) -> LabelReading:
    """How ``model``'s labels read as ``task``'s (:meth:`Classifier.reading`), refused (or, with ``fold_labels``, warned
    of) where the model has fewer labels than the task (:func:`interp.models.evaluation.check_fold`).

    Raises:
        ModelError: labels that cannot be read as the task's, or fewer than the task's without ``fold_labels``.
        ConfigError: naming ``label_map=`` where one named the labels.
    """
    reading = model.reading(task)
    check_fold(reading, task.name, model.name, fold_labels)
    return reading


def score(model: Classifier, task: Task, examples: Sequence, *, reading: LabelReading | None = None, fold_labels: bool = False,
          batch_size: int = 128, progress: bool = False, answers: bool = False) -> dict[str, dict]:  # fmt: skip
    """Accuracy per split of ``model`` on ``examples`` of ``task``, its labels read as the task's (``reading``, else
    :func:`labels_for` with ``fold_labels``): ``{split: {"accuracy" (0..1), "correct", "n"}}`` in the order the splits
    first appear, and per group of the task's :attr:`~interp.tasks.base.Task.breakdown` under ``"by"``
    (:func:`interp.models.evaluation.evaluate`); with ``answers``, each example's answer and logits under ``"answers"``.

    Raises:
        ModelError: as :func:`labels_for`.
    """
    reading = labels_for(model, task, fold_labels=fold_labels) if reading is None else reading
    return evaluate(model.module, model.tokenizer, examples, batch_size, progress, reading=reading, groups=task.breakdown, answers=answers)


def score_checkpoint(spec: str | Classifier, task: Task, splits: Sequence[str], batch_size: int = 128, progress: bool = False, *,
                     label_map=None, template: str | None = None, label_words=None, input: str | None = None, device: str = "auto",
                     fold_labels: bool = False,
                     max_examples: int | None = None, max_per_split: int | None = None, seed: int = 0,
                     exclude: Collection[str] = ()) -> dict[str, dict]:  # fmt: skip
    """Accuracy per split of the classifier ``spec`` (a checkpoint, or a :class:`Classifier` held in memory, moved to
    ``device``) on ``task``'s ``splits``, its labels read as the task's by name.

    A model with the task's labels in any order is scored as is; a model with
    more (a three-label SNLI/MNLI model on MoNLI) reads its extra labels through
    the task's :attr:`~interp.tasks.base.Task.label_mapping`; a model with fewer
    (MoNLI's two labels on a semantic fragment) is refused unless ``fold_labels``, then
    scored against the mapped gold labels (:meth:`~interp.tasks.base.Task.read_labels`, :func:`labels_for`). ``label_map`` names a
    head's ids where its ``id2label`` does not (``LABEL_0``...). ``input``: ``pair``, or ``hypothesis`` for the
    hypothesis-only baseline (:func:`~interp.hooks.encoding.input_view`); ``None``: what the checkpoint was trained to
    read (:func:`~interp.models.evaluation.trained_input`). ``device``: where it runs (``auto``: a GPU when there is
    one, ``cpu``, ``cuda[:N]``). ``max_examples``, ``max_per_split``, ``seed``: score a seeded subset of the splits
    (:meth:`~interp.tasks.base.Task.examples`); ``None``: every example. ``template``, ``label_words``: a decoder's
    (:func:`interp.models.loading.load_classifier`). ``exclude``: example ids left out of the scores (a few-shot
    prompt's demonstrations, :mod:`interp.api.prompts`).

    Returns:
        ``{split: {"accuracy", "correct", "n"}}``, as :func:`score`.

    Raises:
        ModelError: the model cannot be loaded, has no head, has labels the task cannot be scored with, or fewer
            labels than the task without ``fold_labels``.
        ConfigError: ``splits`` names a split the task lacks; a bad ``label_map=``.
        DataError, ConfigError: as ``task.load``.
    """
    found, _ = score_tasks(spec, {task.name: task}, lambda _: splits, batch_size, progress, label_map=label_map, template=template,
                           label_words=label_words, input=input, device=device, fold_labels=fold_labels, max_examples=max_examples,
                           max_per_split=max_per_split, seed=seed, exclude=exclude)  # fmt: skip
    return found[task.name]


def score_tasks(spec: str | Classifier, tasks: Mapping[str, Task], splits_of: Callable[[Task], Sequence[str]], batch_size: int = 128,
                progress: bool = False, *, label_map=None, template: str | None = None, label_words=None, input: str | None = None,
                device: str = "auto", fold_labels: bool = False, max_examples: int | None = None, max_per_split: int | None = None,
                seed: int = 0, exclude: Collection[str] = (), answers: bool = False) -> tuple[dict[str, dict[str, dict]], Classifier]:  # fmt: skip
    """:func:`score_checkpoint` on each of ``tasks`` (name -> task) at the splits ``splits_of(task)`` gives, the model
    loaded once, after every task's examples are drawn (a split a task lacks or data that are not there are named
    before the model loads).

    Returns:
        ``{task name: {split: {"accuracy", "correct", "n"}}}`` and the :class:`Classifier` scored (e.g. to say how a
        decoder read the pairs).

    Raises:
        As :func:`score_checkpoint`.
    """
    drawn = {}
    for name, task in tasks.items():
        splits = tuple(splits_of(task))
        unknown = [s for s in splits if s not in (*task.splits, *task.extra_splits)]
        if unknown:
            raise ConfigError(f"unknown split {unknown[0]!r}; choose from {', '.join((*task.splits, *task.extra_splits))}")
        examples = task.examples(splits, n=max_examples, per_split=max_per_split, seed=seed)
        if exclude:
            left_out = set(exclude)
            examples = [e for e in examples if e.id not in left_out]
        drawn[name] = input_view(examples, _trained_input(spec) if input is None else input)
    where = pick_device(device)  # a GPU that is not there is named before the model loads
    if isinstance(spec, Classifier):
        model = spec if label_map is None else load_model(spec, label_map=label_map)
    else:
        readings = [dict(task.reading) for task in tasks.values()]
        if template is None and label_words is None and readings and readings[0] and all(r == readings[0] for r in readings) \
                and is_bare_causal_lm(str(spec)):  # a pretrained causal LM on a task that says how it is read (IOI)
            template, label_words = readings[0].get("template"), readings[0].get("label_words")
        model = scored_classifier(spec, label_map=label_map, template=template, label_words=label_words)
    model.module.to(where)
    return {name: score(model, tasks[name], drawn[name], fold_labels=fold_labels, batch_size=batch_size, progress=progress, answers=answers)
            for name in tasks}, model  # fmt: skip


def scored_classifier(spec: str, *, label_map=None, template: str | None = None, label_words=None) -> Classifier:
    """The classifier at ``spec`` as :func:`score_checkpoint` scores it: with its head (or a decoder's label words),
    ``label_map``, ``template`` and ``label_words`` applied (:func:`interp.models.loading.load_classifier`).

    Raises:
        ModelError: the model cannot be loaded or has no head; ConfigError: a bad ``label_map=``, ``template=`` or ``label_words=``.
    """
    return Classifier(*load_classifier(spec, require_head=True, label_map=label_map, template=template, label_words=label_words), spec)


def _trained_input(model: str | Classifier) -> str:
    """What ``model`` was fine-tuned to read: its checkpoint's ``training.json`` says; a classifier built in memory
    reads the pair."""
    name = model.name if isinstance(model, Classifier) else model
    return "pair" if name == IN_MEMORY else trained_input(name)


def split_accuracies(binding: "Binding", examples: Sequence, own: np.ndarray, *, warn_at_chance: bool = True) -> list[dict]:
    """The bound model's accuracy on each split among ``examples`` (its own task label ids ``own``, ``[n]``), with its
    Wilson interval, beside the majority label's share (:func:`interp.analysis.chance.split_accuracies`); with
    ``warn_at_chance``, an :class:`~interp.core.errors.InterpWarning` for every split where it is not above chance.
    Examples of one's own without a label (:func:`interp.examples`) have no accuracy and are left out."""
    kept = [i for i, e in enumerate(examples) if e.label is not None]
    gold = np.array([binding.task.labels.index(examples[i].label) for i in kept], dtype=np.int64)
    rows = accuracy_rows([getattr(examples[i], "split", "examples") for i in kept], gold, np.asarray(own)[kept])
    if warn_at_chance:
        for message in chance_messages(rows, f"model {binding.model.name!r}"):
            warn(message)
    return rows


def evaluation_frame(binding: "Binding", examples: Sequence, own: np.ndarray) -> "pandas.DataFrame":
    """:func:`split_accuracies` as a ``pandas.DataFrame``, one row per split (in order of first appearance): ``split``,
    ``examples``, ``accuracy`` with ``accuracy_low`` and ``accuracy_high`` (0..1, the 95% Wilson interval),
    ``majority`` (the most common gold label's share, the null), ``at_chance`` (the interval does not lie above it),
    and per task label ``recall_<label>``: accuracy on the examples of that gold label (NaN where the split has none).
    Warns at chance as :func:`split_accuracies` does.

    Raises:
        ConfigError: naming ``examples=``: an example of one's own without a gold label."""
    import pandas as pd

    labels = binding.task.labels
    unlabelled = next((e for e in examples if e.label is None), None)
    if unlabelled is not None:
        raise ConfigError(f"{named('examples')}: example {unlabelled.id!r} has no gold label, so it has no accuracy; give labels=[...] "
                          "(or the causal model's values=...) to interp.examples")  # fmt: skip
    gold = np.array([labels.index(e.label) for e in examples])
    splits = np.array([getattr(e, "split", "examples") for e in examples], dtype=object)
    rows = []
    for r in split_accuracies(binding, examples, own):
        where = splits == r["split"]
        row = {"split": r["split"], "examples": r["examples"], "accuracy": float(r["accuracy"]), "accuracy_low": r["accuracy"].low,
               "accuracy_high": r["accuracy"].high, "majority": float(r["majority"]), "at_chance": r["at_chance"]}  # fmt: skip
        for j, label in enumerate(labels):
            mine = where & (gold == j)
            row[f"recall_{label}"] = float((own[mine] == j).mean()) if mine.any() else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


__all__ = ["evaluation_frame", "labels_for", "score", "score_checkpoint", "score_tasks", "scored_classifier", "split_accuracies"]
