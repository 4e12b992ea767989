"""Fine-tuning throughput: length-grouped batches against plain random batches.

Both arms run the same model, examples, batch size and number of optimizer
steps in one process; the baseline is a plain shuffled loop (what a naive
training loop, or Hugging Face's Trainer without ``group_by_length``, does).

    .venv/bin/python benchmarks/training.py --steps 30

Prints examples/s of both arms, their ratio, and the padded-token share.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from interp.models import load_classifier
from interp.models.training import length_grouped_batches
from interp.tasks.monli import LABELS, collate, encode_examples, load_monli


def random_batches(n: int, batch_size: int, seed: int) -> list[list[int]]:
    order = torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()
    return [order[i : i + batch_size] for i in range(0, n, batch_size)]


def run_arm(model, encoded, batches, pad_id, steps: int) -> tuple[float, float]:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    model.train()
    padded = real = 0
    started = time.perf_counter()
    n = 0
    for idx in batches[:steps]:
        batch = collate([encoded[i] for i in idx], pad_id)
        real += int(batch["attention_mask"].sum())
        padded += batch["attention_mask"].numel()
        loss = model(
            input_ids=batch["input_ids"],
            token_type_ids=batch["token_type_ids"],
            attention_mask=batch["attention_mask"],
            labels=batch["labels"],
        ).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        n += len(idx)
    return n / (time.perf_counter() - started), 1 - real / padded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    examples = load_monli(args.data_dir, ("pmonli", "nmonli_train"))
    results = {}
    for name in ("random", "length-grouped"):
        model, tokenizer = load_classifier(args.model, labels=LABELS, seed=0)
        encoded = encode_examples(examples, tokenizer)
        batches = (
            random_batches(len(encoded), args.batch_size, 0)
            if name == "random"
            else length_grouped_batches(encoded, args.batch_size, 0)
        )
        run_arm(model, encoded, batches, tokenizer.pad_token_id, 2)  # warm-up
        results[name] = run_arm(model, encoded, batches[2:], tokenizer.pad_token_id, args.steps)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, threads {torch.get_num_threads()}")
    print(f"model {args.model}, batch {args.batch_size}, {args.steps} optimizer steps per arm, PMoNLI + NMoNLI train")
    for name, (rate, pad) in results.items():
        print(f"{name:15} {rate:7.1f} examples/s   padding {100 * pad:4.1f}% of tokens")
    print(f"speed-up, length-grouped / random: {results['length-grouped'][0] / results['random'][0]:.2f}x")


if __name__ == "__main__":
    main()
