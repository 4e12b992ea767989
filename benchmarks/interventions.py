"""Interchange-intervention speed: the batched engine against the naive per-pair hooked forward pass.

    .venv/bin/python benchmarks/interventions.py --model runs/demo/model --location blocks.0.hook_resid_post@w_h
    .venv/bin/python benchmarks/interventions.py --model runs/demo/model --location blocks.2.attn.hook_z.h5@w_h   # a head
    .venv/bin/python benchmarks/interventions.py --task mqnli --data-file runs/mqnli/iid50k.jsonl \
        --model runs/mqnli/model_iid50k --location blocks.2.hook_resid_post@adj_s.p+n_s.p+adj_s.h+n_s.h

Same model, location and examples (MoNLI: NMoNLI test; another task: its
default example set, e.g. MQNLI's test split, whose sequences are longer and
whose nodes live at several tokens). Naive
(:func:`interp.engine.naive.naive_interchange`): one batch-1 hooked
base forward per pair, source vectors precomputed. Engine
(:func:`interp.engine.batched.interchange_logits`): each base's prefix
once, all sources through the suffix in batches; once with the last block
for every token (the engine before it learned to skip work), once as
`interp intervene` runs it, the last block for [CLS] only. Labels must agree
on every pair both run. pyvene (optional, ``pip install --no-deps pyvene``;
a benchmark extra, never a dependency of interp): ``IntervenableModel`` with
a ``VanillaIntervention`` at the same block output and token, after
registering ``BertForSequenceClassification`` in its module and dimension
maps (pyvene has no BERT card); batched as well as it allows, one base
repeated against a batch of equal-length sources, each call running source
and base forward passes. The engine's executed FLOPs (matmuls and attention as
run, on unpadded tokens, counted by torch's ``FlopCounterMode``; the
prefixes of sources and bases and the Q/K/V projections computed once
included) are given as a share of the
fp32 matmul peak measured in the same run, two ways. Burst: the best single
1536³ matmul of 20, before and after the engine arms. Same windows: the
engine runs over ``--window-bases`` bases in chunks of ``--chunk-bases``,
and after each chunk 1536³ matmuls run back to back for as long as the
chunk took; the share is the engine's FLOP rate over the matmuls' rate in
those interleaved windows, so both see the same machine (this CPU's matmul
rate moves between about 140 and 250 GFLOP/s in phases of seconds, which a
burst peak taken in a fast phase does not). The engine arms: the last block
in full with the model's own modules (the engine of issue #4), the last
block for [CLS] only with the model's own modules, and as `interp
intervene` runs it (fused blocks with reused buffers and the first suffix
block's Q/K/V taken from the base, :mod:`interp.engine.blocks`).

At a component site (a head's ``attn.hook_z.h{H}``, ``hook_mlp_out``, ...;
:mod:`interp.hooks.locations`) the pyvene arm is skipped and a
TransformerLens arm runs instead (when transformer-lens is installed, the
``tl`` extra): ``TransformerBridge.run_with_hooks`` patching the site's
bridge hook, one full forward pass per pair, rows batched 64 at a time
(:class:`interp.backends.tl_bridge.BridgeRunner`), on the same bases as
the naive loop.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import torch
from torch.utils import flop_counter

from interp.engine import batched as engine
from interp.engine import interchange_logits, naive_interchange, slicing, source_vectors
from interp.hooks.architecture import architecture
from interp.hooks.locations import Location
from interp.models import load_classifier
from interp.tasks import resolve_task
from interp.hooks.encoding import encode_examples, location_tokens


def matmul_peak(size: int = 1536, repeats: int = 20) -> float:
    """fp32 GFLOP/s of a square matmul, best of ``repeats``."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - started)
    return 2 * size**3 / best / 1e9


def counted(fn, *args):
    """``fn(*args)`` and the FLOPs it executed, by torch's ``FlopCounterMode`` (matmuls and attention).

    The counter does not know two ops the engine runs on a CPU, so they are
    mapped here: ``addmm_`` (counted as its matmul) and the CPU flash attention
    (counted as attention).
    """
    aten = torch.ops.aten
    mapping = {
        aten.addmm_: lambda bias, a, b, *_, out_shape=None, **__: flop_counter.mm_flop(a, b),
        aten._scaled_dot_product_flash_attention_for_cpu:
            lambda q, k, v, *_, out_shape=None, **__: flop_counter.sdpa_flop_count(q, k, v),
    }  # fmt: skip
    with flop_counter.FlopCounterMode(display=False, custom_mapping=mapping) as counter:
        result = fn(*args)
    return result, counter.get_total_flops()


def same_windows(model, encoded, vectors, loc: Location, n_bases: int, chunk: int) -> tuple[float, float]:
    """GFLOP/s of the engine and of 1536³ matmuls, interleaved: each chunk of bases, then matmuls for as long.

    The engine's FLOPs are counted (:func:`counted`) on an untimed run of the same chunk.
    """
    a, b, c = torch.randn(1536, 1536), torch.randn(1536, 1536), torch.empty(1536, 1536)
    engine_work = engine_time = matmul_work = matmul_time = 0.0
    for k in range(0, n_bases, chunk):
        bases = encoded[k : min(k + chunk, n_bases)]
        engine_work += counted(interchange_logits, model, bases, vectors, loc)[1]  # untimed: the count
        started = time.perf_counter()
        interchange_logits(model, bases, vectors, loc)
        seconds = time.perf_counter() - started
        engine_time += seconds
        started = time.perf_counter()
        while time.perf_counter() - started < seconds:
            torch.mm(a, b, out=c)
            matmul_work += 2 * 1536**3
        matmul_time += time.perf_counter() - started
    return engine_work / engine_time / 1e9, matmul_work / matmul_time / 1e9


def pyvene_arm(model, encoded, loc: Location, n_bases: int):
    """Logits ``[n_bases, n_sources, n_labels]`` and seconds of pyvene's interchange intervention, or None without pyvene."""
    try:
        import pyvene as pv
    except ImportError:
        return None
    from transformers import BertForSequenceClassification

    from interp.engine.batched import length_groups

    if loc.hidden_index == 0:
        raise SystemExit("the pyvene arm needs a block output location (blocks.l.hook_resid_post)")
    pv.type_to_module_mapping[BertForSequenceClassification] = {
        "block_output": ("bert.encoder.layer[%s]", pv.models.constants.CONST_OUTPUT_HOOK)
    }
    pv.type_to_dimension_mapping[BertForSequenceClassification] = {"block_output": ("hidden_size",)}
    tokens = location_tokens(encoded, loc.roles)
    wrapped = pv.IntervenableModel(
        {"layer": loc.hidden_index - 1, "component": "block_output", "unit": "pos", "max_number_of_units": len(tokens[0]),
         "intervention_type": pv.VanillaIntervention},
        model=model,
    )  # fmt: skip
    wrapped.disable_model_gradients()
    out = torch.empty(n_bases, len(encoded), model.config.num_labels)
    device = next(model.parameters()).device
    started = time.perf_counter()
    with torch.no_grad():
        for i in range(n_bases):
            base = encoded[i]
            for group in length_groups(encoded):
                k = len(group)
                base_in = {"input_ids": torch.tensor([base.input_ids] * k, device=device),
                           "token_type_ids": torch.tensor([base.token_type_ids] * k, device=device)}  # fmt: skip
                src_in = {"input_ids": torch.tensor([encoded[j].input_ids for j in group], device=device),
                          "token_type_ids": torch.tensor([encoded[j].token_type_ids for j in group], device=device)}  # fmt: skip
                # unit locations: [intervention][batch row][unit]
                src_pos = [[list(tokens[j]) for j in group]]
                base_pos = [[list(tokens[i])] * k]
                _, counterfactual = wrapped(base_in, [src_in], {"sources->base": (src_pos, base_pos)})
                out[i, torch.tensor(group)] = counterfactual.logits.float().cpu()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return out, time.perf_counter() - started


def face_against_engine(lab, model, examples: list, encoded: list, n_bases: int, loc: Location, repeats: int) -> tuple[float, float, bool]:
    """The face and the engine alone on the first ``n_bases`` examples as bases × every example as sources, arms
    interleaved over ``repeats`` rounds so both see the same phases of the machine (this CPU's rate moves by tens of
    percent over seconds): the best seconds of each, and whether their labels agree."""
    engine_seconds = face_seconds = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        logits = interchange_logits(model, encoded[:n_bases], source_vectors(model, encoded, loc), loc)
        engine_seconds = min(engine_seconds, time.perf_counter() - started)
        started = time.perf_counter()
        result = lab.interchange(examples[:n_bases], examples, loc)
        face_seconds = min(face_seconds, time.perf_counter() - started)
    return engine_seconds, face_seconds, torch.equal(result.logits.argmax(-1), logits.argmax(-1))


def square(lab, model, examples: list, encoded: list, loc: Location, repeats: int) -> None:
    """The face against the engine on a square grid (the same ``n`` examples as bases and sources, as ``interp
    intervene`` runs a sample): :func:`face_against_engine`, printed as a line."""
    engine_seconds, face_seconds, agree = face_against_engine(lab, model, examples, encoded, len(encoded), loc, repeats)
    pairs = len(encoded) ** 2
    print(f"square grid {len(encoded)} x {len(encoded)}: engine {pairs / engine_seconds:7.1f} pairs/s, "
          f"interp.IntervenableModel {pairs / face_seconds:7.1f} pairs/s ({engine_seconds / face_seconds:.2f}x the engine; "
          f"labels agree: {agree})")


def face_bound(model, encoded: list, n_bases: int, loc: Location, engine_seconds: float, repeats: int) -> str:
    """The most the face can reach against the engine on ``n_bases`` bases × every example, from token counts.

    The face runs what the engine runs plus each example's own suffix (the model's own prediction, which the nulls
    need; bases and sources here are one list, so each example once). A suffix costs about the same per token row
    for a pair as for an example, so at best the face takes the engine's time plus its suffix time (the engine's
    time less the prefixes of the sources, timed here, and of the bases) × own token rows / the pairs' token rows. An upper estimate: an
    example's own suffix runs its first block in full, where a pair's reuses the base's queries, keys and values.
    """
    prefix = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        source_vectors(model, encoded, loc)
        prefix = min(prefix, time.perf_counter() - started)
    lengths = [len(e.input_ids) for e in encoded]
    pair_rows, own_rows = len(encoded) * sum(lengths[:n_bases]), sum(lengths)
    suffix = max(engine_seconds - prefix * (1 + sum(lengths[:n_bases]) / own_rows), 0.0)  # less the bases' prefix too
    bound = engine_seconds / (engine_seconds + suffix * own_rows / pair_rows)
    return (f"the face's bound from token counts: {bound:.2f}x the engine (each example's own suffix, {own_rows:,} token rows, "
            f"beside the pairs' {pair_rows:,}; the sources' prefix {prefix:.1f} s of the engine's {engine_seconds:.1f} s)")


def tl_arm(model, tokenizer, encoded, loc: Location, n_bases: int):
    """Logits ``[n_bases, n_sources, n_labels]`` and seconds of TransformerLens ``run_with_hooks`` patching, or None without it."""
    try:
        from interp.backends.tl_bridge import BridgeRunner
    except ImportError:
        return None
    backend = BridgeRunner(model, tokenizer)
    vectors = backend.vectors(encoded, loc)
    started = time.perf_counter()
    logits = backend.interchange_logits(encoded[:n_bases], vectors, loc)
    return logits, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="runs/demo/model")
    parser.add_argument("--task", default="monli", help="monli, or mqnli with --data-file")
    parser.add_argument("--data-file", default=None)
    parser.add_argument("--location", default="blocks.0.hook_resid_post@w_h")
    parser.add_argument("--naive-bases", type=int, default=4)
    parser.add_argument("--bases", type=int, default=24)
    parser.add_argument("--repeats", type=int, default=2, help="engine runs per arm; the best is reported")
    parser.add_argument("--window-bases", type=int, default=120, help="bases of the same-windows share (all sources each)")
    parser.add_argument("--chunk-bases", type=int, default=4, help="bases per engine window of the same-windows share")
    parser.add_argument("--square", type=int, default=0,
                        help="also time the face against the engine on a square grid: the first N examples as bases and sources")
    args = parser.parse_args()
    task = resolve_task(args.task, data_file=args.data_file)
    model, tokenizer = load_classifier(args.model, labels=task.labels, require_head=True)
    examples = task.load(task.default_splits)[:200]
    encoded = encode_examples(examples, tokenizer, "first", task.labels)
    loc = Location.parse(args.location)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads; model {args.model}; task {task.name}, {len(encoded)} examples "
          f"({min(len(e.input_ids) for e in encoded)} to {max(len(e.input_ids) for e in encoded)} tokens); {loc}")

    started = time.perf_counter()
    naive = naive_interchange(model, encoded[: args.naive_bases], encoded, loc, tokenizer.pad_token_id)
    naive_rate = naive.shape[0] * naive.shape[1] / (time.perf_counter() - started)

    # a peer library on the same pairs: pyvene at a block output, TransformerLens's run_with_hooks at a component
    peer_name, peer = ("pyvene", pyvene_arm(model, encoded, loc, args.naive_bases)) if loc.is_residual else \
        ("TransformerLens", tl_arm(model, tokenizer, encoded, loc, args.naive_bases))
    if peer is not None:
        peer_logits, peer_seconds = peer
        peer_rate = peer_logits.shape[0] * peer_logits.shape[1] / peer_seconds
        print(f"{peer_name:26} {peer_logits.shape[0] * peer_logits.shape[1]:6} pairs  {peer_rate:7.1f} pairs/s  "
              f"(labels agree with naive: {torch.equal(peer_logits.argmax(-1), naive.argmax(-1))}, "
              f"max |Δ logit| {(peer_logits - naive).abs().max().item():.1e})")
    else:
        extra = "pip install --no-deps pyvene" if loc.is_residual else "pip install 'interp[tl]'"
        print(f"{peer_name} not installed ({extra}): its arm is skipped")
    print(f"{'naive':26} {naive.shape[0] * naive.shape[1]:6} pairs  {naive_rate:7.1f} pairs/s")

    peak_before = matmul_peak()
    skipping = slicing.READS_FIRST_TOKEN
    own_modules = lambda model, hidden_index: None  # noqa: E731  (no fused blocks: the model's own modules)
    arms = (
        ("engine, full last block", frozenset(), own_modules),
        ("engine, own modules", skipping, own_modules),
        ("engine (interp intervene)", skipping, engine.fast_suffix),
    )
    fused = engine.fast_suffix
    for name, heads, fast in arms:
        slicing.READS_FIRST_TOKEN, engine.fast_suffix = heads, fast
        seconds = float("inf")
        try:
            for _ in range(args.repeats):  # the first run also pays one-time kernel setup for each sequence length
                started = time.perf_counter()
                vectors = source_vectors(model, encoded, loc)
                fast_logits = interchange_logits(model, encoded[: args.bases], vectors, loc)
                seconds = min(seconds, time.perf_counter() - started)
            flops = counted(lambda: interchange_logits(model, encoded[: args.bases], source_vectors(model, encoded, loc), loc))[1]
        finally:
            slicing.READS_FIRST_TOKEN, engine.fast_suffix = skipping, fused
        rate = fast_logits.shape[0] * fast_logits.shape[1] / seconds
        same = torch.equal(fast_logits[: args.naive_bases].argmax(-1), naive.argmax(-1))
        diff = (fast_logits[: args.naive_bases] - naive).abs().max().item()
        versus = f", {rate / peer_rate:.1f}x {peer_name}" if peer is not None else ""
        print(f"{name:26} {fast_logits.shape[0] * fast_logits.shape[1]:6} pairs  {rate:7.1f} pairs/s  ({rate / naive_rate:.1f}x naive{versus}; "
              f"labels agree on the shared pairs: {same}, max |Δ logit| {diff:.1e}; "
              f"executes {flops / seconds / 1e9:.1f} GFLOP/s)")
    # The public face (interp.IntervenableModel.interchange) on the same pairs: the engine plus the causal model's
    # counterfactuals, each example's values and the model's own predictions, all in memory.
    import interp

    lab = interp.IntervenableModel(interp.load_model(model, tokenizer), task)
    engine_seconds, seconds, agree = face_against_engine(lab, model, examples, encoded, args.bases, loc, args.repeats)
    pairs = args.bases * len(encoded)
    face_rate = pairs / seconds
    versus = f", {face_rate / peer_rate:.1f}x {peer_name}" if peer is not None else ""
    print(f"{'interp.IntervenableModel':26} {pairs:6} pairs  {face_rate:7.1f} pairs/s  ({face_rate / naive_rate:.1f}x naive{versus}, "
          f"{engine_seconds / seconds:.2f}x the engine alone, interleaved with it ({pairs / engine_seconds:.1f} pairs/s; best of "
          f"{args.repeats} rounds each); labels agree with the engine: {agree})")
    if loc.is_residual and loc.hidden_index < len(architecture(model).block_list(model)):  # the face's own suffix is the engine's
        print(face_bound(model, encoded, args.bases, loc, engine_seconds, args.repeats))
    if args.square:
        square(lab, model, examples[: args.square], encoded[: args.square], loc, args.repeats)
    peak = max(peak_before, matmul_peak())
    achieved = flops / seconds / 1e9
    print(f"fp32 matmul peak, burst (1536^3, best of 20, the larger of before and after the engine arms): {peak:.1f} GFLOP/s; "
          f"the engine (interp intervene) runs at {achieved / peak:.0%} of it")
    n_bases = min(args.window_bases, len(encoded))
    engine_rate, matmul_rate = same_windows(model, encoded, vectors, loc, n_bases, args.chunk_bases)
    print(f"same windows ({n_bases} bases x {len(encoded)} sources in chunks of {args.chunk_bases} bases, each followed by "
          f"1536^3 matmuls for as long): engine {engine_rate:.1f} GFLOP/s, matmuls {matmul_rate:.1f} GFLOP/s; "
          f"the engine runs at {engine_rate / matmul_rate:.0%} of the matmul rate")


if __name__ == "__main__":
    main()
