"""Fine-tuning a pretrained decoder as a classifier on a CPU: three routes, their seconds per step in one run.

    .venv/bin/python benchmarks/decoder_finetune.py --model smollm2-135m --steps 4 --batch-size 16

SmolLM2-135M (``--model``, any name ``interp.load_model`` takes) with a new classification head read at the last
token, on PMoNLI + NMoNLI-train pairs joined by the default template, AdamW at lr 5e-5, the same batches in each arm:

* full: every weight trains (what ``interp train`` does today);
* top: the last ``--top`` blocks, the final norm and the head train, the rest frozen (no gradient, so no backward
  pass below the lowest trained block);
* lora: LoRA adapters of rank 8 on every attention and MLP projection (``peft``'s ``inject_adapter_in_model``,
  ``pip install peft``), the head trained in full.

Each arm runs one warm-up step, then ``--steps`` timed steps; the figures are the median seconds per step, examples
per second and the ratio to ``full`` in this run, on this machine (nothing about accuracy: a route's accuracy needs a
whole fine-tuning, which the demo measures). Threads: torch's default for the machine unless ``--threads``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]


def batches(model, task, n: int, size: int, seed: int = 0):
    """``n`` batches of ``size`` encoded training pairs (inputs, labels)."""
    from interp.hooks.encoding import collate, encode_pair

    examples = task.examples(("pmonli", "nmonli_train"), n=n * size, seed=seed)
    encoded = [encode_pair(e, model.tokenizer, task.labels, model.module.template) for e in examples]
    out = []
    for k in range(n):
        chunk = encoded[k * size : (k + 1) * size]
        batch = collate(chunk, model.tokenizer.pad_token_id)
        out.append((batch, torch.tensor([e.label_id for e in chunk])))
    return out


def route(classifier, name: str, top: int) -> list:
    """Make route ``name`` of ``classifier`` (a :class:`~interp.models.decoders.DecoderClassifier`) and return its trainable
    parameters: every weight; the last ``top`` blocks, the final norm and the head; or LoRA adapters and the head."""
    inner = classifier.inner
    if name == "full":
        return list(classifier.parameters())
    if name == "top":
        base = classifier.base_model
        for p in classifier.parameters():
            p.requires_grad_(False)
        for part in (*base.layers[-top:], base.norm, inner.score):
            for p in part.parameters():
                p.requires_grad_(True)
        return [p for p in classifier.parameters() if p.requires_grad]
    from peft import LoraConfig, inject_adapter_in_model

    config = LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
    inject_adapter_in_model(config, inner)  # adapters inside the classifier's own modules: its forward is unchanged
    for n, p in classifier.named_parameters():
        p.requires_grad_("lora_" in n or ".score." in n or n.endswith("score.weight"))
    return [p for p in classifier.parameters() if p.requires_grad]


def step_seconds(model, trainable, data, forward) -> list[float]:
    optimizer = torch.optim.AdamW(trainable, lr=5e-5)
    times = []
    for batch, labels in data:
        start = time.perf_counter()
        logits = forward(batch)
        loss = torch.nn.functional.cross_entropy(logits, labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - start)
    return times


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--routes", default="full,top,lora")
    parser.add_argument("--top", type=int, default=2)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--data-dir", default=os.environ.get("INTERP_MONLI_DIR"))
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    import interp

    task = interp.load_task("monli", data_dir=args.data_dir)
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, {torch.get_num_threads()} threads; "
          f"{args.model}, batch {args.batch_size}, {args.steps} timed steps after 1 warm-up", flush=True)  # fmt: skip
    rows = {}
    for name in args.routes.split(","):
        model = interp.load_model(args.model, labels=("entailment", "neutral"), seed=0)
        data = batches(model, task, args.steps + 1, args.batch_size)
        classifier = model.module
        trainable = route(classifier, name, args.top)
        classifier.train()

        def forward(batch, classifier=classifier):
            return classifier(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits

        times = step_seconds(classifier, trainable, data, forward)[1:]
        median = statistics.median(times)
        rows[name] = median
        share = sum(p.numel() for p in trainable) / sum(p.numel() for p in classifier.parameters())
        print(f"{name:5}  {median:6.2f} s/step  {args.batch_size / median:6.2f} examples/s  trainable {100 * share:5.2f}%  "
              f"{rows['full'] / median if 'full' in rows else float('nan'):5.2f}× full", flush=True)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
