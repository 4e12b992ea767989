"""The localization page's tables for a run of ``interp localize``, from the two CSVs it writes.

    .venv/bin/python examples/localization/localize_tables.py docs/results/data/localization/cities_smollm2.csv \
        docs/results/data/localization/cities_smollm2_mib.csv

Two tables, printed as Markdown: MIB's aggregation per model, featurizer and variable (``mib.csv``: the mean over the
layers run of each layer's best position, with the interval of the same mean over the bootstrap replicates, and the
best layer with its own interval); then every unit of the pretrained model (``localize.csv``): its held-out IIA with
its 95% interval, RAVEL's Cause, Isolate and their mean where the task asks attributes, MIB's linear IOI score with the
base's own run beside it where the run has it, the re-initialised model's IIA at the same unit where it was run, and
the verdict (:func:`interp.analysis.localization.verdict`). A run with attention heads gets a site column.

MIB's grid is the last token at every block and the names' positions at every other block: two runs of
``interp localize`` with the same model, examples and seed (so the same held-out pairs), over different blocks and
positions. ``--grid`` aggregates their units together, as one run over the whole grid would::

    .venv/bin/python examples/localization/localize_tables.py --grid docs/results/data/localization/ioi_smollm2_sweep \
        docs/results/data/localization/ioi_smollm2_names

(each argument a run's stem: ``STEM.csv`` and ``STEM_pairs.json``, the two files ``localize.csv`` and ``pairs.json``).
"""

from __future__ import annotations

import csv
import sys


def _cell(row: dict, name: str) -> str:
    if row.get(name) in (None, ""):
        return "—"
    return f"{float(row[name]):.3f} [{float(row[name + '_low']):.3f}, {float(row[name + '_high']):.3f}]"


def _mib_lines(mib: list[dict]) -> tuple[list[str], bool]:
    sites = any(t.get("site", "residual") not in ("", "residual") for t in mib)  # heads: a site column, else none
    lines = [f"| model | featurizer | variable |{' site |' if sites else ''} mean IIA over layers [95%] | best layer (position) | its IIA [95%] |",
             f"| --- | --- | --- |{' --- |' if sites else ''} --- | --- | --- |"]  # fmt: skip
    for t in mib:
        site = f" {t.get('site') or 'residual'} |" if sites else ""
        lines.append(f"| {t['model']} | {t['featurizer']} | {t['variable']} |{site} {_cell(t, 'mean')} ({t['blocks']} layers) | "
                     f"{t['best_block']} ({t['position']}) | {_cell(t, 'best_iia')} |")
    return lines, sites


def tables(units_csv: str, mib_csv: str) -> str:
    rows = list(csv.DictReader(open(units_csv, newline="")))
    lines, sites = _mib_lines(list(csv.DictReader(open(mib_csv, newline=""))))
    ravel = any(r.get("ravel") not in (None, "") for r in rows)
    linear = any(r.get("mib_linear") not in (None, "") for r in rows)
    where = "site" if sites else "position"
    head = (f"| variable | block | {where} | featurizer | IIA [95%] |" + (" Cause | Isolate | RAVEL |" if ravel else "")
            + (" MIB linear [95%] | base's own run [95%] | fit R² |" if linear else ""))  # fmt: skip
    lines += ["", head + " re-initialised | verdict |", "| " + " | ".join(["---"] * (head.count("|") + 1)) + " |"]
    for r in rows:
        if r["model"] != "pretrained":
            continue
        scores = f" {_cell(r, 'cause')} | {_cell(r, 'isolate')} | {_cell(r, 'ravel')} |" if ravel else ""
        if linear:
            r2 = "—" if r.get("mib_linear_r2") in (None, "") else f"{float(r['mib_linear_r2']):.2f}"
            scores += f" {_cell(r, 'mib_linear')} | {_cell(r, 'mib_linear_stays')} | {r2} |"
        control = "—" if r.get("control_iia") in (None, "") else f"{float(r['control_iia']):.3f}"
        at = r["location"].split(".", 2)[-1] if sites else r["position"]
        lines.append(f"| {r['variable']} | {r['block']} | {at} | {r['featurizer']} | {_cell(r, 'iia')} |{scores} {control} | "
                     f"{r['verdict']} |")  # fmt: skip
    return "\n".join(lines)


def grid(stems: list[str]) -> str:
    """MIB's table over the units of several runs scored on the same held-out pairs (each ``STEM.csv`` with its
    ``STEM_pairs.json``); a run on other pairs, or a unit run twice, is refused by name."""
    from interp.analysis.localization import flat, mib_table, read_pairs, same_pairs

    held = read_pairs(f"{stems[0]}_pairs.json")
    rows, seen = [], set()
    for stem in stems:
        if stem != stems[0] and not same_pairs(held, read_pairs(f"{stem}_pairs.json")):
            raise SystemExit(f"{stem}_pairs.json: other held-out pairs than {stems[0]}_pairs.json; aggregate only runs of one model, examples and seed")
        for r in csv.DictReader(open(f"{stem}.csv", newline="")):
            key = (r["model"], r["featurizer"], r["variable"], r["location"])
            if key in seen:
                raise SystemExit(f"{stem}.csv: the unit {key} is in another run too")
            seen.add(key)
            rows.append(r)
    table = mib_table(rows, held)
    mib = [{**{k: v for k, v in t.items() if k not in ("mean", "best")}, **flat("mean", t["mean"]), **flat("best_iia", t["best"])} for t in table]
    return "\n".join(_mib_lines(mib)[0])


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    print(grid(argv[1:]) if argv[:1] == ["--grid"] else tables(argv[0], argv[1]))


if __name__ == "__main__":
    main()
