"""Fine-tuning steps with AdamW's fused kernel (what ``interp train`` runs) against torch's per-tensor loop.

Both arms start from the same weights and take the same length-grouped batches of MoNLI for the same number of steps,
in one process; the baseline is ``torch.optim.AdamW(foreach=False)``, the loop a CPU gets by default. Prints the
seconds a step of each, their ratio, and how far apart the two arms' weights end (float rounding).

    .venv/bin/python benchmarks/adamw.py --steps 30
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from interp.models import load_classifier
from interp.models.training import adamw, length_grouped_batches
from interp.tasks.monli import LABELS, collate, encode_examples, load_monli


def run_arm(model, optimizer, encoded, batches, pad_id: int) -> float:
    """Seconds a step, over ``batches`` (forward, backward and the optimizer's step)."""
    model.train()
    torch.manual_seed(0)
    started = time.perf_counter()
    for idx in batches:
        batch = collate([encoded[i] for i in idx], pad_id)
        loss = model(input_ids=batch["input_ids"], token_type_ids=batch["token_type_ids"], attention_mask=batch["attention_mask"],
                     labels=batch["labels"]).loss  # fmt: skip
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return (time.perf_counter() - started) / len(batches)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model, tokenizer = load_classifier("minilm", labels=LABELS, seed=0)
    examples = load_monli(args.data_dir, ("pmonli", "nmonli_train"))
    encoded = encode_examples(examples, tokenizer)
    batches = length_grouped_batches(encoded, args.batch_size, 0)[: args.steps]
    loop_model = copy.deepcopy(model)
    fused = run_arm(model, adamw(model.parameters(), lr=2e-5, weight_decay=0.01), encoded, batches, tokenizer.pad_token_id)
    loop = run_arm(loop_model, torch.optim.AdamW(loop_model.parameters(), lr=2e-5, weight_decay=0.01, foreach=False), encoded, batches,
                   tokenizer.pad_token_id)  # fmt: skip
    apart = max((a - b).abs().max().item() for a, b in zip(model.parameters(), loop_model.parameters()))
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, {args.threads} threads, torch {torch.__version__}")
    print(f"MiniLM, batch {args.batch_size}, {args.steps} steps: fused {fused:.3f} s a step, loop {loop:.3f} s a step, "
          f"{loop / fused:.2f}x; weights apart by at most {apart:.1e} after the steps")


if __name__ == "__main__":
    main()
