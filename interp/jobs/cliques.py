"""`interp cliques`: the intervention graph of one location, the greedy search, baselines, and exports.

Disjoint cliques are peeled until the first one smaller than ``min_size``;
by default that is the chance level, the smallest size of which fewer than
one clique is expected in a random graph of the observed density
(:func:`interp.analysis.cliques.baselines.chance_clique_size`). Smaller cliques
are what chance gives anyway. Give ``min_size=2`` to peel to the end.

Usage::

    from interp.jobs.cliques import CliqueConfig, run_cliques
    report = run_cliques(CliqueConfig(interventions="runs/demo/interventions.h5", out="runs/demo"))
    report["cliques"][0]["size"], report["cliques"][0]["expected_count_observed_density"]

Causal edges join examples whose values of the intervened variable differ
(``variable``: the file's only one unless named). Writes into ``out``,
together (:class:`interp.core.outputs.OutputSet`): ``cliques.json`` (graph
statistics with the edge density within and across the variable's values,
the cliques of every α, the best α's cliques with their count of each
value and the smallest, causal edges, example ids, words, and three chance
baselines: G(n, 1/2), G(n, density) and the block model; the splits the
model is at chance on; the shuffle null, the relation null and the copy
gate of :mod:`interp.analysis.cliques.null`, a clique ``interpretable`` only
where the model is above chance and all three pass; and ``verdict``, one
sentence: :func:`clique_verdict`),
``graph.graphml`` (nodes with example id, split, words, every variable's
value, label, correctness and clique number; edges with ``causal``;
readable by networkx and Gephi; with ``formats`` also or instead
``graph.gexf``, Gephi's own format, and ``graph.json``, node-link data with
the cliques' members: :func:`write_graph`), ``clique.png`` (the largest clique's pairs
grouped by the more general word, as the paper's Figure 5, where the task
pairs words: :class:`~interp.tasks.base.WordPairs`) and ``cliques.manifest.json``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from interp.api.loading import Classifier
from interp.analysis.cliques.baselines import (
    block_densities,
    chance_clique_size,
    expected_cliques,
    log10_expected_block_cliques,
    log10_expected_cliques,
)
from interp.analysis.cliques.figure import plot_clique
from interp.analysis.cliques.graph import InterventionGraph, build_graph
from interp.analysis.cliques.null import N_SHUFFLES, copy_gate, relation_null, shuffle_null
from interp.analysis.cliques.search import Clique, check_alphas, search
from interp.core.checks import check_int
from interp.core.errors import ConfigError, OutputError, named, warn
from interp.core.outputs import OutputSet, partial_path, write_json_atomic
from interp.files.examples import TEXTS
from interp.analysis.chance import file_chance_messages, split_accuracies
from interp.files.interventions import open_interventions
from interp.api.loading import model_sha256
from interp.api.objects import WordPairs



@dataclass(frozen=True)
class CliqueConfig:
    """Which interventions to analyse and where to write the results."""

    interventions: str
    out: str
    location: str | None = None
    alphas: tuple[int, ...] = tuple(range(1, 11))
    model: str | Classifier | None = None  # check the file was made with these weights (a loaded model is not hashed again)
    min_size: int | None = None  # None: the chance level at the observed density
    variable: str | None = None  # None: the file's only variable
    formats: tuple[str, ...] = ("graphml",)  # keys of GRAPH_FORMATS
    null_shuffles: int = N_SHUFFLES  # the shuffle null's searches (interp.analysis.cliques.null)

    def validate(self) -> "CliqueConfig":
        unknown = [f for f in self.formats if f not in GRAPH_FORMATS]
        if unknown or not self.formats:
            raise ConfigError(f"`formats=` must name some of {', '.join(GRAPH_FORMATS)}, got {','.join(self.formats) or 'nothing'}")
        check_alphas(self.alphas)
        check_int(self.min_size, "min_size", least=2, optional=True)
        check_int(self.null_shuffles, "null_shuffles", least=1)
        return self


def parse_alphas(text: str) -> tuple[int, ...]:
    """``1-10`` or ``1,2,5`` to a tuple of ints.

    Raises:
        ConfigError: anything else.
    """
    try:
        if "-" in text:
            low, high = (int(x) for x in text.split("-", 1))
            values = tuple(range(low, high + 1))
        else:
            values = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise ConfigError(f"{named('alphas', repr(text))}: give a range like 1-10 or a list like 1,3,5") from None
    if not values or min(values) < 1:
        raise ConfigError(f"{named('alphas', repr(text))}: values must be at least 1")
    return values


def _describe(clique: Clique, graph: InterventionGraph, nodes: dict, n: int, block: dict) -> dict:
    k = len(clique)
    members = clique.nodes
    names = nodes["value_names"]
    codes = nodes["values"][members]
    counts = {names[v]: int((codes == v).sum()) for v in range(len(names))}
    composition = {v: int((codes == v).sum()) for v in range(len(names))}
    described = {
        "size": k,
        "value_counts": counts,
        "smallest_value_count": min(counts.values()) if counts else 0,
        "edges": k * (k - 1) // 2,
        "causal_edges": clique.causal_edges,
        "expected_count_half": expected_cliques(n, k, 0.5),
        "log10_expected_count_half": log10_expected_cliques(n, k, 0.5),
        "expected_count_observed_density": expected_cliques(n, k, graph.density),
        "log10_expected_count_observed_density": log10_expected_cliques(n, k, graph.density),
        "log10_expected_count_block_model": log10_expected_block_cliques(block["sizes"], composition, block["densities"]),
        "example_ids": [str(nodes["example_ids"][i]) for i in members],
        "words": [{role: str(words[i]) for role, words in nodes["words"].items()} for i in members],
    }
    pairs = _word_pairs(nodes)
    if pairs is not None:
        words, values = nodes["words"], nodes["stored"][pairs.variable]
        value = [values.names[values.codes[i]] for i in members]
        described["pairs"] = [[str(words[pairs.premise][i]), str(words[pairs.hypothesis][i]), v] for i, v in zip(members, value)]
        described["distinct_general_words"] = len({str(words[pairs.general[v]][i]) for i, v in zip(members, value)})
    return described


def _word_pairs(nodes: dict) -> WordPairs | None:
    """The file's task's :class:`~interp.tasks.base.WordPairs` where every value it groups by is one it names (Figure 5 applies)."""
    pairs = nodes["word_pairs"]
    values = nodes["stored"].get(pairs.variable) if pairs is not None else None
    if values is None or not {pairs.premise, pairs.hypothesis} <= set(nodes["words"]) or not set(values.names) <= set(pairs.general):
        return None
    return pairs


#: ``--format`` names: the intervention graph's file formats, all written by networkx.
GRAPH_FORMATS = {"graphml": "graph.graphml", "gexf": "graph.gexf", "json": "graph.json"}


def clique_graph(graph: InterventionGraph, nodes: dict, membership: np.ndarray):
    """The intervention graph as a networkx ``Graph``, node id = example id.

    Nodes carry the split, the premise and hypothesis (files made before
    they were kept lack them), the word at each role, every stored
    variable's value (as ``variable_<name>`` where the name is one of the
    node's own attributes, e.g. MQNLI's variable ``label``), the gold label
    id (``label``) and name (``gold``), the model's own ``prediction``,
    whether it is ``correct``, and the clique number (-1: none); edges
    carry ``causal``.
    """
    import networkx as nx

    own = {"split", "label", "gold", "prediction", "correct", "clique", *TEXTS}
    labels = nodes["labels"]
    g = nx.Graph()
    for i, example_id in enumerate(nodes["example_ids"]):
        g.add_node(
            str(example_id),
            **{role: str(words[i]) for role, words in nodes["words"].items() if role not in own},
            **{(f"variable_{name}" if name in own else name): v.names[v.codes[i]] for name, v in nodes["stored"].items()},
            **{side: str(nodes[side][i]) for side in TEXTS if nodes.get(side) is not None},
            split=str(nodes["split"][i]),
            label=int(nodes["label"][i]),
            gold=labels[int(nodes["label"][i])],
            prediction=labels[int(nodes["base_pred"][i])],
            correct=bool(nodes["base_pred"][i] == nodes["label"][i]),
            clique=int(membership[i]),
        )
    ids = nodes["example_ids"]
    for i, j in zip(*np.nonzero(np.triu(graph.edges, 1))):
        g.add_edge(str(ids[i]), str(ids[j]), causal=bool(graph.causal[i, j]))
    return g


def write_graph(g, path: Path, fmt: str) -> Path:
    """Write ``g`` as ``fmt`` (a key of :data:`GRAPH_FORMATS`) beside ``path``, then move it into place.

    ``graphml`` and ``gexf`` (Gephi's own format) through networkx's
    writers; ``json`` as networkx node-link data (``nodes``, ``edges``,
    each node with its ``clique``), plus ``cliques``: each clique's example
    ids, largest first. Each reads back with networkx (``read_graphml``,
    ``read_gexf``, ``node_link_graph``).

    Raises:
        OutputError: the file cannot be written.
    """
    import networkx as nx

    work = partial_path(path)
    try:
        if fmt == "graphml":
            nx.write_graphml(g, work)
        elif fmt == "gexf":
            nx.write_gexf(g, work)
        else:
            data = nx.node_link_data(g, edges="edges")
            found = sorted({d["clique"] for _, d in g.nodes(data=True)} - {-1})
            data["cliques"] = [[n for n, d in g.nodes(data=True) if d["clique"] == c] for c in found]
            work.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        work.replace(path)
    except OSError as exc:
        work.unlink(missing_ok=True)
        raise OutputError(f"{path}: cannot write ({exc.strerror or exc})") from None
    return path


def run_cliques(config: CliqueConfig) -> dict:
    """Build the graph, search α = ``config.alphas``, write the three outputs; returns what ``cliques.json`` holds.

    Causal edges join examples whose values of the intervened variable
    (``config.variable``, else the file's only one) differ.

    Raises:
        ConfigError: a missing or foreign interventions file, one made with
            another model than ``config.model``, an unknown location or
            variable, bad α values.
        OutputError: ``out`` cannot be written.
    """
    config.validate()
    model = config.model
    expected_sha = None if model is None else model.sha256 if isinstance(model, Classifier) else model_sha256(model)
    with open_interventions(config.interventions, model_sha256=expected_sha) as file:
        location = file.location(config.location)
        variable = file.variable(config.variable)
        values = file.values(variable)
        model_pred, causal_pred = file.matrix("model_pred", location), file.matrix("causal_pred", location, variable)
        graph = build_graph(model_pred, causal_pred, values.codes)
        nodes = {k: file.column(k) for k in ("label", "base_pred", "split")}
        nodes["example_ids"] = np.array(file.example_ids)
        nodes["words"] = {role: file.words(role) for role in file.word_roles}
        nodes["stored"] = {name: file.values(name) for name in file.stored_values}
        nodes["word_pairs"] = WordPairs.from_json(str(file.meta["word_pairs"])) if "word_pairs" in file.meta else None
        nodes.update({side: file.texts(side) for side in TEXTS})
        nodes["labels"] = [str(x) for x in file.meta["labels"]]
        nodes["values"], nodes["value_names"] = values.codes, values.names
        meta = dict(file.meta)
    out = Path(config.out)
    n = graph.n_nodes
    min_size = config.min_size if config.min_size is not None else chance_clique_size(n, graph.density)
    started = time.perf_counter()
    result = search(graph, config.alphas, min_size)
    seconds = time.perf_counter() - started
    membership = np.full(n, -1)
    for number, clique in enumerate(result.best):
        membership[clique.nodes] = number
    densities = block_densities(graph.edges, values.codes)
    # is any of it a finding? not on splits the model is at chance on; and not where the model's own labels, shuffled
    # among each base's sources, give cliques as large
    splits = split_accuracies([str(s) for s in nodes["split"]], nodes["label"], nodes["base_pred"])
    at_chance = [r["split"] for r in splits if r["at_chance"]]
    null = shuffle_null(model_pred, causal_pred, values.codes, config.alphas, min_size, n_shuffles=config.null_shuffles)
    # and not where the labels depend on the source in a way that has nothing to do with the causal model, or copy it
    own = np.diagonal(model_pred).copy()  # the self-interchange: the model's own label on each example
    relation = relation_null(model_pred, causal_pred, values.codes, own, config.alphas, min_size, n_shuffles=config.null_shuffles)
    gate = copy_gate(model_pred, causal_pred, own)
    evidence = not at_chance and null["beats_null"] and relation["beats_null"] and gate["passes"]
    block = {"sizes": {v: int((values.codes == v).sum()) for v in range(len(values.names))}, "densities": densities}
    report = {
        "interventions": str(config.interventions),
        "location": location,
        "model": meta["model"],
        "task": meta["task"],
        "causal_model": meta["causal_model"],
        "variable": variable,
        "values": list(values.names),
        "graph": {
            "nodes": n,
            "nodes_model_correct": int((nodes["base_pred"] == nodes["label"]).sum()),
            "nodes_per_value": {values.names[v]: c for v, c in block["sizes"].items()},
            "edges": graph.n_edges,
            "causal_edges": graph.n_causal_edges,
            "density": graph.density,
            "block_densities": {
                (values.names[v] if v == w else f"{values.names[v]}|{values.names[w]}"): d for (v, w), d in densities.items()
            },
            "nodes_with_an_edge": int(graph.edges.any(axis=1).sum()),
        },
        "min_size": min_size,
        "min_size_rule": "given" if config.min_size is not None else "chance: smallest k with E[# k-cliques] < 1 in G(n, density)",
        "search_seconds": seconds,
        "alphas": {
            str(alpha): {"sizes": [len(c) for c in found], "covered": int(sum(len(c) for c in found))}
            for alpha, found in result.cliques.items()
        },
        "best_alpha": result.best_alpha,
        "model_at_chance": at_chance,
        "shuffle_null": null,
        "relation_null": relation,
        "copy_gate": gate,
        "verdict": clique_verdict(at_chance, null, relation, gate),
        "cliques": [{**_describe(c, graph, nodes, n, block), "interpretable": evidence} for c in result.best],
    }
    with OutputSet(out, "cliques") as outputs:
        write_json_atomic(outputs.path("cliques.json"), report)
        g = clique_graph(graph, nodes, membership)
        for fmt in config.formats:
            write_graph(g, outputs.path(GRAPH_FORMATS[fmt]), fmt)
        pairs = _word_pairs(nodes)
        general = {value: int(role == pairs.hypothesis) for value, role in pairs.general.items()} if pairs is not None else None
        _figure(report, location, variable, result.best_alpha, outputs.path("clique.png"), general)
    for message in file_chance_messages(config.interventions):  # with the results: a graph of a model at chance says little
        warn(message)
    return report


def clique_verdict(at_chance: list[str], null: dict, relation: dict | None = None, gate: dict | None = None) -> str:
    """What the cliques of a run may be read as, in one sentence: ``uninterpretable`` (the model is at chance on a split
    of the graph's examples: its cliques describe a model that has not learned the task, whatever their odds); ``not
    beyond the null`` (:func:`~interp.analysis.cliques.null.shuffle_null`: the labels do not depend on the source);
    ``not evidence`` (they do, but the site's IIA does not stand above copying the source's label,
    :func:`~interp.analysis.cliques.null.copy_gate`, or the cliques are as large with the causal model's side permuted
    among examples the model labels alike, :func:`~interp.analysis.cliques.null.relation_null`); else ``evidence``:
    cliques larger than both nulls allow, at a site whose interchanges follow the causal model more than they copy."""
    if at_chance:
        return (f"uninterpretable: the model is at chance on {', '.join(at_chance)}; no clique here is evidence about the "
                f"causal model, whatever its odds under a random graph")  # fmt: skip
    figures = (f"largest clique {null['observed']} against {null['median']:.0f} (median; 95th percentile {null['high']:.0f}) over "
               f"{null['shuffles']} shuffles of the model's intervened labels among each base's sources, p = {null['p_value']:.3f}")  # fmt: skip
    if not null["beats_null"]:
        return "not beyond the null: " + figures + "; the cliques are no larger than with the sources shuffled"
    if relation is None or gate is None:  # a caller of the older form: the source-dependence null alone
        return ("beyond the null: " + figures + "; the intervened labels depend on the source (the null tests that, not that they "
                "follow the causal model)")  # fmt: skip
    iia, copies, gap = gate["iia"], gate["copies_source"], gate["difference"]
    copying = (f"IIA {iia[0]:.3f} [{iia[1]:.3f}, {iia[2]:.3f}] against copying the source's label {copies[0]:.3f} "
               f"[{copies[1]:.3f}, {copies[2]:.3f}], difference {gap[0]:.3f} [{gap[1]:.3f}, {gap[2]:.3f}]")  # fmt: skip
    related = (f"against {relation['median']:.0f} (median; 95th percentile {relation['high']:.0f}) over {relation['shuffles']} "
               f"permutations of the causal model's side among examples the model labels alike, p = {relation['p_value']:.3f}")  # fmt: skip
    if not gate["passes"]:
        return f"not evidence: the labels depend on the source ({figures}), but the site's {copying}: it copies the source's answer"
    if not relation["beats_null"]:
        return (f"not evidence: the labels depend on the source ({figures}), but not on it as the causal model says: largest clique "
                f"{relation['observed']} {related}")  # fmt: skip
    return f"evidence: {figures}; {related}; {copying}"


def _figure(report: dict, location: str, variable: str, alpha: int, path: Path, general: dict[str, int] | None) -> None:
    """The largest clique's word pairs grouped by the general word (Figure 5) where the task pairs words, else its members' words."""
    if report["cliques"]:
        top = report["cliques"][0]
        counts = " / ".join(f"{c} {name}" for name, c in top["value_counts"].items())
        title = (
            f"Largest clique at {location} (α = {alpha}): {top['size']} examples, "
            f"{variable} {counts}, {top['causal_edges']} causal edges"
            + ("" if top.get("interpretable", True) else "\nuninterpretable: the model is at chance on " + ", ".join(report["model_at_chance"]))
        )
        members = top.get("pairs") or [[" ".join(w.values()), "", ""] for w in top["words"]]
        plot_clique([tuple(p) for p in members], title, path, general if top.get("pairs") else None)
    else:
        plot_clique([], f"{location}: no clique with a causal edge", path)


def format_cliques(report: dict) -> str:
    """A terminal summary: graph size, block densities, the best α's cliques, and the three chance baselines."""
    g = report["graph"]
    names = report["values"]
    blocks = ", ".join(f"{k} {v:.2f}" for k, v in g["block_densities"].items())
    lines = [
        f"Cliques (Appendix A.3) at {report['location']}, variable {report['variable']}: {g['nodes']} examples, "
        f"{g['edges']} edges ({g['causal_edges']} causal), density {g['density']:.3f}",
        f"edge density within and across values of {report['variable']}: {blocks}",
        f"best α = {report['best_alpha']}; cliques of at least {report['min_size']} examples "
        f"({report['min_size_rule']}); search {report['search_seconds'] * 1000:.0f} ms",
        "",
        f"{'size':>5}" + "".join(f"{n:>7}" for n in names) + f"{'causal edges':>14}"
        f"{'log10 E[#] p=1/2':>19}{'p=density':>11}{'block model':>13}",
    ]
    for c in report["cliques"]:
        odds = (f"{c['log10_expected_count_half']:>19.1f}{c['log10_expected_count_observed_density']:>11.1f}"
                f"{c['log10_expected_count_block_model']:>13.1f}" if c.get("interpretable", True)
                else f"{'uninterpretable: the model is at chance':>43}")  # fmt: skip
        lines.append(f"{c['size']:>5}" + "".join(f"{c['value_counts'][n]:>7}" for n in names) + f"{c['causal_edges']:>14}" + odds)
    if not report["cliques"]:
        lines.append(f"  no clique of at least {report['min_size']} examples with a causal edge")
    if "verdict" in report:  # files of older runs lack it
        lines.append(f"verdict: {report['verdict']}")
    return "\n".join(lines)
