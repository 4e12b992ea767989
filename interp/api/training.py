"""Fine-tuning in memory: a classifier for a task's labels, trained on a list of its examples, nothing written to disk.

Usage::

    import interp
    task = interp.load_task("monli")
    train = task.examples(("pmonli", "nmonli_train"), n=640, seed=0)
    model = interp.fine_tune("minilm", task, train, epochs=2, lr=2e-4)     # a Classifier; model.history holds the losses
    interp.IntervenableModel(model, task)

The same optimisation as ``interp train`` (:func:`interp.models.training.fit`:
AdamW, linear warm-up and decay, length-grouped seeded batches, dropout
reseeded each epoch), so the same settings and examples give the same
weights; the command adds the checkpoint, resuming and reuse. The paper
fine-tunes on NMoNLI after SNLI (Geiger, Richardson & Potts 2020, §5.2).
"""

from __future__ import annotations

import copy
from dataclasses import asdict, fields
from typing import Sequence

from interp.api.loading import Classifier, load_model, load_task
from interp.core.errors import ConfigError, named
from interp.hooks.encoding import encode_pair
from interp.models.settings import PRECISIONS, FineTuneSettings
from interp.models.training import fit


def fine_tune(model, task, examples: Sequence, *, tokenizer=None, progress: bool = False, **settings) -> Classifier:
    """A fine-tuned copy of ``model`` (the argument is left as it was), as a :class:`~interp.api.loading.Classifier`.

    Args:
        model: a spec (``"minilm"``: an encoder gets a new head for the task's labels, seeded by ``seed``),
            a :class:`Classifier`, or a module with ``tokenizer``.
        task: a :class:`~interp.tasks.base.Task` or its name; a new head gets its ``labels``, a trained head keeps its own,
            read by name (a three-label head trained on two-label data keeps all three).
        examples: the training examples (``task.examples(...)``).
        progress: a progress bar per epoch and a line after each (``fine_tune`` is otherwise silent: minutes on a CPU).
        settings: the fields of :class:`FineTuneSettings` (``epochs``, ``lr``, ``batch_size``, ``seed``, ``warmup_ratio``,
            ``weight_decay``, ``precision``).

    Returns:
        The trained classifier in eval mode, where ``model`` was (``model.to("cuda")`` first to train on a GPU);
        ``history`` holds one record per epoch (``loss``: mean cross-entropy, nats), ``settings`` what it was trained
        with; :meth:`~interp.api.loading.Classifier.save` writes it as a checkpoint.

    Raises:
        ConfigError: naming a setting that is unknown or out of range, or ``examples=`` when empty or not the task's.
        ModelError: the model's labels cannot be read as the task's (:meth:`Classifier.reading`).
    """
    task = load_task(task)
    known = [f.name for f in fields(FineTuneSettings)]
    unknown = sorted(set(settings) - set(known))
    if unknown:
        raise ConfigError(f"{named(unknown[0])} is not a fine-tuning setting; the settings are {', '.join(known)} (and `progress=`, `tokenizer=`)")
    config = FineTuneSettings(**settings)
    examples = task.check_examples(examples)
    if isinstance(model, str):
        loaded = load_model(model, labels=task.labels, seed=config.seed)
    else:
        given = load_model(model, tokenizer)
        loaded = Classifier(copy.deepcopy(given.module), given.tokenizer, given.name)
    reading = loaded.reading(task)  # a three-label model keeps its head: each gold label trains its own (or folded) logit
    encoded = [encode_pair(e, loaded.tokenizer, reading.label_ids) for e in examples]
    history = fit(loaded.module, encoded, config, loaded.tokenizer.pad_token_id, progress=progress)
    trained = Classifier(loaded.module, loaded.tokenizer, "<in memory>")
    trained.history = history
    trained.settings = {"model": loaded.name, "task": task.name, **asdict(config), "n_train": len(examples)}
    return trained
