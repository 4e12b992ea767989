"""`interp demo --task`: the main job's path for any task other than MoNLI (MQNLI, a user's own).

Usage::

    from interp.jobs.task_demo import TaskDemoConfig, run_task_demo
    result = run_task_demo(TaskDemoConfig(task="mqnli", data_file="runs/mqnli/iid.jsonl", out_dir="runs/mq_demo"))

MoNLI's demo (:mod:`interp.jobs.demo`) reproduces the paper's Table 1; a
task in general has no challenge set, so its demo is the rest of the path:

1. **Fine-tuning**: the pretrained ``model`` on the task's training split
   (``model/``, its ``training.json`` holds every split's accuracy).
2. **Activations**: every location of ``model/`` for the task's default
   example set (``activations.h5``).
3. **Probes**: each variable at its own aligned roles, at every layer
   (``probes.csv``, ``probes.png``); a variable one of whose values has
   fewer examples than the folds is left out and named.
4. **Interventions**: every variable at its aligned roles, at every layer,
   among a seeded sample of ``examples`` (``interventions.h5``), and the
   variable × layer table of IIA on causal pairs with its nulls.
5. **Cliques**: for the variable and location whose IIA stands furthest
   above both nulls after the embeddings (``cliques.json``,
   ``graph.graphml``, ``clique.png``).

6. **Report**: ``report/index.html``, one page of all of it (:mod:`interp.analysis.report`).

Every stage reuses what an earlier run finished.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from interp.analysis.iia import layer_table, summarize_all
from interp.core.errors import ConfigError, named
from interp.files.activations import open_cache
from interp.hooks.locations import Location
from interp.jobs.cache import CacheConfig, build_cache
from interp.jobs.cliques import CliqueConfig, format_cliques, run_cliques
from interp.analysis.report import ReportConfig, write_report
from interp.jobs.intervene import InterventionConfig, run_interventions
from interp.jobs.probe_sweep import ProbeSweepConfig, run_probe_sweep
from interp.jobs.train import TrainConfig, train
from interp.tasks import resolve_task


@dataclass(frozen=True)
class TaskDemoConfig:
    """A task's demo: fine-tuning settings, the probe folds and seeds, and the sample of the interventions."""

    task: str
    out_dir: str
    data_file: str | None = None
    model: str = "minilm"
    epochs: int = 3
    lr: float = 1e-4
    batch_size: int = 32
    seed: int = 0
    max_train: int | None = None  # a seeded subset of the training split
    probe_seeds: int = 3
    folds: int = 5
    examples: int = 60  # m: m × m interchange interventions per location
    data_dir: str | None = None
    verify_checksums: bool = True

    def validate(self) -> "TaskDemoConfig":
        for flag, value, least in (("`probe_seeds=`", self.probe_seeds, 1), ("`examples=`", self.examples, 2), ("`folds=`", self.folds, 2)):
            if value < least:
                raise ConfigError(f"{flag} must be at least {least}, got {value}")
        return self


@dataclass
class TaskDemoResult:
    training: dict
    probe_rows: list[dict]
    skipped_targets: list[str]
    interventions: list[dict]  # one summary per variable and aligned location
    clique_location: str
    clique_variable: str
    cliques: dict
    seconds: float


def _probe_targets(cache_path: Path, folds: int) -> tuple[tuple[str, ...], list[str]]:
    """The aligned variables every one of whose values has at least ``folds`` examples, and those left out."""
    with open_cache(cache_path) as cache:
        aligned = [v for v in cache.stored_values if v in cache.alignment]
        counts = {v: np.bincount(np.unique(cache.values(v).codes, return_inverse=True)[1]).min() for v in aligned}
    kept = tuple(v for v in aligned if counts[v] >= folds)
    return kept, [v for v in aligned if v not in kept]


def best_alignment(summaries: list[dict]) -> dict:
    """The summary (after the embeddings) whose causal-pair IIA stands furthest above the larger of its two nulls."""
    later = [s for s in summaries if Location.parse(s["location"]).hidden_index > 0 and s["causal_pairs"]]
    if not later:
        raise ConfigError("no variable has causal pairs after the embeddings in this sample; raise `examples=`")
    return max(later, key=lambda s: s["iia_causal"] - max(s["stays_base_causal"], s["copies_source_causal"]))


def run_task_demo(config: TaskDemoConfig, *, progress: bool = True) -> TaskDemoResult:
    """Run the five stages into ``config.out_dir``.

    Raises:
        InterpError: as the stages do (bad task, data, model, settings or output path).
    """
    config.validate()
    started = time.perf_counter()
    task = resolve_task(config.task, data_dir=config.data_dir, verify_checksums=config.verify_checksums, data_file=config.data_file,
                        argument="task")  # fmt: skip
    if task.causal_model is None:
        raise ConfigError(f"{named('task', config.task)}: task {task.name!r} has no causal model; the demo needs one")
    out = Path(config.out_dir)
    common = {"task": config.task, "data_dir": config.data_dir, "verify_checksums": config.verify_checksums}
    training = TrainConfig(
        model=config.model, epochs=config.epochs, lr=config.lr, batch_size=config.batch_size, seed=config.seed,
        max_examples=config.max_train, data_file=config.data_file, **common,
    )  # fmt: skip
    result = train(training, out / "model", progress=progress)
    model = str(out / "model")
    splits = task.default_splits or task.splits
    cache = build_cache(
        CacheConfig(model=model, out=str(out / "activations.h5"), splits=splits, data_file=config.data_file, **common), progress=progress
    )
    targets, skipped = _probe_targets(cache, config.folds)
    rows = run_probe_sweep(
        ProbeSweepConfig(cache=str(cache), out_dir=str(out), model=model, locations="aligned", targets=targets,
                         seeds=config.probe_seeds, folds=config.folds),
        progress=progress,
    )  # fmt: skip
    path = run_interventions(
        InterventionConfig(model=model, out=str(out / "interventions.h5"), locations="aligned", variables=task.variables,
                           splits=splits, max_examples=config.examples, seed=config.seed, cache=str(cache),
                           data_file=config.data_file, overwrite=True, **common),
        progress=progress,
    )  # fmt: skip
    summaries = summarize_all(path, aligned_only=True)
    best = best_alignment(summaries)
    report = run_cliques(CliqueConfig(interventions=str(path), out_dir=str(out / "cliques"), model=model,
                                      variable=best["variable"], location=best["location"]))  # fmt: skip
    write_report(ReportConfig(run_dir=str(out)))
    return TaskDemoResult(
        {"n_train": result.n_train, "metrics": result.metrics, "epochs": result.epochs}, rows, skipped, summaries,
        best["location"], best["variable"], report, time.perf_counter() - started,
    )  # fmt: skip


def format_task_demo(result: TaskDemoResult) -> str:
    """The accuracies, the probe and IIA tables by layer, and where the cliques were searched."""
    accuracy = ", ".join(f"{split} {100 * m['accuracy']:.1f}%" for split, m in result.training["metrics"].items())
    best: dict[str, dict] = {}
    for r in result.probe_rows:
        if r["probe"] == "mlp" and (r["target"] not in best or r["selectivity_type_mean"] > best[r["target"]]["selectivity_type_mean"]):
            best[r["target"]] = r
    probes = [f"  {t:10} layer {r['hidden_index']}: accuracy {r['task_acc_mean']:.3f} (chance {r.get('chance', float('nan')):.3f}), "
              f"selectivity (type control) {r['selectivity_type_mean']:.3f}" for t, r in best.items()]  # fmt: skip
    lines = [
        f"Fine-tuned on {result.training['n_train']} examples: {accuracy}",
        "Probes at each variable's aligned roles, most selective layer (MLP probe, held-out):",
        *probes,
    ]
    if result.skipped_targets:
        lines.append(f"  not probed (a value with fewer examples than the folds): {', '.join(result.skipped_targets)}")
    lines += [
        "",
        "IIA on causal pairs by layer at each variable's aligned roles (larger null in brackets; bold above both):",
        layer_table(result.interventions),
        "",
        f"Cliques where IIA stands furthest above its nulls after the embeddings: {result.clique_variable} at {result.clique_location}",
        format_cliques(result.cliques),
        f"Wall time {result.seconds:.0f} s",
    ]
    return "\n".join(lines)
