"""`interp demo --seeds`: the whole main job once per fine-tuning seed, each its own resumable run, and tables over seeds.

Usage::

    from interp.jobs.demo import DemoConfig
    from interp.jobs.demo_seeds import format_demo_seeds, run_demo_seeds
    result = run_demo_seeds(DemoConfig(BehavioralConfig(out="runs/demo")), seeds=(0, 1, 2))
    print(format_demo_seeds(result))    # runs/demo/seed0/, seed1/, seed2/, demo_seeds.csv, demo_seeds_summary.csv

The seed varied is the fine-tuning's (``--seed`` of one run: the new head,
the batch order, dropout; both of MoNLI's Table 1 models). Everything else
is held fixed across the runs: the probes' own seeds (``--probe-seeds``), the
interventions' example sample (``DemoConfig.sample_seed``) and the data. Each
seed's run is :func:`interp.jobs.demo.run_demo` into ``<out>/seed<S>/`` (its
own report page); a finished one is reused, an interrupted one resumes.
``<out>/report/index.html`` is the page of them all, the table over seeds
at its top.

``demo_seeds.csv`` holds one row per seed and figure: each training's
accuracy per split (Table 1), each variable's IIA on causal pairs at the
run's location with the larger of its two nulls, and the largest clique's
size. ``demo_seeds_summary.csv`` gives one row per figure: every seed's
value, their mean and Student's t 95% interval over seeds
(:func:`interp.analysis.intervals.mean_interval`). A run whose probe table
picks another location reports its IIA under that location's name, so a
figure's ``seeds`` column says over how many runs it is taken.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from interp.analysis.bootstrap import collapsed_note
from interp.analysis.intervals import mean_interval
from interp.analysis.report import ReportConfig, write_report
from interp.core.checks import check_int
from interp.core.errors import ConfigError, named
from interp.core.outputs import OutputSet, write_csv_atomic
from interp.jobs.demo import DemoConfig, DemoResult, run_demo


@dataclass
class DemoSeedsResult:
    """Each seed's :class:`~interp.jobs.demo.DemoResult`, the per-seed rows and the summary rows (as written)."""

    out_dir: Path
    seeds: tuple[int, ...]
    runs: dict[int, DemoResult]
    rows: list[dict]
    summary: list[dict]


def seed_rows(seed: int, result: DemoResult) -> list[dict]:
    """One run's figures: ``{seed, stage, figure, value}`` rows (accuracies and IIA as fractions, clique sizes as counts)."""
    rows = [{"seed": seed, "stage": "behavioral", "figure": f"{name} accuracy on {split}", "value": value}
            for name, by_split in result.behavioral.accuracy.items() for split, value in by_split.items()]  # fmt: skip
    for s in result.interventions:
        if not s.get("causal_pairs"):
            continue
        where = f"{s['variable']} at {s['location']}"
        rows.append({"seed": seed, "stage": "interventions", "figure": f"IIA {where} (causal pairs)", "value": s["iia_causal"]})
        rows.append({"seed": seed, "stage": "interventions", "figure": f"larger null {where} (causal pairs)",
                     "value": max(s["stays_base_causal"], s["copies_source_causal"])})  # fmt: skip
    found = result.cliques.get("cliques") or []
    rows.append({"seed": seed, "stage": "cliques", "figure": f"largest {result.clique_variable} clique at {result.clique_location}",
                 "value": max((c["size"] for c in found), default=0)})  # fmt: skip
    return rows


def summarize_seeds(rows: list[dict], seeds: Sequence[int]) -> list[dict]:
    """One row per figure: its stage, how many seeds have it, each seed's value, the mean and the 95% t interval over seeds."""
    summary = []
    for figure in dict.fromkeys(r["figure"] for r in rows):
        mine = [r for r in rows if r["figure"] == figure]
        values = {r["seed"]: r["value"] for r in mine}
        bounds = (0.0, float("inf")) if mine[0]["stage"] == "cliques" else (0.0, 1.0)  # a clique's size, else a share
        mean, low, high = mean_interval([float(v) for v in values.values()], bounds=bounds)
        summary.append({"stage": mine[0]["stage"], "figure": figure, "seeds": len(values),
                        **{f"seed_{s}": values.get(s, "") for s in seeds}, "mean": mean, "t_low": low, "t_high": high})  # fmt: skip
    return summary


def run_demo_seeds(config: DemoConfig, seeds: Sequence[int], *, progress: bool = True) -> DemoSeedsResult:
    """Run the demo once per fine-tuning seed into ``<out>/seed<S>/`` and write the tables over seeds into ``<out>``.

    Raises:
        ConfigError: naming ``seeds=`` when empty, repeated or negative; and whatever :func:`interp.jobs.demo.run_demo` raises.
    """
    seeds = tuple(check_int(s, "seeds", least=0) for s in seeds)
    if not seeds or len(set(seeds)) != len(seeds):
        raise ConfigError(f"{named('seeds', ','.join(map(str, seeds)) or 'none')}: give one or more distinct seeds")
    config.validate()
    out = Path(config.behavioral.out)
    runs = {}
    for seed in seeds:
        if progress:
            print(f"== fine-tuning seed {seed}: {out / f'seed{seed}'}", flush=True)
        one = replace(config, behavioral=replace(config.behavioral, seed=seed, sample=replace(config.behavioral.sample, seed=seed),
                                                   out=str(out / f"seed{seed}")))  # fmt: skip
        runs[seed] = run_demo(one, progress=progress)
    rows = [row for seed, result in runs.items() for row in seed_rows(seed, result)]
    summary = summarize_seeds(rows, seeds)
    with OutputSet(out, "demo-seeds") as outputs:
        write_csv_atomic(rows, outputs.path("demo_seeds.csv"))
        write_csv_atomic(summary, outputs.path("demo_seeds_summary.csv"))
    write_report(ReportConfig(run_dir=str(out)))  # the table over seeds first, then every seed's sections
    return DemoSeedsResult(out, seeds, runs, rows, summary)


def format_demo_seeds(result: DemoSeedsResult) -> str:
    """The summary as text: one line per figure, every seed's value, the mean and its 95% t interval over seeds."""
    seeds = result.seeds
    lines = [f"fine-tuning seed varied over {', '.join(map(str, seeds))} (the new heads, batch order and dropout); the probes' "
             "seeds, the interventions' sample and the data held fixed; accuracies and IIA in %",
             f"{'figure':70}" + "".join(f"{'seed ' + str(s):>9}" for s in seeds) + f"{'mean [95% t interval over seeds]':>36}"]  # fmt: skip
    for s in result.summary:
        scale = 1 if s["stage"] == "cliques" else 100
        cells = "".join(f"{scale * s['seed_' + str(seed)]:9.1f}" if s["seed_" + str(seed)] != "" else f"{'-':>9}" for seed in seeds)
        interval = f"{scale * s['mean']:.1f} [{scale * s['t_low']:.1f}, {scale * s['t_high']:.1f}]" if s["seeds"] > 1 else "one seed"
        lines.append(f"{s['figure'][:70]:70}{cells}{interval:>36}")
    lines += collapsed_note(((s["t_low"], s["t_high"]) for s in result.summary if s["seeds"] > 1), "seeds")
    lines.append(f"each seed's run (with its report page): {result.out_dir}/seed<S>/; tables: {result.out_dir}/demo_seeds.csv, "
                 f"demo_seeds_summary.csv; the page over seeds: {result.out_dir}/report/index.html")  # fmt: skip
    return "\n".join(lines)


__all__ = ["DemoSeedsResult", "format_demo_seeds", "run_demo_seeds", "seed_rows", "summarize_seeds"]
