"""Fine-tuning a sequence classifier on encoded pairs: seeded, resumable, knowing no task.

Usage::

    from interp.models.training import fit, save_checkpoint
    log = fit(model, encoded, settings, tokenizer.pad_token_id, state_path=Path("out.partial/state.safetensors"))

``settings`` is any object with ``epochs``, ``lr``, ``batch_size``, ``seed``,
``warmup_ratio`` and ``weight_decay``, and optionally ``precision``, ``batching``, ``max_grad_norm``,
``head_epochs``, ``head_lr``, ``reinit_pooler``, ``train_blocks``, ``lora_rank`` and ``lora_alpha``
(:class:`interp.api.training.FineTuneSettings` and ``interp train``'s config are such). Training is seeded (data order, dropout), shows a progress bar,
and keeps a resumable state after every epoch (and at every point of a learning curve) at ``state_path``
(safetensors: weights and optimizer tensors, the rest as JSON in its header;
nothing is ever unpickled). Which examples and labels to train on is the
caller's: :mod:`interp.jobs.train` resolves a task into them.
"""

from __future__ import annotations

import shutil
import time
from contextlib import ExitStack, nullcontext
from pathlib import Path
from typing import Callable, Sequence

import torch
from safetensors import SafetensorError
from tqdm.auto import tqdm

from interp.core.devices import attention_without_cudnn
from interp.core.errors import ConfigError, ModelError, OutputError, named
from interp.core.outputs import read_json, replace_dir, write_json_atomic
from interp.hooks.architecture import batch_inputs
from interp.hooks.encoding import Encoded, collate
from interp.models.freezing import frozen_weights, top_parameters
from interp.models.lora import add_adapters, merge_adapters
from interp.models.loading import quiet_transformers
from interp.models.training_state import read_training_state, save_training_state

TRAINING_FILE = "training.json"
#: The resumable state kept in ``<out>.partial/`` after each epoch (safetensors; never a pickle).
STATE_FILE = "state.safetensors"


def length_grouped_batches(encoded: Sequence[Encoded], batch_size: int, seed: int, group: int = 50) -> list[list[int]]:
    """Seeded batches of example indices that put examples of similar length together.

    As Hugging Face's ``group_by_length``: shuffle, cut into mega-batches of
    ``group * batch_size``, sort each by length, split into batches, and
    shuffle the batches. Padding (MoNLI: 15 to 78 tokens) falls by about half.
    ``group=1`` is a plain seeded shuffle (each batch a random draw).
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
    config,
    pad_token_id: int,
    *,
    state_path: Path | None = None,
    fingerprint: str = "",
    progress: bool = True,
    after_epoch: Callable[[], dict] | None = None,
    extra_loss: Callable[[list[int], int], torch.Tensor] | None = None,
    every: int = 0,
    after_steps: Callable[[], dict] | None = None,
) -> list[dict]:
    """Fine-tune ``model`` in place with AdamW and a linear warm-up/decay schedule.

    It runs where ``model`` is (``model.to(device)`` first); with ``config.precision == "bf16"`` each forward pass runs
    under ``torch.autocast`` in bfloat16. Epoch e's batches are :func:`length_grouped_batches` seeded by (seed, e)
    and dropout is reseeded at each epoch, so a run resumed from ``state_path``
    (written after every epoch) ends with the same weights as an
    uninterrupted one. With ``config.reinit_pooler`` a fresh run first draws the pooler afresh (:func:`reinit_pooler`).

    ``extra_loss(batch indices, step)``, when given, returns a scalar
    tensor (shape ``[]``, nats) added to each batch's cross-entropy
    (interchange intervention training's term, :func:`interp.api.training.objective`); its
    mean is logged as ``extra_loss``. An ``extra_loss`` that is an
    ``nn.Module`` trains its own parameters with the model's, and they are
    kept in the resumable state (the node heads of :mod:`interp.api.node_loss`).

    ``config.lora_rank`` (with ``config.lora_alpha``) trains LoRA adapters on every block's linear layers and what lies
    above the blocks (:func:`interp.models.lora.add_adapters`), the pretrained weights frozen; the adapters are merged
    into the weights when training ends, so ``model`` leaves as a plain model. It cannot be combined with ``train_blocks``.

    A learning curve: with ``every = N`` and ``after_steps``, ``after_steps()`` runs in eval mode before the first step
    and after every N optimizer steps (and after the last), and its record joins the epoch's ``"curve"`` list as
    ``{"step", "examples" (seen so far), "seconds" (training time so far, evaluations excluded), ...}``; with
    ``state_path`` the state is kept at each point too, so an interrupted run resumes from its last point (its batches,
    its schedule and the random state as they were).

    Returns:
        One record per epoch: ``{"epoch", "loss" (mean cross-entropy, nats), "seconds"}``,
        plus what ``after_epoch()`` returns (run in eval mode after each epoch).

    Raises:
        ConfigError: naming ``lora_rank=``: with ``train_blocks``, or out of range (:func:`interp.models.lora.add_adapters`).
    """
    from transformers import get_linear_schedule_with_warmup

    device = next(model.parameters()).device
    bf16 = getattr(config, "precision", "fp32") == "bf16"  # the forward pass under autocast; weights, gradients and AdamW in fp32
    group = 1 if getattr(config, "batching", "length") == "shuffle" else 50
    clip = getattr(config, "max_grad_norm", None)  # the gradient's global L2 norm clipped to this before each step
    total_steps = len(length_grouped_batches(encoded, config.batch_size, config.seed, group)) * config.epochs
    # What the optimizer trains and the state keeps: the model, and an extra loss's own parameters where it has them.
    trained = torch.nn.ModuleDict({"classifier": model, "extra": extra_loss}) if isinstance(extra_loss, torch.nn.Module) else model
    blocks = getattr(config, "train_blocks", None)  # the top blocks alone: the rest frozen for the whole run
    rank = getattr(config, "lora_rank", None)  # LoRA adapters and what lies above the blocks: the rest frozen
    if rank is not None and blocks is not None:
        raise ConfigError(f"{named('lora_rank', rank)} with `train_blocks=`: train adapters or the top blocks, not both")
    if rank is not None:  # before the optimizer and any resumed state, which hold the adapters' weights
        top = add_adapters(model, rank, getattr(config, "lora_alpha", None), seed=config.seed) + top_parameters(model, 0)
    elif blocks is not None:
        top = top_parameters(model, blocks)
    weights = list(trained.parameters())
    frozen = rank is not None or blocks is not None
    if frozen:
        kept, own = {id(p) for p in top}, {id(p) for p in model.parameters()}
        weights = [p for p in weights if id(p) in kept or id(p) not in own]  # an extra loss's own parameters train too
    optimizer = adamw(weights, lr=config.lr, weight_decay=config.weight_decay)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(config.warmup_ratio * total_steps), total_steps)
    log: list[dict] = []
    start_epoch, partial = 0, None
    saved = read_training_state(state_path, device) if state_path is not None else None
    if saved is not None and saved.info.get("fingerprint") == fingerprint:
        if saved.restore(model=trained, optimizer=optimizer, scheduler=scheduler):
            log, start_epoch, partial = saved.info["log"], saved.info["epoch"], saved.info.get("partial")
            if progress:
                within = f", step {partial['step']} of epoch {start_epoch + 1}" if partial else ""
                tqdm.write(f"resuming after epoch {start_epoch} of {config.epochs}{within} from {state_path}")
    if start_epoch == 0 and partial is None and getattr(config, "reinit_pooler", False):
        reinit_pooler(model, config.seed)
    fresh = start_epoch == 0 and partial is None
    head_losses = fit_head(model, encoded, config, pad_token_id, group, progress) if fresh else []
    curve = Curve(every if after_steps is not None else 0, after_steps, model, log, partial)
    with frozen_weights(model, keep=weights) if frozen else nullcontext():  # flags restored in finally
        if fresh:
            curve.point(0, 0)
        for epoch in range(start_epoch, config.epochs):
            model.train()
            torch.manual_seed(config.seed * 1_000 + epoch)
            batches = length_grouped_batches(encoded, config.batch_size, config.seed * 1_000 + epoch, group)
            started, total_loss, total_extra, skip = time.perf_counter(), 0.0, 0.0, 0
            curve.eval_seconds = 0.0
            if partial is not None:  # resumed inside this epoch: its batches done, its sums and random state as they were
                skip, total_loss, total_extra = partial["step"], partial["loss"], partial["extra"]
                started -= partial["seconds"]
                torch.set_rng_state(torch.tensor(partial["rng"], dtype=torch.uint8))
                partial = None
            bar = tqdm(
                batches,
                desc=f"epoch {epoch + 1}/{config.epochs}",
                unit="batch",
                disable=not progress,
                leave=False,
                initial=skip,
            )
            for step, idx in enumerate(batches[skip:], start=skip):
                with _forward_context(device, bf16):
                    loss = batch_loss(model, encoded, idx, pad_token_id, device)
                    extra = extra_loss(idx, epoch * len(batches) + step) if extra_loss is not None else None
                if extra is not None:
                    total_extra += extra.item() * len(idx)
                    (loss + extra).backward()
                else:
                    loss.backward()
                if clip is not None:
                    torch.nn.utils.clip_grad_norm_(trained.parameters(), clip)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                total_loss += loss.item() * len(idx)
                bar.update()
                bar.set_postfix(loss=f"{loss.item():.3f}")
                done = epoch * len(batches) + step + 1
                if curve.due(done, total_steps):
                    seconds = time.perf_counter() - started - curve.eval_seconds
                    curve.point(done, sum(len(b) for b in batches[: step + 1]) + epoch * len(encoded), seconds)
                    model.train()
                    if state_path is not None and done < total_steps:
                        resume = {"step": step + 1, "loss": total_loss, "extra": total_extra, "seconds": seconds,
                                  "rng": torch.get_rng_state().tolist(), "curve": curve.points}  # fmt: skip
                        info = {"fingerprint": fingerprint, "epoch": epoch, "log": log, "partial": resume}
                        save_training_state(state_path, model=trained, optimizer=optimizer, scheduler=scheduler, info=info)
            bar.close()
            log.append({"epoch": epoch + 1, "loss": total_loss / len(encoded), "seconds": time.perf_counter() - started - curve.eval_seconds})
            curve.close_epoch(log[-1])
            if epoch == 0 and head_losses:
                log[-1]["head_losses"] = head_losses
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
                save_training_state(state_path, model=trained, optimizer=optimizer, scheduler=scheduler, info=info)
    model.eval()
    if rank is not None:
        merge_adapters(model)
    return log


class Curve:
    """The points of a learning curve inside :func:`fit`: ``after_steps()`` every ``every`` steps, timed apart from training."""

    def __init__(self, every: int, after_steps, model, log: list[dict], partial: dict | None) -> None:
        self.every, self.after_steps, self.model, self.log = every, after_steps, model, log
        self.points: list[dict] = list(partial["curve"]) if partial else []  # this epoch's points so far
        self.eval_seconds = 0.0  # evaluation time inside the current epoch (not training)
        self.training_before = sum(e["seconds"] for e in log)  # the finished epochs' training seconds

    def due(self, done: int, total: int) -> bool:
        """Whether a point is due after ``done`` of ``total`` optimizer steps."""
        return bool(self.every) and (done % self.every == 0 or done == total)

    def point(self, step: int, examples: int, seconds: float = 0.0) -> None:
        """Run ``after_steps()`` in eval mode and keep its record at ``step`` (``seconds``: this epoch's training so far)."""
        if not self.every:
            return
        began = time.perf_counter()
        self.model.eval()
        with torch.no_grad():
            record = self.after_steps()
        self.points.append({"step": step, "examples": examples, "seconds": self.training_before + seconds, **record})
        self.eval_seconds += time.perf_counter() - began

    def close_epoch(self, record: dict) -> None:
        """Move this epoch's points into its record (``"curve"``) and start the next epoch's."""
        if self.points:
            record["curve"] = self.points
        self.training_before += record["seconds"]
        self.points, self.eval_seconds = [], 0.0


def curve_points(log: Sequence[dict]) -> list[dict]:
    """Every point of a learning curve in :func:`fit`'s records, in step order."""
    return [point for record in log for point in record.get("curve", [])]


def batch_loss(model, encoded: Sequence[Encoded], idx: Sequence[int], pad_token_id: int, device: torch.device) -> torch.Tensor:
    """The mean cross-entropy (nats, shape ``[]``) of ``model`` on the examples ``idx`` of ``encoded``, padded as one batch."""
    batch = collate([encoded[i] for i in idx], pad_token_id)
    return model(**batch_inputs(model, batch, device), labels=batch["labels"].to(device)).loss


def _forward_context(device: torch.device, bf16: bool):
    """The forward pass under bf16 autocast, attention kept off cuDNN (:func:`attention_without_cudnn`), or as it is."""
    if not bf16:
        return nullcontext()
    stack = ExitStack()
    stack.enter_context(torch.autocast(device.type, dtype=torch.bfloat16))
    stack.enter_context(attention_without_cudnn())
    return stack


def head_parameters(model) -> list[torch.nn.Parameter]:
    """The parameters of a sequence classifier outside its encoder (``model.base_model``): the classification head.

    Raises:
        ModelError: a model whose encoder is not a part of it (no ``base_model`` below the model itself).
    """
    base = getattr(model, "base_model", None)
    if not isinstance(base, torch.nn.Module) or base is model:
        raise ModelError(f"{type(model).__name__} has no encoder apart from its head (`base_model`): `head_epochs=` needs one")
    inside = {id(p) for p in base.parameters()}
    return [p for p in model.parameters() if id(p) not in inside]


def reinit_pooler(model, seed: int) -> list[str]:
    """Draw the pooler's linear layers afresh, in place: weights normal with the model's ``initializer_range`` as
    standard deviation (0.02 for BERT), biases 0, from a generator seeded by ``seed`` (the global random state is left as
    it was, so the rest of a seeded fine-tuning draws what it would have).

    Re-initializing the top pretrained layers before fine-tuning steadies few-sample fine-tuning over seeds (Zhang, Wu,
    Katiyar, Weinberger & Artzi 2021, *Revisiting few-sample BERT fine-tuning*, §5). The pooler is the dense layer
    between the encoder's last block and the head (``bert.pooler`` in BERT; ``pooler`` in DeBERTa-v2, new in its base
    checkpoints and trained in fine-tuned ones): the
    embedded MiniLM ships one whose weights have a standard deviation of 0.009, so at the start the head's input hardly
    varies between examples. Families whose head has no pretrained pooler (RoBERTa, DistilBERT, ELECTRA, ModernBERT:
    the head's dense layer is new already) have nothing to draw.

    Returns:
        The names of the layers drawn afresh (``["bert.pooler.dense"]``).

    Raises:
        ModelError: naming ``reinit_pooler=``: the model has no linear layer in a module called ``pooler``.
    """
    layers = [(name, module) for name, module in model.named_modules()
              if isinstance(module, torch.nn.Linear) and "pooler" in name.split(".")]  # fmt: skip
    if not layers:
        raise ModelError(f"{named('reinit_pooler', True)}: {type(model).__name__} has no pretrained pooler to draw afresh "
                         "(its head's layers are new already)")  # fmt: skip
    std = getattr(getattr(model, "config", None), "initializer_range", 0.02)
    devices = sorted({module.weight.device.index for _, module in layers if module.weight.device.type == "cuda"})
    with torch.random.fork_rng(devices=devices), torch.no_grad():
        torch.manual_seed(seed)
        for _, module in layers:
            module.weight.normal_(mean=0.0, std=std)
            if module.bias is not None:
                module.bias.zero_()
    return [name for name, _ in layers]


#: Devices whose AdamW has torch's fused kernel (one pass over each parameter and its moments).
FUSED_DEVICES = ("cpu", "cuda")


def adamw(parameters, **settings) -> torch.optim.AdamW:
    """AdamW over ``parameters``, with torch's fused kernel where every parameter is a float tensor on a CPU or CUDA
    device (else the per-tensor loop). The same update up to float rounding (on MiniLM, weights within 1.5e-6 of the
    loop's after 30 steps at lr 2e-5). The optimizer's step is the same work whatever the batch (22.7M parameters and two
    moments, half of them the word embeddings), so the gain shrinks as batches grow: on this 2-core CPU a MiniLM step is
    1.39x faster at batch 8, 1.19x at 16 and 1.06x at 32 (``benchmarks/adamw.py``)."""
    parameters = list(parameters)
    fused = bool(parameters) and all(p.device.type in FUSED_DEVICES and p.is_floating_point() for p in parameters)
    return torch.optim.AdamW(parameters, fused=fused, **settings) if fused else torch.optim.AdamW(parameters, **settings)


def fit_head(model, encoded: Sequence[Encoded], config, pad_token_id: int, group: int = 50, progress: bool = False) -> list[float]:
    """Train the classification head alone, the encoder frozen, for ``config.head_epochs`` epochs at ``config.head_lr``
    (AdamW, constant rate): the linear-probing stage of linear probing then fine-tuning (LP-FT; Kumar, Raghunathan,
    Jones, Ma & Liang 2022, *Fine-tuning can distort pretrained features and underperform out-of-distribution*, §4).
    The loss is the task's cross-entropy alone (an IIT or node loss joins in the fine-tuning after). The encoder's
    ``requires_grad`` is restored after, whatever happens. Seeded apart from the fine-tuning's epochs.

    Returns:
        Each head epoch's mean cross-entropy (nats); empty when ``head_epochs`` is 0 or absent.
    """
    epochs = getattr(config, "head_epochs", 0)
    if not epochs:
        return []
    device = next(model.parameters()).device
    bf16 = getattr(config, "precision", "fp32") == "bf16"
    head = head_parameters(model)
    optimizer = adamw(head, lr=config.head_lr, weight_decay=config.weight_decay)
    losses = []
    with frozen_weights(model, keep=head):
        for epoch in range(epochs):
            model.train()
            seed = config.seed * 1_000 + 999 - epoch  # the fine-tuning's epochs count up from seed * 1000
            torch.manual_seed(seed)
            total = 0.0
            for idx in tqdm(length_grouped_batches(encoded, config.batch_size, seed, group), desc=f"head epoch {epoch + 1}/{epochs}",
                            unit="batch", disable=not progress, leave=False):  # fmt: skip
                with _forward_context(device, bf16):
                    loss = batch_loss(model, encoded, idx, pad_token_id, device)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                total += loss.item() * len(idx)
            losses.append(total / len(encoded))
            if progress:
                tqdm.write(f"head epoch {epoch + 1}/{epochs}: loss {losses[-1]:.4f}")
    return losses


def finished_run(out_dir: Path) -> dict | None:
    """The ``training.json`` of a complete checkpoint at ``out_dir``, else ``None``."""
    info = read_json(out_dir / TRAINING_FILE)
    return info if isinstance(info, dict) and (out_dir / "model.safetensors").is_file() else None


def save_checkpoint(model, tokenizer, record: dict, out: Path, staging: Path, extra: dict[str, str] | None = None) -> Path:
    """Write the weights (safetensors), the tokenizer, ``extra``'s text files (name -> text: a learning curve's CSV) and
    ``record`` as ``training.json`` (last) into ``staging``, then move it to ``out``.

    ``out`` appears only complete, replacing what was there.

    Raises:
        OutputError: naming ``out=``: the checkpoint cannot be written (a full disk included).
    """
    if staging.exists():
        shutil.rmtree(staging)
    try:
        with quiet_transformers():
            model.save_pretrained(staging, safe_serialization=True)
            tokenizer.save_pretrained(staging)
        for name, text in (extra or {}).items():
            (staging / name).write_text(text)
    except (OSError, SafetensorError) as exc:  # safetensors reports a full disk as its own error
        shutil.rmtree(staging, ignore_errors=True)
        raise OutputError(f"{named('out', out)}: cannot write the checkpoint ({getattr(exc, 'strerror', None) or exc})") from None
    write_json_atomic(staging / TRAINING_FILE, record)
    replace_dir(staging, out)
    return out
