"""The figure of a localization (:mod:`interp.jobs.localize`'s ``localize.png``): held-out IIA by block per featurizer.

Usage::

    fig = localization_figure(rows, "ioi")      # rows: localize.csv's, as dicts; a matplotlib Figure
"""

from __future__ import annotations

from typing import Mapping, Sequence

from interp.analysis.localization import CONTROL, PRETRAINED, best_positions, site_kind


def localization_figure(rows: Sequence[Mapping], task: str):
    """IIA by block per featurizer, one panel per variable, at each block's best position; the re-initialised model's
    points open and dashed beneath; each point with its interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    best = best_positions(rows)
    variables = sorted({r["variable"] for r in rows})
    featurizers = list(dict.fromkeys((r["featurizer"], site_kind(r)) for r in rows))
    fig, axes = plt.subplots(1, len(variables), figsize=(5.2 * len(variables) + 2.2, 3.6), sharey=True, squeeze=False)
    for ax, variable in zip(axes[0], variables):
        for i, (featurizer, kind) in enumerate(featurizers):
            for model, filled in ((PRETRAINED, True), (CONTROL, False)):
                mine = sorted((r for (m, f, v, _, k), r in best.items() if (m, f, v, k) == (model, featurizer, variable, kind)),
                              key=lambda r: int(r["block"]))  # fmt: skip
                if not mine:
                    continue
                x = [int(r["block"]) + 0.1 * (i - (len(featurizers) - 1) / 2) for r in mine]
                y = [float(r["iia"]) for r in mine]
                err = [[v - float(r["iia_low"]) for v, r in zip(y, mine)], [float(r["iia_high"]) - v for v, r in zip(y, mine)]]
                ax.errorbar(x, y, yerr=err, fmt="o" + ("-" if filled else "--"), color=f"C{i}", capsize=2, mfc=None if filled else "white",
                            label=featurizer + ("" if kind == "residual" else f" ({kind})") + ("" if filled else f" ({CONTROL})"))  # fmt: skip
        ax.set_title(f"{task}, {variable} (best position per block)")
        ax.set_xlabel("block")
        ticks = sorted({int(r["block"]) for r in rows})
        ax.set_xticks(ticks[:: max(1, -(-len(ticks) // 15))])  # at most 15 labels: a 30-block sweep's stay legible
        ax.set_ylim(0, 1.02)
    axes[0][0].set_ylabel("held-out IIA (95% interval)")
    axes[0][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    return fig
