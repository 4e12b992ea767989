"""Training and scoring an intervention on counterfactual pairs: distributed alignment search (DAS), with its localist baselines.

Usage::

    runner = PairSuffix(model, encoded, location)
    rotated = RotatedSubspace(runner.width, k=64, seed=0)
    fit_intervention(runner, rotated, train.base, train.source, targets, FitSettings(epochs=2))
    score_intervention(runner, rotated, test.base, test.source, test_targets, base_pred)   # {'iia': ..., 'stays_base': ..., ...}

DAS (Geiger, Wu, Potts, Icard & Goodman 2024, §3) learns the rotation with
the network frozen, minimising the cross-entropy between the intervened
network's output and the causal model's counterfactual (as pyvene's DAS
tutorial: Adam, learning rate 1e-3). The boundless variant (Wu et al.
2023, §3) adds its boundary to the loss and anneals the mask's
temperature from 50 to 0.1 over training.

IIA (one definition everywhere, see :mod:`interp.analysis.iia`): the share
of the stated pairs where the intervened model's label equals the
counterfactual. Beside it, on the same pairs: ``stays_base`` (the label
stays the model's own on the base), ``copies_source`` (it is the model's
own on the source) and ``chance`` (the most common counterfactual's share).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from jaxtyping import Int
from torch import Tensor

from interp.engine.interventions import BoundlessSubspace, CoordinateBlock, Interchange, Intervention
from interp.engine.pair_suffix import PairSuffix, frozen_weights


@dataclass(frozen=True)
class FitSettings:
    """How an intervention is trained.

    ``epochs`` over the training pairs in batches of ``batch_size`` pairs
    (shuffled; bases of similar length batched together), Adam at ``lr``, the order
    seeded by ``seed``; for :class:`BoundlessSubspace`, the temperature
    annealed linearly from ``temperature[0]`` to ``temperature[1]`` and the
    boundary weighted by ``penalty`` in the loss.
    """

    epochs: int = 2
    lr: float = 1e-3
    batch_size: int = 64
    seed: int = 0
    temperature: tuple[float, float] = (50.0, 0.1)
    penalty: float = 1.0

    def __post_init__(self) -> None:
        if self.epochs < 1:
            raise ValueError(f"epochs must be at least 1, got {self.epochs}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {self.batch_size}")
        if not self.lr > 0:
            raise ValueError(f"lr must be positive, got {self.lr}")


def _batches(lengths: Tensor, size: int, generator: torch.Generator) -> list[Tensor]:
    """Pair indices in shuffled batches of ``size``; within each window of 8 batches the pairs are sorted by base length, so a padded batch wastes little."""
    order = torch.randperm(len(lengths), generator=generator)
    batches = []
    for window in order.split(8 * size):
        batches += list(window[torch.argsort(lengths[window], stable=True)].split(size))
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


def fit_intervention(
    runner: PairSuffix,
    intervention: Intervention,
    bases: Int[Tensor, "pairs"],
    sources: Int[Tensor, "pairs"],
    targets: Int[Tensor, "pairs"],
    settings: FitSettings = FitSettings(),
    on_step: Callable[[float], None] | None = None,
) -> list[float]:
    """Train ``intervention``'s parameters (the model frozen) so that the intervened outputs are the counterfactual labels.

    Args:
        bases, sources: int64 ``[pairs]``, indices into the runner's examples.
        targets: int64 ``[pairs]``, the counterfactual label ids.
        on_step: called with each step's loss (progress).

    Returns:
        The mean loss of each epoch (cross-entropy, nats per pair, plus the boundless penalty).

    Raises:
        ValueError: the intervention has nothing to train, or the index tensors differ in length.
    """
    if not intervention.trainable:
        raise ValueError(f"a {intervention.kind} intervention has no parameters to train")
    if not bases.shape == sources.shape == targets.shape:
        raise ValueError("bases, sources and targets must have one entry per pair")
    device = runner.vectors.device
    intervention.to(device).train()
    optimizer = torch.optim.Adam(intervention.parameters(), lr=settings.lr)
    generator = torch.Generator().manual_seed(settings.seed)
    plan = [_batches(runner.lengths[bases.cpu()], settings.batch_size, generator) for _ in range(settings.epochs)]
    total, step = sum(len(p) for p in plan), 0
    hot, cold = settings.temperature
    losses = []
    with frozen_weights(runner.model):
        for batches in plan:
            epoch_loss = 0.0
            for batch in batches:
                if isinstance(intervention, BoundlessSubspace):
                    intervention.temperature.fill_(hot + (cold - hot) * step / max(total - 1, 1))
                logits = runner.logits(bases[batch], sources[batch], intervention)
                loss = F.cross_entropy(logits.float(), targets[batch].to(logits.device))
                penalty = intervention.penalty()
                if penalty is not None:
                    loss = loss + settings.penalty * penalty
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                step += 1
                value = loss.item()
                epoch_loss += value * len(batch)
                if on_step is not None:
                    on_step(value)
            losses.append(epoch_loss / len(bases))
    intervention.eval()
    return losses


@torch.no_grad()
def predict_pairs(runner: PairSuffix, intervention: Intervention, bases: Tensor, sources: Tensor, batch_size: int | None = None,
                  read: Sequence[int] | None = None) -> np.ndarray:  # fmt: skip
    """The intervened model's label id on each pair: int64 ``[pairs]``; with ``read`` (per model label id, the task's
    label id: :attr:`interp.models.labels.LabelReading.read`), the task's label id."""
    ids = runner.logits(bases, sources, intervention.eval(), batch_size).argmax(-1).cpu().numpy()
    return ids if read is None else np.asarray(read, dtype=np.int64)[ids]


def score_intervention(
    runner: PairSuffix,
    intervention: Intervention,
    bases: Tensor,
    sources: Tensor,
    targets: Tensor,
    own_pred: np.ndarray,
    read: Sequence[int] | None = None,
) -> dict:
    """IIA of ``intervention`` on the given pairs, with its nulls.

    Args:
        targets: int64 ``[pairs]``, counterfactual label ids.
        own_pred: int ``[n_examples]``, the model's own label on each example (for the nulls).
        read: the model's label ids as the task's (:func:`predict_pairs`); ``targets`` and ``own_pred`` are then the task's.

    Returns:
        ``pairs``, ``iia``, ``stays_base``, ``copies_source``, ``chance`` (shares, 0..1).
    """
    pred = predict_pairs(runner, intervention, bases, sources, read=read)
    targets = targets.cpu().numpy()
    counts = np.bincount(targets)
    return {
        "pairs": int(len(pred)),
        "iia": float((pred == targets).mean()),
        "stays_base": float((pred == own_pred[bases.numpy()]).mean()),
        "copies_source": float((pred == own_pred[sources.numpy()]).mean()),
        "chance": float(counts.max() / counts.sum()),
    }


def best_block(runner: PairSuffix, k: int, bases: Tensor, sources: Tensor, targets: Tensor, read: Sequence[int] | None = None) -> Intervention:
    """The localist baseline at width ``k``: of the blocks ``[j·k, (j+1)·k)`` of coordinates, the one with the best IIA on the given (training) pairs.

    ``k = width`` gives :class:`Interchange`. Choosing on the training pairs
    and scoring on held-out ones keeps the baseline as honest as DAS.
    """
    if k >= runner.width:
        return Interchange(runner.width)
    blocks = [CoordinateBlock(runner.width, start, min(start + k, runner.width)) for start in range(0, runner.width - k + 1, k)]
    hits = [float((predict_pairs(runner, b, bases, sources, read=read) == targets.numpy()).mean()) for b in blocks]
    return blocks[int(np.argmax(hits))]


def n_steps(n_pairs: int, settings: FitSettings) -> int:
    """How many optimizer steps :func:`fit_intervention` takes on ``n_pairs`` pairs (for progress bars)."""
    window, size = 8 * settings.batch_size, settings.batch_size
    full, rest = divmod(n_pairs, window)
    return settings.epochs * (full * 8 + -(-rest // size))
