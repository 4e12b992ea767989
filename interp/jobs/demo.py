"""The main job (`make demo`): the paper's pipeline on real MoNLI with the embedded model, stage by stage.

1. Behavioral, Table 1 (§5): :mod:`interp.jobs.behavioral` trains ``challenge_model/``
   and ``model/`` and writes ``metrics.json``.
2. Activations: every location of ``model/`` for every example, ``activations.h5``.
3. Probes (§6.1, Figure 2): the sweep over all locations, ``probes.csv`` and ``probes.png``.
4. Interventions (§6.2): all 300 × 300 interchange interventions among a
   seeded mixed set, 150 PMoNLI and 150 NMoNLI-test examples (half of them
   negated, so INFER's counterfactual on lexrel is not simply the source's
   label), at one location chosen from the probe table
   (:func:`choose_location`), compared with INFER's counterfactuals for
   lexrel, negated and output, ``interventions.h5``. The plain half comes
   from PMoNLI, on which the model trained, as the paper's all-of-MoNLI set
   did.
5. Cliques (Appendix A.3): the intervention graph and its greedy disjoint
   cliques with chance baselines, ``cliques.json``, ``graph.graphml``,
   ``clique.png``.
6. Report: ``report/index.html``, one page of all of it (:mod:`interp.analysis.report`).

Every stage reuses what an earlier run already finished, so an interrupted
demo, started again, continues where it stopped.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from interp.analysis.iia import format_summaries, summarize_all
from interp.core.errors import ConfigError
from interp.hooks.locations import Location
from interp.jobs.behavioral import (
    BehavioralConfig,
    BehavioralResult,
    format_table,
    run_behavioral,
)
from interp.jobs.cache import CacheConfig, build_cache
from interp.jobs.cliques import CliqueConfig, format_cliques, run_cliques
from interp.jobs.intervene import InterventionConfig, run_interventions
from interp.jobs.probe_sweep import ProbeSweepConfig, run_probe_sweep
from interp.analysis.report import ReportConfig, write_report
from interp.models.loading import model_layers


@dataclass(frozen=True)
class DemoConfig:
    """The behavioral settings, plus how many seeds the probe sweep averages over."""

    behavioral: BehavioralConfig = BehavioralConfig()
    probe_seeds: int = 3
    intervention_location: str | None = None  # None: chosen from the probe table
    intervention_splits: tuple[str, ...] = ("pmonli", "nmonli_test")
    intervention_per_split: int = 150  # a seeded mixed set: 150 plain, 150 negated
    intervention_variables: tuple[str, ...] = ("lexrel", "negated", "output")


@dataclass
class DemoResult:
    behavioral: BehavioralResult
    probe_rows: list[dict]
    location: str
    location_reason: str
    interventions: list[dict]  # one summary per variable
    cliques: dict
    seconds: float
    stage_seconds: dict[str, float]  # wall seconds per stage, in order


def choose_location(rows: list[dict]) -> tuple[str, str]:
    """The intervention site read off the probe table, and why.

    The paper (§6.1) reads a location where probes find *lexrel* selectively
    but INFER's output much less as one that stores lexrel before it is
    combined with negation: the place an interchange of lexrel should act.
    So: among the MLP-probe rows after the embeddings (the embedding output
    holds only the word itself), the location with the largest lexrel
    selectivity minus INFER-output selectivity, both against the type
    control; ties go to the earliest layer.

    Raises:
        ConfigError: the table has no MLP rows for both targets past the embeddings.
    """
    sel: dict[str, dict[str, float]] = {}
    order: dict[str, int] = {}
    for r in rows:
        if r["probe"] == "mlp" and int(r["hidden_index"]) >= 1:
            sel.setdefault(r["location"], {})[r["target"]] = float(r["selectivity_type_mean"])
            order[r["location"]] = int(r["hidden_index"])
    gaps = {loc: v["lexrel"] - v["infer"] for loc, v in sel.items() if {"lexrel", "infer"} <= set(v)}
    if not gaps:
        raise ConfigError("the probe table has no MLP rows for lexrel and infer after the embeddings")
    best = max(gaps, key=lambda loc: (round(gaps[loc], 6), -order[loc]))
    v = sel[best]
    return best, (
        f"largest lexrel minus INFER-output selectivity (type control) after the embeddings: "
        f"{v['lexrel']:.3f} - {v['infer']:.3f} = {gaps[best]:.3f}"
    )


def run_demo(config: DemoConfig, *, progress: bool = True) -> DemoResult:
    """Run the five stages into ``config.behavioral.out_dir``.

    Raises:
        InterpError: as the stages do (bad data, model, settings or output path).
    """
    started = time.perf_counter()
    stages: dict[str, float] = {}

    def lap(stage: str) -> None:
        stages[stage] = time.perf_counter() - started - sum(stages.values())

    b = config.behavioral
    # Everything that can be checked is checked now, not after minutes of training.
    if config.probe_seeds < 1:
        raise ConfigError(f"`probe_seeds=` must be at least 1, got {config.probe_seeds}")
    if config.intervention_location:
        Location.parse(config.intervention_location, model_layers(b.model))
    out = Path(b.out_dir)
    behavioral = run_behavioral(b, progress=progress)
    lap("fine-tuning and Table 1")
    model = str(out / "model")
    if progress:
        print("== caching activations of model/ at every location", flush=True)
    cache = build_cache(
        CacheConfig(model=model, out=str(out / "activations.h5"), data_dir=b.data_dir, verify_checksums=b.verify_checksums),
        progress=progress,
    )
    lap("activation cache")
    if progress:
        print("== probe sweep", flush=True)
    rows = run_probe_sweep(
        ProbeSweepConfig(cache=str(cache), out_dir=str(out), model=model, seeds=config.probe_seeds), progress=progress
    )
    lap("probes")
    location, reason = (config.intervention_location, "given") if config.intervention_location else choose_location(rows)
    if progress:
        print(f"== interchange interventions at {location} ({reason})", flush=True)
    interventions = run_interventions(
        InterventionConfig(
            model=model,
            out=str(out / "interventions.h5"),
            locations=location,
            splits=config.intervention_splits,
            max_per_split=config.intervention_per_split,
            variables=config.intervention_variables,
            cache=str(cache),
            data_dir=b.data_dir,
            verify_checksums=b.verify_checksums,
            overwrite=True,  # the demo's own file: redone when the location or a setting changed
        ),
        progress=progress,
    )
    lap("interventions")
    if progress:
        print("== cliques", flush=True)
    report = run_cliques(CliqueConfig(interventions=str(interventions), out_dir=str(out), model=model, variable="lexrel"))
    lap("cliques")
    page, _ = write_report(ReportConfig(run_dir=str(out)))
    if progress:
        print(f"== report: {page}", flush=True)
    lap("report")
    return DemoResult(
        behavioral, rows, location, reason, summarize_all(interventions), report, time.perf_counter() - started, stages
    )


def format_probe_summary(rows: list[dict]) -> str:
    """Per target and token role: the layer where the MLP probe is most selective against the type control."""
    lines = ["Probes (§6.1): MLP probe, held-out; layer 0 = embeddings, r = BERT^r", ""]
    lines.append(f"{'target':8}{'role':6}{'best layer':>11}{'accuracy':>10}{'sel. type':>11}{'sel. shuffle':>14}")
    for target in dict.fromkeys(r["target"] for r in rows):
        for role in dict.fromkeys(r["role"] for r in rows):
            cands = [r for r in rows if (r["target"], r["role"], r["probe"]) == (target, role, "mlp")]
            if not cands:
                continue
            best = max(cands, key=lambda r: r["selectivity_type_mean"])
            lines.append(
                f"{target:8}{role:6}{best['hidden_index']:>11}{best['task_acc_mean']:>10.3f}"
                f"{best['selectivity_type_mean']:>11.3f}{best['selectivity_shuffle_mean']:>14.3f}"
            )
    return "\n".join(lines)


def format_demo(result: DemoResult) -> str:
    """The terminal summary of a demo run: Table 1, the probe summary, the interventions, the cliques and the wall time per stage."""
    return "\n\n".join(
        [
            format_table(result.behavioral),
            format_probe_summary(result.probe_rows),
            f"Interchange interventions (§6.2) at {result.location}: {result.location_reason}\n"
            + format_summaries(result.interventions),
            format_cliques(result.cliques),
            "Wall time by stage: " + ", ".join(f"{k} {v:.0f} s" for k, v in result.stage_seconds.items()),
        ]
    )
