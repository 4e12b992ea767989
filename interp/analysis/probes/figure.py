"""The probe figure, like Figure 2 of Geiger, Richardson & Potts (2020): accuracy and selectivity by layer."""

from __future__ import annotations

from pathlib import Path

from interp.analysis.probes.summary import row_interval
from interp.core.outputs import save_figure_atomic

_STYLE = {
    "task_acc": ("accuracy", "-"),
    "selectivity_type": ("selectivity vs type control", "--"),
    "selectivity_shuffle": ("selectivity vs shuffle control", ":"),
}


def _bar(row: dict, key: str) -> tuple[float, float]:
    """How far the error bar of ``key`` reaches below and above its mean: to the 95% interval over examples, else ± std."""
    mean, bounds = row[f"{key}_mean"], row_interval(row, key)
    if bounds is None:
        return row[f"{key}_std"], row[f"{key}_std"]
    return max(mean - bounds[0], 0.0), max(bounds[1] - mean, 0.0)


def plot_probes(rows: list[dict], path: Path) -> None:
    """One panel per (target, token roles, site kind) probed (component sites, :mod:`interp.hooks.locations`, get their own); x = layer (0 = embeddings, r = BERT^r), y = held-out accuracy
    and selectivity, one colour per probe kind, error bars = each figure's 95% bootstrap interval over examples
    (the sweep's ``_low`` and ``_high``; the standard deviation over seeds for a row written before intervals
    were kept); the dash-dot line is chance (the majority class's share). Written as PNG.

    Every target at every role set is a target × roles grid; a sweep that probes each target at its own
    roles (``--locations aligned``) is one panel per target, four to a row.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    targets = list(dict.fromkeys(r["target"] for r in rows))
    roles = list(dict.fromkeys(r["role"] for r in rows))
    kinds = list(dict.fromkeys(r["probe"] for r in rows))
    panels = list(dict.fromkeys((r["target"], r["role"], r.get("site", "resid")) for r in rows))
    sites = list(dict.fromkeys(p[2] for p in panels))
    columns = len(roles) if len(panels) == len(targets) * len(roles) * len(sites) else min(4, len(panels))
    n_rows = -(-len(panels) // columns)
    low = min(r[f"{key}_mean"] - _bar(r, key)[0] for r in rows for key in _STYLE)
    fig, axes = plt.subplots(n_rows, columns, figsize=(4 * columns, 3.2 * n_rows), squeeze=False, sharey=True)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for (target, role, site), ax in zip(panels, axes.flat):
        for k, kind in enumerate(kinds):
            mine = (r for r in rows if (r["target"], r["role"], r.get("site", "resid"), r["probe"]) == (target, role, site, kind))
            sel = sorted(mine, key=lambda r: r["hidden_index"])
            x = [r["hidden_index"] for r in sel]
            for key, (label, line) in _STYLE.items():
                ax.errorbar(
                    x, [r[f"{key}_mean"] for r in sel], yerr=[[_bar(r, key)[0] for r in sel], [_bar(r, key)[1] for r in sel]],
                    linestyle=line, color=f"C{k}", marker="o", markersize=3, capsize=2,
                    label=f"{kind}: {label}",
                )  # fmt: skip
        chance = next((float(r["chance"]) for r in rows if (r["target"], r["role"]) == (target, role) and "chance" in r), 0.5)
        ax.axhline(chance, color="grey", linewidth=0.6, linestyle="-.")
        ax.set_title(f"{target} at {role}" + ("" if site == "resid" else f", {site}"))
        ax.set_xlabel("layer (0 = embeddings)")
        ax.set_ylim(min(-0.1, low - 0.05), 1.05)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("held-out")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(kinds) * len(_STYLE) // 2 or 1, fontsize=8)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    save_figure_atomic(fig, path, dpi=130)
