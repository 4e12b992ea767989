"""Distributed alignment search on an example set bound to a model: pairs drawn, a subspace intervention trained, scored beside its baselines.

The one implementation behind :meth:`IntervenableModel.train_das <interp.api.intervenable.IntervenableModel.train_das>`
(a notebook) and ``interp das`` (:mod:`interp.jobs.das`, which runs it per location, seed, variable and size, and
keeps each unit's row and intervention on disk):

* the counterfactual pairs (Geiger, Wu, Potts, Icard & Goodman 2024, §3): the examples split by example
  (:func:`interp.causal.pairs.split_examples`), balanced pairs drawn in each part
  (:func:`interp.causal.pairs.das_pairs`);
* the intervention trained with the model frozen, scored on the held-out pairs before and after training
  (:func:`interp.analysis.das.train_and_score`);
* beside it, on the same held-out pairs and the same bootstrap replicates: vanilla interchange (the whole vector)
  and the localist baseline (of the blocks of ``k`` coordinates, the one with the best IIA on
  :data:`BLOCK_CHOICE_PAIRS` seeded training pairs; :func:`interp.analysis.das.best_block`).

What repeats between calls on the same examples is the example set's (:class:`~interp.api.example_set.ExampleSet`):
the location's pair runner (the prefix up to the location, run once over the examples), the model's own predictions,
the drawn pairs and vanilla interchange's scores on them; many units on one example set pay for each once, and a
change of the model's weights drops them all.
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np
import torch

from interp.analysis.bootstrap import Estimate
from interp.analysis.das import FitSettings, best_block, pair_bootstrap, score_intervention, train_and_score
from interp.api.das_result import DasResult
from interp.api.evaluation import split_accuracies
from interp.api.example_set import ExampleSet
from interp.causal.pairs import das_pairs as draw_pairs
from interp.core.checks import check_int, check_number
from interp.core.errors import ConfigError, named, warn
from interp.api.featurized import FEATURIZED, make_trained, trainable_kinds, training_indices
from interp.engine.interventions import Interchange, Intervention
from interp.hooks.locations import Location

#: Training pairs the localist baseline's block is chosen on (a seeded share of the training pairs).
BLOCK_CHOICE_PAIRS = 256

PairTensors = tuple[torch.Tensor, torch.Tensor, torch.Tensor]


def pairs(examples: ExampleSet, variable: str, *, seed: int, test_share: float, n_pairs: int | None,
          test_pairs: int) -> tuple[PairTensors | None, PairTensors]:  # fmt: skip
    """The training and held-out counterfactual pairs DAS draws on ``examples`` for ``variable`` with ``seed``.

    Each part is ``(bases, sources, targets)``, int64 ``[pairs]`` each: indices into ``examples`` and the
    counterfactual as the task's label id. ``n_pairs=None`` draws no training pairs (``None`` in their place).
    Drawn once per setting while the set lives.

    Raises:
        ConfigError: naming ``n_pairs=`` or ``test_pairs=``: no pair of the examples can change ``variable``, or a count below 2;
            ``test_share=`` outside (0, 1).
    """
    task = examples.binding.task

    def draw():
        inputs = [task.inputs(e) for e in examples.examples]
        drawn = draw_pairs(examples.causal_model(), inputs, variable, test_share, seed, n_pairs, test_pairs)
        return tuple(None if p is None else _as_tensors(p, task.labels) for p in drawn)

    return examples.cached(("das_pairs", variable, seed, test_share, n_pairs, test_pairs), draw)


def _as_tensors(drawn, labels) -> PairTensors:
    targets = torch.tensor([labels.index(v) for v in drawn.counterfactual], dtype=torch.long)
    return torch.from_numpy(drawn.base), torch.from_numpy(drawn.source), targets


def train(examples: ExampleSet, loc: Location, variable: str, *, k: int | None, kind: str, n_pairs: int, epochs: int, lr: float,
          batch_size: int, seed: int, test_share: float, test_pairs: int, on_step: Callable[[float], None] | None = None,
          on_blocks: Callable[[int, int], None] | None = None, warn_unlearned: bool = True, featurizer=None,
          localist: bool = True) -> DasResult:  # fmt: skip
    """:meth:`IntervenableModel.train_das <interp.api.intervenable.IntervenableModel.train_das>` on ``examples`` at
    ``loc`` (its arguments and errors; ``variable`` checked by the caller); ``on_step(loss)`` is told after each
    optimizer step, ``on_blocks(scored, blocks)`` while the localist baseline's block is chosen
    (:func:`~interp.analysis.das.best_block`), and ``warn_unlearned=False`` leaves the warnings (a split at chance, a
    DAS that does not clear its untrained baseline) to the caller. ``localist=False`` skips the localist baseline
    (``width // k`` blocks, each scored on up to 256 training pairs: most of a unit's time on a wide site), leaving
    ``block_iia`` ``None``."""
    settings = FitSettings(epochs=epochs, lr=lr, batch_size=batch_size, seed=seed)
    check_int(n_pairs, "n_pairs", least=2)
    check_int(test_pairs, "test_pairs", least=2)
    check_number(test_share, "test_share")  # its range: split_examples
    trainable = trainable_kinds()
    if kind not in trainable:
        raise ConfigError(f"{named('kind', repr(kind))} must be one of {', '.join(trainable)}")
    train_pairs, held_out = pairs(examples, variable, seed=seed, test_share=test_share, n_pairs=n_pairs, test_pairs=test_pairs)
    run = examples.pairs(loc)
    # a basis fitted for the mask sees the training pairs' examples only (read only where one is fitted)
    training = run.vectors[training_indices(train_pairs[0], train_pairs[1]).to(run.vectors.device)] if kind in FEATURIZED else None
    intervention = make_trained(kind, run.width, k, seed, training, featurizer)
    own = examples.own_labels()
    reading = examples.binding.reading
    if warn_unlearned:
        split_accuracies(examples.binding, examples.examples, own)
    read = reading.read
    started = time.perf_counter()
    grouped = groups_of(examples)
    found = train_and_score(run, intervention, train_pairs, held_out, own, reading, settings, on_step=on_step, **grouped)
    seconds = time.perf_counter() - started  # the history's scoring included
    # the whole vector's score is the same for every kind and k: once per location and pairs while the set lives
    vanilla = examples.cached(("vanilla", loc, variable, seed, test_share, n_pairs, test_pairs),
                              lambda: score_intervention(run, Interchange(run.width), *held_out, own, read, **grouped))  # fmt: skip
    train_b, train_s, train_t = train_pairs
    choose = torch.randperm(len(train_b), generator=torch.Generator().manual_seed(seed))[:BLOCK_CHOICE_PAIRS]
    # the localist baseline of as many coordinates as the intervention took (at least one: a mask may take none)
    block = best_block(run, max(intervention.k, 1), train_b[choose], train_s[choose], train_t[choose], read, on_blocks) if localist else None
    baseline = score_intervention(run, block, *held_out, own, read, **grouped) if localist else None
    scores = {name: {key: value for key, value in score.items() if not key.endswith("hits")}
              for name, score in (("das", found.trained), ("untrained", found.untrained), ("vanilla", vanilla), ("block", baseline)) if score}  # fmt: skip
    trained = scores["das"]
    test_b, test_s, _ = held_out
    result = DasResult(
        intervention=intervention.cpu().eval(), variable=variable, location=loc, iia=_estimate(trained, "iia"),
        untrained_iia=_estimate(scores["untrained"], "iia"), gain=found.gain, stays_base=_estimate(trained, "stays_base"),
        copies_source=_estimate(trained, "copies_source"), chance=trained["chance"], history=found.history, train_pairs=len(train_b),
        held_out_pairs=[(examples[b].id, examples[s].id) for b, s in zip(test_b.tolist(), test_s.tolist())], interval=trained["interval"],
        vanilla_iia=_estimate(scores["vanilla"], "iia"), block_iia=_estimate(scores["block"], "iia") if localist else None,
        block=f"{getattr(block, 'start', 0)}:{getattr(block, 'stop', run.width)}" if localist else "", kind=kind, seed=seed, losses=found.losses,
        train_seconds=seconds, scores=scores, causal_model=examples.causal_model().name, gap=_estimate(trained, "gap"),
        over_chance=_estimate(trained, "over_chance"), by_base=_breakdown_iia(examples, found.trained["hits"], held_out, grouped),
        hits={"iia": found.trained["hits"], "stays_base": found.trained["stays_hits"], "vanilla": vanilla["hits"]},
    )  # fmt: skip
    if warn_unlearned and not result.learned:
        warn(f"DAS for {variable} at {loc} (k={result.k}): {result.verdict}. Held-out IIA {result.iia!r} on {len(test_b)} pairs; "
             f"untrained {result.untrained_iia!r} (gain {result.gain!r}); stays the base {result.stays_base!r}, copies the source "
             f"{result.copies_source!r} (IIA − larger null {result.gap!r}); chance {result.chance:.3f}. Read it as a finding only "
             f"above all three; where it lacks the gain, train on more pairs or epochs (`n_pairs=`, `epochs=`)")  # fmt: skip
    return result


def score(examples: ExampleSet, intervention: Intervention, loc: Location, variable: str, *, seed: int = 0, test_share: float = 0.2,
          test_pairs: int = 200, keep_hits: bool = False) -> dict[str, dict]:  # fmt: skip
    """Score an intervention (trained, or loaded with :func:`interp.files.subspaces.load_trained_intervention`) and vanilla
    interchange on the held-out pairs :meth:`~interp.api.intervenable.IntervenableModel.train_das` draws with the same
    ``seed``, ``test_share`` and ``test_pairs``: with a run's own settings this reproduces its held-out IIA.

    Returns:
        ``{"intervention": ..., "vanilla": ...}``, each a dict of ``pairs``, ``iia``, ``stays_base``, ``copies_source``
        (shares, 0..1, each with ``_low`` and ``_high``: a 95% bootstrap over the held-out examples, or their groups), ``chance`` and ``interval``;
        with ``keep_hits``, also ``hits`` and ``stays_hits`` (bool ``[pairs]``, :func:`~interp.analysis.das.score_intervention`).

    Raises:
        ConfigError: naming ``intervention=`` when its width is not the location's.
    """
    _, held_out = pairs(examples, variable, seed=seed, test_share=test_share, n_pairs=None, test_pairs=test_pairs)
    run = examples.pairs(loc)
    if run.width != intervention.width:
        raise ConfigError(f"{named('intervention')} is {intervention.width} wide; location {loc} is {run.width} here")
    intervention.to(run.vectors.device)
    own, read = examples.own_labels(), examples.binding.reading.read
    grouped = groups_of(examples)
    found = {"intervention": score_intervention(run, intervention, *held_out, own, read, **grouped),
             "vanilla": score_intervention(run, Interchange(run.width), *held_out, own, read, **grouped)}  # fmt: skip
    return {name: {key: value for key, value in s.items() if keep_hits or not key.endswith("hits")} for name, s in found.items()}


def _breakdown_iia(examples: ExampleSet, hits: np.ndarray, held_out: PairTensors, grouped: dict) -> dict[str, dict[str, Estimate]]:
    """IIA among the held-out pairs whose base has each value of each of the task's breakdowns, with intervals from a
    bootstrap of those pairs alone (``grouped``: :func:`groups_of`): name -> value -> estimate."""
    bases, sources, _ = held_out
    out: dict[str, dict[str, Estimate]] = {}
    for name, key in examples.binding.task.breakdown.items():
        values = np.array([str(key(examples[i])) for i in bases.tolist()])
        out[name] = {}
        for value in sorted(set(values.tolist())):
            mask = torch.from_numpy(values == value)
            boot, b, s = pair_bootstrap(bases[mask], sources[mask], **grouped)
            share = np.asarray(hits)[mask.numpy()]
            out[name][value] = boot.interval(float(share.mean()), boot.pair_share(b, s, share))
    return out


def groups_of(examples: ExampleSet) -> dict:
    """What DAS's held-out intervals resample: the task's groups of these examples (``groups``, ``unit``), or ``{}``
    (examples) where the task declares none."""
    table = examples.table()
    return {} if table.groups is None else {"groups": np.asarray(table.groups), "unit": table.group_unit}


def _estimate(score: dict, name: str) -> Estimate:
    return Estimate(score[name], score[f"{name}_low"], score[f"{name}_high"], score["interval"])
