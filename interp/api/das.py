"""Distributed alignment search on a bound model: pairs drawn, a subspace intervention trained, scored beside its baselines.

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

Inside :func:`reuse` the bound model keeps the last location's pair runner (:class:`~interp.engine.pair_suffix.PairSuffix`:
the prefix up to the location, run once over the examples), the model's own predictions, the drawn pairs and vanilla
interchange's scores on them, so that many units on the same examples pay for each once.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

import numpy as np
import torch

from interp.analysis.bootstrap import Estimate
from interp.analysis.das import FitSettings, best_block, score_intervention, train_and_score
from interp.api.das_result import DasResult
from interp.causal.pairs import das_pairs as draw_pairs
from interp.core.checks import check_int, check_number
from interp.core.errors import ConfigError, named, warn
from interp.engine.interventions import SUBSPACE_KINDS, Interchange, Intervention, make_intervention
from interp.engine.pair_suffix import PairSuffix
from interp.hooks.locations import Location

if TYPE_CHECKING:
    from interp.api.intervenable import IntervenableModel

BOUNDLESS = "boundless"
#: The interventions DAS trains: a subspace of a given ``k`` (:data:`SUBSPACE_KINDS`), or one whose size is learned
#: (``boundless``; Wu et al. 2023, §3).
KINDS = (*SUBSPACE_KINDS, BOUNDLESS)
#: Training pairs the localist baseline's block is chosen on (a seeded share of the training pairs).
BLOCK_CHOICE_PAIRS = 256

PairTensors = tuple[torch.Tensor, torch.Tensor, torch.Tensor]


@contextmanager
def reuse(lab: "IntervenableModel") -> Iterator[None]:
    """Inside the block, DAS calls on ``lab`` keep what repeats between them: the drawn pairs, the model's own
    predictions and the last location's pair runner. For a run of many units over one example set, with the model's
    weights unchanged inside the block (what is kept would not see a change); outside it each call computes afresh."""
    held = lab._memo
    lab._memo = {} if held is None else held
    try:
        yield
    finally:
        lab._memo = held


def _memo(lab: "IntervenableModel") -> dict:
    return {} if lab._memo is None else lab._memo


def pairs(lab: "IntervenableModel", examples: Sequence, variable: str, *, seed: int, test_share: float, n_pairs: int | None,
          test_pairs: int) -> tuple[PairTensors | None, PairTensors]:  # fmt: skip
    """The training and held-out counterfactual pairs DAS draws on ``examples`` for ``variable`` with ``seed``.

    Each part is ``(bases, sources, targets)``, int64 ``[pairs]`` each: indices into ``examples`` and the
    counterfactual as the task's label id. ``n_pairs=None`` draws no training pairs (``None`` in their place).
    Drawn once per setting inside :func:`reuse`.

    Raises:
        ConfigError: naming ``n_pairs=`` or ``test_pairs=``: no pair of the examples can change ``variable``, or a count below 2;
            ``test_share=`` outside (0, 1).
    """
    return _drawn(lab, examples, variable, seed, test_share, n_pairs, test_pairs)[:2]


def _drawn(lab: "IntervenableModel", examples: Sequence, variable: str, seed: int, test_share: float, n_pairs: int | None,
           test_pairs: int) -> tuple[PairTensors | None, PairTensors, str]:  # fmt: skip
    """:func:`pairs`, and the name of the causal model they were drawn from."""
    key = ("das_pairs", tuple(e.id for e in examples), variable, seed, test_share, n_pairs, test_pairs)
    memo = _memo(lab)
    if key not in memo:
        causal = lab.task.build_causal_model(examples)
        inputs = [lab.task.inputs(e) for e in examples]
        drawn = draw_pairs(causal, inputs, variable, test_share, seed, n_pairs, test_pairs)
        memo[key] = (*(None if p is None else _as_tensors(p, lab.task.labels) for p in drawn), causal.name)
    return memo[key]


def _as_tensors(drawn, labels: Sequence[str]) -> PairTensors:
    targets = torch.tensor([labels.index(v) for v in drawn.counterfactual], dtype=torch.long)
    return torch.from_numpy(drawn.base), torch.from_numpy(drawn.source), targets


def runner(lab: "IntervenableModel", examples: Sequence, location: Location) -> PairSuffix:
    """The pair runner of ``examples`` at ``location``; inside :func:`reuse` the last one made is kept (one location's prefix vectors)."""
    key, memo = (location, tuple(e.id for e in examples)), _memo(lab)
    held = memo.get("runner")
    if held is None or held[0] != key:
        memo["runner"] = held = (key, PairSuffix(lab.model.module, lab.encode(examples), location))
    return held[1]


def own_predictions(lab: "IntervenableModel", examples: Sequence) -> np.ndarray:
    """The model's own label on each example, as the task's label ids (``[n]``); inside :func:`reuse`, once per example set."""
    key, memo = ("own", tuple(e.id for e in examples)), _memo(lab)
    if key not in memo:
        memo[key] = lab.reading.predict(lab.predict(examples))
    return memo[key]


def train(lab: "IntervenableModel", examples: Sequence, location: str | Location, variable: str, *, k: int | None, kind: str,
          n_pairs: int, epochs: int, lr: float, batch_size: int, seed: int, test_share: float, test_pairs: int,
          on_step: Callable[[float], None] | None = None, on_blocks: Callable[[int, int], None] | None = None,
          warn_unlearned: bool = True) -> DasResult:  # fmt: skip
    """:meth:`IntervenableModel.train_das <interp.api.intervenable.IntervenableModel.train_das>` (its arguments and errors);
    ``on_step(loss)`` is told after each optimizer step, ``on_blocks(scored, blocks)`` while the localist baseline's
    block is chosen (:func:`~interp.analysis.das.best_block`), and ``warn_unlearned=False`` leaves the warnings (a split
    at chance, a DAS that does not clear its untrained baseline) to the caller."""
    lab.task.check_variable(variable)
    loc = lab.location(location, (variable,))
    settings = FitSettings(epochs=epochs, lr=lr, batch_size=batch_size, seed=seed)
    check_int(n_pairs, "n_pairs", least=2)
    check_int(test_pairs, "test_pairs", least=2)
    check_number(test_share, "test_share")  # its range: split_examples
    examples = lab.task.check_examples(examples)
    if kind not in KINDS:
        raise ConfigError(f"{named('kind', repr(kind))} must be one of {', '.join(KINDS)}")
    train_pairs, held_out, causal_model = _drawn(lab, examples, variable, seed, test_share, n_pairs, test_pairs)
    run = runner(lab, examples, loc)
    try:
        intervention = make_intervention(kind, run.width, k, seed)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{named('kind', repr(kind))}, {named('k', repr(k))}: {exc}") from None
    own = own_predictions(lab, examples)
    if warn_unlearned:
        lab.split_accuracies(examples, own)
    read = lab.reading.read
    started = time.perf_counter()
    found = train_and_score(run, intervention, train_pairs, held_out, own, lab.reading, settings, on_step=on_step)
    seconds = time.perf_counter() - started  # the history's scoring included
    vanilla_key = ("vanilla", loc, tuple(e.id for e in examples), variable, seed, test_share, n_pairs, test_pairs)
    memo = _memo(lab)  # the whole vector's score is the same for every kind and k: once per location and pairs inside reuse
    if vanilla_key not in memo:
        memo[vanilla_key] = score_intervention(run, Interchange(run.width), *held_out, own, read)
    vanilla = memo[vanilla_key]
    train_b, train_s, train_t = train_pairs
    choose = torch.randperm(len(train_b), generator=torch.Generator().manual_seed(seed))[:BLOCK_CHOICE_PAIRS]
    block = best_block(run, intervention.k, train_b[choose], train_s[choose], train_t[choose], read, on_blocks)
    localist = score_intervention(run, block, *held_out, own, read)
    scores = {name: {key: value for key, value in score.items() if key != "hits"}
              for name, score in (("das", found.trained), ("untrained", found.untrained), ("vanilla", vanilla), ("block", localist))}  # fmt: skip
    trained = scores["das"]
    test_b, test_s, _ = held_out
    result = DasResult(
        intervention=intervention.cpu().eval(), variable=variable, location=loc, iia=_estimate(trained, "iia"),
        untrained_iia=_estimate(scores["untrained"], "iia"), gain=found.gain, stays_base=_estimate(trained, "stays_base"),
        copies_source=_estimate(trained, "copies_source"), chance=trained["chance"], history=found.history, train_pairs=len(train_b),
        held_out_pairs=[(examples[b].id, examples[s].id) for b, s in zip(test_b.tolist(), test_s.tolist())], interval=trained["interval"],
        vanilla_iia=_estimate(scores["vanilla"], "iia"), block_iia=_estimate(scores["block"], "iia"),
        block=f"{getattr(block, 'start', 0)}:{getattr(block, 'stop', run.width)}", kind=kind, seed=seed, losses=found.losses,
        train_seconds=seconds, scores=scores, causal_model=causal_model,
    )  # fmt: skip
    if warn_unlearned and not result.learned:
        warn(f"DAS for {variable} at {loc} (k={result.k}): held-out IIA {result.iia!r} does not clear the untrained "
             f"intervention's {result.untrained_iia!r} on the same {len(test_b)} pairs (gain {result.gain!r}); train on more pairs "
             f"or epochs (`n_pairs=`, `epochs=`) before reading it")  # fmt: skip
    return result


def score(lab: "IntervenableModel", examples: Sequence, intervention: Intervention, location: str | Location, variable: str, *,
          seed: int = 0, test_share: float = 0.2, test_pairs: int = 200) -> dict[str, dict]:  # fmt: skip
    """Score an intervention (trained, or loaded with :func:`interp.files.subspaces.load_trained_intervention`) and vanilla
    interchange on the held-out pairs :meth:`~interp.api.intervenable.IntervenableModel.train_das` draws with the same
    ``seed``, ``test_share`` and ``test_pairs``: with a run's own settings this reproduces its held-out IIA.

    Returns:
        ``{"intervention": ..., "vanilla": ...}``, each a dict of ``pairs``, ``iia``, ``stays_base``, ``copies_source``
        (shares, 0..1, each with ``_low`` and ``_high``: a 95% bootstrap over the held-out examples), ``chance`` and ``interval``.

    Raises:
        ConfigError: naming ``variable=``, ``location=``, or ``intervention=`` when its width is not the location's.
    """
    lab.task.check_variable(variable)
    loc = lab.location(location, (variable,))
    examples = lab.task.check_examples(examples)
    _, held_out = pairs(lab, examples, variable, seed=seed, test_share=test_share, n_pairs=None, test_pairs=test_pairs)
    run = runner(lab, examples, loc)
    if run.width != intervention.width:
        raise ConfigError(f"{named('intervention')} is {intervention.width} wide; location {loc} is {run.width} here")
    intervention.to(run.vectors.device)
    own, read = own_predictions(lab, examples), lab.reading.read
    found = {"intervention": score_intervention(run, intervention, *held_out, own, read),
             "vanilla": score_intervention(run, Interchange(run.width), *held_out, own, read)}  # fmt: skip
    return {name: {key: value for key, value in s.items() if key != "hits"} for name, s in found.items()}


def _estimate(score: dict, name: str) -> Estimate:
    return Estimate(score[name], score[f"{name}_low"], score[f"{name}_high"], score["interval"])
