"""`interp train`: fine-tune an encoder (any family interp covers) into a classifier for a task (MoNLI by default, or any task's examples).

Usage::

    from interp.api.specs import DataSpec, SampleSpec
    from interp.jobs.train import TrainConfig, train
    result = train(TrainConfig(sample=SampleSpec(splits=("pmonli", "nmonli_train")), out="runs/my_model"))
    result.metrics["nmonli_test"]["accuracy"]
    # a generated MQNLI file (interp mqnli): train on its train split, score both
    mq = DataSpec(task="mqnli", data_file="runs/mqnli.jsonl")
    train(TrainConfig(data=mq, sample=SampleSpec(splits=("train",)), eval_splits=("train", "test"), out="runs/mq"))

The paper fine-tunes BERT on NMoNLI after SNLI (Geiger, Richardson & Potts
2020, §5.2 and Appendix A.2); here any named MoNLI splits are the training
data. Training is seeded (data order, dropout and the new head), shows a
progress bar, and keeps a resumable state after every epoch in
``<out>.partial/state.safetensors`` (weights and optimizer tensors, the rest
as JSON in its header; nothing is ever unpickled): an interrupted run, started again with the same
settings, continues after the last finished epoch. The finished checkpoint
(``model.safetensors``, ``config.json``, the tokenizer, and
``training.json`` with settings, losses and accuracies) appears at ``<out>``
only when complete.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
import time
import warnings
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Sequence

from tqdm.auto import tqdm

from interp.core.environment import environment
from interp.core.errors import ConfigError, OutputError, named
from interp.core.outputs import ensure_writable_dir, partial_path, read_json
from interp.core.devices import pick_device
from interp.api.loading import INITS, model_identity
from interp.api.node_loss import READS as NODE_READS, node_variables
from interp.api.objects import Task
from interp.api.specs import READING, DataSpec, RunSpec, SampleSpec, flat
from interp.api.training import (
    BATCHINGS,
    EMBEDDED,
    INPUTS,
    STATE_FILE,
    TRAINING_FILE,
    TRAINING_PRECISIONS as PRECISIONS,
    FineTuneSettings,
    Objective,
    finished_run,
    input_view,
    load_for_training,
    objective as extra_objective,
    parse_label_map,
    parse_label_words,
    score,
    curve_points,
    train_in_place,
    write_checkpoint,
)
from interp.core.estimates import wilson


@functools.lru_cache(maxsize=8)
def _task(spec: str, data_dir: str | None, verify_checksums: bool, data_file: str | None = None) -> Task:
    return DataSpec(spec, data_file, data_dir, verify_checksums).load()


@dataclass(frozen=True)
class TrainConfig(FineTuneSettings):
    """Settings of one fine-tuning run: :class:`~interp.api.training.FineTuneSettings` (epochs, lr, batch size, seed,
    warm-up, weight decay) plus the model, the task (``data``, a :class:`~interp.api.specs.DataSpec`), its training
    examples (``sample``, a :class:`~interp.api.specs.SampleSpec`; its ``splits`` default to the task's training
    splits: the paper's systematic-generalization set-up) and where it runs (``run``, a
    :class:`~interp.api.specs.RunSpec`: its ``device``, and its ``batch_size`` for scoring, 128 when ``None``;
    the training batch is the recipe's ``batch_size``).

    ``sample.max_examples`` (and ``max_per_split``) keep a random subset of the training examples drawn
    with ``sample.seed`` (for quick runs; ``interp train --seed`` sets both seeds); ``eval_splits`` are scored after
    training. The examples, splits and labels are the task's: an MQNLI file
    (``DataSpec(task="mqnli", data_file=...)``) gives its ``train``/``test``
    and three labels; a task without MoNLI's set-up trains on its ``train``
    split (else on all of them) and scores every split. With ``curve`` the ``eval_splits`` are also
    scored after every epoch (the learning curve, in ``training.json``'s
    ``epochs``; it does not change the weights).
    """

    model: str = EMBEDDED
    data: DataSpec = DataSpec()
    sample: SampleSpec = SampleSpec()  # splits (): the task's training splits (MoNLI: pmonli, nmonli_train; a file task: train)
    run: RunSpec = RunSpec()  # where it trains; batch_size: examples per pass when scoring (None: 128); not part of the fingerprint
    eval_splits: tuple[str, ...] | None = None  # None: every split of the task
    curve: bool = False
    curve_every: int | None = None  # also score eval_splits every N steps (and before the first): curve.csv beside the checkpoint
    iit: str | None = None  # VARIABLE@LOCATION: interchange intervention training (interp.jobs.iit.train_iit) adds its loss
    iit_weight: float = 1.0
    iit_subspace: int | None = None
    label_map: tuple[str, ...] | None = None  # a head's label names in id order, where its id2label does not say (LABEL_0...)
    init: str = "pretrained"  # or "random": the same architecture and tokenizer, weights drawn from ``seed`` (MoNLI Table 1's no-pretraining row)
    input: str = "pair"  # or "hypothesis": the hypothesis-only baseline (the premise left empty in training and in scoring)
    node_loss: tuple[str, ...] | None = None  # variables (or "all") whose values heads learn beside the label (interp.api.node_loss)
    template: str | None = None  # a decoder's text joining the pair (None: the checkpoint's own, else the default), recorded in the checkpoint
    label_words: tuple[tuple[str, str], ...] | None = None  # a causal LM fine-tuned through one word per label (recorded likewise)
    out: str = ""  # the checkpoint folder to write (a finished run of the same settings there is reused)
    overwrite: bool = False  # replace a checkpoint of other settings at ``out`` (only a folder interp wrote)
    node_weight: float = 1.0
    node_read: str = "cls"  # or "tokens": each variable's aligned tokens
    fold_labels: bool = False  # a checkpoint with fewer labels than the task trains and is scored by the task's fold (else refused)

    def __post_init__(self) -> None:  # the settings are checked by validate(), naming the CLI's flags
        if self.label_map is not None and not isinstance(self.label_map, tuple):  # "0=contradiction,...", a dict or a list
            object.__setattr__(self, "label_map", parse_label_map(self.label_map))
        if self.label_words is not None and not isinstance(self.label_words, tuple):  # "entailment= yes,neutral= no" or a dict
            object.__setattr__(self, "label_words", tuple(parse_label_words(self.label_words).items()))
        if isinstance(self.node_loss, str):  # "all" or "subj_np,vp"
            object.__setattr__(self, "node_loss", tuple(v.strip() for v in self.node_loss.split(",")))
        task = self.resolved_task()
        if not self.sample.splits:
            object.__setattr__(self, "sample", replace(self.sample, splits=task.training_splits))
        if self.eval_splits is None:
            object.__setattr__(self, "eval_splits", task.splits)

    @property
    def splits(self) -> tuple[str, ...]:
        """The training splits (``sample.splits``)."""
        return self.sample.splits

    @property
    def device(self) -> str:
        """Where it trains (``run.device``)."""
        return self.run.device

    @property
    def labels(self) -> tuple[str, ...]:
        """The labels of a new head, in id order (the task's); a checkpoint with a head keeps its own, read by name."""
        return self.resolved_task().labels

    def resolved_task(self) -> Task:
        """The task ``data`` names (:meth:`~interp.api.specs.DataSpec.load`); a named one is imported once per process."""
        data = self.data
        return data.task if isinstance(data.task, Task) else _task(data.task, data.data_dir, data.verify_checksums, data.data_file)

    def load(self, splits: Sequence[str]) -> list:
        """The examples of ``splits`` from the task."""
        return self.resolved_task().load(tuple(splits)) if splits else []

    def validate(self) -> "TrainConfig":
        """Raise :class:`ConfigError` naming the first invalid setting."""
        checks = [
            (self.epochs >= 1, "`epochs=` must be at least 1"),
            (self.lr > 0, "`lr=` must be positive"),
            (self.batch_size >= 1, "`batch_size=` must be at least 1"),
            (0 <= self.warmup_ratio < 1, "`warmup_ratio=` must be in [0, 1)"),
            (self.weight_decay >= 0, "`weight_decay=` must be non-negative"),
            (len(self.splits) > 0, "`splits=` names no split"),
            (self.iit_weight > 0, "`iit_weight=` must be positive"),
            (self.iit_subspace is None or self.iit_subspace >= 1, "`iit_subspace=` must be at least 1"),
            (self.iit is not None or (self.iit_subspace is None and self.iit_weight == 1.0),
             "`iit_subspace=` and `iit_weight=` shape interchange intervention training: give `iit=` VARIABLE@LOCATION too"),
            (self.init in INITS, f"`init=` must be {' or '.join(INITS)}, got {self.init!r}"),
            (self.input in INPUTS, f"`input=` must be {' or '.join(INPUTS)}, got {self.input!r}"),
            (self.iit is None or self.input == "pair", "`iit=` aligns a variable with tokens of the pair: train it with `input=pair`"),
            (self.node_weight > 0, "`node_weight=` must be positive"),
            (self.node_read in NODE_READS, f"`node_read=` must be {' or '.join(NODE_READS)}, got {self.node_read!r}"),
            (self.node_loss is not None or (self.node_weight == 1.0 and self.node_read == "cls"),
             "`node_weight=` and `node_read=` shape the node loss: give `node_loss=` too"),
            (self.node_loss is None or self.iit is None, "`node_loss=` and `iit=`: train with one extra loss at a time"),
            (self.node_loss is None or self.input == "pair", "`node_loss=` reads the pair: train it with `input=pair`"),
            (self.precision in PRECISIONS, f"`precision=` must be {' or '.join(PRECISIONS)}, got {self.precision!r}"),
            (self.batching in BATCHINGS, f"`batching=` must be {' or '.join(BATCHINGS)}, got {self.batching!r}"),
            (self.max_grad_norm is None or self.max_grad_norm > 0, "`max_grad_norm=` must be positive"),
            (self.head_epochs >= 0, "`head_epochs=` must be at least 0"),
            (self.head_lr > 0, "`head_lr=` must be positive"),
            (isinstance(self.reinit_pooler, bool), f"`reinit_pooler=` must be True or False, got {self.reinit_pooler!r}"),
            (self.curve_every is None or isinstance(self.curve_every, int) and not isinstance(self.curve_every, bool) and self.curve_every >= 1,
             f"`curve_every=` must be a whole number of steps, 1 or more, got {self.curve_every!r}"),
            (self.lora_rank is None or self.train_blocks is None, "`lora_rank=` with `train_blocks=`: train adapters or the top blocks, not both"),
            (self.train_blocks is None or isinstance(self.train_blocks, int) and not isinstance(self.train_blocks, bool) and self.train_blocks >= 0,
             f"`train_blocks=` must be a whole number of blocks, 0 or more, got {self.train_blocks!r}"),
        ]
        for ok, message in checks:
            if not ok:
                raise ConfigError(message)
        self.run.refuse_unused("training")
        task = self.resolved_task()
        if self.node_loss is not None:
            node_variables(self.node_loss, task)
        known = (*task.splits, *task.extra_splits)
        for name in (*self.splits, *self.eval_splits):
            if name not in known:
                raise ConfigError(f"unknown split {name!r}; choose from {', '.join(known)}")
        return self

    def fingerprint(self, train_ids: Sequence[str]) -> str:
        """A hash of everything that determines the trained weights (not where the data lies)."""
        ignored = ("data_dir", "verify_checksums", "eval_splits", "data_file", "curve", "curve_every", "fold_labels", *(() if self.label_map else ("label_map",)),
                   "device", "run_batch_size", "wordpiece", "backend", "compile", *OUTPUT)  # where and how it is scored, not what it learns  # fmt: skip
        settings = {k: v for k, v in flat(self).items() if k not in ignored}
        if settings["sample_seed"] == settings["seed"]:  # one seed for the subset and the training: the fingerprint it always had
            del settings["sample_seed"]
        if settings["max_per_split"] is None:
            del settings["max_per_split"]
        settings["model"] = model_identity(self.model)  # by content: a moved checkpoint is the same model
        if settings["iit"] is None:  # plain runs keep the fingerprints they had before IIT existed
            for key in ("iit", "iit_weight", "iit_subspace"):
                del settings[key]
        if settings["node_loss"] is None:  # and before the node loss
            for key in ("node_loss", "node_weight", "node_read"):
                del settings[key]
        for key in READING:  # runs of encoders keep the fingerprints they had before decoders
            settings.pop(key, None)
        settings.update({key: getattr(self, key) for key in READING if getattr(self, key) is not None})
        for key, default in (("init", "pretrained"), ("input", "pair"), ("precision", "fp32"), ("batching", "length"),
                             ("max_grad_norm", None), ("head_epochs", 0), ("reinit_pooler", False), ("train_blocks", None), ("lora_rank", None)):  # and before --init, --input, --precision, --batching, clipping, the pooler
            if settings[key] == default:
                del settings[key]
        if "head_epochs" not in settings:  # no head-only epochs: their rate is not part of the run
            del settings["head_lr"]
        if "lora_rank" not in settings or settings["lora_alpha"] is None:  # no adapters, or their default scale
            del settings["lora_alpha"]
        if settings["task"] == "monli":
            del settings["task"]  # MoNLI runs keep the fingerprints they had before tasks existed
        blob = json.dumps({"settings": settings, "train_ids": list(train_ids)}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


@dataclass
class TrainResult:
    """What a training run produced: its directory, losses and accuracies."""

    out_dir: Path
    config: dict
    fingerprint: str
    n_train: int
    epochs: list[dict] = field(default_factory=list)
    metrics: dict = field(default_factory=dict)
    seconds: float = 0.0
    labels: dict = field(default_factory=dict)  # a head with other labels than the task's: {"model": its names, "read_as": folds}
    environment: dict = field(default_factory=dict)  # what can move a figure between machines (interp.core.environment)
    reused: bool = False

    def to_json(self) -> dict:
        data = asdict(self)
        data["out_dir"] = str(self.out_dir)
        data.pop("reused")
        return data


#: A config's fields that say where its outputs go, not what is trained: not fingerprinted, not recorded.
OUTPUT = ("out", "overwrite")


def older_out(config: TrainConfig, out: str | Path | None, overwrite: bool | None, call: str) -> TrainConfig:
    """``config`` with the ``out`` and ``overwrite`` an older call gave as arguments (which warns); without them, as it is.

    Raises:
        ConfigError: naming ``out=``: neither the call nor the config names where to write.
    """
    if out is not None or overwrite is not None:
        warnings.warn(f"{call}(config, out, overwrite=...) is the older form: set TrainConfig(out=..., overwrite=...) and call "
                      f"{call}(config)", DeprecationWarning, stacklevel=3)  # fmt: skip
        config = replace(config, out=str(config.out if out is None else out), overwrite=config.overwrite if overwrite is None else overwrite)
    if not str(config.out):
        raise ConfigError("`out=`: give the folder to write (TrainConfig(out=...))")
    return config


def train(
    config: TrainConfig,
    out: str | Path | None = None,
    *,
    progress: bool = True,
    overwrite: bool | None = None,
    objective: Objective | None = None,
) -> TrainResult:
    """Fine-tune ``config.model`` on ``config.splits`` and save a checkpoint at ``config.out``.

    ``out`` and ``overwrite`` as arguments are the older form (they warn, and set the config's).

    ``objective``: the builder of an extra loss (:func:`interp.api.training.objective`;
    :func:`interp.jobs.iit.train_iit` passes interchange intervention training's).
    With ``config.node_loss`` the objective is the node heads'.

    If ``config.out`` already holds a finished run with the same settings and
    training examples, it is reused (``result.reused``) and nothing is
    trained; ``config.overwrite`` allows replacing a *different* run.

    Raises:
        ConfigError: an invalid setting; ``config.iit`` without an ``objective``.
        DataError: MoNLI (or ``data_file``) missing or spoiled.
        ModelError: the model cannot be loaded (see :func:`load_classifier`).
        OutputError: ``out`` cannot be written, or holds a different run
            and ``overwrite`` is false.
    """
    config = older_out(config, out, overwrite, "train").validate()
    overwrite = config.overwrite
    if config.iit and objective is None:
        raise ConfigError("`iit=`: interchange intervention training runs through interp.jobs.iit.train_iit, which supplies its loss")
    if config.node_loss is not None:
        objective = extra_objective(config.resolved_task(), node_loss=config.node_loss, node_weight=config.node_weight,
                                    node_read=config.node_read, seed=config.seed)  # fmt: skip
    out_dir = Path(config.out)
    train_examples = config.sample.draw(config.resolved_task())
    eval_examples = input_view(config.load(config.eval_splits), config.input)
    # MoNLI ids name a line of its file; other tasks' ids need not, so their content is fingerprinted.
    stable = config.resolved_task().stable_ids
    keys = [e.id if stable else f"{e.id}\t{e.premise}\t{e.hypothesis}\t{e.label}" for e in train_examples]
    fingerprint = config.fingerprint(keys)
    previous = finished_run(out_dir) if out_dir.exists() else None
    if previous is not None and previous.get("fingerprint") == fingerprint:
        if progress:
            tqdm.write(f"{out_dir}: already trained with these settings, reusing it")
        return TrainResult(**{**previous, "out_dir": out_dir, "reused": True})
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError(f"{named('out', out_dir)} is a file; give a directory for the checkpoint")
    if out_dir.exists() and not overwrite:
        raise OutputError(
            f"{named('out', out_dir)} already exists and holds another run; choose another path or pass `overwrite=True`"
        )
    if out_dir.exists() and any(out_dir.iterdir()) and read_json(out_dir / TRAINING_FILE) is None:
        raise OutputError(
            f"{named('out', out_dir)} is a directory that interp did not write (no {TRAINING_FILE}); `overwrite=True` replaces only a checkpoint"
        )
    started = time.perf_counter()
    device = pick_device(config.run.device)  # a GPU that is not there is named before the model loads
    task = config.resolved_task()
    # A three-label head keeps its three labels: each gold label trains the logit read as it (MoNLI's neutral, neutral's).
    model = load_for_training(config.model, task, seed=config.seed, label_map=config.label_map, init=config.init, template=config.template,
                              label_words=dict(config.label_words) if config.label_words else None,
                              fold_labels=config.fold_labels)  # before any folder is made  # fmt: skip
    model.to(device)
    reading = model.reading(task)
    work = ensure_writable_dir(partial_path(out_dir))  # only once the model is known to load
    try:
        def curve() -> dict:
            return {"accuracy": score(model, task, eval_examples, reading=reading, batch_size=config.run.batch(128))}

        log = train_in_place(model, task, train_examples, config, input=config.input, extra=objective, progress=progress,
                             state_path=work / STATE_FILE, fingerprint=fingerprint,
                             after_epoch=curve if config.curve and eval_examples else None,
                             every=config.curve_every or 0, after_steps=curve if eval_examples else None)  # fmt: skip
    except Exception:
        if not (work / STATE_FILE).is_file():  # nothing to resume from: leave no trace
            shutil.rmtree(work, ignore_errors=True)
        raise
    metrics = score(model, task, eval_examples, reading=reading, batch_size=config.run.batch(128), progress=progress) if eval_examples else {}
    result = TrainResult(
        out_dir=out_dir,
        config={k: v for k, v in flat(config).items() if k not in OUTPUT},
        fingerprint=fingerprint,
        n_train=len(train_examples),
        epochs=log,
        metrics=metrics,
        seconds=time.perf_counter() - started,
        labels={} if reading.identity else {"model": list(reading.model_labels), "read_as": reading.folded},
        environment=environment(),
    )
    points = curve_points(log)
    write_checkpoint(model, result.to_json(), out_dir, work / "checkpoint", extra={CURVE_FILE: curve_csv(points)} if points else None)
    shutil.rmtree(work, ignore_errors=True)
    return result


#: The learning curve a run with ``curve_every`` writes beside its checkpoint (one row per point and split).
CURVE_FILE = "curve.csv"
CURVE_COLUMNS = ("step", "examples", "seconds", "seconds_per_step", "split", "correct", "n", "accuracy", "low", "high")


def curve_csv(points: Sequence[dict]) -> str:
    """The learning curve as CSV text: each point's step, examples seen, training seconds so far (evaluations excluded)
    and seconds a step, then each split's correct, n, accuracy and its 95% Wilson interval (``low``, ``high``)."""
    rows = [",".join(CURVE_COLUMNS)]
    for point in points:
        per_step = point["seconds"] / point["step"] if point["step"] else float("nan")
        for split, found in point["accuracy"].items():
            interval = wilson(found["correct"], found["n"])
            rows.append(f"{point['step']},{point['examples']},{point['seconds']:.2f},{per_step:.3f},{split},{found['correct']},{found['n']},"
                        f"{found['accuracy']:.4f},{interval.low:.4f},{interval.high:.4f}")  # fmt: skip
    return "\n".join(rows) + "\n"


