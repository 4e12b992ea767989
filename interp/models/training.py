"""Fine-tune a BERT-family model into a 2-label MoNLI (or 3-label MQNLI) classifier.

Usage::

    from interp.models import TrainConfig, train
    result = train(TrainConfig(splits=("pmonli", "nmonli_train"), epochs=3), "runs/my_model")
    result.metrics["nmonli_test"]["accuracy"]
    # a generated MQNLI file (interp mqnli): train on its train split, score both
    train(TrainConfig(data_file="runs/mqnli.jsonl", splits=("train",), eval_splits=("train", "test")), "runs/mq")

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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import torch
from safetensors import SafetensorError
from tqdm.auto import tqdm

from interp.core.errors import ConfigError, OutputError
from interp.core.outputs import (
    ensure_writable_dir,
    partial_path,
    read_json,
    replace_dir,
    write_json_atomic,
)
from interp.core.subsets import seeded_subset
from interp.models.evaluation import evaluate
from interp.models.loading import load_classifier, model_identity, quiet_transformers
from interp.models.training_state import read_training_state, save_training_state
from interp.tasks import Task, resolve_task
from interp.tasks.monli import (
    DERIVED_SPLITS,
    LABELS,
    SPLITS,
    Encoded,
    Example,
    collate,
    encode_for_classifier,
    load_monli,
)
from interp.tasks.mqnli.files import MQNLI_LABELS, MQNLI_SPLITS, read_mqnli


@functools.lru_cache(maxsize=8)
def _task(spec: str, data_dir: str | None, verify_checksums: bool, data_file: str | None = None) -> Task:
    return resolve_task(spec, data_dir=data_dir, verify_checksums=verify_checksums, data_file=data_file, argument="--task")


TRAINING_FILE = "training.json"
#: The resumable state kept in ``<out>.partial/`` after each epoch (safetensors; never a pickle).
STATE_FILE = "state.safetensors"


@dataclass(frozen=True)
class TrainConfig:
    """Settings of one fine-tuning run (defaults: the paper's systematic-generalization set-up).

    ``max_examples`` keeps a seeded random subset of the training examples
    (for quick runs); ``eval_splits`` are scored after training. With
    ``data_file`` (a file written by ``interp mqnli``) the splits are that
    file's ``train``/``test`` and the classifier gets MQNLI's three labels.
    With ``task`` (a user's ``file.py:function``, see
    :func:`interp.tasks.resolve_task`) the examples, splits and labels are
    the task's: by default it trains on its ``train`` split (else on all of
    them) and scores every split. With ``curve`` the ``eval_splits`` are also
    scored after every epoch (the learning curve, in ``training.json``'s
    ``epochs``; it does not change the weights).
    """

    model: str = "minilm"
    splits: tuple[str, ...] = ("pmonli", "nmonli_train")
    epochs: int = 3
    lr: float = 1e-4
    batch_size: int = 32
    seed: int = 0
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    max_examples: int | None = None
    eval_splits: tuple[str, ...] = tuple(SPLITS)
    data_dir: str | None = None
    verify_checksums: bool = True
    data_file: str | None = None
    task: str = "monli"
    curve: bool = False
    iit: str | None = None  # VARIABLE@LOCATION: interchange intervention training (interp.jobs.iit) adds its loss
    iit_weight: float = 1.0
    iit_subspace: int | None = None

    @property
    def mqnli_file(self) -> bool:
        """Whether ``data_file`` is an MQNLI file (``--task mqnli``, or the default monli with a file that is not MoNLI-format); another task reads its own."""
        if not self.data_file or self.task not in ("monli", "mqnli"):
            return False
        from interp.tasks.monli.data import is_monli_file

        return self.task == "mqnli" or not is_monli_file(self.data_file)

    def __post_init__(self) -> None:
        if (self.task != "monli" or self.data_file) and not self.mqnli_file:
            task = self.resolved_task()
            if self.splits == TrainConfig.splits:
                object.__setattr__(self, "splits", ("train",) if "train" in task.splits else task.splits)
            if self.eval_splits == TrainConfig.eval_splits:
                object.__setattr__(self, "eval_splits", task.splits)
        # With a generated file, MoNLI's default splits mean its train split, scored on train and test.
        if self.mqnli_file and self.splits == TrainConfig.splits:
            object.__setattr__(self, "splits", ("train",))
        if self.mqnli_file and self.eval_splits == TrainConfig.eval_splits:
            object.__setattr__(self, "eval_splits", MQNLI_SPLITS)

    @property
    def labels(self) -> tuple[str, ...]:
        """The classifier's labels, in id order."""
        if self.mqnli_file:
            return MQNLI_LABELS
        return LABELS if self.task == "monli" else self.resolved_task().labels

    def resolved_task(self) -> Task:
        """The ``task`` this config names (imported once per process)."""
        return _task(self.task, self.data_dir, self.verify_checksums, None if self.task == "monli" and self.mqnli_file else self.data_file)

    def load(self, splits: Sequence[str]) -> list:
        """The examples of ``splits`` from MoNLI, ``data_file`` or the ``task``."""
        if not splits:
            return []
        if self.mqnli_file:
            return read_mqnli(self.data_file, splits)
        if self.task != "monli" or self.data_file:
            return self.resolved_task().load(tuple(splits))
        return load_monli(self.data_dir, splits, verify_checksums=self.verify_checksums)

    def validate(self) -> "TrainConfig":
        """Raise :class:`ConfigError` naming the first invalid setting."""
        checks = [
            (self.epochs >= 1, "--epochs must be at least 1"),
            (self.lr > 0, "--lr must be positive"),
            (self.batch_size >= 1, "--batch-size must be at least 1"),
            (0 <= self.warmup_ratio < 1, "--warmup-ratio must be in [0, 1)"),
            (self.weight_decay >= 0, "--weight-decay must be non-negative"),
            (self.max_examples is None or self.max_examples >= 1, "--max-examples must be at least 1"),
            (len(self.splits) > 0, "--splits names no split"),
            (self.iit_weight > 0, "--iit-weight must be positive"),
            (self.iit_subspace is None or self.iit_subspace >= 1, "--iit-subspace must be at least 1"),
        ]
        for ok, message in checks:
            if not ok:
                raise ConfigError(message)
        known = MQNLI_SPLITS if self.mqnli_file else (*SPLITS, *DERIVED_SPLITS) if self.task == "monli" and not self.data_file else self.resolved_task().splits
        for name in (*self.splits, *self.eval_splits):
            if name not in known:
                raise ConfigError(f"unknown split {name!r}; choose from {', '.join(known)}")
        return self

    def fingerprint(self, train_ids: Sequence[str]) -> str:
        """A hash of everything that determines the trained weights (not where the data lies)."""
        ignored = ("data_dir", "verify_checksums", "eval_splits", "data_file", "curve")
        settings = {k: v for k, v in asdict(self).items() if k not in ignored}
        settings["model"] = model_identity(self.model)  # by content: a moved checkpoint is the same model
        if settings["iit"] is None:  # plain runs keep the fingerprints they had before IIT existed
            for key in ("iit", "iit_weight", "iit_subspace"):
                del settings[key]
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
    reused: bool = False

    def to_json(self) -> dict:
        data = asdict(self)
        data["out_dir"] = str(self.out_dir)
        data.pop("reused")
        return data


def length_grouped_batches(encoded: Sequence[Encoded], batch_size: int, seed: int, group: int = 50) -> list[list[int]]:
    """Seeded batches of example indices that put examples of similar length together.

    As Hugging Face's ``group_by_length``: shuffle, cut into mega-batches of
    ``group * batch_size``, sort each by length, split into batches, and
    shuffle the batches. Padding (MoNLI: 15 to 78 tokens) falls by about half.
    """
    generator = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(encoded), generator=generator).tolist()
    mega = group * batch_size
    batches = []
    for start in range(0, len(order), mega):
        chunk = sorted(order[start : start + mega], key=lambda i: len(encoded[i].input_ids))
        batches.extend(chunk[k : k + batch_size] for k in range(0, len(chunk), batch_size))
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


def fit(
    model,
    encoded: Sequence[Encoded],
    config: TrainConfig,
    pad_token_id: int,
    *,
    state_path: Path | None = None,
    fingerprint: str = "",
    progress: bool = True,
    after_epoch: Callable[[], dict] | None = None,
    extra_loss: Callable[[list[int], int], torch.Tensor] | None = None,
) -> list[dict]:
    """Fine-tune ``model`` in place with AdamW and a linear warm-up/decay schedule.

    Epoch e's batches are :func:`length_grouped_batches` seeded by (seed, e)
    and dropout is reseeded at each epoch, so a run resumed from ``state_path``
    (written after every epoch) ends with the same weights as an
    uninterrupted one.

    ``extra_loss(batch indices, step)``, when given, returns a scalar
    tensor (shape ``[]``, nats) added to each batch's cross-entropy
    (interchange intervention training's term, :mod:`interp.jobs.iit`); its
    mean is logged as ``extra_loss``.

    Returns:
        One record per epoch: ``{"epoch", "loss" (mean cross-entropy, nats), "seconds"}``,
        plus what ``after_epoch()`` returns (run in eval mode after each epoch).
    """
    from transformers import get_linear_schedule_with_warmup

    device = next(model.parameters()).device
    total_steps = len(length_grouped_batches(encoded, config.batch_size, config.seed)) * config.epochs
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(config.warmup_ratio * total_steps), total_steps)
    log: list[dict] = []
    start_epoch = 0
    saved = read_training_state(state_path, device) if state_path is not None else None
    if saved is not None and saved.info.get("fingerprint") == fingerprint:
        if saved.restore(model=model, optimizer=optimizer, scheduler=scheduler):
            log, start_epoch = saved.info["log"], saved.info["epoch"]
            if progress:
                tqdm.write(f"resuming after epoch {start_epoch} of {config.epochs} from {state_path}")
    for epoch in range(start_epoch, config.epochs):
        model.train()
        torch.manual_seed(config.seed * 1_000 + epoch)
        batches = length_grouped_batches(encoded, config.batch_size, config.seed * 1_000 + epoch)
        started, total_loss, total_extra = time.perf_counter(), 0.0, 0.0
        bar = tqdm(
            batches,
            desc=f"epoch {epoch + 1}/{config.epochs}",
            unit="batch",
            disable=not progress,
            leave=False,
        )
        for step, idx in enumerate(bar):
            batch = collate([encoded[i] for i in idx], pad_token_id)
            loss = model(
                input_ids=batch["input_ids"].to(device),
                token_type_ids=batch["token_type_ids"].to(device),
                attention_mask=batch["attention_mask"].to(device),
                labels=batch["labels"].to(device),
            ).loss
            if extra_loss is not None:
                extra = extra_loss(idx, epoch * len(batches) + step)
                total_extra += extra.item() * len(idx)
                (loss + extra).backward()
            else:
                loss.backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            total_loss += loss.item() * len(idx)
            bar.set_postfix(loss=f"{loss.item():.3f}")
        log.append({"epoch": epoch + 1, "loss": total_loss / len(encoded), "seconds": time.perf_counter() - started})
        if extra_loss is not None:
            log[-1]["extra_loss"] = total_extra / len(encoded)
        if after_epoch is not None:
            model.eval()
            log[-1].update(after_epoch())
        if progress:
            scores = "".join(f", {k} {100 * v['accuracy']:.1f}%" for k, v in log[-1].get("accuracy", {}).items())
            tqdm.write(f"epoch {epoch + 1}/{config.epochs}: loss {log[-1]['loss']:.4f} ({log[-1]['seconds']:.0f} s){scores}")
        if state_path is not None and epoch + 1 < config.epochs:
            info = {"fingerprint": fingerprint, "epoch": epoch + 1, "log": log}
            save_training_state(state_path, model=model, optimizer=optimizer, scheduler=scheduler, info=info)
    model.eval()
    return log


def finished_run(out_dir: Path) -> dict | None:
    """The ``training.json`` of a complete checkpoint at ``out_dir``, else ``None``."""
    info = read_json(out_dir / TRAINING_FILE)
    return info if isinstance(info, dict) and (out_dir / "model.safetensors").is_file() else None


def train(
    config: TrainConfig,
    out_dir: str | Path,
    *,
    progress: bool = True,
    overwrite: bool = False,
    objective: Callable | None = None,
) -> TrainResult:
    """Fine-tune ``config.model`` on ``config.splits`` and save a checkpoint at ``out_dir``.

    ``objective(model, tokenizer, train_examples)``, when given, returns the
    ``extra_loss`` of :func:`fit` (how :mod:`interp.jobs.iit` adds interchange
    intervention training without this layer knowing of hooks).

    If ``out_dir`` already holds a finished run with the same settings and
    training examples, it is reused (``result.reused``) and nothing is
    trained; ``overwrite`` allows replacing a *different* run.

    Raises:
        ConfigError: an invalid setting; ``config.iit`` without an ``objective``.
        DataError: MoNLI (or ``data_file``) missing or spoiled.
        ModelError: the model cannot be loaded (see :func:`load_classifier`).
        OutputError: ``out_dir`` cannot be written, or holds a different run
            and ``overwrite`` is false.
    """
    config.validate()
    if config.iit and objective is None:
        raise ConfigError("--iit: interchange intervention training runs through interp.jobs.iit.train_iit, which supplies its loss")
    out_dir = Path(out_dir)
    train_examples = seeded_subset(config.load(config.splits), config.max_examples, config.seed)  # as intervene's
    eval_examples = config.load(config.eval_splits)
    # MoNLI ids name a released line; a generated file's ids do not, so its content is fingerprinted.
    keys = [e.id if isinstance(e, Example) else f"{e.id}\t{e.premise}\t{e.hypothesis}\t{e.label}" for e in train_examples]
    fingerprint = config.fingerprint(keys)
    previous = finished_run(out_dir) if out_dir.exists() else None
    if previous is not None and previous.get("fingerprint") == fingerprint:
        if progress:
            tqdm.write(f"{out_dir}: already trained with these settings, reusing it")
        return TrainResult(**{**previous, "out_dir": out_dir, "reused": True})
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError(f"--out {out_dir} is a file; give a directory for the checkpoint")
    if out_dir.exists() and not overwrite:
        raise OutputError(
            f"--out {out_dir} already exists and holds another run; choose another path or pass --overwrite"
        )
    if out_dir.exists() and any(out_dir.iterdir()) and read_json(out_dir / TRAINING_FILE) is None:
        raise OutputError(
            f"--out {out_dir} is a directory that interp did not write (no {TRAINING_FILE}); --overwrite replaces only a checkpoint"
        )
    started = time.perf_counter()
    model, tokenizer = load_classifier(config.model, labels=config.labels, seed=config.seed)
    work = ensure_writable_dir(partial_path(out_dir))  # only once the model is known to load
    encoded = encode_for_classifier(train_examples, tokenizer, config.labels)
    try:
        def curve() -> dict:
            return {"accuracy": evaluate(model, tokenizer, eval_examples, labels=config.labels)}

        log = fit(
            model, encoded, config, tokenizer.pad_token_id, state_path=work / STATE_FILE, fingerprint=fingerprint,
            progress=progress, after_epoch=curve if config.curve and eval_examples else None,
            extra_loss=objective(model, tokenizer, train_examples) if objective is not None else None,
        )
    except Exception:
        if not (work / STATE_FILE).is_file():  # nothing to resume from: leave no trace
            shutil.rmtree(work, ignore_errors=True)
        raise
    metrics = evaluate(model, tokenizer, eval_examples, progress=progress, labels=config.labels) if eval_examples else {}
    result = TrainResult(
        out_dir=out_dir,
        config=asdict(config),
        fingerprint=fingerprint,
        n_train=len(train_examples),
        epochs=log,
        metrics=metrics,
        seconds=time.perf_counter() - started,
    )
    save_checkpoint(model, tokenizer, result.to_json(), out_dir, work / "checkpoint")
    shutil.rmtree(work, ignore_errors=True)
    return result


def save_checkpoint(model, tokenizer, record: dict, out_dir: Path, staging: Path, argument: str = "--out") -> Path:
    """Write the weights (safetensors), the tokenizer and ``record`` as ``training.json`` (last) into ``staging``, then move it to ``out_dir``.

    ``out_dir`` appears only complete, replacing what was there.

    Raises:
        OutputError: naming ``argument`` and ``out_dir``: the checkpoint cannot be written (a full disk included).
    """
    if staging.exists():
        shutil.rmtree(staging)
    try:
        with quiet_transformers():
            model.save_pretrained(staging, safe_serialization=True)
            tokenizer.save_pretrained(staging)
    except (OSError, SafetensorError) as exc:  # safetensors reports a full disk as its own error
        shutil.rmtree(staging, ignore_errors=True)
        raise OutputError(f"{argument} {out_dir}: cannot write the checkpoint ({getattr(exc, 'strerror', None) or exc})") from None
    write_json_atomic(staging / TRAINING_FILE, record)
    replace_dir(staging, out_dir)
    return out_dir
