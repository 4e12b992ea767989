"""The location sweep (Geiger, Richardson & Potts 2020, Appendix A.3): where does the model show INFER's structure?

Usage::

    from interp.jobs.location_sweep import LocationSweepConfig, run_location_sweep
    rows = run_location_sweep(LocationSweepConfig(model="runs/demo/model", out="runs/sweep", examples=100))

The paper ran all pairs at one location and could only sample the others.
Here: a seeded sample of m examples, all m² interchange interventions among
them at every location (21 for a 6-block model), and for each location

* ``iia_causal``: interchange-intervention accuracy on the causal pairs
  (base and source differ in the intervened variable, lexrel by default, so
  the causal model's counterfactual differs from the base's label), with its
  95% interval from a bootstrap over the m examples (``iia_causal_low``,
  ``iia_causal_high``), its two nulls ``stays_base_causal`` and
  ``copies_source_causal`` (each with ``_low`` and ``_high``), and
  ``gap_causal``, the IIA minus the larger null, with its interval from the
  same resample: ``gap_causal_low`` above 0 means the IIA stands above both
  (:mod:`interp.analysis.iia`);
* ``largest_clique``: the largest clique of the greedy search
  (:mod:`interp.analysis.cliques`) over α = 1..10, peeling to the end;
* the chance level of a clique at the location's edge density;
* ``model_at_chance``: the splits the model is at chance on
  (:func:`interp.analysis.chance.split_accuracies`); where there are any,
  the table marks every clique uninterpretable.

Locations are ranked by ``iia_causal``, then ``largest_clique``; a
location where every interchange simply yields the source's own prediction
(``copies_source_output``, e.g. the last block's [CLS], all the classifier
reads; judged only when the model's own predictions are not all one label)
agrees with INFER wherever the model is right, which says nothing about how
it computes, so such locations are flagged and ranked last.
Writes ``sweep.h5`` (the interventions), ``locations.csv`` and
``locations.png`` into ``out``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from interp.analysis.bootstrap import collapsed_note
from interp.analysis.chance import split_accuracies
from interp.analysis.cliques import build_graph, search
from interp.analysis.cliques.baselines import chance_clique_size
from interp.analysis.iia import resampled, summarize_matrices
from interp.core.errors import ConfigError, OutputError, named
from interp.core.outputs import (
    OutputSet,
    save_figure_atomic,
    write_csv_atomic,
)
from interp.files.interventions import open_interventions
from interp.api.objects import Location
from interp.api.loading import Classifier
from interp.api.specs import DataSpec, RunSpec, SampleSpec
from interp.jobs.intervene import InterventionConfig, run_interventions

ALPHAS = tuple(range(1, 11))


@dataclass(frozen=True)
class LocationSweepConfig:
    """Which model, how many examples (m; m² pairs per location), which locations."""

    model: str | Classifier
    out: str
    examples: int = 100  # m: a seeded subset of ``sample``'s splits (its ``seed``)
    variable: str = "lexrel"
    locations: str = "all"
    data: DataSpec = DataSpec()
    sample: SampleSpec = SampleSpec()
    run: RunSpec = RunSpec()
    cache: str | None = None

    def validate(self) -> "LocationSweepConfig":
        if self.examples < 2:
            raise ConfigError(f"`examples=` must be at least 2, got {self.examples}")
        if self.sample.max_examples is not None:
            raise ConfigError("`max_examples=`: a sweep draws `examples=` examples; leave the sample's max_examples unset")
        return self

    def interventions(self) -> InterventionConfig:
        return InterventionConfig(
            model=self.model, out=str(Path(self.out) / "sweep.h5"), locations=self.locations, variables=(self.variable,),
            data=self.data, sample=replace(self.sample, max_examples=self.examples), run=self.run, cache=self.cache,
            overwrite=True,  # sweep.h5 is this sweep's own file
        )


def rank_locations(path: str | Path) -> list[dict]:
    """One row per location of a finished interventions file, best first (see the module docstring).

    Raises:
        ConfigError: a missing, foreign or unfinished file.
    """
    rows = []
    with open_interventions(path) as file:
        variable = file.variable()
        values = file.values(variable).codes
        label, base_pred = file.column("label"), file.column("base_pred")
        grouped = resampled(file.groups, file.group_unit, None)  # the task's groups where the file keeps them
        varied = len(set(base_pred.tolist())) > 1  # a model with one answer copies anything vacuously
        # a model at chance on a split of these examples: its cliques describe nothing learned (interp.jobs.cliques)
        at_chance = ",".join(r["split"] for r in split_accuracies([str(s) for s in file.column("split")], label, base_pred) if r["at_chance"])
        for name in file.locations:
            loc = Location.parse(name)
            model_pred, causal_pred = file.matrix("model_pred", name), file.matrix("causal_pred", name, variable)
            summary = summarize_matrices(name, variable, model_pred, causal_pred, values, label, base_pred, **grouped)
            graph = build_graph(model_pred, causal_pred, values)
            result = search(graph, ALPHAS, min_size=2)
            sizes = {alpha: len(found[0]) if found else 0 for alpha, found in result.cliques.items()}
            best_alpha = max(sizes, key=lambda a: (sizes[a], -a))
            rows.append(
                {
                    "rank": 0,  # set below
                    "location": name,
                    "copies_source_output": varied and bool((model_pred == base_pred[None, :]).all()),
                    "hidden_index": loc.hidden_index,
                    "role": "+".join(loc.roles),
                    "examples": graph.n_nodes,
                    "pairs": summary["pairs"],
                    "causal_pairs": summary["causal_pairs"],
                    "variable": variable,
                    "iia": summary["iia"],
                    "iia_causal": summary["iia_causal"],
                    "iia_causal_low": summary["iia_causal_low"],  # 95% bootstrap interval over `over`
                    "iia_causal_high": summary["iia_causal_high"],
                    **{f"{null}_causal{end}": summary[f"{null}_causal{end}"] for null in ("stays_base", "copies_source")
                       for end in ("", "_low", "_high")},  # the nulls, each with its interval from the same resample
                    "gap_causal": summary["gap_causal"],  # IIA minus the larger null: a low bound above 0 means above both nulls
                    "gap_causal_low": summary["gap_causal_low"],
                    "gap_causal_high": summary["gap_causal_high"],
                    "output_changed": summary["changed"],
                    "edges": graph.n_edges,
                    "density": graph.density,
                    "largest_clique": sizes[best_alpha],
                    "largest_clique_alpha": best_alpha,
                    "chance_clique_size": chance_clique_size(graph.n_nodes, graph.density) if graph.density > 0 else 0,
                    "over": summary["over"],  # what the intervals resample: the task's groups (word pairs) or examples
                    "model_at_chance": at_chance,  # the splits, comma-separated; where any: every clique uninterpretable
                }
            )
    rows.sort(key=lambda r: (r["copies_source_output"], -r["iia_causal"], -r["largest_clique"], r["hidden_index"]))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return rows


def plot_locations(rows: list[dict], path: Path) -> Path:
    """Two panels by layer (0 = embeddings), one line per token role: agreement on causal pairs, largest clique."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
    for role in dict.fromkeys(r["role"] for r in rows):
        mine = sorted((r for r in rows if r["role"] == role), key=lambda r: r["hidden_index"])
        layers = [r["hidden_index"] for r in mine]
        iia = [r["iia_causal"] for r in mine]
        bars = [[max(i - r["iia_causal_low"], 0) for i, r in zip(iia, mine)], [max(r["iia_causal_high"] - i, 0) for i, r in zip(iia, mine)]]
        axes[0].errorbar(layers, iia, yerr=bars, marker="o", capsize=2, label=role)  # 95% bootstrap intervals over examples
        axes[1].plot(layers, [r["largest_clique"] for r in mine], marker="o", label=role)
        for r in mine:
            if r["copies_source_output"]:
                axes[0].annotate("copies the source's output", (r["hidden_index"], r["iia_causal"]),
                                 textcoords="offset points", xytext=(-8, -14), ha="right", fontsize=7)  # fmt: skip
    if rows:
        axes[1].plot(
            sorted({r["hidden_index"] for r in rows}),
            [max(r["chance_clique_size"] for r in rows if r["hidden_index"] == h) for h in sorted({r["hidden_index"] for r in rows})],
            linestyle=":", color="grey", label="chance level",
        )  # fmt: skip
    axes[0].set(xlabel="layer (0 = embeddings, r = BERT^r)", ylabel="share of causal pairs", ylim=(-0.02, 1.02),
                title="IIA on causal pairs")  # fmt: skip
    axes[1].set(xlabel="layer (0 = embeddings, r = BERT^r)", ylabel="examples", title="largest greedy clique (α = 1..10)")
    for ax in axes:
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    n = rows[0]["examples"] if rows else 0
    variable = rows[0]["variable"] if rows else ""
    fig.suptitle(f"Interchange interventions on {variable} at every location: {n} examples, {n * n} pairs each")
    return save_figure_atomic(fig, path, dpi=150)


def run_location_sweep(config: LocationSweepConfig, *, progress: bool = True) -> list[dict]:
    """Run (or resume) the sweep's interventions, rank the locations, write the CSV and figure.

    Raises:
        ConfigError: fewer than 2 examples or bad settings (as :func:`run_interventions`).
        OutputError: ``out`` cannot be written.
    """
    config.validate()
    out = Path(config.out)
    if out.exists() and not out.is_dir():
        raise OutputError(f"{named('out', out)} is a file; give a directory")
    path = run_interventions(config.interventions(), progress=progress)
    rows = rank_locations(path)
    with OutputSet(out, "location-sweep") as outputs:
        write_csv_atomic(rows, outputs.path("locations.csv"))
        plot_locations(rows, outputs.path("locations.png"))
    return rows


def format_ranking(rows: list[dict], top: int | None = None) -> str:
    """The ranking as a table."""
    lines = [f"{'rank':>4}  {'location':32}{'IIA (causal pairs) [95%]':>26}{'stays':>7}{'copies':>7}{'IIA - larger null [95%]':>27}"
             f"{'largest clique':>16}{'chance':>8}"]  # fmt: skip
    for r in rows[:top]:
        note = "  (copies the source's output)" if r["copies_source_output"] else ""
        iia = f"{r['iia_causal']:.3f} [{r['iia_causal_low']:.3f}, {r['iia_causal_high']:.3f}]"
        gap = f"{r['gap_causal']:+.3f} [{r['gap_causal_low']:+.3f}, {r['gap_causal_high']:+.3f}]"
        lines.append(
            f"{r['rank']:>4}  {r['location']:32}{iia:>26}{r['stays_base_causal']:>7.3f}{r['copies_source_causal']:>7.3f}{gap:>27}"
            f"{str(r['largest_clique']) + ('†' if r['model_at_chance'] else ''):>16}{r['chance_clique_size']:>8}{note}"
        )
    at_chance = sorted({s for r in rows[:top] for s in r["model_at_chance"].split(",") if s})
    if at_chance:
        lines.append(f"†: uninterpretable, the model is at chance on {', '.join(at_chance)}: its cliques describe a model that has "
                     f"not learned the task")  # fmt: skip
    lines.append(f"[95%]: bootstrap interval over {rows[0].get('over', 'the examples') if rows else 'the examples'} (one draw for bases and sources; the nulls' own intervals are in "
                 "locations.csv); an IIA stands above both nulls where its gap's interval lies above 0")  # fmt: skip
    lines += collapsed_note((r["iia_causal_low"], r["iia_causal_high"]) for r in rows[:top])
    return "\n".join(lines)
