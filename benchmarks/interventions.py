"""Interchange-intervention speed: the batched engine against the naive per-pair hooked forward pass.

    .venv/bin/python benchmarks/interventions.py --model runs/demo/model --location blocks.0.hook_resid_post@w_h

Same model, location and NMoNLI-test examples. Naive
(:func:`interp.interventions.naive.naive_interchange`): one batch-1 hooked
base forward per pair, source vectors precomputed. Engine
(:func:`interp.interventions.engine.interchange_logits`): each base's prefix
once, all sources through the suffix in batches. Labels must agree on every
pair both run.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import torch

from interp.data import encode_examples, load_monli
from interp.interventions import interchange_logits, naive_interchange, source_vectors
from interp.locations import Location
from interp.models import load_classifier


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="runs/demo/model")
    parser.add_argument("--location", default="blocks.0.hook_resid_post@w_h")
    parser.add_argument("--naive-bases", type=int, default=4)
    parser.add_argument("--bases", type=int, default=24)
    args = parser.parse_args()
    model, tokenizer = load_classifier(args.model, require_head=True)
    encoded = encode_examples(load_monli(splits=("nmonli_test",)), tokenizer)
    loc = Location.parse(args.location)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads; model {args.model}; {loc}")

    started = time.perf_counter()
    naive = naive_interchange(model, encoded[: args.naive_bases], encoded, loc, tokenizer.pad_token_id)
    naive_rate = naive.shape[0] * naive.shape[1] / (time.perf_counter() - started)

    started = time.perf_counter()
    vectors = source_vectors(model, encoded, loc)
    fast = interchange_logits(model, encoded[: args.bases], vectors, loc)
    fast_rate = fast.shape[0] * fast.shape[1] / (time.perf_counter() - started)

    same = torch.equal(fast[: args.naive_bases].argmax(-1), naive.argmax(-1))
    diff = (fast[: args.naive_bases] - naive).abs().max().item()
    print(f"naive  {naive.shape[0] * naive.shape[1]:6} pairs  {naive_rate:7.1f} pairs/s")
    print(f"engine {fast.shape[0] * fast.shape[1]:6} pairs  {fast_rate:7.1f} pairs/s  ({fast_rate / naive_rate:.1f}x naive; "
          f"labels agree on the shared pairs: {same}, max |Δ logit| {diff:.1e})")


if __name__ == "__main__":
    main()
