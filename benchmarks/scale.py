"""Scale: the cache, the engine and DAS on BERT-base (12 × 768) and BERT-large (24 × 1024) sized models.

    .venv/bin/python benchmarks/scale.py                       # minilm-sized, base and large
    .venv/bin/python benchmarks/scale.py --sizes base --bases 8

Random weights (speed does not depend on them): a seeded
``BertForSequenceClassification`` of each size with MoNLI's two labels and
the embedded model's WordPiece tokenizer, saved as a checkpoint. Each arm
runs in its own process under ``/usr/bin/time``, so its peak memory (the
maximum resident set, model loading included) is its own:

* cache: ``interp cache`` on NMoNLI test (200 examples, every block output
  at every role), examples/s timed inside the job (model loading excluded);
* engine: ``benchmarks/interventions.py`` at the middle block's output at
  ``w_h``: the batched engine (as ``interp intervene`` runs it) against the
  naive batch-1 hooked loop and pyvene, on the same pairs (labels checked
  equal);
* DAS: ``benchmarks/das.py`` at the same location, k = 64: interp's pair
  engine against pyvene's ``RotatedSpaceIntervention``, training pairs/s.

It closes with what all 7.17M ordered pairs of MoNLI (2,678 examples,
squared) would take at one location at each size: the engine's measured
rate × pairs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: (layers, hidden size, heads): the embedded model's, BERT-base's and BERT-large's shapes.
SIZES = {"minilm": (6, 384, 12), "base": (12, 768, 12), "large": (24, 1024, 16)}
MONLI_PAIRS = 2678**2


def build(size: str, root: Path) -> Path:
    """A seeded random classifier of ``size`` saved under ``root`` (reused when there)."""
    path = root / f"bert-{size}-random"
    if (path / "model.safetensors").is_file():
        return path
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from interp.models import embedded_model_dir

    layers, hidden, heads = SIZES[size]
    tokenizer = AutoTokenizer.from_pretrained(embedded_model_dir())
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                        intermediate_size=4 * hidden, num_labels=2, id2label={0: "entailment", 1: "neutral"},
                        label2id={"entailment": 0, "neutral": 1})  # fmt: skip
    BertForSequenceClassification(config).eval().save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path


def timed(command: list[str]) -> tuple[str, float]:
    """Run ``command`` under ``/usr/bin/time``: its stdout and its peak resident memory in GiB."""
    done = subprocess.run(["/usr/bin/time", "-f", "peak-kib %M", *command], capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    peak = int(re.findall(r"peak-kib (\d+)", done.stderr)[-1])
    return done.stdout, peak / 2**20


def cache_child(model: str, out: str) -> None:
    """The cache arm, inside its own process: prints JSON with the job's examples/s."""
    from interp import Classifier, DataSpec, RunSpec, SampleSpec, load_model
    from interp.jobs.cache import CacheConfig, build_cache

    classifier: Classifier = load_model(model)
    started = time.perf_counter()
    build_cache(CacheConfig(model=classifier, out=out, data=DataSpec(), sample=SampleSpec(("nmonli_test",)), run=RunSpec()), progress=False)
    print(json.dumps({"examples_per_s": 200 / (time.perf_counter() - started)}))


def rate(text: str, arm: str) -> float | None:
    found = re.search(rf"^{re.escape(arm)}\s+\d+ pairs\s+([\d.]+) pairs/s", text, re.M)
    return float(found.group(1)) if found else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="minilm,base,large")
    parser.add_argument("--models", default=str(Path(tempfile.gettempdir()) / "interp-scale"), help="where the random checkpoints are kept")
    parser.add_argument("--naive-bases", type=int, default=2)
    parser.add_argument("--bases", type=int, default=8)
    parser.add_argument("--das-pairs", type=int, default=512)
    parser.add_argument("--child-cache", nargs=2, metavar=("MODEL", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_cache:
        return cache_child(*args.child_cache)
    import torch

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads; {time.strftime('%Y-%m-%d %H:%M')}")
    rows = []
    for size in args.sizes.split(","):
        layers, hidden, _ = SIZES[size]
        model = build(size, Path(args.models))
        location = f"blocks.{layers // 2 - 1}.hook_resid_post@w_h"
        print(f"\n== {size}: {layers} layers × {hidden}, {location}", flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            out, cache_peak = timed([sys.executable, __file__, "--child-cache", str(model), f"{tmp}/a.h5"])
        cache_rate = json.loads(out.splitlines()[-1])["examples_per_s"]
        print(f"cache: {cache_rate:.1f} examples/s, peak {cache_peak:.2f} GiB", flush=True)
        engine_out, engine_peak = timed([sys.executable, "benchmarks/interventions.py", "--model", str(model), "--location", location,
                                         "--naive-bases", str(args.naive_bases), "--bases", str(args.bases), "--repeats", "1",
                                         "--window-bases", str(args.bases)])  # fmt: skip
        print(engine_out, f"peak {engine_peak:.2f} GiB", flush=True)
        das_out, das_peak = timed([sys.executable, "benchmarks/das.py", "--model", str(model), "--location", location,
                                   "--train-pairs", str(args.das_pairs), "--test-pairs", "128", "--per-split", "100"])  # fmt: skip
        print(das_out, f"peak {das_peak:.2f} GiB", flush=True)
        das = re.search(r"^interp\s+([\d.]+)\s+([\d.]+)", das_out, re.M)
        das_pyvene = re.search(r"^pyvene\s+([\d.]+)\s+([\d.]+)", das_out, re.M)
        engine, naive, pyvene = rate(engine_out, "engine (interp intervene)"), rate(engine_out, "naive"), rate(engine_out, "pyvene")
        rows.append((size, layers, hidden, cache_rate, cache_peak, engine, naive, pyvene, engine_peak,
                     float(das.group(1)), float(das_pyvene.group(1)) if das_pyvene else None, das_peak))  # fmt: skip

    print("\n| model | cache ex/s (peak GiB) | engine pairs/s | × naive | × pyvene | peak GiB | DAS train pairs/s | × pyvene | peak GiB | all MoNLI pairs at one location |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for size, layers, hidden, cache_rate, cache_peak, engine, naive, pyvene, engine_peak, das, das_pyvene, das_peak in rows:
        hours = MONLI_PAIRS / engine / 3600
        print(f"| {size} ({layers} × {hidden}) | {cache_rate:.1f} ({cache_peak:.2f}) | {engine:.1f} | {engine / naive:.1f}× | "
              f"{engine / pyvene:.1f}× | {engine_peak:.2f} | {das:.1f} | {das / das_pyvene:.1f}× | {das_peak:.2f} | {hours:.1f} h |")


if __name__ == "__main__":
    main()
