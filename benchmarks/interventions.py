"""Interchange-intervention speed: the batched engine against the naive per-pair hooked forward pass.

    .venv/bin/python benchmarks/interventions.py --model runs/demo/model --location blocks.0.hook_resid_post@w_h

Same model, location and NMoNLI-test examples. Naive
(:func:`interp.interventions.naive.naive_interchange`): one batch-1 hooked
base forward per pair, source vectors precomputed. Engine
(:func:`interp.interventions.engine.interchange_logits`): each base's prefix
once, all sources through the suffix in batches; once with the last block
for every token (the engine before it learned to skip work), once as
`interp intervene` runs it, the last block for [CLS] only. Labels must agree
on every pair both run. The engine's executed FLOPs (unpadded tokens, the
suffix's matmuls and attention) are given as a share of the fp32 matmul peak
measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import torch

from interp.data import encode_examples, load_monli
from interp.interventions import interchange_logits, naive_interchange, slicing, source_vectors
from interp.locations import Location
from interp.models import load_classifier


def matmul_peak(size: int = 1536, repeats: int = 20) -> float:
    """fp32 GFLOP/s of a square matmul, best of ``repeats``."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - started)
    return 2 * size**3 / best / 1e9


def suffix_flops(config, seq: int, blocks: int, first_token_last: bool) -> float:
    """Multiply-adds × 2 of one pair's suffix: ``blocks`` BERT blocks on ``seq`` unpadded tokens."""
    d, f = config.hidden_size, config.intermediate_size
    full = seq * (2 * 4 * d * d + 2 * 2 * d * f) + 2 * 2 * seq * seq * d
    if not first_token_last:
        return blocks * full
    last = seq * 2 * 2 * d * d + (2 * 2 * d * d + 2 * 2 * d * f) + 2 * 2 * seq * d
    return (blocks - 1) * full + last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="runs/demo/model")
    parser.add_argument("--location", default="blocks.0.hook_resid_post@w_h")
    parser.add_argument("--naive-bases", type=int, default=4)
    parser.add_argument("--bases", type=int, default=24)
    parser.add_argument("--repeats", type=int, default=2, help="engine runs per arm; the best is reported")
    args = parser.parse_args()
    model, tokenizer = load_classifier(args.model, require_head=True)
    encoded = encode_examples(load_monli(splits=("nmonli_test",)), tokenizer)
    loc = Location.parse(args.location)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads; model {args.model}; {loc}")

    started = time.perf_counter()
    naive = naive_interchange(model, encoded[: args.naive_bases], encoded, loc, tokenizer.pad_token_id)
    naive_rate = naive.shape[0] * naive.shape[1] / (time.perf_counter() - started)

    print(f"{'naive':26} {naive.shape[0] * naive.shape[1]:6} pairs  {naive_rate:7.1f} pairs/s")

    peak_before = matmul_peak()
    skipping = slicing.READS_FIRST_TOKEN
    for name, heads in (("engine, full last block", frozenset()), ("engine (interp intervene)", skipping)):
        slicing.READS_FIRST_TOKEN = heads
        seconds = float("inf")
        for _ in range(args.repeats):  # the first run also pays one-time kernel setup for each sequence length
            started = time.perf_counter()
            vectors = source_vectors(model, encoded, loc)
            fast = interchange_logits(model, encoded[: args.bases], vectors, loc)
            seconds = min(seconds, time.perf_counter() - started)
        slicing.READS_FIRST_TOKEN = skipping
        rate = fast.shape[0] * fast.shape[1] / seconds
        same = torch.equal(fast[: args.naive_bases].argmax(-1), naive.argmax(-1))
        diff = (fast[: args.naive_bases] - naive).abs().max().item()
        blocks = model.config.num_hidden_layers - loc.hidden_index
        flops = sum(suffix_flops(model.config, len(e.input_ids), blocks, bool(heads)) for e in encoded[: args.bases]) * len(encoded)
        print(f"{name:26} {fast.shape[0] * fast.shape[1]:6} pairs  {rate:7.1f} pairs/s  ({rate / naive_rate:.1f}x naive; "
              f"labels agree on the shared pairs: {same}, max |Δ logit| {diff:.1e}; "
              f"suffix {flops / seconds / 1e9:.1f} GFLOP/s)")
    peak = max(peak_before, matmul_peak())
    print(f"fp32 matmul peak (1536^3, best of 20, the larger of before and after): {peak:.1f} GFLOP/s; the engine's suffix runs at "
          f"{flops / seconds / 1e9 / peak:.0%} of it")


if __name__ == "__main__":
    main()
