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
from pathlib import Path
from typing import Callable, Sequence

from interp.api.iit import iit_loss, parse_iit_alignment
from interp.api.evaluation import labels_for, score
from interp.api.loading import IN_MEMORY, Classifier, load_model, load_task
from interp.api.node_loss import NodeLoss, node_variables
from interp.core.errors import ConfigError, named
from interp.hooks import n_layers
from interp.hooks.encoding import INPUTS, encode_pair, input_view
from interp.hooks.inputs import input_format
from interp.hooks.templates import parse_label_words
from interp.models.decoders import template_of
from interp.models.labels import parse_label_map
from interp.models.loading import load_classifier
from interp.models.settings import BATCHINGS, EMBEDDED, FineTuneSettings
from interp.models.settings import PRECISIONS as TRAINING_PRECISIONS
from interp.models.training import STATE_FILE, TRAINING_FILE, curve_points, finished_run, fit, save_checkpoint
from interp.tasks import Task

#: ``builder(module, tokenizer, training examples)`` -> the extra loss :func:`interp.models.training.fit` adds.
Objective = Callable[..., Callable]


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
        iit: ``VARIABLE@LOCATION``, or several comma-separated (a joint alignment: each variable written from its own
            source in one run): interchange intervention training (Geiger, Lu, Icard & Potts 2022, §3), the loss of
            :func:`interp.api.iit.iit_loss` added to the task's, weighted by ``iit_weight``; with ``iit_subspace = k``
            only a fixed seeded k-dimensional subspace of the location is trained to carry the variable. The same
            loss as ``interp train --iit``.
        node_loss: variables of the task's causal model (or ``("all",)``) whose values a head each learns beside the
            label, read at [CLS] or (``node_read="tokens"``) at the variable's aligned tokens, the mean cross-entropy
            weighted by ``node_weight`` (Geiger et al. 2019, §5: :class:`interp.api.node_loss.NodeLoss`); the heads are
            scaffolding, not part of the returned classifier. The same loss as ``interp train --node-loss``.
        settings: the fields of :class:`FineTuneSettings` (``epochs``, ``lr``, ``batch_size``, ``seed``, ``warmup_ratio``,
            ``weight_decay``, ``precision``, ``batching``, ``max_grad_norm``, ``head_epochs``, ``head_lr``, ``reinit_pooler``).

    Returns:
        The trained classifier in eval mode, where ``model`` was (``model.to("cuda")`` first to train on a GPU);
        ``history`` holds one record per epoch (``loss``: mean cross-entropy, nats), ``settings`` what it was trained
        with; :meth:`~interp.api.loading.Classifier.save` writes it as a checkpoint.

    Raises:
        ConfigError: naming a setting that is unknown or out of range, or ``examples=`` when empty or not the task's; naming
            ``iit=`` (malformed, or a task without a causal model), ``iit_subspace=`` (wider than the location),
            ``node_loss=`` (a variable the task lacks, or given with ``iit=``) or ``node_read=``.
        ModelError: the model's labels cannot be read as the task's (:meth:`Classifier.reading`); naming
            ``reinit_pooler=``: the model has no pretrained pooler (:func:`interp.models.training.reinit_pooler`).
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
    extra = objective(task, iit=iit, iit_weight=iit_weight, iit_subspace=iit_subspace, node_loss=node_loss, node_weight=node_weight,
                      node_read=node_read, seed=config.seed)  # fmt: skip
    history = train_in_place(loaded, task, examples, config, progress=progress, extra=extra)
    trained = Classifier(loaded.module, loaded.tokenizer, IN_MEMORY)
    trained.history = history
    trained.settings = {"model": loaded.name, "task": task.name, **asdict(config), "n_train": len(examples),
                        **({"iit": iit, "iit_weight": iit_weight, "iit_subspace": iit_subspace} if iit is not None else {}),
                        **({"node_loss": list(node_variables(_names(node_loss), task)), "node_weight": node_weight, "node_read": node_read}
                           if node_loss is not None else {})}  # fmt: skip
    return trained


def _names(node_loss: str | Sequence[str]) -> tuple[str, ...]:
    return (node_loss,) if isinstance(node_loss, str) else tuple(node_loss)


def objective(task: Task, *, iit: str | None = None, iit_weight: float = 1.0, iit_subspace: int | None = None,
              node_loss: str | Sequence[str] | None = None, node_weight: float = 1.0, node_read: str = "cls", seed: int = 0) -> Objective | None:  # fmt: skip
    """The loss a fine-tuning adds to the task's, as a builder ``(module, tokenizer, training examples) -> loss``;
    ``None`` where there is none. One of: interchange intervention training at ``iit`` = ``VARIABLE@LOCATION``
    (:func:`interp.api.iit.iit_loss`; Geiger, Lu, Icard & Potts 2022, §3), or heads that learn the values of the
    ``node_loss`` variables (:class:`interp.api.node_loss.NodeLoss`; Geiger et al. 2019, §5). :func:`fine_tune` and
    ``interp train`` both train with it.

    Raises:
        ConfigError: both given; ``iit=`` on a task without a causal model; ``node_loss=`` naming a variable the task lacks.
    """
    if iit is not None and node_loss is not None:
        raise ConfigError("`node_loss=` and `iit=`: train with one extra loss at a time")
    if iit is not None:
        if task.causal_model is None:
            raise ConfigError(f"`iit=`: task {task.name!r} has no causal model (behavioral only)")

        def iit_builder(module, tokenizer, examples: Sequence):
            alignment = parse_iit_alignment(iit, task, n_layers(module), decoder=input_format(template_of(module)).decoder)
            return iit_loss(module, tokenizer, task, examples, alignment, weight=iit_weight, subspace=iit_subspace, seed=seed)

        return iit_builder
    if node_loss is not None:
        chosen = node_variables(_names(node_loss), task)

        def node_builder(module, tokenizer, examples: Sequence) -> NodeLoss:
            return NodeLoss(module, tokenizer, task, examples, chosen, read=node_read, weight=node_weight, seed=seed)

        return node_builder
    return None


def train_in_place(model: Classifier, task: Task, examples: Sequence, settings: FineTuneSettings, *, input: str = "pair",
                   extra: Objective | None = None, progress: bool = False, state_path: Path | None = None, fingerprint: str = "",
                   after_epoch: Callable[[], dict] | None = None, every: int = 0,
                   after_steps: Callable[[], dict] | None = None) -> list[dict]:  # fmt: skip
    """Fine-tune ``model.module`` in place on ``examples`` (:func:`interp.models.training.fit`: AdamW, linear warm-up
    and decay, seeded batches and dropout), where it is; the one loop behind :func:`fine_tune`, ``interp train`` and
    ``interp inoculate``. Returns the per-epoch records (``loss``: mean cross-entropy, nats).

    Each gold label trains the logit it reads as (:meth:`Classifier.reading`: a three-label head keeps its three
    labels). ``input="hypothesis"`` trains the hypothesis-only baseline; ``extra``: :func:`objective`'s builder;
    ``state_path`` and ``fingerprint``: a resumable state after each epoch; ``after_epoch()``: a record merged into each
    epoch's (a learning curve); ``every`` and ``after_steps()``: a record every ``every`` steps (a finer curve, with the
    state kept at each point).
    """
    reading = model.reading(task)
    encoded = [encode_pair(e, model.tokenizer, reading.label_ids, model.template) for e in input_view(examples, input)]
    return fit(model.module, encoded, settings, model.tokenizer.pad_token_id, state_path=state_path, fingerprint=fingerprint,
               progress=progress, after_epoch=after_epoch, extra_loss=extra(model.module, model.tokenizer, examples) if extra else None,
               every=every, after_steps=after_steps)  # fmt: skip


def load_for_training(spec: str, task: Task, *, seed: int, label_map=None, init: str = "pretrained", fold_labels: bool = False,
                      template: str | None = None, label_words=None) -> Classifier:  # fmt: skip
    """The classifier a fine-tuning starts from: ``spec`` (``"minilm"``, a checkpoint, a hub name) with its head, or a new
    head for the task's labels drawn from ``seed`` (an encoder or a decoder; ``init="random"``: every weight drawn, MoNLI
    Table 1's no-pretraining row), a decoder joining pairs by ``template`` (or a causal LM read through ``label_words``,
    both recorded in the checkpoint it becomes); its labels checked against the task's (:func:`labels_for`).

    Raises:
        ModelError: as :func:`interp.models.loading.load_classifier`; labels that cannot be read as the task's, or fewer
            than the task's without ``fold_labels``.
        ConfigError: naming ``label_map=``.
    """
    module, tokenizer = load_classifier(spec, labels=task.labels, seed=seed, label_map=label_map, init=init, template=template,
                                        label_words=label_words)  # fmt: skip
    model = Classifier(module, tokenizer, spec)
    labels_for(model, task, fold_labels=fold_labels)
    return model


def write_checkpoint(model: Classifier, record: dict, out: Path, staging: Path, extra: dict[str, str] | None = None) -> Path:
    """Write ``model`` as a checkpoint at ``out`` with ``record`` as its ``training.json``, staged in ``staging`` and
    moved into place whole (:func:`interp.models.training.save_checkpoint`; :meth:`Classifier.save` writes its own record).

    Raises:
        OutputError: naming ``out``: the checkpoint cannot be written.
    """
    return save_checkpoint(model.module, model.tokenizer, record, out, staging, extra)


# The choices and files of a fine-tuning that the training jobs name (defined in :mod:`interp.models`).
__all__ = ["BATCHINGS", "EMBEDDED", "INPUTS", "STATE_FILE", "TRAINING_FILE", "TRAINING_PRECISIONS", "FineTuneSettings", "Objective",
           "curve_points", "fine_tune", "finished_run", "input_view", "labels_for", "load_for_training", "objective", "parse_label_map", "parse_label_words",
           "score", "train_in_place",
           "write_checkpoint"]

