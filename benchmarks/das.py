"""DAS training and evaluation speed: interp's pair engine against pyvene's RotatedSpaceIntervention, same everything.

    .venv/bin/python benchmarks/das.py --model runs/demo/model --location blocks.4.hook_resid_post@w_h

Same frozen model (eval mode), example set (PMoNLI and NMoNLI test, at most
``--per-split`` of each, seeded), held-out split, balanced counterfactual
pairs for ``--variable`` (:mod:`interp.causal.pairs`), location, k, batch
size, number of steps, Adam at 1e-3, initial rotation (pyvene's rotate
layer is set to interp's seeded R before training) and batch order. Each
batch is ``--batch-size`` (base, source) pairs in the order interp's
trainer draws them (shuffled, bases of similar length together).

* interp (:mod:`interp.analysis.das`): each example's prefix up to the
  location once, before training (its time is counted in the training
  figure, and printed apart: it does not grow with the pairs or epochs);
  each step runs only the blocks after the location with gradients, on one
  padded batch.
* pyvene 0.1.8 (a benchmark extra, ``pip install --no-deps pyvene``):
  ``IntervenableModel`` with a ``RotatedSpaceIntervention`` at the block
  output, ``BertForSequenceClassification`` registered in its module and
  dimension maps (pyvene has no BERT card); each step runs the base and the
  source through the whole model, padded with their attention masks, as its
  DAS tutorial does.

Reported: pairs/s of training and of held-out evaluation for each, their
ratio, and each one's held-out IIA after training. ``--flops`` adds the
floating-point operations of the epoch's training steps (forward and
backward, every batch) of each, counted by ``torch.utils.flop_counter``: their ratio
is the speed-up an implementation of equal FLOP rate would reach, what
skipping work (not a faster kernel) can give.

``--localist K`` instead times the localist baseline's choice
(:func:`interp.analysis.das.best_block`: every block of K coordinates on up
to 256 training pairs, several blocks' rows to a call) against scoring one
block per call through ``predict_pairs``, on the same pairs; it prints both
times, their ratio, and whether they choose the same block.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import torch
import torch.nn.functional as F

from interp.analysis.das import FitSettings, _batches, best_block, fit_intervention, predict_pairs
from interp.causal.pairs import HELD_OUT_SEED_OFFSET, counterfactual_pairs, split_examples
from interp.engine.interventions import CoordinateBlock, RotatedSubspace
from interp.engine.pair_suffix import PairSuffix
from interp.hooks.locations import Location
from interp.api.specs import DataSpec, SampleSpec
from interp.api.das import _as_tensors
from interp.models import load_classifier
from interp.hooks.encoding import collate, encode_examples


def pyvene_model(model, loc: Location, k: int, rotation: torch.Tensor):
    import pyvene as pv
    from transformers import BertForSequenceClassification

    pv.type_to_module_mapping[BertForSequenceClassification] = {
        "block_output": ("bert.encoder.layer[%s]", pv.models.constants.CONST_OUTPUT_HOOK)
    }
    pv.type_to_dimension_mapping[BertForSequenceClassification] = {"block_output": ("hidden_size",)}
    wrapped = pv.IntervenableModel(
        {"layer": loc.hidden_index - 1, "component": "block_output", "unit": "pos", "intervention_type": pv.RotatedSpaceIntervention},
        model=model,
    )
    wrapped.disable_model_gradients()
    (intervention,) = wrapped.interventions.values()
    intervention = intervention[0] if isinstance(intervention, (tuple, list)) else intervention
    intervention.set_interchange_dim(k)
    with torch.no_grad():
        # the parametrization's right inverse: the same starting R, on the device the rotation lives on
        intervention.rotate_layer.weight = rotation.detach().to(intervention.rotate_layer.weight.device).clone()
    return wrapped, intervention


def pyvene_logits(wrapped, encoded, bases, sources, role: str, device=None):
    """pyvene's logits on the pairs (``bases[i]``, ``sources[i]``), each side padded with its attention mask, on ``device``."""
    base = collate([encoded[i] for i in bases], 0)
    source = collate([encoded[j] for j in sources], 0)
    keys = ("input_ids", "token_type_ids", "attention_mask")
    positions = ([[[int(p)] for p in source["positions"][role]]], [[[int(p)] for p in base["positions"][role]]])
    _, out = wrapped({k: base[k].to(device) for k in keys}, [{k: source[k].to(device) for k in keys}], {"sources->base": positions})
    return out.logits


def pyvene_train(wrapped, intervention, encoded, train, batches, role: str, lr: float, device=None) -> float:
    """Train pyvene's intervention one epoch over ``batches`` (index tensors into ``train``'s pairs), Adam at ``lr``, as
    interp's trainer does; the seconds it took (the device synchronized)."""
    optimizer = torch.optim.Adam(intervention.parameters(), lr=lr)
    started = time.perf_counter()
    for batch in batches:
        logits = pyvene_logits(wrapped, encoded, train[0][batch].tolist(), train[1][batch].tolist(), role, device)
        loss = F.cross_entropy(logits, train[2][batch].to(logits.device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    if device is not None and torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() - started


def pyvene_predict(wrapped, encoded, pairs, role: str, device=None) -> np.ndarray:
    """pyvene's predicted label id on each of ``pairs`` (bases, sources, ...): int64 ``[pairs]``, 256 pairs a pass."""
    with torch.no_grad():
        return np.concatenate([
            pyvene_logits(wrapped, encoded, pairs[0][i : i + 256].tolist(), pairs[1][i : i + 256].tolist(), role, device).argmax(-1).cpu().numpy()
            for i in range(0, len(pairs[0]), 256)
        ])  # fmt: skip


def epoch_flops(runner, rotated, wrapped, encoded, train, batches, role: str) -> None:
    """Print the FLOPs of an epoch's training steps (forward, loss, backward; every batch) of each arm."""
    from torch.utils.flop_counter import FlopCounterMode

    from interp.engine.pair_suffix import frozen_weights

    counts = {}
    for arm in ("interp", "pyvene"):
        with FlopCounterMode(display=False) as counter:
            for batch in batches:
                if arm == "interp":
                    with frozen_weights(runner.model):
                        logits = runner.logits(train[0][batch], train[1][batch], rotated)
                else:
                    logits = pyvene_logits(wrapped, encoded, train[0][batch].tolist(), train[1][batch].tolist(), role)
                F.cross_entropy(logits.float(), train[2][batch]).backward()
        counts[arm] = counter.get_total_flops()
    print(f"the epoch's {len(batches)} training steps: interp {counts['interp'] / 1e9:.1f} GFLOP, pyvene {counts['pyvene'] / 1e9:.1f} "
          f"GFLOP; FLOP ratio {counts['pyvene'] / counts['interp']:.2f}x (the speed-up at equal FLOP rate)")


def localist(runner: PairSuffix, k: int, train, pairs: int = 256) -> None:
    """best_block's time and choice against one block per call, on the first ``pairs`` training pairs."""
    bases, sources, targets = (t[:pairs] for t in train)
    blocks = [CoordinateBlock(runner.width, start, start + k) for start in range(0, runner.width - k + 1, k)]
    started = time.perf_counter()
    hits = [float((predict_pairs(runner, block, bases, sources) == targets.numpy()).mean()) for block in blocks]
    one_per_call = time.perf_counter() - started
    started = time.perf_counter()
    chosen = best_block(runner, k, bases, sources, targets)
    batched = time.perf_counter() - started
    reference = blocks[int(np.argmax(hits))]
    runs = len(blocks) * len(bases)
    print(f"localist baseline, {len(blocks)} blocks of {k} on {len(bases)} pairs ({runs} suffix runs): one block per call "
          f"{one_per_call:.1f} s ({runs / one_per_call:.0f} runs/s), best_block {batched:.1f} s ({runs / batched:.0f} runs/s): "
          f"{one_per_call / batched:.2f}x; the same block: {(chosen.start, chosen.stop) == (reference.start, reference.stop)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="runs/demo/model")
    parser.add_argument("--location", default="blocks.4.hook_resid_post@w_h")
    parser.add_argument("--variable", default="lexrel")
    parser.add_argument("--k", type=int, default=64)
    parser.add_argument("--per-split", type=int, default=200)
    parser.add_argument("--train-pairs", type=int, default=2048)
    parser.add_argument("--test-pairs", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--flops", action="store_true", help="also count the training steps' FLOPs for each arm")
    parser.add_argument("--localist", type=int, default=None, metavar="K",
                        help="time only the localist baseline's choice of a block of K coordinates, against one block per call")
    args = parser.parse_args()
    torch.manual_seed(0)
    sample = SampleSpec(("pmonli", "nmonli_test"), max_per_split=args.per_split)
    task = DataSpec().load(variables=(args.variable,), splits=sample.splits)
    examples = sample.draw(task)
    causal = task.build_causal_model(examples)
    model, tokenizer = load_classifier(args.model, labels=task.labels, require_head=True)
    encoded = encode_examples(examples, tokenizer, "first", task.labels)
    loc = Location.parse(args.location)
    inputs = [task.inputs(e) for e in examples]
    train_idx, test_idx = split_examples(len(examples), 0.2, 0)
    train = _as_tensors(counterfactual_pairs(causal, inputs, args.variable, train_idx, args.train_pairs, 0), task.labels)
    test = _as_tensors(counterfactual_pairs(causal, inputs, args.variable, test_idx, args.test_pairs, HELD_OUT_SEED_OFFSET), task.labels)
    settings = FitSettings(epochs=1, lr=1e-3, batch_size=args.batch_size, seed=0)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads; model {args.model}; {len(examples)} examples "
          f"({min(len(e.input_ids) for e in encoded)} to {max(len(e.input_ids) for e in encoded)} tokens); {loc}; "
          f"{args.variable}; k = {args.k}; {len(train[0])} training pairs in batches of {args.batch_size}, one epoch; {len(test[0])} held-out pairs")

    if args.localist is not None:
        localist(PairSuffix(model, encoded, loc), args.localist, train)
        return

    # interp
    started = time.perf_counter()
    runner = PairSuffix(model, encoded, loc)
    ours_prefix = time.perf_counter() - started  # once per example set, whatever the pairs and epochs
    rotated = RotatedSubspace(runner.width, args.k, seed=0)
    initial = rotated.matrix.detach().clone()
    fit_intervention(runner, rotated, *train, settings)
    ours_train = time.perf_counter() - started
    started = time.perf_counter()
    ours_pred = predict_pairs(runner, rotated, test[0], test[1])
    ours_eval = time.perf_counter() - started
    ours_iia = float((ours_pred == test[2].numpy()).mean())

    # pyvene: the same batches in the same order
    try:
        wrapped, intervention = pyvene_model(model, loc, args.k, initial)
    except ImportError:
        raise SystemExit("pyvene is not installed (pip install --no-deps pyvene==0.1.8)")
    batches = _batches(runner.lengths[train[0]], settings.batch_size, torch.Generator().manual_seed(settings.seed))
    (role,) = loc.roles
    theirs_train = pyvene_train(wrapped, intervention, encoded, train, batches, role, settings.lr)
    started = time.perf_counter()
    theirs_pred = pyvene_predict(wrapped, encoded, test, role)
    theirs_eval = time.perf_counter() - started
    theirs_iia = float((theirs_pred == test[2].numpy()).mean())

    if args.flops:
        epoch_flops(runner, rotated, wrapped, encoded, train, batches, role)
    n_train, n_test = len(train[0]), len(test[0])
    print(f"{'arm':8} {'train pairs/s':>14} {'eval pairs/s':>13} {'held-out IIA':>13}")
    print(f"{'pyvene':8} {n_train / theirs_train:14.1f} {n_test / theirs_eval:13.1f} {theirs_iia:13.3f}")
    print(f"{'interp':8} {n_train / ours_train:14.1f} {n_test / ours_eval:13.1f} {ours_iia:13.3f}")
    print(f"speed-up: training {theirs_train / ours_train:.1f}x, evaluation {theirs_eval / ours_eval:.1f}x; "
          f"IIA difference {ours_iia - theirs_iia:+.3f}; same initial rotation, batches and order")
    print(f"interp's training time holds the examples' prefix pass, {ours_prefix:.1f} s of {ours_train:.1f} s (once per example set); "
          f"its steps alone: {n_train / (ours_train - ours_prefix):.1f} pairs/s, {theirs_train / (ours_train - ours_prefix):.1f}x pyvene")


if __name__ == "__main__":
    main()
