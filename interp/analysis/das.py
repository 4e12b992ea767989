"""Training and scoring an intervention on counterfactual pairs: distributed alignment search (DAS), with its localist baselines.

Usage::

    runner = get_runner("hf", model).pairs(encoded, location)      # PairSuffix: each example's prefix run once
    rotated = RotatedSubspace(runner.width, k=64, seed=0)
    fit_intervention(runner, rotated, train.base, train.source, targets, FitSettings(epochs=2))
    score_intervention(runner, rotated, test.base, test.source, test_targets, base_pred)   # {'iia': ..., 'stays_base': ..., ...}

DAS (Geiger, Wu, Potts, Icard & Goodman 2024, §3) learns the rotation with
the network frozen, minimising the cross-entropy between the intervened
network's output and the causal model's counterfactual (as pyvene's DAS
tutorial: Adam, learning rate 1e-3). The boundless variant (Wu et al.
2023, §3) adds its boundary to the loss and anneals the mask's
temperature from 50 to 0.1 over training; DBM's feature mask
(:class:`~interp.engine.featurizers.FeatureMask`) adds its L1 penalty and
anneals its temperature from 1 to 0.01 over the first half of training
(MIB's schedule, causalab's annealing fraction).

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
from torch.nn.utils import parametrize

from interp.analysis.bootstrap import N_BOOT, SEED, Estimate, ExampleBootstrap, percentile_interval
from interp.core.checks import check_int, check_number
from interp.core.errors import ConfigError
from interp.engine.interventions import BoundlessSubspace, CoordinateBlock, Interchange, Intervention
from interp.backends.base import PairRunner
from interp.models.labels import LabelReading


#: Training pairs a training history scores after each epoch (a seeded share of the training pairs).
HISTORY_TRAIN_PAIRS = 128

#: Rows (pairs × blocks) :func:`best_block` scores in one call: the blocks of a location share each pair's base, so
#: scoring several blocks at once makes each pass of one length larger (8,192 rows of a 1,536-wide location: 50 MB).
BLOCK_ROWS = 8192


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
        """Raises :class:`~interp.core.errors.ConfigError` naming ``epochs=``, ``lr=``, ``batch_size=`` or ``seed=``."""
        check_int(self.epochs, "epochs", least=1)
        check_int(self.batch_size, "batch_size", least=1)
        check_number(self.lr, "lr", positive=True)
        check_int(self.seed, "seed", least=0)


def _batches(lengths: Tensor, size: int, generator: torch.Generator) -> list[Tensor]:
    """Pair indices in shuffled batches of ``size``; within each window of 8 batches the pairs are sorted by base length, so a padded batch wastes little."""
    order = torch.randperm(len(lengths), generator=generator)
    batches = []
    for window in order.split(8 * size):
        batches += list(window[torch.argsort(lengths[window], stable=True)].split(size))
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


def fit_intervention(
    runner: PairRunner,
    intervention: Intervention,
    bases: Int[Tensor, "pairs"],
    sources: Int[Tensor, "pairs"],
    targets: Int[Tensor, "pairs"],
    settings: FitSettings = FitSettings(),
    on_step: Callable[[float], None] | None = None,
    on_epoch: Callable[[int, float], None] | None = None,
) -> list[float]:
    """Train ``intervention``'s parameters (the model frozen) so that the intervened outputs are the counterfactual labels.

    Args:
        bases, sources: int64 ``[pairs]``, indices into the runner's examples.
        targets: int64 ``[pairs]``, the counterfactual label ids.
        on_step: called with each step's loss (progress).
        on_epoch: called after each epoch with its number (from 1) and mean loss, the intervention in eval mode
            (to score it: a training history); training goes on afterwards.

    Returns:
        The mean loss of each epoch (cross-entropy, nats per pair, plus the boundless penalty).

    Raises:
        ConfigError (a ValueError): the intervention has nothing to train, or the index tensors differ in length.
    """
    if not intervention.trainable:
        raise ConfigError(f"a {intervention.kind} intervention has no parameters to train")
    if not bases.shape == sources.shape == targets.shape:
        raise ConfigError("bases, sources and targets must have one entry per pair")
    device = runner.vectors.device
    intervention.to(device).train()
    optimizer = torch.optim.Adam(intervention.parameters(), lr=settings.lr)
    generator = torch.Generator().manual_seed(settings.seed)
    plan = [_batches(runner.lengths[bases.cpu()], settings.batch_size, generator) for _ in range(settings.epochs)]
    total, step = sum(len(p) for p in plan), 0
    # a mask annealed over training: the boundless boundary's (the settings' schedule, over every step), DBM's (its own,
    # MIB's 1.0 to 0.01 over the first half of the steps, then held: causalab's annealing fraction)
    schedule = settings.temperature if isinstance(intervention, BoundlessSubspace) else getattr(intervention, "temperatures", None)
    annealed = max(int(total * getattr(intervention, "anneal_share", 1.0)), 1)
    losses = []
    with runner.frozen():
        for batches in plan:
            epoch_loss = 0.0
            for batch in batches:
                if schedule is not None:
                    hot, cold = schedule
                    intervention.temperature.fill_(hot + (cold - hot) * min(step / max(annealed - 1, 1), 1.0))
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
            if on_epoch is not None:
                intervention.eval()
                on_epoch(len(losses), losses[-1])
                intervention.train()
    intervention.eval()
    return losses


@torch.no_grad()
def predict_pairs(runner: PairRunner, intervention: Intervention, bases: Tensor, sources: Tensor, batch_size: int | None = None,
                  read: Sequence[int] | None = None) -> np.ndarray:  # fmt: skip
    """The intervened model's label id on each pair: int64 ``[pairs]``; with ``read`` (per model label id, the task's
    label id: :attr:`interp.models.labels.LabelReading.read`), the task's label id. The intervention is moved to the
    runner's device (an untrained one is scored before training would move it). A parametrized basis is computed once
    for all the batches (``torch.nn.utils.parametrize.cached``: the same matrix, not one solve per batch)."""
    with parametrize.cached():
        ids = runner.logits(bases, sources, intervention.to(runner.vectors.device).eval(), batch_size).argmax(-1).cpu().numpy()
    return ids if read is None else np.asarray(read, dtype=np.int64)[ids]


def score_intervention(
    runner: PairRunner,
    intervention: Intervention,
    bases: Tensor,
    sources: Tensor,
    targets: Tensor,
    own_pred: np.ndarray,
    read: Sequence[int] | None = None,
    *,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    groups: np.ndarray | None = None,
    unit: str = "groups",
) -> dict:
    """IIA of ``intervention`` on the given pairs, with its nulls, each with its 95% interval.

    The interval resamples the examples, bases and sources independently (Owen 2007, the pigeonhole bootstrap;
    :class:`~interp.analysis.bootstrap.ExampleBootstrap`), not the pairs: pairs that share an example are not
    independent. Scores of several interventions on the same pairs with the same ``seed`` share their replicates,
    so their differences have intervals too (:func:`difference`).

    Args:
        targets: int64 ``[pairs]``, counterfactual label ids.
        own_pred: int ``[n_examples]``, the model's own label on each example (for the nulls).
        read: the model's label ids as the task's (:func:`predict_pairs`); ``targets`` and ``own_pred`` are then the task's.
        n_boot, seed: the bootstrap's replicates and seed.
        groups: each example's group key (``[n_examples]``, indexed as ``bases`` and ``sources`` are; MoNLI: its word
            pair): the bootstrap resamples the groups, named ``unit``, instead of examples (:func:`pair_bootstrap`).

    Returns:
        ``pairs``, ``iia``, ``stays_base``, ``copies_source`` (shares, 0..1) each with ``_low`` and ``_high``,
        ``chance`` (the most common counterfactual's share), ``gap`` (IIA minus the larger null) and ``over_chance``
        (IIA minus chance), each with ``_low`` and ``_high`` from the same replicates (what
        :func:`~interp.analysis.das_verdict.verdict` reads), ``interval`` (the method) and ``hits`` (bool ``[pairs]``,
        where the intervened label is the counterfactual; for :func:`difference`) and ``stays_hits`` (where it is the
        base's own label).
    """
    pred = predict_pairs(runner, intervention, bases, sources, read=read)
    targets = targets.cpu().numpy()
    counts = np.bincount(targets)
    boot, b, s = pair_bootstrap(bases, sources, n_boot=n_boot, seed=seed, groups=groups, unit=unit)
    out: dict = {"pairs": int(len(pred))}
    own_b, own_s = own_pred[bases.cpu().numpy()], own_pred[sources.cpu().numpy()]
    replicates = {}
    for name, hit in (("iia", pred == targets), ("stays_base", pred == own_b), ("copies_source", pred == own_s)):
        out[name] = float(hit.mean()) if len(hit) else 0.0
        replicates[name] = boot.pair_share(b, s, hit)
        out[f"{name}_low"], out[f"{name}_high"] = percentile_interval(replicates[name], boot.confidence)
    out["chance"] = float(counts.max() / counts.sum())
    # the differences a verdict reads (interp.analysis.das_verdict), each replicate against its own nulls and chance
    chance = np.max([boot.pair_share(b, s, targets == label) for label in np.flatnonzero(counts)], axis=0)
    for name, value, reps in (("gap", out["iia"] - max(out["stays_base"], out["copies_source"]),
                               replicates["iia"] - np.maximum(replicates["stays_base"], replicates["copies_source"])),
                              ("over_chance", out["iia"] - out["chance"], replicates["iia"] - chance)):  # fmt: skip
        out[name] = value
        out[f"{name}_low"], out[f"{name}_high"] = percentile_interval(reps, boot.confidence)
    out.update(interval=boot.method, hits=pred == targets, stays_hits=pred == own_b)
    return out


def pair_bootstrap(bases: Int[Tensor, "pairs"], sources: Int[Tensor, "pairs"], *, n_boot: int = N_BOOT, seed: int = SEED,
                   groups: np.ndarray | None = None, unit: str = "groups") -> tuple[ExampleBootstrap, np.ndarray, np.ndarray]:  # fmt: skip
    """The bootstrap of a list of pairs: the examples that occur as bases, and those that occur as sources, each drawn
    on its own (with ``groups``, each example's group key indexed as ``bases`` are, their groups); returns it with each
    pair's base and source as indices into those two lists."""
    base_examples, b = np.unique(bases.cpu().numpy(), return_inverse=True)
    source_examples, s = np.unique(sources.cpu().numpy(), return_inverse=True)
    grouped = {} if groups is None else {"base_groups": np.asarray(groups)[base_examples], "source_groups": np.asarray(groups)[source_examples],
                                         "unit": unit}  # fmt: skip
    return ExampleBootstrap(len(base_examples), len(source_examples), square=False, n_boot=n_boot, seed=seed, **grouped), b, s


def difference(first: dict, second: dict, bases: Int[Tensor, "pairs"], sources: Int[Tensor, "pairs"], *, n_boot: int = N_BOOT,
               seed: int = SEED, groups: np.ndarray | None = None, unit: str = "groups") -> Estimate:  # fmt: skip
    """IIA of ``first`` minus IIA of ``second`` (two :func:`score_intervention` results on the same pairs), with the
    95% interval of the difference from the same bootstrap replicates (a paired comparison; ``groups``, ``unit``: as
    :func:`pair_bootstrap`)."""
    boot, b, s = pair_bootstrap(bases, sources, n_boot=n_boot, seed=seed, groups=groups, unit=unit)
    replicates = boot.pair_share(b, s, first["hits"]) - boot.pair_share(b, s, second["hits"])
    return boot.interval(first["iia"] - second["iia"], replicates)


@dataclass
class Trained:
    """What :func:`train_and_score` found: held-out scores before (``untrained``) and after (``trained``) training
    (:func:`score_intervention` dicts), their difference ``gain`` with its paired interval, the per-epoch ``history``
    (epoch 0: before training; ``loss`` ``None`` there) and each epoch's mean loss."""

    trained: dict
    untrained: dict
    gain: Estimate
    history: list[dict]
    losses: list[float]


def train_and_score(
    runner: PairRunner,
    intervention: Intervention,
    train: tuple[Int[Tensor, "train"], Int[Tensor, "train"], Int[Tensor, "train"]],
    test: tuple[Int[Tensor, "test"], Int[Tensor, "test"], Int[Tensor, "test"]],
    own_pred: np.ndarray,
    reading: LabelReading,
    settings: FitSettings,
    on_step: Callable[[float], None] | None = None,
    groups: np.ndarray | None = None,
    unit: str = "groups",
) -> Trained:
    """Score ``intervention`` untrained on the held-out pairs, train it (:func:`fit_intervention`) scoring it after
    every epoch, and score it again: DAS with its untrained baseline and its history.

    ``train``, ``test``: (bases, sources, targets) int64 ``[pairs]`` each, targets as the task's label ids (the
    model is trained towards ``reading.targets`` of them, and read back with ``reading.read``). The history scores
    up to :data:`HISTORY_TRAIN_PAIRS` seeded training pairs and every held-out pair. ``groups``, ``unit``: what the
    held-out intervals resample (:func:`pair_bootstrap`).
    """
    read = reading.read
    (train_b, train_s, train_t), (test_b, test_s, test_t) = train, test
    sample = torch.randperm(len(train_b), generator=torch.Generator().manual_seed(settings.seed))[:HISTORY_TRAIN_PAIRS]

    def scores() -> tuple[dict, dict]:
        on_train = score_intervention(runner, intervention, train_b[sample], train_s[sample], train_t[sample], own_pred, read, n_boot=2)
        return on_train, score_intervention(runner, intervention, test_b, test_s, test_t, own_pred, read, groups=groups, unit=unit)

    on_train, untrained = scores()
    history = [{"epoch": 0, "loss": None, "train_iia": on_train["iia"], "held_out_iia": untrained["iia"]}]
    last: list[dict] = []  # the held-out score after the last epoch: the trained intervention's, as training left it

    def on_epoch(epoch: int, loss: float) -> None:
        on_train, held_out = scores()
        history.append({"epoch": epoch, "loss": loss, "train_iia": on_train["iia"], "held_out_iia": held_out["iia"]})
        last[:] = [held_out]

    targets = torch.from_numpy(reading.targets(train_t.numpy()))
    losses = fit_intervention(runner, intervention, train_b, train_s, targets, settings, on_step=on_step, on_epoch=on_epoch)
    # no step follows the last epoch's scoring, so it is the trained score: the held-out pairs are not run again
    trained = last[0] if last else score_intervention(runner, intervention, test_b, test_s, test_t, own_pred, read, groups=groups, unit=unit)
    return Trained(trained, untrained, difference(trained, untrained, test_b, test_s, groups=groups, unit=unit), history, losses)


def best_block(runner: PairRunner, k: int, bases: Tensor, sources: Tensor, targets: Tensor, read: Sequence[int] | None = None,
               on_blocks: Callable[[int, int], None] | None = None) -> Intervention:  # fmt: skip
    """The localist baseline at width ``k``: of the blocks ``[j·k, (j+1)·k)`` of coordinates, the one with the best IIA on the given (training) pairs.

    ``k = width`` gives :class:`Interchange`. Choosing on the training pairs
    and scoring on held-out ones keeps the baseline as honest as DAS. Every
    block is scored on every pair: ``width // k × pairs`` suffix runs (at
    ``k = 1`` on a 768-wide location and 256 pairs, 196,608), several blocks'
    rows to a call (:meth:`~interp.backends.base.PairRunner.written_logits`, up to
    :data:`BLOCK_ROWS` rows), so each pass of one length is large.

    Args:
        bases, sources, targets: int64 ``[pairs]``; targets as ``read`` gives labels (the model's label ids without it).
        on_blocks: told ``(blocks scored, blocks in all)`` after each call, e.g. for a progress bar.

    Returns:
        The block with the highest IIA on the pairs (the first of equals).
    """
    if k >= runner.width:
        return Interchange(runner.width)
    blocks = [CoordinateBlock(runner.width, start, min(start + k, runner.width)) for start in range(0, runner.width - k + 1, k)]
    device = runner.vectors.device
    bases, targets = bases.to(device), targets.cpu().numpy()
    base_vectors, source_vectors = runner.vectors[bases], runner.vectors[sources.to(device)]
    per_call = max(1, BLOCK_ROWS // max(len(bases), 1))
    hits: list[float] = []
    for first in range(0, len(blocks), per_call):
        group = blocks[first : first + per_call]
        written = torch.cat([block(base_vectors, source_vectors) for block in group])  # [len(group) × pairs, width]
        ids = runner.written_logits(bases.repeat(len(group)), written).argmax(-1).cpu().numpy()
        pred = ids if read is None else np.asarray(read, dtype=np.int64)[ids]
        hits.extend((pred.reshape(len(group), len(bases)) == targets).mean(1).tolist())
        if on_blocks is not None:
            on_blocks(len(hits), len(blocks))
    return blocks[int(np.argmax(hits))]


def n_steps(n_pairs: int, settings: FitSettings) -> int:
    """How many optimizer steps :func:`fit_intervention` takes on ``n_pairs`` pairs (for progress bars)."""
    window, size = 8 * settings.batch_size, settings.batch_size
    full, rest = divmod(n_pairs, window)
    return settings.epochs * (full * 8 + -(-rest // size))
