"""Several inoculation runs side by side: Richardson et al. (2020)'s Figures 6 and 7 and the table of §4.

Each run is a folder :func:`interp.jobs.inoculate.run_inoculation` wrote
(one challenge, e.g. one semantic fragment). :func:`read_inoculation` reads
its ``selected.json`` (each k's lossless choice) and ``inoculation.csv``
(every unit of the grid); :func:`inoculation_panels` draws one panel per
run as the paper does, the original task's test accuracy as a solid line and
the challenge's as a dashed one, both of the lossless choice, with the range
of the challenge's test accuracy over the grid's units at each k shaded (with
a grid of seeds at one learning rate: the spread over seeds);
:func:`inoculation_table` gives before and after per run, "after" being the
lossless choice over every k > 0 (best dev average, the paper's M*), and the
challenge's test accuracy at the largest k as the mean and 95% t interval
over the grid's seeds.

Usage::

    from interp.jobs.inoculation_figure import inoculation_panels, inoculation_table, read_inoculation
    runs = [read_inoculation(f"runs/inoc/{f}") for f in ("negation", "quantifier")]
    inoculation_table(runs)               # a pandas DataFrame, accuracies in %
    inoculation_panels(runs, "panels.png")

``interp inoculation-figure RUN_DIR... --out panels.png`` does both.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from interp.analysis.intervals import mean_interval
from interp.core.errors import DataError
from interp.jobs.inoculate import lossless_choice

_NUMBERS = ("k", "lr", "epochs", "seed", "original_dev", "challenge_dev", "dev_average", "original_test", "challenge_test", "test_average")


@dataclass(frozen=True)
class InoculationRun:
    """One finished inoculation run.

    Attributes:
        name: the run folder's name (a fragment's, say).
        challenge: the challenge the k examples came from (``fragment:negation``).
        selected: each k's lossless choice, k = 0 (the model as given) first; accuracies in [0, 1].
        units: every unit of the grid (the CSV's rows, numbers parsed), k = 0 first.
    """

    name: str
    challenge: str
    selected: list[dict]
    units: list[dict]


#: The columns every unit (and every selected choice, with its ``dev_average``) has: its k and its two test accuracies.
_REQUIRED = ("k", "challenge_test", "original_test")


def read_inoculation(run_dir: str | Path) -> InoculationRun:
    """The run in ``run_dir``: its ``selected.json`` and ``inoculation.csv``.

    Raises:
        DataError: naming the file that is missing or not an inoculation run's.
    """
    run_dir = Path(run_dir)
    selected_path, units_path = run_dir / "selected.json", run_dir / "inoculation.csv"
    try:
        chosen = json.loads(selected_path.read_text(encoding="utf-8"))
        selected, challenge = chosen["selected"], chosen["settings"]["challenge"]
        with units_path.open(newline="", encoding="utf-8") as handle:
            units = [{c: (float(v) if c in _NUMBERS and v != "" else v) for c, v in row.items()} for row in csv.DictReader(handle)]
    except FileNotFoundError as exc:
        raise DataError(f"{exc.filename}: missing; is {run_dir} a finished `interp inoculate` run?") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{selected_path} or {units_path}: not an inoculation run's ({exc})") from None
    if not isinstance(selected, list) or not selected or not units:
        raise DataError(f"{selected_path}: no selected unit")
    for path, rows, required in ((units_path, units, _REQUIRED), (selected_path, selected, (*_REQUIRED, "dev_average"))):
        for line, row in enumerate(rows, start=2 if path == units_path else 1):
            where = f"{path}:{line}" if path == units_path else f"{path}: selected[{line - 1}]"
            missing = [c for c in required if not isinstance(row, dict) or row.get(c) in (None, "")]
            if missing:
                raise DataError(f"{where}: no {missing[0]!r}; is {run_dir} a finished `interp inoculate` run?")
            bad = [c for c in required if not isinstance(row[c], (int, float)) or isinstance(row[c], bool) or row[c] != row[c]]
            if bad or row["k"] != int(row["k"]) or row["k"] < 0:
                raise DataError(f"{where}: {(bad or ['k'])[0]} is {row[(bad or ['k'])[0]]!r}, not a number of its kind")
            row["k"] = int(row["k"])
    return InoculationRun(run_dir.name, challenge, selected, units)


def lossless_after(run: InoculationRun) -> dict:
    """The lossless choice over every k > 0: the selected row with the best dev average (ties: the smaller k)."""
    later = [{**r, "order": i} for i, r in enumerate(r for r in run.selected if r["k"] > 0)]  # selected rows run in order of k
    return lossless_choice(later) if later else run.selected[0]


def inoculation_table(runs: Sequence[InoculationRun]):
    """A pandas DataFrame, one row per run, accuracies in %.

    Columns: ``run``; ``challenge_before``, ``challenge_after``,
    ``original_before``, ``original_after`` (test accuracy of the model as
    given and of :func:`lossless_after`); ``chosen`` (its unit); ``k_max``
    and ``challenge_at_k_max``, ``_low``, ``_high`` (mean and 95% t interval
    of the challenge's test accuracy over the grid's units at the largest k);
    ``units``.
    """
    import pandas as pd

    rows = []
    for run in runs:
        before, after = run.selected[0], lossless_after(run)
        k_max = max(r["k"] for r in run.units)
        mean, low, high = mean_interval([100 * r["challenge_test"] for r in run.units if r["k"] == k_max], bounds=(0.0, 100.0))
        rows.append({"run": run.name, "challenge_before": 100 * before["challenge_test"], "challenge_after": 100 * after["challenge_test"],
                     "original_before": 100 * before["original_test"], "original_after": 100 * after["original_test"],
                     "chosen": after["unit"], "k_max": k_max, "challenge_at_k_max": mean, "challenge_at_k_max_low": low,
                     "challenge_at_k_max_high": high, "units": len(run.units) - 1})  # fmt: skip
    return pd.DataFrame(rows)


def inoculation_panels(runs: Sequence[InoculationRun], out: str | Path, columns: int = 4, *, overwrite: bool = False) -> Path:
    """Richardson et al.'s Figures 6 and 7 as one PNG at ``out``: a panel per run, test accuracy (%) against k.

    An existing ``out`` is replaced only with ``overwrite=True``.

    Raises:
        OutputError: naming ``out``: it exists (without ``overwrite``) or cannot be written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from interp.core.outputs import refuse_existing, require_writable, save_figure_atomic

    refuse_existing(Path(out), overwrite)
    require_writable(Path(out))

    columns = max(1, min(columns, len(runs)))
    n_rows = -(-len(runs) // columns)
    fig, axes = plt.subplots(n_rows, columns, figsize=(3.2 * columns, 2.7 * n_rows), squeeze=False, sharey=True, layout="constrained")
    for ax, run in zip(axes.flat, runs):
        ks = [r["k"] for r in run.selected]
        spread = [[100 * u["challenge_test"] for u in run.units if u["k"] == k] for k in ks]
        ax.fill_between(ks, [min(s) for s in spread], [max(s) for s in spread], color="tab:orange", alpha=0.2, lw=0)
        ax.plot(ks, [100 * r["original_test"] for r in run.selected], "o-", color="tab:blue", ms=3, label="original (solid)")
        ax.plot(ks, [100 * r["challenge_test"] for r in run.selected], "s--", color="tab:orange", ms=3, label="challenge (dashed)")
        ax.set_title(run.name, fontsize=9)
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(runs):]:
        ax.axis("off")
    axes[0][0].legend(fontsize=6, loc="lower right")
    fig.supxlabel("k, challenge examples fine-tuned on (0: before inoculation)", fontsize=8)
    fig.supylabel("test accuracy (%), lossless choice per k", fontsize=8)
    return save_figure_atomic(fig, Path(out), dpi=110)
