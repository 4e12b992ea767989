"""DAS results over seeds and as heatmaps: location × variable, IIA of DAS beside the localist block and the whole vector.

The heatmap's layout follows the DAS paper's location sweeps (Geiger, Wu,
Potts, Icard & Goodman 2024, §5): one panel per method, rows the locations
(layer by layer at each role set), columns the variables; each cell the
held-out IIA, the mean over seeds.
"""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np

from interp.analysis.bootstrap import collapsed_note
from interp.analysis.das_verdict import DIFFERENCES, verdict
from interp.analysis.intervals import mean_interval

METHODS = ("das", "untrained", "block", "vanilla")
_TITLES = {"das": "DAS, k = {k}", "untrained": "untrained, k = {k}", "block": "best block, k = {k}", "vanilla": "whole vector (vanilla)"}


def summarize_seeds(rows: list[dict]) -> list[dict]:
    """One row per (variable, location, size): for each method the held-out IIA with its 95% interval.

    With several seeds, the mean and Student's t interval over seeds (:func:`~interp.analysis.intervals.mean_interval`);
    with one, that seed's IIA and its bootstrap interval over the held-out examples
    (:func:`~interp.analysis.das.score_intervention`). ``interval`` says which.

    Columns: ``variable``, ``location``, ``size``, ``seeds``, ``k`` (mean,
    the learned one for ``boundless``), ``chance``, ``interval``, and ``{method}_iia``,
    ``{method}_low``, ``{method}_high`` for ``das``, ``untrained`` (the same intervention before training),
    ``block``, ``vanilla``; DAS's nulls ``stays_base`` and ``copies_source`` (means), the differences its verdict reads
    (``gain``, ``gap``, ``over_chance``, each with ``_low`` and ``_high``, over seeds or held-out examples as above) and
    ``verdict`` (:func:`~interp.analysis.das_verdict.verdict`).
    """
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        groups[row["variable"], row["location"], str(row["size"])].append(row)
    out = []
    for (variable, location, size), members in groups.items():
        several = len(members) > 1
        summary = {"variable": variable, "location": location, "size": size, "seeds": len(members),
                   "k": float(np.mean([m["k"] for m in members])), "chance": float(np.mean([m["chance"] for m in members])),
                   "interval": "95% t interval over seeds" if several else members[0].get("interval") or "95% bootstrap interval over held-out examples"}  # fmt: skip
        for method in METHODS:
            if several:
                mean, low, high = mean_interval([float(m[f"{method}_iia"]) for m in members], bounds=(0.0, 1.0))
            else:
                mean, low, high = (float(members[0][f"{method}_iia{end}"]) for end in ("", "_low", "_high"))
            summary.update({f"{method}_iia": round(mean, 4), f"{method}_low": round(low, 4), f"{method}_high": round(high, 4)})
        summary.update({null: round(float(np.mean([float(m[f"das_{null}"]) for m in members])), 4) for null in ("stays_base", "copies_source")})
        for name in DIFFERENCES:
            if any(m.get(f"das_{name}") in (None, "") for m in members):
                continue  # a unit of an older run: not judged on this difference
            if several:
                mean, low, high = mean_interval([float(m[f"das_{name}"]) for m in members], bounds=(-1.0, 1.0))
            else:
                mean, low, high = (float(members[0][f"das_{name}{end}"]) for end in ("", "_low", "_high"))
            summary.update({name: round(mean, 4), f"{name}_low": round(low, 4), f"{name}_high": round(high, 4)})
        summary["verdict"] = verdict(summary)
        out.append(summary)
    return out


def das_heatmap(rows: list[dict]):
    """A matplotlib figure: one panel per method (DAS, untrained, best block, vanilla), location × variable, held-out IIA
    (mean over seeds), each cell with its 95% interval under it (over seeds with several, over held-out examples with one:
    :func:`summarize_seeds`).

    With several sizes the first one (in ``rows``' order) is drawn; the
    others are in ``das_summary.csv``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = summarize_seeds(rows)
    size = summary[0]["size"]
    summary = [s for s in summary if s["size"] == size]
    locations = list(dict.fromkeys(s["location"] for s in summary))
    variables = list(dict.fromkeys(s["variable"] for s in summary))
    cell = {(s["location"], s["variable"]): s for s in summary}
    k = next(iter(cell.values()))["k"]
    fig, axes = plt.subplots(1, len(METHODS), figsize=(1.0 * len(variables) * len(METHODS) + 5, 0.45 * len(locations) + 1.6),
                             squeeze=False, layout="constrained")  # fmt: skip
    for ax, method in zip(axes[0], METHODS):
        grid = np.array([[cell[(loc, var)][f"{method}_iia"] if (loc, var) in cell else np.nan for var in variables] for loc in locations])
        image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
        for (i, j), value in np.ndenumerate(grid):
            if not np.isnan(value):
                s = cell[(locations[i], variables[j])]
                ax.text(j, i, f"{value:.2f}\n[{s[f'{method}_low']:.2f}, {s[f'{method}_high']:.2f}]", ha="center", va="center",
                        fontsize=6, linespacing=0.9, color="white" if value < 0.6 else "black")  # fmt: skip
        ax.set_xticks(range(len(variables)), variables, rotation=30, ha="right")
        ax.set_yticks(range(len(locations)), locations if method == METHODS[0] else [""] * len(locations), fontsize=7)
        ax.set_title(_TITLES[method].format(k=size if size == "boundless" else int(round(k))), fontsize=9)
    fig.colorbar(image, ax=axes[0].tolist(), shrink=0.6, label="held-out IIA")
    return fig


def format_das(rows: list[dict]) -> str:
    """The summary as a text table: one line per (variable, location, size), each held-out IIA with its 95% interval
    (over seeds with several, over held-out examples with one), the untrained intervention beside DAS, DAS's two nulls,
    chance and the verdict (:mod:`~interp.analysis.das_verdict`); then each unit's training history (loss and held-out
    IIA per epoch, epoch 0 untrained)."""
    lines = [f"{'variable':10} {'location':34} {'k':>6} {'seeds':>5}  " + "  ".join(f"{h:>21}" for h in ("DAS", "untrained", "best block", "vanilla"))
             + "  stays copies chance  verdict"]  # fmt: skip
    summaries = summarize_seeds(rows)
    for s in summaries:
        cells = [f"{s[f'{m}_iia']:.3f} [{s[f'{m}_low']:.3f}, {s[f'{m}_high']:.3f}]" for m in METHODS]
        k = s["size"] if s["size"] != "boundless" else f"b:{s['k']:.0f}"
        lines.append(f"{s['variable']:10} {s['location']:34} {k:>6} {s['seeds']:>5}  {'  '.join(f'{c:>21}' for c in cells)}  "
                     f"{s['stays_base']:.3f}  {s['copies_source']:.3f}  {s['chance']:.3f}  {s['verdict']}")  # fmt: skip
    lines.append("[low, high]: " + "; ".join(sorted({s["interval"] for s in summaries})) + "; untrained: the same kind, k and initial "
                 "parameters before training, on the same pairs; stays, copies: DAS's nulls (the intervened label is the model's own "
                 "on the base, on the source); learned: the intervals of DAS minus the untrained one, minus the larger null and "
                 "minus chance all lie above 0")  # fmt: skip
    lines += collapsed_note([(s[f"{m}_low"], s[f"{m}_high"]) for s in summaries for m in METHODS], "held-out examples or seeds")
    lines.append("history (loss; held-out IIA), epoch 0 untrained:")
    for row in rows:
        history = json.loads(row.get("history") or "[]")
        losses = " ".join("-" if h["loss"] is None else f"{h['loss']:.3f}" for h in history)
        iia = " ".join(f"{h['held_out_iia']:.3f}" for h in history)
        lines.append(f"  {row['variable']} {row['location']} k={row['size']} seed {row['seed']}: loss {losses}; IIA {iia}")
    return "\n".join(lines)
