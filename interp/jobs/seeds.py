"""`interp train --seeds`: the same fine-tuning once per seed, each its own resumable checkpoint, and a table over seeds.

Usage::

    from interp.jobs.seeds import train_seeds, format_seeds
    result = train_seeds(TrainConfig(out="runs/seeds"), seeds=(0, 1, 2))     # runs/seeds/seed0/, seed1/, seed2/, seeds.csv, seeds_summary.csv
    result = train_seeds(TrainConfig(out="runs/seeds"), seeds=range(10), workers=5)  # on a GPU: five seeds at a time
    print(format_seeds(result))

The seed varied is the fine-tuning's: the new head's initial weights, the
batch order and dropout (and ``max_examples``' subset, when one is drawn).
Each seed is a checkpoint of :func:`interp.jobs.train.train` under
``<out>/seed<S>/``: one finished earlier is reused, one interrupted resumes,
so adding a seed trains only it. ``seeds.csv`` holds one row per seed and
split (its accuracy with the 95% Wilson interval over the split's
examples); ``seeds_summary.csv`` one row per split: every seed's accuracy,
their mean and Student's t 95% interval over seeds
(:func:`interp.analysis.intervals.mean_interval`). The Wilson interval says
how sure one model's accuracy is on these examples; the t interval how far
another seed's model would land.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

from interp.analysis.intervals import mean_interval
from interp.analysis.bootstrap import collapsed_note
from interp.api.training import TRAINING_FILE
from interp.core.errors import ConfigError, OutputError, named
from interp.core.outputs import OutputSet, write_csv_atomic
from interp.jobs.train import TrainConfig, TrainResult, older_out, train


@dataclass
class SeedsResult:
    """Each seed's :class:`~interp.jobs.train.TrainResult`, the per-seed rows and the summary rows (as written)."""

    out_dir: Path
    seeds: tuple[int, ...]
    runs: dict[int, TrainResult]
    rows: list[dict]
    summary: list[dict]


def train_seeds(config: TrainConfig, *older, seeds: Sequence[int] = (), progress: bool = True, overwrite: bool | None = None,
                trainer: Callable[..., TrainResult] = train, workers: int = 1) -> SeedsResult:  # fmt: skip
    """Fine-tune ``config`` once per seed into ``<config.out>/seed<S>/`` and write the tables over seeds there
    (``config.overwrite`` replaces a seed's checkpoint of other settings). The older form
    ``train_seeds(config, out, seeds, overwrite=...)`` still works, with a :class:`DeprecationWarning`.

    ``trainer``: :func:`interp.jobs.train.train`, or :func:`interp.jobs.iit.train_iit` for interchange intervention training.
    ``workers``: seeds trained at once, each in its own process on the same device (one line as each ends, no progress
    bars). A small model leaves most of a GPU idle, so several train faster together (the embedded model on an H200:
    about 2.5 times the throughput of one at a time, ``benchmarks/recipes.py``); on a CPU they share its cores, each
    taking at most this process's thread count. Each seed's figures are those it gives alone (on a CPU, alone at the same
    thread count).

    Raises:
        ConfigError: naming ``seeds=`` when empty or repeated, or ``workers=`` below 1 or given settings that cannot be
            sent to another process (a task or model held as an object that cannot be pickled); and whatever
            :func:`interp.jobs.train.train` raises, for each seed.
    """
    if len(older) == 2 or (len(older) == 1 and isinstance(older[0], (str, Path))):  # the older (config, out, seeds)
        config = older_out(config, older[0], overwrite, "train_seeds")
        seeds = older[1] if len(older) == 2 else seeds
    elif len(older) == 1:
        seeds = older[0]
    config = older_out(config, None, None, "train_seeds")
    seeds = tuple(int(s) for s in seeds)
    if not seeds or len(set(seeds)) != len(seeds):
        raise ConfigError(f"{named('seeds', ','.join(map(str, seeds)) or 'none')}: give one or more distinct seeds")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError(f"{named('workers', workers)} must be a whole number of at least 1")
    out = Path(config.out)
    _drop_other_seeds(out, seeds, config.overwrite)
    jobs = [(trainer, replace(config, seed=seed, sample=replace(config.sample, seed=seed), out=str(out / f"seed{seed}")))  # each seed also draws its own subset
            for seed in seeds]  # fmt: skip
    if workers > 1 and len(seeds) > 1:
        runs = _train_at_once(jobs, min(workers, len(seeds)), progress)
    else:
        runs = {}
        for trainer_, one in jobs:
            if progress:
                print(f"== seed {one.seed}: {one.out}", flush=True)
            runs[one.seed] = trainer_(one, progress=progress)
    rows = [{"seed": seed, "split": split, "accuracy": m["accuracy"], "wilson_low": m.get("low"), "wilson_high": m.get("high"),
             "correct": m["correct"], "n": m["n"], "majority": m.get("majority")}  # fmt: skip
            for seed, run in runs.items() for split, m in run.metrics.items()]
    summary = []
    for split in dict.fromkeys(r["split"] for r in rows):
        values = {r["seed"]: r["accuracy"] for r in rows if r["split"] == split}
        mean, low, high = mean_interval(list(values.values()), bounds=(0.0, 1.0))
        nulls = [r["majority"] for r in rows if r["split"] == split and r["majority"] is not None]
        summary.append({"split": split, "seeds": len(values), **{f"seed_{s}": v for s, v in values.items()}, "mean": mean, "t_low": low,
                        "t_high": high, "min": min(values.values()), "max": max(values.values()),
                        "majority": max(nulls) if nulls else None})  # fmt: skip
    if rows:
        with OutputSet(out, "train-seeds") as outputs:
            write_csv_atomic(rows, outputs.path("seeds.csv"))
            write_csv_atomic(summary, outputs.path("seeds_summary.csv"))
    return SeedsResult(out, seeds, runs, rows, summary)


def _drop_other_seeds(out: Path, seeds: Sequence[int], overwrite: bool) -> None:
    """``out``'s checkpoints of seeds other than ``seeds`` (an earlier ``--seeds`` run there), removed where
    ``overwrite`` (then the tables over seeds and the folders agree), else refused.

    Raises:
        OutputError: naming ``out=``: it holds other seeds' checkpoints and ``overwrite`` is off, or such a folder that
            interp did not write (no ``training.json``).
    """
    others = sorted(p for p in out.glob("seed*") if p.is_dir() and re.fullmatch(r"seed\d+", p.name) and int(p.name[4:]) not in seeds)
    if not others:
        return
    names = ", ".join(p.name for p in others)
    if not overwrite:
        raise OutputError(f"{named('out', out)} holds the checkpoints of other seeds ({names}), which the tables over these seeds would "
                          "not list; pass `overwrite=True` to remove them, or choose another `out=`")  # fmt: skip
    for folder in others:
        if not (folder / TRAINING_FILE).is_file():
            raise OutputError(f"{named('out', out)}: {folder.name} is not a checkpoint interp wrote (no {TRAINING_FILE}); remove it yourself")
        shutil.rmtree(folder)


def _train_at_once(jobs: list, workers: int, progress: bool) -> dict[int, TrainResult]:
    """Each ``(trainer, config)`` in a pool of ``workers`` spawned processes; the results by seed, in the
    jobs' order. A seed that fails stops the others (each resumes from its last epoch when run again)."""
    import multiprocessing
    import os
    import time
    from multiprocessing.reduction import ForkingPickler  # how the pool sends a job (our own objects, to our own processes)

    try:
        ForkingPickler.dumps(jobs[0])
    except Exception as error:  # noqa: BLE001 - a lambda, a local class: whatever cannot be sent to another process
        raise ConfigError(f"{named('workers', workers)}: the settings cannot be sent to another process ({type(error).__name__}: {error}); "
                          "name the task and model by string, or train with workers=1") from None  # fmt: skip
    import torch

    threads = max(1, min(torch.get_num_threads(), (os.cpu_count() or 1) // workers))  # the cores shared, never more threads than here
    began, runs = time.perf_counter(), {}
    with multiprocessing.get_context("spawn").Pool(workers, _limit_threads, (threads,)) as pool:  # terminated on leaving, whatever happens
        for seed, result in pool.imap_unordered(_train_one, jobs):
            runs[seed] = result
            if progress:
                print(f"== seed {seed}: {'reused' if result.reused else 'trained'} in {result.out_dir} "
                      f"({len(runs)} of {len(jobs)}, {time.perf_counter() - began:.0f} s)", flush=True)  # fmt: skip
    return {job[1].seed: runs[job[1].seed] for job in jobs}


def _limit_threads(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)


def _train_one(job) -> tuple[int, TrainResult]:
    trainer, config = job
    return config.seed, trainer(config, progress=False)


def format_seeds(result: SeedsResult) -> str:
    """The summary as text: one line per split, every seed's accuracy (%), the mean and its 95% t interval over seeds."""
    seeds = result.seeds
    head = f"{'split':16}" + "".join(f"{'seed ' + str(s):>9}" for s in seeds) + f"{'mean [95% t interval over seeds]':>36}{'majority':>10}"
    lines = [f"fine-tuning seed varied over {', '.join(map(str, seeds))} (the new head, batch order and dropout); accuracy (%)", head]
    for s in result.summary:
        cells = "".join(f"{100 * s['seed_' + str(seed)]:9.1f}" for seed in seeds)
        interval = f"{100 * s['mean']:.1f} [{100 * s['t_low']:.1f}, {100 * s['t_high']:.1f}]"
        null = f"{100 * s['majority']:10.1f}" if s.get("majority") is not None else ""
        lines.append(f"{s['split']:16}{cells}{interval:>36}{null}")
    lines.append("majority: the most common gold label's share of the split (its largest over the seeds' subsets), the null")
    lines += collapsed_note(((s["t_low"], s["t_high"]) for s in result.summary), "seeds")
    lines.append(f"each seed's checkpoint: {result.out_dir}/seed<S>/; tables: {result.out_dir}/seeds.csv, seeds_summary.csv; "
                 f"a page of them: interp report {result.out_dir}")
    return "\n".join(lines)


__all__ = ["SeedsResult", "format_seeds", "train_seeds"]
