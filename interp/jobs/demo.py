"""The main job (`interp demo`, `make demo`): a task's whole path with one model, stage by stage, for every task.

What each stage does for a task is the task's own (:mod:`interp.tasks.stages`);
MoNLI's reproduces Geiger, Richardson & Potts (2020):

1. **Behavioral** (:mod:`interp.jobs.behavioral`): the task's fine-tunings,
   scored, their effects checked, ``metrics.json``; the model studied from
   here on is ``model/``. MoNLI: Table 1 (§5), ``challenge_model/`` and
   ``model/``; another task: one fine-tuning on its training splits.
2. **Activations**: every location of ``model/`` for the plan's cached
   splits, ``activations.h5``.
3. **Probes** (§6.1, Figure 2): the task's probe targets at every location
   (MoNLI), or each variable at its aligned roles at every layer, leaving out
   a variable one of whose values has fewer examples than the folds;
   ``probes.csv`` and ``probes.png``.
4. **Interventions** (§6.2): all m × m interchange interventions among the
   plan's example set, ``interventions.h5``: MoNLI at the one location the
   probe table singles out (:func:`choose_location`) among 150 PMoNLI and 150
   NMoNLI-test examples, for lexrel, negated and output; another task at
   every variable's aligned roles at every layer among a seeded sample of
   ``examples``.
5. **Cliques** (Appendix A.3): the intervention graph and its greedy disjoint
   cliques with chance baselines (``cliques.json``, ``graph.graphml``,
   ``clique.png``), for the plan's variable, or where IIA stands furthest
   above both nulls (:func:`best_alignment`).
6. **DAS** (Geiger, Wu, Potts, Icard & Goodman 2024, §3; :mod:`interp.jobs.das`):
   a rotated subspace of ``k = min(64, width // 4)`` trained for the cliques'
   variable at the cliques' location, beside vanilla interchange, the best
   localist block and both nulls, with its verdict (``das/``; ``das=False``
   leaves it out, ``das_pairs`` sets its training pairs, half as many held out).
7. **Screen** (:mod:`interp.jobs.screen`): attribution patching of the same
   variable at every site (residual stream, attention and MLP outputs, every
   head) at every role, its top 5 and 5 drawn others confirmed by the exact
   interchange, and its agreement with them (``screen/``; ``screen=False``
   leaves it out; ``screen_examples`` bases, also the sources: per split where
   the plan samples per split).
8. **Report**: ``report/index.html``, one page of all of it (:mod:`interp.analysis.report`).

Every stage reuses what an earlier run already finished, so an interrupted
demo, started again, continues where it stopped.

Usage::

    from interp.jobs.behavioral import BehavioralConfig
    from interp.jobs.demo import DemoConfig, format_demo, run_demo
    print(format_demo(run_demo(DemoConfig(BehavioralConfig(out="runs/demo")))))
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from interp.analysis.iia import format_summaries, layer_table, summarize_all
from interp.analysis.probes.summary import format_probe_summary
from interp.analysis.report import ReportConfig, write_report
from interp.core.devices import pick_device
from interp.core.errors import ConfigError, named
from interp.files.activations import open_cache
from interp.api.objects import Location, parse_model_locations
from interp.api.loading import load_model
from interp.api.specs import DataSpec, RunSpec, SampleSpec
from interp.jobs.behavioral import BehavioralConfig, BehavioralResult, format_table, run_behavioral
from interp.jobs.cache import CacheConfig, build_cache
from interp.jobs.cliques import CliqueConfig, format_cliques, run_cliques
from interp.jobs.das import DasConfig, run_das
from interp.jobs.screen import ScreenConfig, format_screen, run_screen
from interp.analysis.das_figure import format_das
from interp.api.screen import ScreenResult
from interp.jobs.intervene import InterventionConfig, run_interventions
from interp.jobs.probe_sweep import LABEL_TARGETS, ProbeSweepConfig, run_probe_sweep
from interp.api.loading import model_is_decoder, model_layers


@dataclass(frozen=True)
class DemoConfig:
    """The behavioral settings (model, fine-tuning, task and data), the probes' seeds and folds, the site and the sample."""

    behavioral: BehavioralConfig = field(default_factory=BehavioralConfig)
    probe_seeds: int = 3
    folds: int = 5
    location: str | None = None  # None: as the task's plan says (MoNLI: read off the probe table)
    examples: int = 60  # m, for a plan without per_split: m × m interchange interventions per location
    sample_seed: int = 0  # which examples the interventions use (fixed across fine-tuning seeds: `behavioral.seed` varies only the training)
    per_split: int | None = None  # for a plan that samples per split (MoNLI: 150): this many of each split instead (a decoder's smaller budget)
    das: bool = True  # stage 6: DAS at the cliques' variable and location
    das_pairs: int = 2000  # its balanced training pairs; half as many held out
    screen: bool = True  # stage 7: the screen of every site, confirmed
    screen_examples: int = 10  # the screen's examples (bases and sources): per split where the plan samples per split

    def validate(self) -> DemoConfig:
        for name, value, least in (("probe_seeds", self.probe_seeds, 1), ("examples", self.examples, 2), ("folds", self.folds, 2),
                                   ("per_split", 2 if self.per_split is None else self.per_split, 2), ("das_pairs", self.das_pairs, 4),
                                   ("screen_examples", self.screen_examples, 2)):  # fmt: skip
            if value < least:
                raise ConfigError(f"`{name}=` must be at least {least}, got {value}")
        return self


@dataclass
class DemoResult:
    behavioral: BehavioralResult
    probe_rows: list[dict]
    skipped_targets: list[str]  # aligned variables left unprobed: a value with fewer examples than the folds
    location: str  # the interventions' location(s), as given to them
    location_reason: str
    interventions: list[dict]  # one summary per variable and location
    clique_variable: str
    clique_location: str
    cliques: dict
    das: list[dict]  # das.csv's rows (empty: the stage left out)
    screen: ScreenResult | None  # None: the stage left out
    seconds: float
    stage_seconds: dict[str, float]  # wall seconds per stage, in order


def choose_location(rows: list[dict], variable: str = "lexrel") -> tuple[str, str]:
    """The intervention site read off the probe table, and why.

    The paper (§6.1) reads a location where probes find *lexrel* selectively
    but INFER's output much less as one that stores lexrel before it is
    combined with negation: the place an interchange of lexrel should act.
    So: among the MLP-probe rows after the embeddings (the embedding output
    holds only the word itself), the location with the largest selectivity
    of ``variable`` minus the label's (``infer`` or ``label``), both against
    the type control; ties go to the earliest layer.

    Raises:
        ConfigError: the table has no MLP rows for both targets past the embeddings.
    """
    sel: dict[str, dict[str, float]] = {}
    order: dict[str, int] = {}
    for r in rows:
        if r["probe"] == "mlp" and int(r["hidden_index"]) >= 1:
            target = "label" if r["target"] in LABEL_TARGETS else r["target"]
            sel.setdefault(r["location"], {})[target] = float(r["selectivity_type_mean"])
            order[r["location"]] = int(r["hidden_index"])
    gaps = {loc: v[variable] - v["label"] for loc, v in sel.items() if {variable, "label"} <= set(v)}
    if not gaps:
        raise ConfigError(f"the probe table has no MLP rows for {variable} and the label after the embeddings")
    best = max(gaps, key=lambda loc: (round(gaps[loc], 6), -order[loc]))
    v = sel[best]
    return best, (
        f"largest {variable} minus label (INFER-output) selectivity (type control) after the embeddings: "
        f"{v[variable]:.3f} - {v['label']:.3f} = {gaps[best]:.3f}"
    )


def best_alignment(summaries: list[dict]) -> dict:
    """The summary (after the embeddings) whose causal-pair IIA stands furthest above the larger of its two nulls."""
    later = [s for s in summaries if Location.parse(s["location"]).hidden_index > 0 and s["causal_pairs"]]
    if not later:
        raise ConfigError("no variable has causal pairs after the embeddings in this sample; raise `examples=`")
    return max(later, key=lambda s: s["iia_causal"] - max(s["stays_base_causal"], s["copies_source_causal"]))


def _probe_targets(cache_path: Path, folds: int) -> tuple[tuple[str, ...], list[str]]:
    """The aligned variables every one of whose values has at least ``folds`` examples, and those left out."""
    with open_cache(cache_path) as cache:
        aligned = [v for v in cache.stored_values if v in cache.alignment]
        counts = {v: np.bincount(np.unique(cache.values(v).codes, return_inverse=True)[1]).min() for v in aligned}
    kept = tuple(v for v in aligned if counts[v] >= folds)
    return kept, [v for v in aligned if v not in kept]


def run_demo(config: DemoConfig, *, progress: bool = True) -> DemoResult:
    """Run the eight stages into ``config.behavioral.out``.

    Raises:
        ConfigError: bad settings, a task without a causal model or one that misses a gold label of the studied
            examples (checked before fine-tuning), a location out of range.
        InterpError: as the stages do (bad data, model or output path).
    """
    started = time.perf_counter()
    stages: dict[str, float] = {}

    def lap(stage: str) -> None:
        stages[stage] = time.perf_counter() - started - sum(stages.values())

    def say(text: str) -> None:
        if progress:
            print(f"== {text}", flush=True)

    # Everything that can be checked is checked now, not after minutes of training.
    config.validate()
    b = config.behavioral
    pick_device(b.run.device)  # a GPU that is not there is named before any work
    task = b.data.load()
    if task.causal_model is None:
        raise ConfigError(f"{named('task', b.data.name)}: task {task.name!r} has no causal model; the demo needs one")
    plan = task.demo_plan
    if config.location:
        decoder = model_is_decoder(b.model)  # its read token is `last`
        parse_model_locations(config.location, model_layers(b.model), task.roles, task.default_roles(plan.variables or task.variables), decoder=decoder)
    out = Path(b.out)
    data = DataSpec(task=task)  # resolved once; the stages below take the object
    default_set = task.default_splits or task.splits
    studied = dict.fromkeys((*(plan.cache_splits or default_set), *(plan.splits or default_set)))
    task.build_causal_model(task.examples(tuple(studied)))  # a causal model that misses a gold label fails before fine-tuning

    behavioral = run_behavioral(b, progress=progress)
    lap(task.behavioral_stage.title)
    model = load_model(str(out / "model")).to(pick_device(b.run.device))  # loaded and hashed once; every stage below takes the object
    say("caching activations of model/ at every location")
    run = RunSpec(device=b.run.device)  # every stage on the device the fine-tuning used
    cache = build_cache(CacheConfig(model=model, out=str(out / "activations.h5"), data=data, sample=SampleSpec(plan.cache_splits or default_set),
                                    run=run), progress=progress)  # fmt: skip
    lap("activation cache")
    say("probe sweep")
    targets, skipped = ((), []) if task.probe_targets else _probe_targets(cache, config.folds)
    rows = run_probe_sweep(
        ProbeSweepConfig(cache=str(cache), out=str(out), model=model, locations=plan.probe_locations, targets=targets,
                         seeds=config.probe_seeds, folds=config.folds),
        progress=progress,
    )  # fmt: skip
    lap("probes")
    if config.location:
        location, reason = config.location, "given"
    elif plan.site == "probes":
        location, reason = choose_location(rows, plan.clique_variable)
    else:
        location, reason = "aligned", "every variable at its aligned roles, every layer"
    say(f"interchange interventions at {location} ({reason})")
    studied_sample = SampleSpec(plan.splits or default_set, max_examples=None if plan.per_split else config.examples,
                                max_per_split=plan.per_split and (config.per_split or plan.per_split), seed=config.sample_seed)
    path = run_interventions(
        InterventionConfig(
            model=model, out=str(out / "interventions.h5"), locations=location, variables=plan.variables or task.variables,
            data=data, sample=studied_sample,
            cache=str(cache), run=run, overwrite=True,  # the demo's own file: redone when the location or a setting changed
        ),
        progress=progress,
    )  # fmt: skip
    summaries = summarize_all(path, aligned_only=location == "aligned")
    lap("interventions")
    if plan.site == "probes":  # the file's one location
        variable, where = plan.clique_variable, None
    else:
        best = best_alignment(summaries)
        variable, where = best["variable"], best["location"]
    say(f"cliques of {variable}")
    cliques = run_cliques(CliqueConfig(interventions=str(path), out=str(out), model=model, variable=variable, location=where))
    lap("cliques")
    das_rows = []
    if config.das:
        site = cliques["location"]
        k = das_size(model, site, task)
        say(f"DAS of {variable} at {site} (k = {k}, {config.das_pairs} training pairs)")
        das_rows = run_das(DasConfig(model=model, out=str(out / "das"), locations=site, variables=(variable,), subspaces=(str(k),),
                                     data=data, sample=studied_sample, run=run, train_pairs=config.das_pairs,
                                     test_pairs=max(2, config.das_pairs // 2), overwrite=True),  # the demo's own folder
                           progress=progress)  # fmt: skip
        lap("DAS")
    screened = None
    if config.screen:
        n = config.screen_examples
        sample = SampleSpec(plan.splits or default_set, max_examples=None if plan.per_split else n,
                            max_per_split=n if plan.per_split else None, seed=config.sample_seed)  # fmt: skip
        say(f"screen of {variable} at every site ({n} examples{' per split' if plan.per_split else ''})")
        screened = run_screen(ScreenConfig(model=model, out=str(out / "screen"), variable=variable, data=data, sample=sample, run=run),
                              progress=progress)  # fmt: skip
        lap("screen")
    page, _ = write_report(ReportConfig(run_dir=str(out)))
    say(f"report: {page}")
    lap("report")
    return DemoResult(behavioral, rows, skipped, location, reason, summaries, variable, cliques["location"], cliques, das_rows,
                      screened, time.perf_counter() - started, stages)  # fmt: skip


def das_size(model, location: str, task) -> int:
    """The demo's DAS subspace size at ``location``: ``min(64, width // 4)``, at least 1 (``width``: the
    location's floats, tokens × d_model or × d_head)."""
    config = model.module.config
    loc = parse_model_locations(location, config.num_hidden_layers, task.roles, task.default_roles(task.variables), decoder=model.decoder)[0]
    return max(1, min(64, len(loc.roles) * loc.token_width(config) // 4))


def format_demo(result: DemoResult) -> str:
    """The terminal summary of a demo run: the behavioral table, probes, interventions, cliques and the wall time per stage."""
    probes = format_probe_summary(result.probe_rows)
    if result.skipped_targets:
        probes += f"\nnot probed (a value with fewer examples than the folds): {', '.join(result.skipped_targets)}"
    sites = {s["location"] for s in result.interventions}
    if len(sites) == 1:
        interventions = f"Interchange interventions (§6.2) at {result.location}: {result.location_reason}\n" + format_summaries(result.interventions)
    else:
        interventions = (
            "Interchange interventions (§6.2): IIA on causal pairs by layer at each variable's aligned roles "
            "(larger null in brackets; bold above both):\n" + layer_table(result.interventions)
            + (f"\n[low, high]: {result.interventions[0]['interval']}" if result.interventions else "")
            + f"\n\nCliques where IIA stands furthest above its nulls after the embeddings: {result.clique_variable} at {result.clique_location}"
        )  # fmt: skip
    return "\n\n".join(
        [
            format_table(result.behavioral),
            probes,
            interventions,
            format_cliques(result.cliques),
            *([f"DAS (Geiger et al. 2024, §3), held-out IIA:\n{format_das(result.das)}"] if result.das else []),
            *([f"Screen (attribution patching at every site, confirmed by the exact interchange):\n{format_screen(result.screen)}"]
              if result.screen is not None else []),
            "Wall time by stage: " + ", ".join(f"{k} {v:.0f} s" for k, v in result.stage_seconds.items()),
        ]
    )
