"""The localization page's tables, from the CSV ``examples/localization/ioi.py`` writes.

    .venv/bin/python examples/localization/tables.py docs/results/data/localization/ioi_smollm2.csv

Two tables, printed as Markdown: every unit (variable, block at the last token, featurizer) with its held-out IIA on the
pretrained model, the same featurizer untrained, on the re-initialised model (where run) and the full vector, each with
its 95% interval over name pairs, and the verdict (``localizes`` only where the pretrained IIA's interval lies above the
untrained featurizer's, above the re-initialised model's and above the stays-the-base null, and DAS's own verdict is
``learned``); then MIB's aggregation per featurizer and variable: the mean over the blocks run (the best position per
block is the last token, the only one run) and the best block with its interval.
"""

from __future__ import annotations

import csv
import sys
from collections import defaultdict


def _cell(row: dict, name: str) -> str:
    return f"{float(row[name]):.3f} [{float(row[name + '_low']):.3f}, {float(row[name + '_high']):.3f}]"


def verdict(row: dict, control: dict | None) -> str:
    """``localizes``, or what the unit's IIA does not clear (the verdict the page and its test share)."""
    missing = []
    if not row["verdict"].startswith("learned"):
        missing.append("DAS's verdict")
    if float(row["iia_low"]) <= float(row["untrained_iia_high"]):
        missing.append("untrained")
    if control is None:
        missing.append("no re-initialised run")
    elif float(row["iia_low"]) <= float(control["iia_high"]):
        missing.append("re-initialised")
    if float(row["iia_low"]) <= float(row["stays_base"]):
        missing.append("stays the base")
    return "localizes" if not missing else "not shown: " + ", ".join(missing)


def tables(path: str) -> str:
    rows = list(csv.DictReader(open(path, newline="")))
    pretrained = [r for r in rows if r["model"] == "pretrained"]
    controls = {(r["variable"], r["block"], r["featurizer"]): r for r in rows if r["model"] == "re-initialised"}
    lines = ["| variable | block | featurizer | k | IIA | untrained | re-initialised model | full vector | verdict |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in sorted(pretrained, key=lambda r: (r["variable"], int(r["block"]), r["featurizer"])):
        control = controls.get((r["variable"], r["block"], r["featurizer"]))
        lines.append(f"| {r['variable']} | {r['block']} | {r['featurizer']} | {r['k']} | {_cell(r, 'iia')} | {_cell(r, 'untrained_iia')} | "
                     f"{_cell(control, 'iia') if control else '—'} | {_cell(r, 'vanilla_iia')} | {verdict(r, control)} |")
    by = defaultdict(list)
    for r in pretrained:
        by[(r["featurizer"], r["variable"])].append(r)
    lines += ["", "| featurizer | variable | mean IIA over blocks | best block | its IIA |", "| --- | --- | --- | --- | --- |"]
    for (featurizer, variable), units in sorted(by.items()):
        best = max(units, key=lambda r: float(r["iia"]))
        mean = sum(float(r["iia"]) for r in units) / len(units)
        lines.append(f"| {featurizer} | {variable} | {mean:.3f} ({len(units)} blocks) | {best['block']} | {_cell(best, 'iia')} |")
    return "\n".join(lines)


def figure(path: str, png: str) -> None:
    """IIA by block per featurizer (one panel per variable), each point with its interval as an error bar, the
    featurizers side by side at each block; the re-initialised model's open and dashed; the full vector as a cross."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(csv.DictReader(open(path, newline="")))
    variables = sorted({r["variable"] for r in rows})
    featurizers = sorted({r["featurizer"] for r in rows})
    blocks = sorted({int(r["block"]) for r in rows})
    fig, axes = plt.subplots(1, len(variables), figsize=(5.2 * len(variables) + 1.8, 3.6), sharey=True, squeeze=False)
    for ax, variable in zip(axes[0], variables):
        for i, featurizer in enumerate(featurizers):
            for model, filled in (("pretrained", True), ("re-initialised", False)):
                mine = sorted((r for r in rows if r["variable"] == variable and r["featurizer"] == featurizer and r["model"] == model),
                              key=lambda r: int(r["block"]))  # fmt: skip
                if not mine:
                    continue
                x = [int(r["block"]) + 0.12 * (i - (len(featurizers) - 1) / 2) for r in mine]
                y = [float(r["iia"]) for r in mine]
                err = [[v - float(r["iia_low"]) for v, r in zip(y, mine)], [float(r["iia_high"]) - v for v, r in zip(y, mine)]]
                ax.errorbar(x, y, yerr=err, fmt="o" + ("-" if filled else "--"), color=f"C{i}", capsize=3, mfc=None if filled else "white",
                            label=featurizer + ("" if filled else " (re-initialised)"))  # fmt: skip
        full = sorted({(int(r["block"]), float(r["vanilla_iia"])) for r in rows if r["variable"] == variable and r["model"] == "pretrained"})
        ax.plot([b for b, _ in full], [v for _, v in full], "k+", markersize=12, label="full vector")
        ax.set_title(f"IOI, {variable}, last token")
        ax.set_xlabel("block")
        ax.set_xticks(blocks)
        ax.set_xlim(min(blocks) - 1, max(blocks) + 1)
        ax.set_ylim(0, 1.02)
    axes[0][0].set_ylabel("held-out IIA (95% interval over name pairs)")
    axes[0][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))  # beside the panels, over no point
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main(path: str | None = None, png: str | None = None) -> None:
    path = path or sys.argv[1]
    print(tables(path))
    if png or len(sys.argv) > 2:
        figure(path, png or sys.argv[2])


if __name__ == "__main__":
    main()
