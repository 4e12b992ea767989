"""Screen fine-tuning recipes over many seeds: several fine-tunings at once on one device.

    python benchmarks/recipes.py --monli DIR --minilm DIR --seeds 0-19 --workers 12 --deadline 300 \\
        --recipes "5,5e-5,16,0.2;5,5e-5,16,0.2,max_grad_norm=1"        # on a GPU machine
    python benchmarks/recipes.py --smoke --workers 2 --seeds 0,1       # tiny, on the CPU (the suite runs it)

Each (recipe, seed) is one :func:`interp.fine_tune` of the embedded MiniLM on PMoNLI + NMoNLI train, scored on
NMoNLI test (200 examples) with its Wilson interval: the MoNLI generalization set-up the default recipe is chosen on
(:class:`interp.models.settings.FineTuneSettings`). A recipe is
``epochs,lr,batch,warmup[,batching[,weight_decay]]`` followed by any ``name=value`` fields of ``FineTuneSettings``
(``max_grad_norm=1``, ``weight_decay=0.1``, ``reinit_pooler=1``).

One fine-tuning of MiniLM uses a small share of a GPU (its steps are short and host-bound), so ``--workers`` spawned
processes (one CPU thread each) train at once on the same device. Jobs are handed out seed by seed (every recipe's
seed 0, then every recipe's seed 1, ...), so a screen stopped at ``--deadline`` seconds still has the first seeds of
every recipe. Each fine-tuning is seeded, so its figures do not depend on how many run beside it. The figures:

* one line per finished fine-tuning (seconds, per-epoch losses, accuracy with its interval);
* per recipe: the seeds run, how many reach 99% (with a Wilson interval over seeds), the lowest, the median, and the
  mean with a t interval over seeds.

``--out DIR`` writes ``DIR/recipes.json`` (a file already there is never replaced).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from dataclasses import fields
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a bare checkout: the package beside this folder

#: The accuracy on NMoNLI test a recipe must reach on every seed.
TARGET = 0.99

_WORKER: dict = {}


def parse_recipe(text: str) -> dict:
    """``epochs,lr,batch,warmup[,batching[,weight_decay]][,name=value...]`` as :func:`interp.fine_tune`'s settings.

    Raises:
        ValueError: fewer than four fields, or a ``name=`` that is not a field of ``FineTuneSettings``.
    """
    from interp.models.settings import FineTuneSettings

    parts = [p.strip() for p in text.split(",")]
    named = [p for p in parts if "=" in p]
    plain = [p for p in parts if "=" not in p]
    if len(plain) < 4:
        raise ValueError(f"recipe {text!r}: give epochs,lr,batch,warmup first")
    epochs, lr, batch, warmup, *rest = plain
    recipe: dict = {"epochs": int(epochs), "lr": float(lr), "batch_size": int(batch), "warmup_ratio": float(warmup)}
    if rest:
        recipe["batching"] = rest[0]
    if len(rest) > 1:
        recipe["weight_decay"] = float(rest[1])
    known = {f.name: f for f in fields(FineTuneSettings)}
    for item in named:
        key, value = item.split("=", 1)
        if key not in known or key == "seed":
            raise ValueError(f"recipe {text!r}: {key!r} is not a fine-tuning setting (choose from {', '.join(k for k in known if k != 'seed')})")
        kind = str(known[key].type)
        if kind == "bool":
            if value.lower() not in ("1", "0", "true", "false"):
                raise ValueError(f"recipe {text!r}: {key}= takes 1 or 0")
            recipe[key] = value.lower() in ("1", "true")
        else:
            recipe[key] = int(value) if kind == "int" else value if kind == "str" else float(value)
    return recipe


def parse_seeds(text: str) -> list[int]:
    """``0,1,2`` or ``0-19`` (inclusive) or a mix: ``0-4,10``."""
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        seeds.extend(range(int(low), int(high) + 1) if high else [int(low)])
    return seeds


def fine_tune_and_score(task, train, test, start, recipe: str, seed: int, device, *, smoke: bool = False) -> tuple[dict, object]:
    """Fine-tune ``start`` (a :class:`~interp.api.loading.Classifier` already on ``device``) with ``recipe`` and ``seed``
    (one epoch under ``smoke``: it checks the plumbing); the row of figures and the trained model."""
    import torch

    import interp
    from interp.api.evaluation import score
    from interp.core.estimates import wilson

    settings = {**parse_recipe(recipe), **({"epochs": 1} if smoke else {})}
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
        torch.cuda.synchronize(device)
    began = time.perf_counter()
    model = interp.fine_tune(start, task, train, seed=seed, **settings)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    seconds = time.perf_counter() - began
    found = score(model, task, test)["nmonli_test"]
    acc = wilson(found["correct"], found["n"])
    row = {"recipe": recipe, "seed": seed, "seconds": seconds, "losses": [round(h["loss"], 4) for h in model.history],
           "nmonli_test": float(acc), "low": acc.low, "high": acc.high,
           "peak_gib": torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None}  # fmt: skip
    return row, model


def load_start(minilm: str | None, task, seed: int, smoke: bool, device):
    """The model a fine-tuning starts from: the embedded MiniLM with a new head drawn from ``seed``, in fp32 (a tiny
    random BERT under ``smoke``)."""
    import interp

    if smoke:
        from gpu import random_classifier
        from transformers import AutoTokenizer

        start = random_classifier("minilm", AutoTokenizer.from_pretrained(minilm), True, seed)
    else:
        start = interp.load_model(minilm, labels=task.labels, seed=seed)
        start.module.float()
    return start.to(device)


def _init_worker(monli: str, minilm: str, smoke: bool) -> None:
    import torch

    import interp

    torch.set_num_threads(1)
    task = interp.load_task("monli", data_dir=monli)
    device = torch.device("cuda" if torch.cuda.is_available() and not smoke else "cpu")
    _WORKER.update(task=task, device=device, minilm=minilm, smoke=smoke,
                   train=task.examples(("pmonli", "nmonli_train"), n=64 if smoke else None, seed=0),
                   test=task.examples(("nmonli_test",), n=32 if smoke else None, seed=0))  # fmt: skip


def _run_job(job: tuple[str, int]) -> dict:
    recipe, seed = job
    w = _WORKER
    try:
        start = load_start(w["minilm"], w["task"], seed, w["smoke"], w["device"])
        row, _ = fine_tune_and_score(w["task"], w["train"], w["test"], start, recipe, seed, w["device"], smoke=w["smoke"])
    except Exception as error:  # noqa: BLE001 - one failed fine-tuning is reported; the screen goes on
        row = {"recipe": job[0], "seed": seed, "error": f"{type(error).__name__}: {error}"[:300]}
    return row


def summarize(rows: list[dict], recipes: list[str]) -> list[dict]:
    """Per recipe, over its finished seeds: n, how many reach :data:`TARGET` (Wilson over seeds), lowest, median, mean
    with a t interval over seeds."""
    from interp.analysis.intervals import mean_interval
    from interp.core.estimates import wilson

    out = []
    for recipe in recipes:
        accs = [r["nmonli_test"] for r in sorted(rows, key=lambda r: r["seed"]) if r["recipe"] == recipe and "error" not in r]
        if not accs:
            out.append({"recipe": recipe, "n": 0})
            continue
        hits = wilson(sum(a >= TARGET - 1e-9 for a in accs), len(accs))
        mean, low, high = mean_interval(accs, bounds=(0.0, 1.0)) if len(accs) > 1 else (accs[0], accs[0], accs[0])
        out.append({"recipe": recipe, "n": len(accs), "reach": round(float(hits) * len(accs)), "reach_low": hits.low, "reach_high": hits.high,
                    "lowest": min(accs), "median": statistics.median(accs), "mean": mean, "mean_low": low, "mean_high": high,
                    "by_seed": {r["seed"]: r["nmonli_test"] for r in rows if r["recipe"] == recipe and "error" not in r}})  # fmt: skip
    return out


def table(summary: list[dict]) -> str:
    lines = [f"| recipe | seeds | reach {100 * TARGET:.0f}% (Wilson over seeds) | lowest | median | mean [t interval over seeds] |",
             "| --- | ---: | --- | ---: | ---: | --- |"]  # fmt: skip
    for s in summary:
        if not s["n"]:
            lines.append(f"| {s['recipe']} | 0 | | | | |")
            continue
        lines.append(f"| {s['recipe']} | {s['n']} | {s['reach']}/{s['n']} [{100 * s['reach_low']:.0f}, {100 * s['reach_high']:.0f}%] | "
                     f"{100 * s['lowest']:.1f} | {100 * s['median']:.1f} | {100 * s['mean']:.1f} [{100 * s['mean_low']:.1f}, {100 * s['mean_high']:.1f}] |")  # fmt: skip
    return "\n".join(lines)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--monli", default=os.environ.get("INTERP_MONLI_DIR"), help="MoNLI folder (default: $INTERP_MONLI_DIR)")
    parser.add_argument("--minilm", default=None, help="the embedded model's folder; default: the installed package's")
    parser.add_argument("--recipes", required=False, default=None, help="';'-separated recipes (default: the library's default recipe)")
    parser.add_argument("--seeds", default="0-4", help="seeds: 0,1,2 or 0-19")
    parser.add_argument("--workers", type=int, default=1, help="fine-tunings at once (processes on the one device)")
    parser.add_argument("--deadline", type=float, default=None, help="stop after this many seconds, keeping what finished")
    parser.add_argument("--smoke", action="store_true", help="tiny random models, one epoch, on the CPU")
    parser.add_argument("--out", default=None, help="write DIR/recipes.json")
    args = parser.parse_args(argv)
    if args.monli is None:
        raise SystemExit("give --monli DIR (or set INTERP_MONLI_DIR)")
    out = Path(args.out) / "recipes.json" if args.out else None
    if out is not None and out.exists():
        raise SystemExit(f"{out} exists (an earlier screen's figures); give another --out")
    from interp.core.outputs import write_json_atomic
    from interp.models import embedded_model_dir
    from interp.models.settings import FineTuneSettings

    d = FineTuneSettings()
    recipes = [r for r in (args.recipes or f"{d.epochs},{d.lr:g},{d.batch_size},{d.warmup_ratio:g}").split(";") if r]
    for recipe in recipes:  # a malformed recipe, or a setting out of range, fails here, before any worker starts
        try:
            FineTuneSettings(**parse_recipe(recipe))
        except ValueError as error:  # ConfigError is one
            raise SystemExit(f"--recipes: {error}") from None
    seeds = parse_seeds(args.seeds)
    minilm = args.minilm or str(embedded_model_dir())
    jobs = [(recipe, seed) for seed in seeds for recipe in recipes]
    print(f"{len(jobs)} fine-tunings, {args.workers} at a time", flush=True)
    began, rows = time.perf_counter(), []
    pool = multiprocessing.get_context("spawn").Pool(args.workers, _init_worker, (args.monli, minilm, args.smoke))
    finished = False
    try:
        results = pool.imap_unordered(_run_job, jobs)
        for _ in jobs:
            left = None if args.deadline is None else args.deadline - (time.perf_counter() - began)
            try:
                row = results.next(timeout=None if left is None else max(left, 0.01))
            except multiprocessing.TimeoutError:
                print(f"deadline: {len(rows)} of {len(jobs)} fine-tunings finished", flush=True)
                break
            rows.append(row)
            shown = row.get("error") or (f"{row['seconds']:.1f} s, losses {row['losses']}, NMoNLI test {100 * row['nmonli_test']:.1f}% "
                                         f"[{100 * row['low']:.1f}, {100 * row['high']:.1f}]")  # fmt: skip
            print(f"{row['recipe']} seed {row['seed']}: {shown}", flush=True)
        else:
            finished = True
    finally:
        if finished:
            pool.close()
        else:  # the deadline, or an interruption: the fine-tunings still running are stopped
            pool.terminate()
        pool.join()
    summary = summarize(rows, recipes)
    results = {"seconds": time.perf_counter() - began, "workers": args.workers, "jobs": len(jobs), "rows": rows, "summary": summary}
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out, results)
    print(table(summary))
    print(f"{len(rows)} fine-tunings in {results['seconds']:.0f} s")
    return results


if __name__ == "__main__":
    main()
