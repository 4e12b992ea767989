"""DAS results over seeds and as heatmaps: location × variable, IIA of DAS beside the localist block and the whole vector.

The heatmap's layout follows the DAS paper's location sweeps (Geiger, Wu,
Potts, Icard & Goodman 2024, §5): one panel per method, rows the locations
(layer by layer at each role set), columns the variables; each cell the
held-out IIA, the mean over seeds.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from interp.analysis.intervals import mean_interval

METHODS = ("das", "block", "vanilla")
_TITLES = {"das": "DAS, k = {k}", "block": "best block of k = {k} coordinates", "vanilla": "whole vector (vanilla)"}


def summarize_seeds(rows: list[dict]) -> list[dict]:
    """One row per (variable, location, size): for each method the held-out IIA's mean and 95% interval over seeds.

    Columns: ``variable``, ``location``, ``size``, ``seeds``, ``k`` (mean,
    the learned one for ``boundless``), ``chance``, and ``{method}_iia``,
    ``{method}_low``, ``{method}_high`` for ``das``, ``block``, ``vanilla``.
    """
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        groups[row["variable"], row["location"], str(row["size"])].append(row)
    out = []
    for (variable, location, size), members in groups.items():
        summary = {"variable": variable, "location": location, "size": size, "seeds": len(members),
                   "k": float(np.mean([m["k"] for m in members])), "chance": float(np.mean([m["chance"] for m in members]))}  # fmt: skip
        for method in METHODS:
            mean, low, high = mean_interval([float(m[f"{method}_iia"]) for m in members])
            summary.update({f"{method}_iia": round(mean, 4), f"{method}_low": round(low, 4), f"{method}_high": round(high, 4)})
        out.append(summary)
    return out


def das_heatmap(rows: list[dict]):
    """A matplotlib figure: one panel per method (DAS, best block, vanilla), location × variable, held-out IIA (mean over seeds).

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
    fig, axes = plt.subplots(1, len(METHODS), figsize=(1.0 * len(variables) * len(METHODS) + 5, 0.3 * len(locations) + 1.6),
                             squeeze=False, layout="constrained")  # fmt: skip
    for ax, method in zip(axes[0], METHODS):
        grid = np.array([[cell[(loc, var)][f"{method}_iia"] if (loc, var) in cell else np.nan for var in variables] for loc in locations])
        image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
        for (i, j), value in np.ndenumerate(grid):
            if not np.isnan(value):
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7, color="white" if value < 0.6 else "black")
        ax.set_xticks(range(len(variables)), variables, rotation=30, ha="right")
        ax.set_yticks(range(len(locations)), locations if method == METHODS[0] else [""] * len(locations), fontsize=7)
        ax.set_title(_TITLES[method].format(k=size if size == "boundless" else int(round(k))), fontsize=9)
    fig.colorbar(image, ax=axes[0].tolist(), shrink=0.6, label="held-out IIA")
    return fig


def format_das(rows: list[dict]) -> str:
    """The summary as a text table: one line per (variable, location, size), IIA as mean [95% interval] with several seeds."""
    lines = [f"{'variable':10} {'location':34} {'k':>6} {'seeds':>5}  {'DAS':>19}  {'best block':>19}  {'vanilla':>19}  chance"]
    for s in summarize_seeds(rows):
        cells = []
        for method in METHODS:
            cell = f"{s[f'{method}_iia']:.3f}"
            if s["seeds"] > 1:
                cell += f" [{s[f'{method}_low']:.2f},{s[f'{method}_high']:.2f}]"
            cells.append(f"{cell:>19}")
        k = s["size"] if s["size"] != "boundless" else f"b:{s['k']:.0f}"
        lines.append(f"{s['variable']:10} {s['location']:34} {k:>6} {s['seeds']:>5}  {'  '.join(cells)}  {s['chance']:.3f}")
    return "\n".join(lines)
