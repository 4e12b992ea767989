"""The intervention graph, the greedy search against a one-node-at-a-time reference, baselines, exports."""

from __future__ import annotations

import json
import math

import networkx as nx
import numpy as np
import pytest

from interp.analysis.cliques import (
    build_graph,
    chance_clique_size,
    disjoint_cliques,
    expected_cliques,
    log10_expected_cliques,
    search,
)
from interp.analysis.cliques.figure import group_by_general_word
from interp.tasks import resolve_task
from interp.analysis.cliques.graph import InterventionGraph
from interp.analysis.cliques.reference import reference_cliques
from interp.core.errors import ConfigError
from interp.jobs.cliques import CliqueConfig, parse_alphas


def random_graph(seed: int, n: int, p: float, planted: int = 0) -> InterventionGraph:
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < p, 1)
    if planted:
        members = rng.choice(n, planted, replace=False)
        upper[np.ix_(members, members)] = True
        upper = np.triu(upper, 1)
    edges = upper | upper.T
    lexrel = rng.integers(0, 2, n)
    return InterventionGraph(edges=edges, causal=edges & (lexrel[:, None] != lexrel[None, :]))


@pytest.mark.parametrize("seed,n,p,planted", [(0, 30, 0.5, 0), (1, 60, 0.3, 12), (2, 80, 0.7, 20), (3, 50, 0.1, 0), (4, 70, 0.5, 25)])
def test_fast_search_equals_the_literal_reference(seed, n, p, planted):
    graph = random_graph(seed, n, p, planted)
    for alpha in (1, 2, 3, 5, 8):
        fast = [c.nodes.tolist() for c in disjoint_cliques(graph, alpha)]
        assert fast == reference_cliques(graph.edges, graph.causal, alpha), f"alpha={alpha}"
        for min_size in (3, 6):
            fast = [c.nodes.tolist() for c in disjoint_cliques(graph, alpha, min_size)]
            assert fast == reference_cliques(graph.edges, graph.causal, alpha, min_size), f"alpha={alpha}, {min_size}"
            assert all(len(c) >= min_size for c in fast)


def test_found_cliques_are_disjoint_cliques_with_a_causal_edge():
    graph = random_graph(5, 120, 0.6, planted=30)
    result = search(graph, range(1, 11))
    assert result.best_alpha is not None
    for alpha, found in result.cliques.items():
        seen: set[int] = set()
        for clique in found:
            members = clique.nodes
            sub = graph.edges[np.ix_(members, members)]
            assert sub.sum() == len(members) * (len(members) - 1), "not a clique"
            assert clique.causal_edges == graph.causal[np.ix_(members, members)].sum() // 2 > 0
            assert not seen & set(members.tolist())
            seen |= set(members.tolist())
    best = result.cliques[result.best_alpha]
    assert all(len(best[0]) >= len(found[0]) for found in result.cliques.values() if found)
    assert len(best[0]) >= 30  # the planted clique (or a larger one around it) is found


def test_graph_edges_need_all_four_agreements_and_pairs_not_run_give_none():
    # 3 examples; lexrel 0, 1, 0. The causal model says: ids below; the model agrees everywhere at first.
    lexrel = np.array([0, 1, 0])
    causal_pred = np.array([[0, 1, 0], [0, 1, 0], [1, 0, 1]], dtype=np.int8)
    model_pred = causal_pred.copy()
    graph = build_graph(model_pred, causal_pred, lexrel)
    assert graph.edges.tolist() == [[False, True, True], [True, False, True], [True, True, False]]
    assert graph.causal.tolist() == [[False, True, False], [True, False, True], [False, True, False]]
    for i, j in [(0, 1), (1, 0), (0, 0), (1, 1)]:
        spoiled = model_pred.copy()
        spoiled[i, j] = 1 - spoiled[i, j]
        g = build_graph(spoiled, causal_pred, lexrel)
        assert not g.edges[0, 1] and not g.edges[1, 0], f"disagreement at {(i, j)} must remove edge 0-1"
    not_run = model_pred.copy()
    not_run[2, 0] = -1
    assert not build_graph(not_run, causal_pred, lexrel).edges[0, 2]
    with pytest.raises(ConfigError, match="must be"):
        build_graph(model_pred[:2], causal_pred, lexrel)


def test_baselines_match_exact_arithmetic_and_the_papers_claim():
    for n, k, p in [(10, 3, 0.5), (40, 6, 0.3), (200, 12, 0.5), (25, 25, 0.9), (30, 1, 0.5)]:
        exact = math.comb(n, k) * p ** math.comb(k, 2)
        assert expected_cliques(n, k, p) == pytest.approx(exact, rel=1e-9)
        assert log10_expected_cliques(n, k, p) == pytest.approx(math.log10(exact), rel=1e-9)
    # Appendix A.3: with 2,678 nodes and p = 1/2, fewer than 1e-8 cliques of size > 20 are expected.
    assert log10_expected_cliques(2678, 21, 0.5) < -8 < log10_expected_cliques(2678, 16, 0.5)
    assert expected_cliques(5, 6, 0.5) == 0 and expected_cliques(10, 3, 0.0) == 0
    for n, p in [(2678, 0.5), (200, 0.518), (40, 0.1), (3000, 0.9)]:
        k = chance_clique_size(n, p)
        assert log10_expected_cliques(n, k, p) < 0 <= log10_expected_cliques(n, k - 1, p)
    assert chance_clique_size(10, 1.0) == 11  # a complete graph: every size is expected


def test_pairs_are_grouped_by_the_more_general_word():
    pairs = [("pug", "dog", "⊏"), ("dog", "beagle", "⊐"), ("sedan", "car", "⊏"), ("dog", "animal", "⊏")]
    monli = resolve_task("monli").word_pairs  # the task says which word of a pair is the more general
    general = {value: int(role == monli.hypothesis) for value, role in monli.general.items()}
    groups = group_by_general_word(pairs, general)
    assert list(groups) == ["dog", "animal", "car"]
    assert groups["dog"] == [("pug", "dog", "⊏"), ("dog", "beagle", "⊐")]
    assert list(group_by_general_word(pairs, {"⊏": 0, "⊐": 1})) == ["beagle", "dog", "pug", "sedan"]  # read the other way round


def test_alpha_option_parsing():
    assert parse_alphas("1-10") == tuple(range(1, 11))
    assert parse_alphas("2,5") == (2, 5)
    for bad in ("0-3", "a-b", "", "x"):
        with pytest.raises(ConfigError, match="alphas="):
            parse_alphas(bad)
    with pytest.raises(ConfigError, match="alphas="):
        CliqueConfig(interventions="x", out="y", alphas=()).validate()


def test_graph_without_causal_edges_has_no_clique():
    graph = random_graph(6, 20, 0.9)
    flat = InterventionGraph(edges=graph.edges, causal=np.zeros_like(graph.edges))
    result = search(flat, range(1, 4))
    assert result.best_alpha is None and result.best == []


@pytest.fixture(scope="module")
def tiny_interventions(tiny_classifier_dir, monli_dir, tmp_path_factory):
    from click.testing import CliRunner

    from interp.cli import main

    out = tmp_path_factory.mktemp("cl") / "iv.h5"
    args = [
        "intervene", "--model", str(tiny_classifier_dir), "--out", str(out), "--splits", "pmonli,nmonli_test",
        "--max-examples", "40", "--locations", "blocks.0.hook_resid_post@w_h", "--data-dir", str(monli_dir), "--quiet",
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.stderr
    return out


def _cli(*args):
    from click.testing import CliRunner

    from interp.cli import main

    return CliRunner().invoke(main, [str(a) for a in args])


def test_cliques_command_writes_json_graphml_and_figure(tiny_interventions, tiny_classifier_dir, tmp_path):
    import h5py

    out = tmp_path / "c"
    result = _cli("cliques", "--interventions", tiny_interventions, "--out", out, "--model", tiny_classifier_dir, "--alphas", "1-4")
    assert result.exit_code == 0, result.stderr
    assert "Cliques (Appendix A.3) at blocks.0.hook_resid_post@w_h, variable lexrel: 40 examples" in result.stdout
    report = json.loads((out / "cliques.json").read_text())
    with h5py.File(tiny_interventions, "r") as f:
        loc = f["lexrel/blocks.0.hook_resid_post@w_h"]
        graph = build_graph(loc["model_pred"][:], loc["causal_pred"][:], f["values/lexrel"][:])
        ids = list(f["example_ids"].asstr()[:])
        lexrel = f["values/lexrel"][:]
        assert list(f["values/lexrel"].attrs["names"]) == ["⊏", "⊐"]
    assert report["graph"]["edges"] == graph.n_edges and report["graph"]["causal_edges"] == graph.n_causal_edges
    assert list(report["alphas"]) == ["1", "2", "3", "4"]
    expected = search(graph, range(1, 5))
    assert report["best_alpha"] == expected.best_alpha
    assert [c["size"] for c in report["cliques"]] == [len(c) for c in expected.best]
    for c in report["cliques"]:
        members = [ids.index(i) for i in c["example_ids"]]
        assert c["value_counts"] == {"⊏": int((lexrel[members] == 0).sum()), "⊐": int((lexrel[members] == 1).sum())}
        assert c["smallest_value_count"] == min(c["value_counts"].values()) and sum(c["value_counts"].values()) == c["size"]
        assert c["log10_expected_count_half"] == pytest.approx(log10_expected_cliques(40, c["size"], 0.5))
    g = nx.read_graphml(out / "graph.graphml")
    assert g.number_of_nodes() == 40 and g.number_of_edges() == graph.n_edges
    assert sum(1 for _, _, d in g.edges(data=True) if d["causal"]) == graph.n_causal_edges
    in_first = {n for n, d in g.nodes(data=True) if d["clique"] == 0}
    assert in_first == (set(report["cliques"][0]["example_ids"]) if report["cliques"] else set())
    assert (out / "clique.png").read_bytes()[:4] == b"\x89PNG"


def test_cliques_bad_input_exits_2_and_writes_nothing(tiny_interventions, tmp_path):
    out = tmp_path / "c"
    truncated = tmp_path / "t.h5"
    truncated.write_bytes(tiny_interventions.read_bytes()[:2048])
    cases = [
        (["--interventions", tiny_interventions, "--model", "minilm"], "whose weights differ from the model given"),
        (["--interventions", tiny_interventions, "--location", "blocks.1.hook_resid_post@w_h"], "is not in"),
        (["--interventions", truncated], "not a readable HDF5 file"),
        (["--interventions", tmp_path / "none.h5"], "does not exist (make it with `interp intervene`)"),
        (["--interventions", tiny_interventions, "--alphas", "0-3"], "--alphas"),
    ]
    for args, message in cases:
        result = _cli("cliques", *args, "--out", out)
        assert result.exit_code == 2 and message in result.stderr, (args, result.output)
        assert not out.exists()


def test_search_shares_work_across_alphas_without_changing_results():
    graph = random_graph(7, 150, 0.55, planted=25)
    result = search(graph, range(1, 11), min_size=4)
    for alpha, found in result.cliques.items():
        assert [c.nodes.tolist() for c in found] == [c.nodes.tolist() for c in disjoint_cliques(graph, alpha, 4)]


def test_cliques_exports_graphml_gexf_and_json_that_networkx_reads_back(tiny_interventions, tmp_path):
    out = tmp_path / "c"
    result = _cli("cliques", "--interventions", tiny_interventions, "--out", out, "--alphas", "1-4", "--min-size", "2",
                  "--format", "graphml,gexf,json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert f"{out}/graph.gexf" in result.stdout and f"{out}/graph.json" in result.stdout
    report = json.loads((out / "cliques.json").read_text())
    reference = nx.read_graphml(out / "graph.graphml")
    data = json.loads((out / "graph.json").read_text())
    graphs = {"gexf": nx.read_gexf(out / "graph.gexf"), "json": nx.node_link_graph(data, edges="edges")}
    assert reference.number_of_edges() > 0
    for name, g in graphs.items():
        assert set(g.nodes) == set(reference.nodes), name
        assert {frozenset(e) for e in g.edges} == {frozenset(e) for e in reference.edges}, name
        for node, attrs in reference.nodes(data=True):
            assert int(g.nodes[node]["clique"]) == attrs["clique"] and g.nodes[node]["lexrel"] == attrs["lexrel"], (name, node)
        causal = {frozenset((u, v)) for u, v, d in g.edges(data=True) if str(d["causal"]) in ("True", "true")}
        assert causal == {frozenset((u, v)) for u, v, d in reference.edges(data=True) if d["causal"]}, name
    assert [sorted(c) for c in data["cliques"]] == [sorted(c["example_ids"]) for c in report["cliques"]]
    manifest = json.loads((out / "cliques.manifest.json").read_text())
    assert {"graph.graphml", "graph.gexf", "graph.json"} <= set(manifest["files"])
    bad = _cli("cliques", "--interventions", tiny_interventions, "--out", tmp_path / "d", "--format", "graphml,dot")
    assert bad.exit_code == 2 and "--format must name some of graphml, gexf, json" in bad.stderr and not (tmp_path / "d").exists()


@pytest.mark.parametrize("fmt", ["graphml", "gexf", "json"])
def test_write_graph_keeps_clique_membership(tmp_path, fmt):
    from interp.jobs.cliques import GRAPH_FORMATS, write_graph

    g = nx.Graph()
    for name, clique in (("a", 0), ("b", 0), ("c", 1), ("d", 1), ("e", -1)):
        g.add_node(name, clique=clique, lexrel="⊏" if name < "c" else "⊐")
    g.add_edges_from([("a", "b"), ("c", "d")], causal=True)
    g.add_edge("b", "e", causal=False)
    path = write_graph(g, tmp_path / GRAPH_FORMATS[fmt], fmt)
    if fmt == "json":
        data = json.loads(path.read_text())
        assert data["cliques"] == [["a", "b"], ["c", "d"]]
        back = nx.node_link_graph(data, edges="edges")
    else:
        back = (nx.read_graphml if fmt == "graphml" else nx.read_gexf)(path)
    assert {n: int(d["clique"]) for n, d in back.nodes(data=True)} == {"a": 0, "b": 0, "c": 1, "d": 1, "e": -1}
    assert back.nodes["c"]["lexrel"] == "⊐" and {frozenset(e) for e in back.edges} == {frozenset(e) for e in g.edges}


def test_cliques_of_a_model_at_chance_are_marked_uninterpretable(tiny_interventions, tmp_path):
    """A random tiny classifier is at chance on its splits: every clique it has is marked, none listed with its odds.
    Its interventions are given a clique of 12 examples that follow the causal model (as a model trained on 32
    examples, at chance, gave a 9-example clique with block-model odds of 10^-33)."""
    import h5py

    planted = tmp_path / "planted.h5"
    planted.write_bytes(tiny_interventions.read_bytes())
    with h5py.File(planted, "r+") as f:
        group = f["lexrel/blocks.0.hook_resid_post@w_h"]
        model_pred, causal_pred = group["model_pred"][:], group["causal_pred"][:]
        model_pred[:12, :12] = causal_pred[:12, :12]
        group["model_pred"][...] = model_pred
    out = tmp_path / "c"
    result = _cli("cliques", "--interventions", planted, "--out", out, "--alphas", "1-4", "--min-size", "2")
    assert result.exit_code == 0, result.stderr
    report = json.loads((out / "cliques.json").read_text())
    assert report["model_at_chance"] and report["verdict"].startswith("uninterpretable: the model is at chance on")
    assert report["cliques"] and not any(c["interpretable"] for c in report["cliques"])
    rows = [line for line in result.stdout.splitlines() if line.strip()[:1].isdigit() and "uninterpretable" in line]
    assert len(rows) == len(report["cliques"]) and "verdict: uninterpretable" in result.stdout
    assert report["shuffle_null"]["shuffles"] in (50, 200) and report["shuffle_null"]["observed"] == report["cliques"][0]["size"]  # 200: off its floor


def test_the_shuffle_null_fails_a_model_whose_interventions_follow_the_source_and_holds_for_one_at_random():
    """The null can fail: where 30 of 60 examples follow the causal model under every interchange among them, the
    largest clique beats every shuffle; where intervened labels are drawn at random, it does not."""
    from interp.analysis.cliques.null import shuffle_null, shuffled_within_rows
    from interp.jobs.cliques import clique_verdict

    rng = np.random.default_rng(3)
    n = 60
    values = rng.integers(0, 2, n)
    counterfactual = np.tile(values[None, :], (n, 1))  # the label follows the source's value
    random_labels = rng.integers(0, 2, (n, n))
    np.fill_diagonal(random_labels, values)  # right on itself, as the graph needs
    follows = random_labels.copy()
    members = np.arange(30)
    follows[np.ix_(members, members)] = counterfactual[np.ix_(members, members)]
    found = shuffle_null(follows, counterfactual, values, range(1, 6), 2, n_shuffles=30)
    assert found["observed"] >= 25 and found["beats_null"] and found["p_value"] == pytest.approx(1 / 201) and found["shuffles"] == 200  # off its floor
    assert clique_verdict([], found).startswith("beyond the null: largest clique")
    at_random = shuffle_null(random_labels, counterfactual, values, range(1, 6), 2, n_shuffles=30)
    assert not at_random["beats_null"] and clique_verdict([], at_random).startswith("not beyond the null")
    shuffled = shuffled_within_rows(follows, np.random.default_rng(0))
    assert np.array_equal(np.diagonal(shuffled), np.diagonal(follows))
    assert all(sorted(shuffled[i]) == sorted(follows[i]) for i in range(n))  # each base keeps its labels


def test_the_shuffle_null_tests_source_dependence_so_a_model_at_chance_can_beat_it():
    """A model that learned nothing of the causal model but whose label depends on the source (a random function of the
    source: 50% agreement with the counterfactuals, at chance) beats the shuffle null, and the verdict says what that
    means (the labels depend on the source), never that they follow the causal model; a model that ignores the source
    meets it."""
    from interp.analysis.cliques.null import METHOD, shuffle_null
    from interp.jobs.cliques import clique_verdict

    rng = np.random.default_rng(5)
    n = 40
    values = np.array([0, 1] * (n // 2))
    counterfactual = np.tile(values[None, :], (n, 1))  # the label follows the source's value
    by_source = rng.integers(0, 2, n)  # the model's label: a random function of the source
    at_chance = np.tile(by_source[None, :], (n, 1))
    np.fill_diagonal(at_chance, values)
    assert abs((at_chance == counterfactual).mean() - 0.5) < 0.1  # it agrees with the causal model at chance
    found = shuffle_null(at_chance, counterfactual, values, range(1, 4), 2, n_shuffles=30)
    assert found["beats_null"] and found["p_value"] < 0.05
    verdict = clique_verdict([], found)
    assert "depend on the source" in verdict and "not that they follow the causal model" in verdict and "not that they" in METHOD
    ignores = np.tile(values[:, None], (1, n))  # keeps the base's label whatever the source
    assert not shuffle_null(ignores, counterfactual, values, range(1, 4), 2, n_shuffles=30)["beats_null"]



def _planted(n=48, seed=7):
    """MoNLI's shape in miniature: each example has a value (lexrel) and is negated or not, its label the value flipped
    by negation; interchanging the value gives the source's value, flipped by the base's negation. Three models, each
    right on every example on its own: one that follows the counterfactuals, one whose label is a random function of
    the source (source-dependent, unrelated to the causal model), one that copies the source's own label."""
    rng = np.random.default_rng(seed)
    values = np.array([0, 1] * (n // 2))
    negated = np.array([0, 0, 1, 1] * (n // 4))
    labels = values ^ negated  # the model's own label on each example: right
    counterfactual = values[None, :] ^ negated[:, None]
    follows = counterfactual.copy()
    by_source = np.tile(rng.integers(0, 2, n)[None, :], (n, 1))
    np.fill_diagonal(by_source, labels)
    copies = np.tile(labels[None, :], (n, 1))
    return values, labels, counterfactual, follows, by_source, copies


def test_the_clique_verdict_fails_a_source_random_model_and_a_copying_site_and_keeps_a_following_one():
    """Both planted models beat the shuffle null (their labels depend on the source), and neither is evidence: the
    source-random model meets the relation null (the causal model's side permuted among examples labelled alike), the
    copying site fails the copy gate; the model that follows the counterfactuals beats all three."""
    from interp.analysis.cliques.null import copy_gate, relation_null, shuffle_null
    from interp.jobs.cliques import clique_verdict

    values, labels, counterfactual, follows, by_source, copies = _planted()
    verdicts, relations, gates = {}, {}, {}
    for name, model in (("follows", follows), ("by source", by_source), ("copies", copies)):
        null = shuffle_null(model, counterfactual, values, range(1, 4), 2, n_shuffles=20)
        relations[name] = relation_null(model, counterfactual, values, labels, range(1, 4), 2, n_shuffles=20)
        gates[name] = copy_gate(model, counterfactual, labels)
        verdicts[name] = clique_verdict([], null, relations[name], gates[name])
        if name != "follows":
            assert null["beats_null"], name  # the source-dependence null alone would have passed it
    assert verdicts["follows"].startswith("evidence:") and relations["follows"]["beats_null"] and gates["follows"]["passes"]
    assert verdicts["by source"].startswith("not evidence") and not relations["by source"]["beats_null"]
    assert verdicts["copies"].startswith("not evidence") and "copies the source's answer" in verdicts["copies"] and not gates["copies"]["passes"]
    gate_passed = {**gates["by source"], "passes": True}  # were its IIA above copying, the relation null would still fail it
    assert "not on it as the causal model says" in clique_verdict([], shuffle_null(by_source, counterfactual, values, range(1, 4), 2, n_shuffles=20),
                                                                  relations["by source"], gate_passed)  # fmt: skip


def test_the_relation_null_keeps_each_class_and_reruns_on_its_floor():
    from interp.analysis.cliques.null import MORE_SHUFFLES, permuted_within_classes, relation_null

    classes = np.array([0, 0, 1, 1, 1, 2])
    perm = permuted_within_classes(classes, np.random.default_rng(0))
    assert sorted(perm.tolist()) == list(range(6)) and np.array_equal(classes[perm], classes)
    values, labels, counterfactual, follows, *_ = _planted()
    found = relation_null(follows, counterfactual, values, labels, range(1, 4), 2, n_shuffles=10)
    assert found["shuffles"] == MORE_SHUFFLES and found["p_value"] == pytest.approx(1 / (1 + MORE_SHUFFLES))


@pytest.mark.parametrize("kind", ["follows", "by source", "copies"])
def test_interp_cliques_reads_a_copying_site_and_a_source_random_model_as_no_evidence(tiny_interventions, tmp_path, kind):
    """Through the command, on a file whose model is made right on every example (so above chance) and whose
    intervened labels are planted: following the counterfactuals is evidence; a random function of the source and a
    copy of the source's own label are not, and their cliques are not marked interpretable (no odds in the report)."""
    import h5py

    planted = tmp_path / "planted.h5"
    planted.write_bytes(tiny_interventions.read_bytes())
    with h5py.File(planted, "r+") as f:
        labels = f["label"][:].astype(np.int64)
        f["base_pred"][...] = labels  # right on every example, and one split of all 40: above chance
        f["split"][...] = np.array([f["split"][0]] * len(labels), dtype=f["split"].dtype)
        group = f["lexrel/blocks.0.hook_resid_post@w_h"]
        causal = group["causal_pred"][:].astype(np.int64)
        n = len(labels)
        if kind == "follows":
            model = causal.copy()
        elif kind == "by source":
            model = np.tile(np.random.default_rng(3).integers(0, 2, n)[None, :], (n, 1))
        else:
            model = np.tile(labels[None, :], (n, 1))
        np.fill_diagonal(model, labels)
        group["model_pred"][...] = model.astype(np.int8)
    out = tmp_path / "c"
    result = _cli("cliques", "--interventions", planted, "--out", out, "--alphas", "1-4", "--min-size", "2")
    assert result.exit_code == 0, result.stderr
    report = json.loads((out / "cliques.json").read_text())
    assert not report["model_at_chance"]
    if kind == "follows":
        assert report["verdict"].startswith("evidence:") and all(c["interpretable"] for c in report["cliques"])
    else:
        assert report["verdict"].startswith("not evidence") and not any(c["interpretable"] for c in report["cliques"])
    assert f"verdict: {report['verdict'].split(':')[0]}" in result.stdout
