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

from interp.api.iit import iit_loss, parse_iit
from interp.api.loading import Classifier, load_model, load_task
from interp.api.node_loss import NodeLoss, node_variables
from interp.hooks import n_layers
from interp.core.errors import ConfigError, named
from interp.hooks.encoding import encode_pair
from interp.models.settings import FineTuneSettings
from interp.models.training import fit


def fine_tune(model, task, examples: Sequence, *, tokenizer=None, progress: bool = False, iit: str | None = None, iit_weight: float = 1.0,
              iit_subspace: int | None = None, node_loss: Sequence[str] | None = None, node_weight: float = 1.0, node_read: str = "cls",
              **settings) -> Classifier:  # fmt: skip
    """A fine-tuned copy of ``model`` (the argument is left as it was), as a :class:`~interp.api.loading.Classifier`.

    Args:
        model: a spec (``"minilm"``: an encoder gets a new head for the task's labels, seeded by ``seed``),
            a :class:`Classifier`, or a module with ``tokenizer``.
        task: a :class:`~interp.tasks.base.Task` or its name; a new head gets its ``labels``, a trained head keeps its own,
            read by name (a three-label head trained on two-label data keeps all three).
        examples: the training examples (``task.examples(...)``).
        progress: a progress bar per epoch and a line after each (``fine_tune`` is otherwise silent: minutes on a CPU).
        iit: ``VARIABLE@LOCATION``: interchange intervention training (Geiger, Lu, Icard & Potts 2022, §3), the loss of
            :func:`interp.api.iit.iit_loss` added to the task's, weighted by ``iit_weight``; with ``iit_subspace = k``
            only a fixed seeded k-dimensional subspace of the location is trained to carry the variable. The same
            loss as ``interp train --iit``.
        node_loss: variables of the task's causal model (or ``("all",)``) whose values a head each learns beside the
            label, read at [CLS] or (``node_read="tokens"``) at the variable's aligned tokens, the mean cross-entropy
            weighted by ``node_weight`` (Geiger et al. 2019, §5: :class:`interp.api.node_loss.NodeLoss`); the heads are
            scaffolding, not part of the returned classifier. The same loss as ``interp train --node-loss``.
        settings: the fields of :class:`FineTuneSettings` (``epochs``, ``lr``, ``batch_size``, ``seed``, ``warmup_ratio``,
            ``weight_decay``, ``precision``, ``batching``).

    Returns:
        The trained classifier in eval mode, where ``model`` was (``model.to("cuda")`` first to train on a GPU);
        ``history`` holds one record per epoch (``loss``: mean cross-entropy, nats), ``settings`` what it was trained
        with; :meth:`~interp.api.loading.Classifier.save` writes it as a checkpoint.

    Raises:
        ConfigError: naming a setting that is unknown or out of range, or ``examples=`` when empty or not the task's; naming
            ``iit=`` (malformed, or a task without a causal model), ``iit_subspace=`` (wider than the location),
            ``node_loss=`` (a variable the task lacks, or given with ``iit=``) or ``node_read=``.
        ModelError: the model's labels cannot be read as the task's (:meth:`Classifier.reading`).
    """
    task = load_task(task)
    known = [f.name for f in fields(FineTuneSettings)]
    unknown = sorted(set(settings) - set(known))
    if unknown:
        raise ConfigError(f"{named(unknown[0])} is not a fine-tuning setting; the settings are {', '.join(known)} (and `progress=`, `tokenizer=`, `iit=`, `iit_weight=`, `iit_subspace=`, `node_loss=`, `node_weight=`, `node_read=`)")
    config = FineTuneSettings(**settings)
    examples = task.check_examples(examples)
    if isinstance(model, str):
        loaded = load_model(model, labels=task.labels, seed=config.seed)
    else:
        given = load_model(model, tokenizer)
        loaded = Classifier(copy.deepcopy(given.module), given.tokenizer, given.name)
    reading = loaded.reading(task)  # a three-label model keeps its head: each gold label trains its own (or folded) logit
    encoded = [encode_pair(e, loaded.tokenizer, reading.label_ids) for e in examples]
    extra_loss = None
    if iit is not None:
        if task.causal_model is None:
            raise ConfigError(f"`iit=`: task {task.name!r} has no causal model (behavioral only)")
        variable, location = parse_iit(iit, task, n_layers(loaded.module))
        extra_loss = iit_loss(loaded.module, loaded.tokenizer, task, examples, variable, location, weight=iit_weight, subspace=iit_subspace,
                              seed=config.seed)  # fmt: skip
    if node_loss is not None:
        if extra_loss is not None:
            raise ConfigError("`node_loss=` and `iit=`: train with one extra loss at a time")
        chosen = node_variables((node_loss,) if isinstance(node_loss, str) else tuple(node_loss), task)
        extra_loss = NodeLoss(loaded.module, loaded.tokenizer, task, examples, chosen, read=node_read, weight=node_weight, seed=config.seed)
    history = fit(loaded.module, encoded, config, loaded.tokenizer.pad_token_id, progress=progress, extra_loss=extra_loss)
    trained = Classifier(loaded.module, loaded.tokenizer, "<in memory>")
    trained.history = history
    trained.settings = {"model": loaded.name, "task": task.name, **asdict(config), "n_train": len(examples),
                        **({"iit": iit, "iit_weight": iit_weight, "iit_subspace": iit_subspace} if iit is not None else {}),
                        **({"node_loss": list(chosen), "node_weight": node_weight, "node_read": node_read} if node_loss is not None else {})}
    return trained
