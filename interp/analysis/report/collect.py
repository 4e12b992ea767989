"""What a run folder holds, read through its manifests, as one JSON-ready dict for the report page.

A command that finished writes a manifest of its outputs
(:mod:`interp.core.outputs`): ``<command>.manifest.json`` for a set of files
(``probe``, ``cliques``, ``das``, ``behavioral``, ``location-sweep``) and
``<file>.manifest.json`` for one file (``cache``, ``intervene``). A
checkpoint's ``training.json`` is its own record, written last. The
report reads these, never guessed file names, in ``RUN_DIR`` and the
folders below it (two levels), so a section whose command never finished
is left out rather than drawn from half a file.

Sections (each a list, one entry per source, empty when absent):

* ``warnings``: one line per split of an interventions file on which its
  model is not above chance (:mod:`interp.analysis.chance`), and one per
  file a section would read that no manifest lists (:func:`unlisted_outputs`:
  moved without its manifest, so left out), shown at the top of the page;
* ``seeds``: each over-seeds table (``interp train --seeds``, ``interp demo
  --seeds``): every seed's figure, the mean and its t interval over seeds,
  and what the seed varies;
* ``behavioral``: models × splits accuracy (``metrics.json`` of ``interp
  demo``, else each checkpoint's ``training.json``), with the paper's
  figures where the run recorded them;
* ``inoculation``: each k's lossless choice of an ``interp inoculate`` run
  with its dev and test accuracies (Richardson et al. 2020, Figure 6);
* ``probes``: one record per location, target, probe kind:
  role, layer, accuracy and both selectivities as mean and std over seeds
  with a 95% bootstrap interval over examples, and chance
  (Hewitt & Liang 2019 control tasks; Geiger et al. 2020 §6.1);
* ``iia``: one record per variable, method and location: role, layer,
  IIA with its 95% interval and nulls (vanilla interchange from an
  interventions file, §6.2, the interval a bootstrap over examples; DAS, the best coordinate block and vanilla
  from ``interp das``, Geiger et al. 2023);
* ``paths``: each ``interp path-sweep``: every sender's direct effect
  (to the readout alone, or through one receiver) beside its total effect,
  each the share of pairs whose label moves with its 95% interval, as
  site × layer cells (Wang et al. 2022, §3.1);
* ``graphs``: the intervention graph of a ``cliques`` run with a force
  layout (networkx's Kamada-Kawai, :func:`layout`), each node's example
  (id, premise, hypothesis, words, gold, prediction, clique) and each
  clique's word pairs grouped by the general word (Appendix A.3, Figure 5);
* ``manifests``: every manifest with its files' sizes and SHA-256, and
  ``settings``: what each command recorded of its own settings.
"""

from __future__ import annotations

import csv
import json
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from interp.analysis.bootstrap import point_interval
from interp.analysis.chance import file_chance_messages
from interp.analysis.probes.summary import row_interval
from interp.core.errors import ConfigError, InterpError
from interp.core.estimates import is_point
from interp.core.hdf5 import attr, h5py
from interp.hooks.locations import Location

#: Manifests are looked for in RUN_DIR and this many folder levels below it.
DEPTH = 2


def find_manifests(run_dir: Path) -> list[Path]:
    """Every ``*.manifest.json`` in ``run_dir`` and up to :data:`DEPTH` levels below, the report's own folder excepted."""
    found = []
    for level in range(DEPTH + 1):
        pattern = "/".join(["*"] * level + ["*.manifest.json"])
        found += [p for p in sorted(run_dir.glob(pattern)) if "report" not in p.relative_to(run_dir).parts[:-1]]
    return found


#: The files a section is read from (and any HDF5 file): found with no manifest listing them, they are named as left out.
SECTION_FILES = ("metrics.json", "probes.csv", "das_summary.csv", "cliques.json", "selected.json", "seeds_summary.csv",
                 "demo_seeds_summary.csv")  # fmt: skip


def unlisted_outputs(run_dir: Path, listed: set[Path]) -> list[Path]:
    """The files in ``run_dir`` and up to :data:`DEPTH` levels below that a section would read (``SECTION_FILES``, ``*.h5``)
    but that no manifest lists (``listed``): moved without their manifest, or left by a command that never finished."""
    found = []
    for level in range(DEPTH + 1):
        for path in sorted(run_dir.glob("/".join(["*"] * level + ["*"]))):
            parts = path.relative_to(run_dir).parts[:-1]
            if "report" in parts or any(p.endswith(".partial") for p in parts) or not path.is_file():
                continue
            if (path.name in SECTION_FILES or path.suffix == ".h5") and path.resolve() not in listed:
                found.append(path)
    return found


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: holds JSON {type(data).__name__ if data is not None else 'null'}, not the object interp writes there")
    return data


@contextmanager
def _as_written(what: Path, command) -> Iterator[None]:
    """Read ``what`` (a file or a command's folder) expecting the shape ``command`` writes: any other shape is a
    :class:`ConfigError` naming it, never a ``KeyError`` or ``AttributeError`` from inside the report."""
    try:
        yield
    except InterpError:  # already names its file (a ConfigError is also a ValueError)
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise ConfigError(f"{what}: not as `{command}` writes it ({type(exc).__name__}: {exc}); run {command!r} again") from None


def _read_csv(path: Path) -> list[dict]:
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))
    except OSError as exc:
        raise ConfigError(f"{path}: not readable ({exc.strerror or exc})") from None


def _place(location: str) -> tuple[str, int]:
    """A location's role (joined with +) and layer (0 = embeddings, r = output of block r − 1)."""
    loc = Location.parse(location)
    return "+".join(loc.roles), loc.hidden_index


def behavioral_from_metrics(path: Path) -> dict:
    """The demo's behavioral stage (MoNLI: Table 1): each fine-tuning's accuracy per split with its Wilson interval,
    one sentence per effect the task checks (``effects``), and the paper's figures as rows of a table (``paper``)."""
    data = _read_json(path)
    models = [(name, m) for name, m in data.items() if isinstance(m, dict) and "trained_on" in m and "accuracy" in m]
    splits = list(dict.fromkeys(s for _, m in models for s in m["accuracy"]))
    rows = [{"model": name, "trained_on": m.get("trained_on", []), "accuracy": m["accuracy"], "interval": _intervals(m.get("metrics", {}))}
            for name, m in models]  # fmt: skip
    # the paper's figures by model ({"challenge": {...}, ...}), or one model's alone ({"all": 100.0})
    paper = [{"source": key.removeprefix("paper_").replace("_", " "), "model": name, "trained_on": str(figures.get("trained_on", "")),
              "figures": "; ".join(f"{k.replace('_', ' ')} {v}%" for k, v in figures.items() if k != "trained_on")}
             for key, value in data.items() if key.startswith("paper") and isinstance(value, dict)
             for name, figures in (value.items() if all(isinstance(v, dict) for v in value.values()) else [("", value)])
             if isinstance(figures, dict)]  # fmt: skip
    return {"source": str(path), "splits": splits, "rows": rows, "notes": [],
            "effects": [effect_sentence(name, check, rows) for name, check in data.get("checks", {}).items()], "paper": paper}


def effect_sentence(name: str, check: dict, rows: list[dict]) -> str:
    """One sentence for a behavioral check of ``metrics.json`` (``{"nmonli_test": 0.0, "at_most": 0.2, "holds": True}``):
    whether it holds, each split's accuracy with the Wilson interval of the model that scored it, and the bound."""
    bounds = {"at_most": "at most", "at_least": "at least"}
    figures = []
    for split, value in check.items():
        if split == "holds" or split in bounds or not isinstance(value, (int, float)):
            continue
        scored = next((r for r in rows if isinstance(r["accuracy"].get(split), (int, float)) and abs(r["accuracy"][split] - value) < 1e-9), None)
        interval = (scored or {}).get("interval", {}).get(split)
        figures.append(f"{scored['model'] + ' on ' if scored else ''}{split} {100 * value:.1f}%"
                       + (f" [{100 * interval[0]:.1f}, {100 * interval[1]:.1f}] (95% Wilson interval)" if interval else ""))  # fmt: skip
    bound = "; ".join(f"it asks {word} {100 * check[key]:.1f}%" for key, word in bounds.items() if isinstance(check.get(key), (int, float)))
    return (f"{name.replace('_', ' ').capitalize()} {'holds' if check.get('holds') else 'does not hold'}: "
            f"{', '.join(figures) or 'no figure'}{' (' + bound + ')' if bound else ''}.")  # fmt: skip


def behavioral_from_checkpoint(path: Path) -> dict:
    """One checkpoint's accuracy per split from its ``training.json``."""
    data = _read_json(path)
    metrics = data.get("metrics", {})
    return {
        "source": str(path),
        "splits": list(metrics),
        "rows": [{"model": path.parent.name, "trained_on": data.get("config", {}).get("splits", []), "accuracy": {s: m["accuracy"] for s, m in metrics.items()},
                  "interval": _intervals(metrics)}],
        "notes": _label_notes(data.get("labels") or {}),
    }


def _intervals(metrics: dict) -> dict[str, list[float]]:
    """Each split's 95% Wilson interval over its examples, ``[low, high]`` in 0..1, from a metrics record's counts (a
    split without them has none)."""
    from interp.core.estimates import wilson

    found = {}
    for split, m in metrics.items():
        if isinstance(m, dict) and isinstance(m.get("correct"), int) and isinstance(m.get("n"), int) and m["n"] > 0:
            interval = wilson(m["correct"], m["n"])
            found[split] = [interval.low, interval.high]
    return found


def _label_notes(labels: dict) -> list[str]:
    """A head with other labels than the task's: what they are and how they were read (``training.json``'s ``labels``)."""
    if not labels:
        return []
    folds = ", ".join(f"{k} as {v}" for k, v in labels.get("read_as", {}).items())
    return [f"the model's labels: {', '.join(labels.get('model', []))}" + (f"; scored reading {folds}" if folds else "")]


def probe_records(path: Path) -> list[dict]:
    """``probes.csv`` rows as role × layer cells: accuracy and both selectivities (mean, std over seeds), each with its 95%
    bootstrap interval over examples (``_low``, ``_high``), and the examples, seeds and chance behind them, where the
    sweep wrote them (a sweep from before intervals were kept has the means and stds alone)."""
    records = []
    for row in _read_csv(path):
        role, layer = _place(row["location"])
        records.append({
            "location": row["location"], "role": role, "layer": layer, "target": row["target"], "probe": row["probe"],
            **{f"{m}_{s}": float(row[f"{m}_{s}"]) for m in ("task_acc", "selectivity_type", "selectivity_shuffle") for s in ("mean", "std")},
            **{f"{m}_{end}": bound for m in ("task_acc", "selectivity_type", "selectivity_shuffle")
               for end, bound in zip(("low", "high"), row_interval(row, m) or ())},
            **{key: float(row[key]) for key in ("chance", "seeds", "n_examples") if row.get(key) not in (None, "")},
        })  # fmt: skip
    return records


#: What each over-seeds table varies, by the table (its file name says which it is).
SEED_TABLES = {
    "seeds_summary.csv": "the fine-tuning seed (the new head, batch order and dropout)",
    "demo_seeds_summary.csv": "the fine-tuning seed (the new heads, batch order and dropout); the probes' seeds, the interventions' "
                              "sample and the data held fixed",
}  # fmt: skip


def _number(text: str | None) -> float | None:
    """A CSV cell as a float; ``None`` where it is empty (a seed that lacks the figure, a table with no null)."""
    return float(text) if text not in (None, "") else None


def _finite(value: float | None) -> float | None:
    """``value``, or ``None`` where it is NaN (a figure not computed there: the page's JSON has no NaN)."""
    return None if value is None or value != value else value


def seeds_table(path: Path, command: str = "") -> dict:
    """An over-seeds table (``interp train --seeds``, ``interp demo --seeds``): one row per figure with every seed's value,
    the mean and its Student's t 95% interval over the seeds, and the null where the table has one (the majority label's
    share of a split). Shares stay in 0..1; a clique's size is a count (``unit``)."""
    rows = _read_csv(path)
    seeds = [int(key[len("seed_"):]) for key in (rows[0] if rows else {}) if key.startswith("seed_")]
    shown = [{"figure": row.get("figure") or f"accuracy on {row['split']}", "unit": "examples" if row.get("stage") == "cliques" else "share",
              "values": [_number(row[f"seed_{s}"]) for s in seeds], "seeds": int(row["seeds"]),
              "mean": float(row["mean"]), "low": float(row["t_low"]), "high": float(row["t_high"]), "null": _number(row.get("majority"))}
             for row in rows]  # fmt: skip
    return {"source": str(path), "command": command, "varied": SEED_TABLES[path.name], "seeds": seeds, "rows": shown}


def iia_verdict(gap_low: float, stays: float, copies: float) -> str:
    """An IIA's verdict in words: above both nulls where the interval of IIA minus the larger null lies above 0."""
    if gap_low > 0:
        return "above both nulls"
    null = "stays-the-base" if stays >= copies else "copies-the-source"
    return f"not above its {null} null ({max(stays, copies):.3f})"


def iia_from_interventions(path: Path) -> list[dict]:
    """Vanilla interchange IIA on causal pairs per variable and location, with both nulls and the IIA minus the larger
    null (each interval a bootstrap over the task's groups, else over examples), and the verdict in words."""
    from interp.analysis.iia import summarize_all

    records = []
    for s in summarize_all(path):
        role, layer = _place(s["location"])
        records.append({
            "variable": s["variable"], "method": "vanilla", "location": s["location"], "role": role, "layer": layer,
            "iia": s["iia_causal"], "iia_low": s["iia_causal_low"], "iia_high": s["iia_causal_high"],
            **{f"{short}{end}": s[f"{null}_causal{end}"] for short, null in (("stays", "stays_base"), ("copies", "copies_source"), ("gap", "gap"))
               for end in ("", "_low", "_high")},
            "verdict": iia_verdict(s["gap_causal_low"], s["stays_base_causal"], s["copies_source_causal"]), "over": s["interval"],
            "detail": f"95% interval {s['iia_causal_low']:.3f} to {s['iia_causal_high']:.3f} (bootstrap over {s.get('over', 'examples')}); "
            f"{s['causal_pairs']} causal pairs; stays base {s['stays_base_causal']:.3f}, copies source {s['copies_source_causal']:.3f}; "
            f"IIA − larger null {s['gap_causal']:+.3f} [{s['gap_causal_low']:+.3f}, {s['gap_causal_high']:+.3f}] (above both nulls where "
            "this interval lies above 0)"
            + (f"; {point_interval()}" if is_point(s["iia_causal_low"], s["iia_causal_high"]) else ""),
        })  # fmt: skip
    return records


def iia_from_das(path: Path) -> list[dict]:
    """``das_summary.csv``: DAS, the best coordinate block and vanilla per variable, location and k (mean and 95% interval)."""
    records = []
    for row in _read_csv(path):
        role, layer = _place(row["location"])
        over = row.get("interval") or f"over {row['seeds']} seeds"  # a summary written before the untrained column says its seeds only
        for method in ("das", "untrained", "block", "vanilla"):
            if f"{method}_iia" not in row:
                continue
            name = f"{method} k={row['size']}" if method != "vanilla" else "vanilla"
            judged = {"verdict": row["verdict"], "stays": float(row["stays_base"]), "copies": float(row["copies_source"])} if (
                method == "das" and row.get("verdict")) else {}  # a summary of an older run has no verdict
            records.append({
                "variable": row["variable"], "method": name, "location": row["location"], "role": role, "layer": layer, **judged,
                "iia": float(row[f"{method}_iia"]), "iia_low": float(row[f"{method}_low"]), "iia_high": float(row[f"{method}_high"]), "over": over,
                "detail": f"[{float(row[f'{method}_low']):.3f}, {float(row[f'{method}_high']):.3f}]: {over}; {row['seeds']} seeds; chance {float(row['chance']):.3f}"
                + (f"; {point_interval('held-out examples or seeds')}" if is_point(float(row[f"{method}_low"]), float(row[f"{method}_high"])) else ""),
            })  # fmt: skip
    unique = {(r["variable"], r["method"], r["location"]): r for r in records}  # vanilla repeats once per k
    return list(unique.values())


def screen_section(path: Path) -> dict:
    """``interp screen``'s ``screen.csv`` as site × layer cells (a site: the residual stream, a component or a head, at its
    roles): the estimated IIA with its interval, GradDrop's robustness (``None`` where not computed) and whether it flags
    the site, and the exact IIA where it was confirmed; ``screen.json``'s agreement."""
    records = []
    for row in _read_csv(path):
        loc = Location.parse(row["location"])
        site = "resid" if loc.is_residual else (f"{loc.component}.h{loc.head}" if loc.head >= 0 else loc.component)
        role, layer = _place(row["location"])
        records.append({"location": row["location"], "role": f"{site}@{role}", "layer": layer, "estimated_iia": float(row["estimated_iia"]),
                        "low": float(row["estimated_iia_low"]), "high": float(row["estimated_iia_high"]), "confirmed": row.get("confirmed", ""),
                        "exact_iia": _number(row.get("exact_iia")), "rank": int(row["rank"]), "robustness": _finite(_number(row.get("robustness"))),
                        "cancels": row.get("cancels") == "True"})  # fmt: skip
    summary = _read_json(path.with_name("screen.json")) if path.with_name("screen.json").is_file() else {}
    return {"source": str(path), "records": records, "interval": summary.get("interval", ""), "agreement": summary.get("agreement", {}),
            "verdict": summary.get("verdict", ""), "variable": summary.get("variable", "")}  # fmt: skip


def paths_section(path: Path) -> dict:
    """``interp path-sweep``'s ``paths.csv`` as site × block cells (a site: a head or a component at its roles, at the
    block it sits in, 0-based): the direct and total effects with their intervals; ``paths.json``'s settings (receiver,
    pairs, what the interval resamples)."""
    rows, records = _read_csv(path), []
    for row in rows:
        loc = Location.parse(row["sender"])
        site = f"{loc.component}.h{loc.head}" if loc.head >= 0 else loc.component
        role = "+".join(loc.roles)  # a sender is a component inside a block: placed at its own block, not at a layer r
        records.append({"sender": row["sender"], "role": f"{site}@{role}", "layer": loc.layer,
                        **{k: float(row[k]) for k in ("direct", "direct_low", "direct_high", "total", "total_low", "total_high")}})  # fmt: skip
    settings = _read_json(path.with_name("paths.json")) if path.with_name("paths.json").is_file() else {}
    first = rows[0] if rows else {}
    return {"source": str(path), "records": records, "receiver": settings.get("receiver", first.get("receiver", "readout")),
            "pairs": settings.get("pairs", first.get("pairs")), "interval": settings.get("interval", first.get("interval", ""))}


def _read_graph(directory: Path, files: dict):
    """The intervention graph a ``cliques`` run wrote, in the first format it has (node-link JSON, GraphML, GEXF)."""
    import networkx as nx

    for name, read in (
        ("graph.json", lambda p: nx.node_link_graph(_read_json(p), edges="edges")),
        ("graph.graphml", nx.read_graphml),
        ("graph.gexf", nx.read_gexf),
    ):
        if name in files:
            try:
                return read(directory / name)
            except (OSError, ValueError, KeyError, TypeError, AttributeError, SyntaxError, nx.NetworkXError) as exc:  # SyntaxError: XML's ParseError
                raise ConfigError(f"{directory / name}: not a readable graph ({type(exc).__name__}: {exc})") from None
    return None


def _groups(clique: dict) -> list[dict]:
    """A clique's word pairs grouped by the more general word (Figure 5), or each member's words where the task has no pairs."""
    if "pairs" not in clique:
        return [{"general": " ".join(w.values()), "specific": []} for w in clique["words"]]
    groups: dict[str, list[str]] = {}
    for premise_word, hypothesis_word, relation in clique["pairs"]:
        general, specific = (hypothesis_word, premise_word) if relation == "⊏" else (premise_word, hypothesis_word)
        groups.setdefault(general, []).append(specific)
    return [{"general": g, "specific": sorted(set(s))} for g, s in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))]


#: Up to this many nodes the graph is laid out by Kamada-Kawai (O(n²) memory), beyond by Fruchterman-Reingold.
KAMADA_KAWAI_NODES = 1000


def layout(g, seed: int = 0) -> dict:
    """A force-directed layout, node -> (x, y).

    Kamada & Kawai (1989), spring energy over graph distances, up to
    :data:`KAMADA_KAWAI_NODES` nodes: on the demo's dense graph (300 nodes,
    density 0.44) it separates the blocks of ⊏ and ⊐ examples and the
    clique within them, where Fruchterman-Reingold draws one blob with the
    isolated nodes far out. Larger graphs: Fruchterman-Reingold, seeded.
    """
    import networkx as nx

    if g.number_of_nodes() <= KAMADA_KAWAI_NODES:
        return nx.kamada_kawai_layout(g, weight=None)
    return nx.spring_layout(g, seed=seed, weight=None)


def graph_section(directory: Path, files: dict, seed: int = 0) -> dict | None:
    """The graph, its layout and its cliques for the page; ``None`` when the run wrote no graph file."""
    g = _read_graph(directory, files)
    if g is None:
        return None
    report = _read_json(directory / "cliques.json")
    pos = layout(g, seed)
    order = list(g.nodes)
    index = {n: i for i, n in enumerate(order)}
    known = {"clique", "correct", "label", "gold", "prediction", "premise", "hypothesis", "split"}
    nodes = []
    for n in order:
        d = g.nodes[n]
        nodes.append({
            "id": str(n), "x": round(float(pos[n][0]), 4), "y": round(float(pos[n][1]), 4), "clique": int(d["clique"]),
            "split": d.get("split", ""), "premise": d.get("premise", ""), "hypothesis": d.get("hypothesis", ""),
            "gold": d.get("gold", str(d.get("label", ""))), "prediction": d.get("prediction", ""), "correct": bool(d.get("correct")),
            "attributes": {k: str(v) for k, v in d.items() if k not in known},
        })  # fmt: skip
    edges = [[index[u], index[v], int(bool(d.get("causal")))] for u, v, d in g.edges(data=True)]
    cliques = [
        {"number": i, "size": c["size"], "value_counts": c["value_counts"], "causal_edges": c["causal_edges"],
         "log10_expected": c["log10_expected_count_observed_density"] if c.get("interpretable", True) else None, "groups": _groups(c)}
        for i, c in enumerate(report["cliques"])
    ]  # fmt: skip
    return {
        "source": str(directory / "cliques.json"),
        "title": f"{report['variable']} at {report['location']} (α = {report['best_alpha']})",
        "variable": report["variable"],
        "location": report["location"],
        "stats": report["graph"],
        "min_size": report["min_size"],
        "verdict": report.get("verdict", ""),  # cliques.json of older runs lack it
        "nodes": nodes,
        "edges": edges,
        "cliques": cliques,
    }


#: What a file a manifest lists is, from what it declares: an HDF5 file by its ``format`` attribute (its name before
#: the version), any other by its name, which each format fixes. The report reads each file by its kind, whichever
#: command wrote it.
FILE_KINDS = {"interp.interventions": "interventions", "interp.activations": "activations", "metrics.json": "behavioral",
              "probes.csv": "probes", "das_summary.csv": "das", "selected.json": "inoculation", "cliques.json": "cliques", "screen.csv": "screen",
              "paths.csv": "paths",
              **{name: "seeds" for name in SEED_TABLES}}  # fmt: skip

#: Each kind's settings shown on the page: the file they are recorded in (beside it) and what of it is shown.
SETTINGS = {
    "behavioral": ("metrics.json", lambda d: d.get("config", {})),
    "probes": ("probes.json", lambda d: d.get("request", {})),
    "inoculation": ("selected.json", lambda d: d.get("settings", {})),
    "cliques": ("cliques.json", lambda d: {k: d[k] for k in ("interventions", "location", "variable", "model", "task", "causal_model", "min_size", "min_size_rule", "best_alpha") if k in d}),
}


def declared_kind(path: Path) -> str | None:
    """What ``path`` declares it is (:data:`FILE_KINDS`); ``None`` for a file the report does not read."""
    if path.suffix == ".h5":
        try:
            with h5py().File(path, "r") as handle:
                found = attr(handle, "format")
        except (OSError, ValueError):
            return None
        return FILE_KINDS.get(found.split("/")[0]) if isinstance(found, str) else None
    return FILE_KINDS.get(path.name)


def _check_listed(manifest: Path, command, files) -> None:
    """Every file a manifest lists is there and as its command wrote it (size and SHA-256), before any is read.

    Raises:
        ConfigError: the manifest is not interp's shape, or a file it lists is missing or changed since (naming it).
    """
    from interp.core.checksums import sha256_of

    if not isinstance(command, str) or not isinstance(files, dict) or not all(isinstance(v, dict) for v in files.values()):
        raise ConfigError(f"{manifest}: not an interp manifest (command and files with their sizes and SHA-256); the file was edited")
    for name, written in files.items():
        path = manifest.parent / name
        if not path.is_file():
            raise ConfigError(f"{manifest}: lists {name}, which is missing; run {command!r} again")
        if "sha256" in written and sha256_of(path) != written["sha256"]:
            raise ConfigError(f"{path}: changed since {command!r} wrote it (its SHA-256 is not the one {manifest.name} records); run {command!r} again")


def collect_run(run_dir: str | Path) -> dict:
    """Everything the report shows, from the manifests in ``run_dir`` (see the module docstring for the sections).

    Raises:
        ConfigError: ``run_dir`` is not a folder, holds no manifest and no
            checkpoint, or a file a manifest lists is missing, changed since its
            command wrote it (SHA-256), unreadable, or not in the shape its command writes (naming it).
    """
    run = Path(run_dir)
    if not run.is_dir():
        raise ConfigError(f"RUN_DIR {run}: not a folder")
    data: dict = {"run_dir": str(run), "warnings": [], "seeds": [], "behavioral": [], "inoculation": [], "probes": [], "iia": [],
                  "graphs": [], "manifests": [], "settings": [], "screens": [], "paths": []}  # fmt: skip
    for manifest in find_manifests(run):
        record = _read_json(manifest)
        command, files, directory = record.get("command"), record.get("files"), manifest.parent
        _check_listed(manifest, command, files)
        data["manifests"].append({"manifest": str(manifest.relative_to(run)), "command": command, "files": files})
        with _as_written(directory, command):
            _collect_manifest(data, run, directory, command, files)
    listed = {((run / r["manifest"]).parent / name).resolve() for r in data["manifests"] for name in r["files"]}
    data["warnings"] += [f"{path.relative_to(run)}: left out, as no manifest lists it (moved without its manifest, or from a "
                         "run that never finished); move it with its manifest, or run its command again"
                         for path in unlisted_outputs(run, listed)]  # fmt: skip
    if not data["behavioral"]:
        checkpoints = []
        for path in sorted(run.glob("training.json")) + sorted(run.glob("*/training.json")):
            with _as_written(path, "train"):
                checkpoints.append(behavioral_from_checkpoint(path))
        if checkpoints:  # one table, a row per checkpoint (the seeds of `train --seeds` side by side)
            data["behavioral"].append({
                "source": checkpoints[0]["source"] if len(checkpoints) == 1 else f"{run}/*/training.json",
                "splits": list(dict.fromkeys(s for c in checkpoints for s in c["splits"])),
                "rows": [r for c in checkpoints for r in c["rows"]],
                "notes": [f"{c['rows'][0]['model']}: {n}" if len(checkpoints) > 1 else n for c in checkpoints for n in c["notes"]],
            })  # fmt: skip
    if not data["manifests"] and not data["behavioral"]:
        raise ConfigError(f"RUN_DIR {run}: no manifest (*.manifest.json) and no checkpoint here; nothing to report")
    return data


def _collect_manifest(data: dict, run: Path, directory: Path, command: str, files: dict) -> None:
    """What the files one manifest lists in ``directory`` hold, each read as the kind it declares (:func:`declared_kind`),
    added to ``data``'s sections; ``command`` only names the command to run again in an error."""
    for name in files:
        path = directory / name
        kind = declared_kind(path)
        if kind in SETTINGS and SETTINGS[kind][0] in files:
            settings_file, pick = SETTINGS[kind]
            data["settings"].append({"source": str((directory / settings_file).relative_to(run)), "settings": pick(_read_json(directory / settings_file))})
        if kind == "behavioral":
            data["behavioral"].append(behavioral_from_metrics(path))
        elif kind == "probes":
            data["probes"].append({"source": str(path), "records": probe_records(path)})
        elif kind == "seeds":
            data["seeds"].append(seeds_table(path, command))
        elif kind == "interventions":
            data["iia"].append({"source": str(path), "records": iia_from_interventions(path)})
            data["warnings"] += file_chance_messages(path)
        elif kind == "das":
            data["iia"].append({"source": str(path), "records": iia_from_das(path)})
        elif kind == "screen":
            data["screens"].append(screen_section(path))
        elif kind == "paths":
            data["paths"].append(paths_section(path))
        elif kind == "inoculation":
            data["inoculation"].append({"source": str(path), **_read_json(path)})
        elif kind == "cliques":
            section = graph_section(directory, files)  # a graph or cliques.json not in the shape `cliques` writes: _as_written names it
            if section is not None:
                data["graphs"].append(section)
