"""The probe figure, like Figure 2 of Geiger, Richardson & Potts (2020): accuracy and selectivity by layer."""

from __future__ import annotations

from pathlib import Path

from interp.core.outputs import save_figure_atomic

_STYLE = {
    "task_acc": ("accuracy", "-"),
    "selectivity_type": ("selectivity vs type control", "--"),
    "selectivity_shuffle": ("selectivity vs shuffle control", ":"),
}


def plot_probes(rows: list[dict], path: Path) -> None:
    """One panel per (target, token role); x = layer (0 = embeddings, r = BERT^r), y = held-out accuracy
    and selectivity, one colour per probe kind, error bars = standard deviation over seeds. Written as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    targets = list(dict.fromkeys(r["target"] for r in rows))
    roles = list(dict.fromkeys(r["role"] for r in rows))
    kinds = list(dict.fromkeys(r["probe"] for r in rows))
    low = min(r[f"{key}_mean"] - r[f"{key}_std"] for r in rows for key in _STYLE)
    fig, axes = plt.subplots(len(targets), len(roles), figsize=(4 * len(roles), 3.2 * len(targets)), squeeze=False, sharey=True)
    for i, target in enumerate(targets):
        for j, role in enumerate(roles):
            ax = axes[i][j]
            for k, kind in enumerate(kinds):
                sel = sorted((r for r in rows if (r["target"], r["role"], r["probe"]) == (target, role, kind)), key=lambda r: r["hidden_index"])
                x = [r["hidden_index"] for r in sel]
                for key, (label, line) in _STYLE.items():
                    ax.errorbar(
                        x, [r[f"{key}_mean"] for r in sel], yerr=[r[f"{key}_std"] for r in sel],
                        linestyle=line, color=f"C{k}", marker="o", markersize=3, capsize=2,
                        label=f"{kind}: {label}",
                    )  # fmt: skip
            ax.axhline(0.5, color="grey", linewidth=0.6, linestyle="-.")
            ax.set_title(f"{target} at {role}")
            ax.set_xlabel("layer (0 = embeddings)")
            ax.set_ylim(min(-0.1, low - 0.05), 1.05)
            ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("held-out")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(kinds) * len(_STYLE) // 2 or 1, fontsize=8)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    save_figure_atomic(fig, path, dpi=130)
