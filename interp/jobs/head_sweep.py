"""The head sweep: interchange of a variable at every attention head, attention output and MLP output, beside the residual stream.

Usage::

    from interp.jobs.head_sweep import HeadSweepConfig, run_head_sweep
    rows = run_head_sweep(HeadSweepConfig(model="runs/demo/model", out="runs/heads"))

Which heads move lexrel from w_h to [CLS]? At each role (w_h and cls by
default) the sweep runs every (base, source) interchange intervention of a
seeded mixed sample (``max_per_split`` of each split; on MoNLI, PMoNLI and
NMoNLI test, so that INFER's output varies) at

* every head's ``blocks.{l}.attn.hook_z.h{H}`` (its d_head context vector),
* every block's ``hook_attn_out``, ``hook_resid_mid`` and ``hook_mlp_out``,
* the residual stream (``hook_resid_pre`` of block 0 and every ``hook_resid_post``),

(:mod:`interp.hooks.locations`), all in one resumable interventions file
(:mod:`interp.jobs.intervene`), and reports for each location IIA on the
causal pairs with its two nulls (:mod:`interp.analysis.iia`). Writes
``heads.h5`` (the interventions), ``heads.csv`` and ``heads.png``: per
role, a layer × head heatmap of IIA with the per-layer IIA of the
attention output, MLP output and residual stream beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from interp.analysis.bootstrap import collapsed_note
from interp.analysis.iia import summarize_all
from interp.core.errors import ConfigError
from interp.core.outputs import OutputSet, save_figure_atomic, write_csv_atomic
from interp.api.objects import Location
from interp.api.loading import Classifier
from interp.api.specs import DataSpec, RunSpec, SampleSpec
from interp.jobs.intervene import InterventionConfig, run_interventions
from interp.api.loading import model_layers


@dataclass(frozen=True)
class HeadSweepConfig:
    """Which model, variable, roles and examples (a seeded ``max_per_split`` of each split)."""

    model: str | Classifier
    out: str
    variable: str = "lexrel"
    roles: tuple[str, ...] = ("w_h", "cls")
    data: DataSpec = DataSpec()
    sample: SampleSpec = SampleSpec(splits=("pmonli", "nmonli_test"), max_per_split=50)
    run: RunSpec = RunSpec()

    def validate(self) -> "HeadSweepConfig":
        if not self.roles:
            raise ConfigError("`roles=` names no token role")
        if self.sample.max_per_split is None or self.sample.max_per_split < 2:
            raise ConfigError(f"`max_per_split=` must be at least 2, got {self.sample.max_per_split}")
        return self

    def locations(self) -> str:
        """Every head, component and residual site at each role, as ``--locations`` text."""
        layers = self.model.n_layers if isinstance(self.model, Classifier) else model_layers(self.model)
        items = []
        for role in self.roles:
            items += [f"heads@{role}", f"components@{role}", f"blocks.0.hook_resid_pre@{role}"]
            items += [f"blocks.{l}.hook_resid_post@{role}" for l in range(layers)]
        return ",".join(items)

    def interventions(self) -> InterventionConfig:
        return InterventionConfig(
            model=self.model, out=str(Path(self.out) / "heads.h5"), locations=self.locations(), variables=(self.variable,),
            data=self.data, sample=self.sample, run=self.run,
            overwrite=True,  # heads.h5 is this sweep's own file
        )


def sweep_rows(path: str | Path) -> list[dict]:
    """One row per location of a finished interventions file: its site kind, layer, head, role, IIA with its 95% interval
    (a bootstrap over the task's groups where the file keeps them, else over examples: ``over`` says which) and nulls,
    and whether it stands above both (the interval of their gap above zero)."""
    rows = []
    for s in summarize_all(path):
        loc = Location.parse(s["location"])
        rows.append({
            "location": s["location"], "role": "+".join(loc.roles),
            "site": "resid" if loc.is_residual else loc.component, "layer": loc.layer if not loc.is_residual else loc.hidden_index - 1,
            "hidden_index": loc.hidden_index, "head": loc.head, "variable": s["variable"],
            "pairs": s["pairs"], "causal_pairs": s["causal_pairs"], "iia": s["iia"], "iia_causal": s["iia_causal"],
            "iia_causal_low": s["iia_causal_low"], "iia_causal_high": s["iia_causal_high"],
            "stays_base_causal": s["stays_base_causal"], "copies_source_causal": s["copies_source_causal"],
            # above both nulls: the 95% interval of IIA minus the larger null (one bootstrap over examples) lies above zero
            "above_nulls": bool(s["causal_pairs"]) and s["gap_causal_low"] > 0, "over": s["over"],
        })  # fmt: skip
    return rows


def plot_heads(rows: list[dict], path: Path) -> None:
    """Per role: a layer × head heatmap of IIA on causal pairs (cells above both nulls outlined), and per layer the IIA of
    hook_attn_out, hook_mlp_out and the residual stream (hook_resid_post; layer −1 is the embedding output) with their
    95% bootstrap intervals over examples, and the larger null of the residual stream dashed. Written as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    roles = list(dict.fromkeys(r["role"] for r in rows))
    fig, axes = plt.subplots(len(roles), 2, figsize=(12, 3.6 * len(roles)), squeeze=False, gridspec_kw={"width_ratios": [1.6, 1]})
    for (left, right), role in zip(axes, roles):
        mine = [r for r in rows if r["role"] == role]
        heads = [r for r in mine if r["site"] == "attn.hook_z" and r["head"] >= 0]
        n_layers, n_heads = max(r["layer"] for r in mine) + 1, max((r["head"] for r in heads), default=-1) + 1
        grid = np.full((n_layers, max(n_heads, 1)), np.nan)
        for r in heads:
            grid[r["layer"], r["head"]] = r["iia_causal"]
        image = left.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto", origin="lower")
        for r in heads:
            left.text(r["head"], r["layer"], f"{r['iia_causal']:.2f}", ha="center", va="center", fontsize=6,
                      color="white" if r["iia_causal"] < 0.5 else "black", fontweight="bold" if r["above_nulls"] else "normal")  # fmt: skip
            if r["above_nulls"]:
                left.add_patch(plt.Rectangle((r["head"] - 0.5, r["layer"] - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=1.5))
        left.set_xlabel("head")
        left.set_ylabel("block")
        left.set_xticks(range(n_heads))
        left.set_yticks(range(n_layers))
        left.set_title(f"{rows[0]['variable']} at {role}: IIA (causal pairs) of each head's hook_z; red = above both nulls", fontsize=9)
        fig.colorbar(image, ax=left, fraction=0.04)
        for site, style in (("hook_attn_out", "o-"), ("hook_mlp_out", "s-"), ("hook_resid_mid", "^:"), ("resid", "D-")):
            sel = sorted((r for r in mine if r["site"] == site), key=lambda r: r["layer"])
            bars = [[r["iia_causal"] - r["iia_causal_low"] for r in sel], [r["iia_causal_high"] - r["iia_causal"] for r in sel]]
            right.errorbar([r["layer"] for r in sel], [r["iia_causal"] for r in sel], yerr=bars, fmt=style, capsize=2,
                           label=site if site != "resid" else "residual (hook_resid_post)")  # 95% bootstrap intervals over examples
        resid = sorted((r for r in mine if r["site"] == "resid"), key=lambda r: r["layer"])
        right.plot([r["layer"] for r in resid], [max(r["stays_base_causal"], r["copies_source_causal"]) for r in resid], "k--",
                   linewidth=0.8, label="residual: larger null")  # fmt: skip
        right.set_ylim(-0.05, 1.05)
        right.set_xticks(sorted({r["layer"] for r in mine}))
        right.set_xlabel("block (−1 = embedding output)")
        right.set_title(f"per block at {role}", fontsize=9)
        right.grid(alpha=0.3)
        right.legend(fontsize=7)
    fig.tight_layout()
    save_figure_atomic(fig, path, dpi=130)


def format_heads(rows: list[dict], top: int = 8) -> str:
    """The ``top`` heads by IIA on causal pairs at each role, and the per-block table of the other sites, as text."""
    lines, shown = [], []
    for role in dict.fromkeys(r["role"] for r in rows):
        mine = [r for r in rows if r["role"] == role]
        best = sorted((r for r in mine if r["head"] >= 0), key=lambda r: -r["iia_causal"])[:top]
        lines.append(f"{role}: best heads by IIA on causal pairs [95% interval] (stays / copies nulls; * above both)")
        lines += [f"  {r['location']:34}{r['iia_causal']:7.3f} [{r['iia_causal_low']:.3f}, {r['iia_causal_high']:.3f}]  "
                  f"({r['stays_base_causal']:.3f} / {r['copies_source_causal']:.3f}){' *' if r['above_nulls'] else ''}" for r in best]  # fmt: skip
        shown += best
        lines.append(f"{role}: per block, IIA on causal pairs (* above both nulls)")
        sites = ("resid", "hook_attn_out", "hook_resid_mid", "hook_mlp_out")
        lines.append("  " + f"{'block':>6}" + "".join(f"{s:>16}" for s in sites))
        for layer in sorted({r["layer"] for r in mine}):
            cells = {r["site"]: r for r in mine if r["layer"] == layer and r["head"] < 0}
            text = "".join(f"{cells[s]['iia_causal']:>15.3f}{'*' if cells[s]['above_nulls'] else ' '}" if s in cells else f"{'':>16}" for s in sites)
            lines.append(f"  {layer:>6}{text}")
    lines.append(f"[95%]: bootstrap interval over {rows[0].get('over', 'the examples') if rows else 'the examples'} (one draw for bases and sources; in "
                 "heads.csv for every cell); * above both nulls: the interval of IIA minus the larger null lies above 0")  # fmt: skip
    lines += collapsed_note((r["iia_causal_low"], r["iia_causal_high"]) for r in shown)
    return "\n".join(lines)


def run_head_sweep(config: HeadSweepConfig, *, progress: bool = True) -> list[dict]:
    """Run (or resume) the sweep's interventions; write ``heads.csv`` and ``heads.png``; return the rows.

    Raises:
        ConfigError, DataError, ModelError, OutputError: as :func:`interp.jobs.intervene.run_interventions`.
    """
    config.validate()
    path = run_interventions(config.interventions(), progress=progress)
    rows = sweep_rows(path)
    with OutputSet(Path(config.out), "head-sweep") as outputs:
        write_csv_atomic(rows, outputs.path("heads.csv"))
        plot_heads(rows, outputs.path("heads.png"))
    return rows
