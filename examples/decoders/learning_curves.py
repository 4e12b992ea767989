"""Learning curves of fine-tuning routes, gathered from ``interp train --curve-every N`` runs into one CSV, a table and a figure.

    .venv/bin/python examples/decoders/learning_curves.py runs/curves/top2 runs/curves/lora8 ... \\
        --csv docs/results/data/curves/smollm2_monli.csv --figure docs/images/curves_smollm2_monli.png
    .venv/bin/python examples/decoders/learning_curves.py --table docs/results/data/curves/smollm2_monli.csv

Each run folder holds ``curve.csv`` (written by ``interp train --curve-every``) and ``training.json``; its route is read
from the run's settings: every weight, the top N blocks (``--train-blocks``), LoRA (``--lora-rank``), each through a
new classification head or the LM head's label words (``--label-words``). The CSV has one row per route, point and
split: the step, examples seen, training seconds so far and a step, correct of n, accuracy and its 95% Wilson interval.
The table (what the results page carries between ``<!-- curves: NAME -->`` and ``<!-- /curves -->``) gives each run's
seconds a step and each split's accuracy at step 0, at its best point and at its last, in % with 95% Wilson intervals.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from pathlib import Path

COLUMNS = ("route", "lr", "epochs", "step", "examples", "seconds", "seconds_per_step", "split", "correct", "n", "accuracy", "low", "high")
SPLIT_NAMES = {"nmonli_test": "NMoNLI test", "pmonli_heldout": "PMoNLI held out"}


def route_of(config: dict) -> str:
    """A run's route in words, from its ``training.json`` settings."""
    if config.get("lora_rank"):
        alpha = config.get("lora_alpha") or 2 * config["lora_rank"]
        weights = f"LoRA r{config['lora_rank']} a{alpha:g}"
    elif config.get("train_blocks") is not None:
        weights = f"top {config['train_blocks']} blocks"
    else:
        weights = "every weight"
    words = config.get("label_words")
    head = "label words " + "/".join(repr(w) for _, w in words) if words else "new head"
    return f"{weights}, {head}"


def gather(folders: list[Path]) -> list[dict]:
    """The rows of every run's curve, its route, lr and epochs added."""
    rows = []
    for folder in folders:
        config = json.loads((folder / "training.json").read_text())["config"]
        for row in csv.DictReader((folder / "curve.csv").open()):
            rows.append({"route": route_of(config), "lr": f"{config['lr']:g}", "epochs": str(config["epochs"]), **row})
    return rows


def write(rows: list[dict], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows({k: row[k] for k in COLUMNS} for row in rows)


def read(path: Path) -> list[dict]:
    return list(csv.DictReader(path.open()))


def _cell(row: dict) -> str:
    return f"{100 * float(row['accuracy']):.1f} [{100 * float(row['low']):.1f}, {100 * float(row['high']):.1f}]"


def runs(rows: list[dict]) -> list[tuple[str, str, str]]:
    """Each run's (route, lr, epochs), in the CSV's order."""
    return list(dict.fromkeys((r["route"], r["lr"], r["epochs"]) for r in rows))


def step_seconds(own: list[dict]) -> float:
    """A run's seconds a step: the median over its curve's segments (the training seconds between two points over the
    steps between them), so a segment slowed by other work on the machine does not move it."""
    points = sorted({(int(r["step"]), float(r["seconds"])) for r in own})
    rates = [(b[1] - a[1]) / (b[0] - a[0]) for a, b in zip(points, points[1:]) if b[0] > a[0]]
    return statistics.median(rates) if rates else float("nan")


def table(rows: list[dict]) -> str:
    """One line per run and split: seconds a step (training alone, :func:`step_seconds`), accuracy in % [95% Wilson]
    at step 0, the best point (read on that split: an upper bound, chosen on the scores) and the last."""
    lines = ["| route | lr | epochs | seconds a step | split | step 0 | best (its step) | last (its step) |",
             "| --- | --- | ---: | ---: | --- | ---: | ---: | ---: |"]  # fmt: skip
    for key in runs(rows):
        own = [r for r in rows if (r["route"], r["lr"], r["epochs"]) == key]
        for split in dict.fromkeys(r["split"] for r in own):
            at = sorted((r for r in own if r["split"] == split), key=lambda r: int(r["step"]))
            best = max(at, key=lambda r: (int(r["correct"]), -int(r["step"])))
            lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {step_seconds(own):.2f} | {SPLIT_NAMES.get(split, split)} | "
                         f"{_cell(at[0])} | {_cell(best)} ({best['step']}) | {_cell(at[-1])} ({at[-1]['step']}) |")  # fmt: skip
    return "\n".join(lines)


def figure(rows: list[dict], path: Path) -> None:
    """Accuracy against step, one panel a split, one line a route, its Wilson interval shaded; chance at 50%."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    splits = list(dict.fromkeys(r["split"] for r in rows))
    fig, axes = plt.subplots(1, len(splits), figsize=(5.2 * len(splits), 3.8), sharey=True, squeeze=False)
    for ax, split in zip(axes[0], splits):
        for route, lr, epochs in runs(rows):
            own = sorted((r for r in rows if (r["route"], r["lr"], r["epochs"], r["split"]) == (route, lr, epochs, split)),
                         key=lambda r: int(r["step"]))  # fmt: skip
            x = [int(r["step"]) for r in own]
            line, = ax.plot(x, [100 * float(r["accuracy"]) for r in own], marker="o", ms=3, label=f"{route}, lr {lr}, {epochs} epochs")
            ax.fill_between(x, [100 * float(r["low"]) for r in own], [100 * float(r["high"]) for r in own], color=line.get_color(), alpha=0.15)
        ax.axhline(50, color="grey", lw=0.8, ls="--")
        ax.axhline(85, color="grey", lw=0.8, ls=":")
        ax.set_title(SPLIT_NAMES.get(split, split))
        ax.set_xlabel("optimizer steps (batches of 16)")
    axes[0][0].set_ylabel("accuracy, % (95% Wilson interval)")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="*", type=Path, help="run folders of interp train --curve-every")
    parser.add_argument("--csv", type=Path, help="write the gathered rows here")
    parser.add_argument("--figure", type=Path, help="draw the curves here (png)")
    parser.add_argument("--table", type=Path, help="print the table of a gathered CSV")
    args = parser.parse_args(argv)
    rows = gather(args.runs) if args.runs else read(args.table) if args.table else []
    if not rows:
        parser.error("give run folders, or --table CSV")
    if args.csv:
        write(rows, args.csv)
    if args.figure:
        figure(rows, args.figure)
    print(table(rows))


if __name__ == "__main__":
    sys.exit(main())
