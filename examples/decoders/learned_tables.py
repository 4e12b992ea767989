"""The learned decoder's analysis over fine-tuning seeds: gather each demo run's figures into small committed files,
and print the pretrained-decoders page's tables from them.

    python examples/decoders/learned_tables.py gather runs/smollm2_lw/seed0 runs/smollm2_lw/seed1 \
        --out docs/results/data/learned/smollm2
    python examples/decoders/learned_tables.py tables docs/results/data/learned/smollm2

A run is the folder ``interp demo --model smollm2-135m --seed N`` wrote, with the across-blocks sweep
(``sweep.h5``, ``interp intervene``) and DAS at the early ``w_h`` sites (``das_w_h/``, ``interp das``) added beside
it. Gathering keeps, per seed (``seedN/``): Table 1's accuracies (``accuracy.csv``, from ``metrics.json``), the probe
table (``probes.csv``), the summaries of the demo's interchange file and of the sweep (``interventions.csv``,
``sweep.csv``: IIA and both nulls with their intervals, from :func:`interp.analysis.iia.summarize_all`), the clique
run without its examples' words (``cliques.json``), DAS's summaries (``das.csv`` at the demo's site, ``das_w_h.csv``)
and the screen's confirmed locations with its agreement (``screen.csv``, ``screen.json``). The page's blocks marked
``<!-- learned: NAME -->`` are :func:`tables`' output, checked by ``tests/test_results_pages.py``.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import sys
from pathlib import Path

SPLITS = (("pmonli", "PMoNLI"), ("nmonli_train", "NMoNLI train"), ("nmonli_test", "NMoNLI test"))
TOKENS = (("cls", "last token"), ("w_h", "`w_h`"), ("w_p", "`w_p`"))
#: The keys of a clique kept on the page's files (its examples' words are left out).
CLIQUE_KEYS = ("size", "value_counts", "edges", "causal_edges", "log10_expected_count_block_model", "interpretable")
SUMMARY_KEYS = ("variable", "location", "pairs", "causal_pairs") + tuple(
    f"{name}_causal{end}" for name in ("iia", "stays_base", "copies_source", "gap") for end in ("", "_low", "_high"))


def gather(runs: list[str], out: str) -> None:
    """Write each run's figures under ``out/seedN/`` (N from the run's ``metrics.json``)."""
    from interp.analysis.iia import summarize_all

    for run in map(Path, runs):
        metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
        folder = Path(out) / f"seed{metrics['config']['seed']}"
        folder.mkdir(parents=True, exist_ok=True)
        rows = [{"model": model, "split": split, **{k: metrics[key]["metrics"][split][k] for k in ("correct", "n", "accuracy", "low", "high")}}
                for model, key in (("challenge", "challenge_model"), ("generalization", "model")) for split, _ in SPLITS]  # fmt: skip
        write(folder / "accuracy.csv", rows)
        shutil.copy(run / "probes.csv", folder / "probes.csv")
        for name, source in (("interventions", "interventions.h5"), ("sweep", "sweep.h5")):
            write(folder / f"{name}.csv", [{k: s[k] for k in SUMMARY_KEYS} for s in summarize_all(run / source)])
        cliques = json.loads((run / "cliques.json").read_text(encoding="utf-8"))
        keep = {k: v for k, v in cliques.items() if k not in ("alphas", "search_seconds", "interventions", "model")}
        keep["cliques"] = [{k: c[k] for k in CLIQUE_KEYS} for c in cliques["cliques"]]
        (folder / "cliques.json").write_text(json.dumps(keep, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        shutil.copy(run / "das" / "das_summary.csv", folder / "das.csv")
        shutil.copy(run / "das_w_h" / "das_summary.csv", folder / "das_w_h.csv")
        write(folder / "screen.csv", [r for r in read(run / "screen" / "screen.csv") if r["confirmed"]])
        screen = json.loads((run / "screen" / "screen.json").read_text(encoding="utf-8"))
        keep = {k: screen[k] for k in ("variable", "examples", "locations", "confirm", "seed", "interval", "agreement", "verdict")}
        (folder / "screen.json").write_text(json.dumps(keep, indent=1) + "\n", encoding="utf-8")


def write(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({k: f"{v:.4f}" if isinstance(v, float) else v for k, v in row.items()} for row in rows)


def read(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def seeds(data: str) -> dict[int, Path]:
    """The gathered seeds' folders, by seed."""
    return {int(p.name[4:]): p for p in sorted(Path(data).glob("seed*"))}


def est(row: dict, key: str, scale: float = 1.0, digits: int = 3) -> str:
    """``key`` with its interval (``key_low``, ``key_high``; or ``low``/``high`` for an accuracy row)."""
    low, high = (f"{key}_low", f"{key}_high") if f"{key}_low" in row else ("low", "high")
    return " ".join((f"{scale * float(row[key]):.{digits}f}", f"[{scale * float(row[low]):.{digits}f}, {scale * float(row[high]):.{digits}f}]"))


def table1(data: str) -> str:
    lines = ["| seed | model | PMoNLI | NMoNLI train | NMoNLI test |", "| ---: | --- | ---: | ---: | ---: |"]
    for seed, folder in seeds(data).items():
        rows = {(r["model"], r["split"]): r for r in read(folder / "accuracy.csv")}
        for model in ("challenge", "generalization"):
            lines.append(f"| {seed} | {model} | " + " | ".join(est(rows[model, split], "accuracy", 100, 1) for split, _ in SPLITS) + " |")
    return "\n".join(lines)


def probes(data: str) -> str:
    """Per seed, variable and token: the MLP probe's most type-selective location, its accuracy and both selectivities."""
    lines = ["| seed | variable | token | most selective location | accuracy | selectivity: type control | shuffle control |",
             "| ---: | --- | --- | --- | ---: | ---: | ---: |"]  # fmt: skip
    for seed, folder in seeds(data).items():
        rows = [r for r in read(folder / "probes.csv") if r["probe"] == "mlp"]
        for target, token, shown in [("lexrel", t, s) for t, s in TOKENS] + [("infer", "cls", "last token")]:
            best = max((r for r in rows if r["target"] == target and r["role"] == token), key=lambda r: float(r["selectivity_type_mean"]))
            cells = (interval(best, "task_acc"), interval(best, "selectivity_type"), interval(best, "selectivity_shuffle"))
            name = "output" if target == "infer" else target
            lines.append(f"| {seed} | {name} | {shown} | `{best['location'].split('@')[0]}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def interval(row: dict, key: str) -> str:
    """A probe table's ``key_mean`` with ``key_low`` and ``key_high``."""
    return f"{float(row[key + '_mean']):.3f} [{float(row[key + '_low']):.3f}, {float(row[key + '_high']):.3f}]"


def rule(data: str) -> str:
    """Per seed: the interchange at the site the demo picked (IIA on each variable's causal pairs, both nulls, the gap)."""
    lines = ["| seed | site | variable | IIA | stays | copies | IIA − larger null |", "| ---: | --- | --- | ---: | ---: | ---: | ---: |"]
    for seed, folder in seeds(data).items():
        for r in read(folder / "interventions.csv"):
            lines.append(f"| {seed} | `{r['location']}` | {r['variable']} | " + " | ".join(
                est(r, f"{k}_causal") for k in ("iia", "stays_base", "copies_source", "gap")) + " |")  # fmt: skip
    return "\n".join(lines)


def cliques(data: str) -> str:
    lines = ["| seed | site | largest clique | sources shuffled: median (95th) | p | copy gate: IIA against copies | verdict |",
             "| ---: | --- | ---: | ---: | ---: | ---: | --- |"]  # fmt: skip
    for seed, folder in seeds(data).items():
        run = json.loads((folder / "cliques.json").read_text(encoding="utf-8"))
        null, gate = run["shuffle_null"], run["copy_gate"]
        size = run["cliques"][0]["size"] if run["cliques"] else 0
        figures = " against ".join(f"{v[0]:.3f} [{v[1]:.3f}, {v[2]:.3f}]" for v in (gate["iia"], gate["copies_source"]))
        lines.append(f"| {seed} | `{run['location']}` | {size} (of {run['graph']['nodes']}) | {null['median']:.0f} ({null['high']:.0f}) "
                     f"over {null['shuffles']} | {null['p_value']:.3f} | {figures} | {run['verdict'].split(':')[0]} |")  # fmt: skip
    return "\n".join(lines)


def das(data: str) -> str:
    lines = ["| seed | location | held-out IIA | untrained | stays | copies | chance | verdict |", "| ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for seed, folder in seeds(data).items():
        for r in read(folder / "das.csv") + read(folder / "das_w_h.csv"):
            shown = (f"{float(r['das_iia']):.3f} [{float(r['das_low']):.3f}, {float(r['das_high']):.3f}]", f"{float(r['untrained_iia']):.3f}", f"{float(r['stays_base']):.3f}", f"{float(r['copies_source']):.3f}", f"{float(r['chance']):.3f}")  # fmt: skip
            lines.append(f"| {seed} | `{r['location']}` | " + " | ".join(shown) + f" | {r['verdict'].split(':')[0]} |")
    return "\n".join(lines)


def screen(data: str) -> str:
    lines = ["| seed | screen's top 5 (exact IIA) | 5 drawn at random (exact IIA) | Spearman over the 10 | drawn above the top 5's lowest |",
             "| ---: | --- | --- | ---: | ---: |"]  # fmt: skip
    for seed, folder in seeds(data).items():
        rows, run = read(folder / "screen.csv"), json.loads((folder / "screen.json").read_text(encoding="utf-8"))
        cells = []
        for kind in ("top", "drawn"):
            chosen = [r for r in rows if r["confirmed"] == kind]
            iia = sorted(float(r["exact_iia"]) for r in chosen)
            names = ", ".join(f"`{r['location']}`" for r in chosen) if kind == "top" else "elsewhere"
            cells.append(f"{names}: {iia[0]:.3f}" + (f" to {iia[-1]:.3f}" if iia[-1] != iia[0] else ""))
        agreement = run["agreement"]
        lines.append(f"| {seed} | {cells[0]} | {cells[1]} | {agreement['spearman']} | {agreement['missed']} of {agreement['drawn']} |")
    return "\n".join(lines)


def sweep(data: str, variable: str) -> str:
    """Per location of the sweep, each seed's IIA on ``variable``'s causal pairs beside both nulls (stays the base,
    copies the source) and the gap to the larger."""
    found = {seed: {r["location"]: r for r in read(folder / "sweep.csv") if r["variable"] == variable} for seed, folder in seeds(data).items()}
    head = "| location | " + " | ".join(f"seed {s}: IIA | stays | copies | gap" for s in found) + " |"
    lines = [head, "| --- |" + " ---: | ---: | ---: | ---: |" * len(found)]
    for location in next(iter(found.values())):
        cells = []
        for rows in found.values():
            r = rows[location]
            cells += [est(r, "iia_causal"), f"{float(r['stays_base_causal']):.3f}", f"{float(r['copies_source_causal']):.3f}", est(r, "gap_causal")]
        block, token = location.split(".hook_resid_post@")
        lines.append(f"| {'last token' if token == 'last' else f'`{token}`'}, block {block.split('.')[1]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def tables(data: str) -> dict[str, str]:
    """The page's blocks, by name."""
    made = {name: make(data) for name, make in (("table1", table1), ("probes", probes), ("rule", rule), ("cliques", cliques),
                                                ("das", das), ("screen", screen))}  # fmt: skip
    made.update({f"sweep_{v}": sweep(data, v) for v in ("lexrel", "negated", "output")})
    return made


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser("gather", help="keep each run's figures under --out/seedN/")
    command.add_argument("runs", nargs="+")
    command.add_argument("--out", required=True)
    command = commands.add_parser("tables", help="print the page's tables")
    command.add_argument("data")
    args = parser.parse_args(argv)
    if args.command == "gather":
        gather(args.runs, args.out)
    else:
        for name, table in tables(args.data).items():
            sys.stdout.write(f"<!-- learned: {name} -->\n{table}\n<!-- /learned -->\n\n")


if __name__ == "__main__":
    main()
