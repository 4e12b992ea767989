"""The example bootstrap behind every IIA interval: equal to resampling by copied index arrays, covering the population IIA
on simulated grids where a pair-level bootstrap does not, and wired into the summaries, the files and the CLI."""

from __future__ import annotations

import json

import h5py
import numpy as np
import pytest
from scipy.special import expit

from interp.analysis.bootstrap import Estimate, ExampleBootstrap, percentile_interval
from interp.analysis.iia import format_summaries, layer_table, summarize_matrices
from interp.core.errors import ConfigError


def _naive_share(boot: ExampleBootstrap, hits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The reference: each replicate's examples as copied index arrays (each drawn example repeated by its count)."""
    out = []
    for wb, ws in zip(boot.base_weights, boot.source_weights):
        rows = np.repeat(np.arange(boot.n_bases), wb.astype(int))
        cols = np.repeat(np.arange(boot.n_sources), ws.astype(int))
        m, h = mask[np.ix_(rows, cols)], hits[np.ix_(rows, cols)]
        out.append((h & m).sum() / m.sum() if m.sum() else np.nan)
    return np.array(out)


@pytest.mark.parametrize("shape,square", [((9, 9), True), ((7, 11), False)])
def test_weight_replicates_equal_resampling_by_index_arrays(shape, square):
    rng = np.random.default_rng(1)
    hits, mask = rng.random(shape) < 0.6, rng.random(shape) < 0.5
    boot = ExampleBootstrap(*shape, square=square, n_boot=60, seed=4)
    assert np.allclose(boot.share(hits, mask), _naive_share(boot, hits, mask), equal_nan=True)
    assert square == (boot.base_weights is boot.source_weights)  # one draw for both axes on a square grid
    assert np.all(boot.base_weights.sum(1) == shape[0])
    # A list of pairs weighs each pair by its base's and its source's counts: the grid's share on the pairs of the mask.
    b, s = np.nonzero(mask)
    assert np.allclose(boot.pair_share(b, s, hits[b, s]), boot.share(hits, mask), equal_nan=True)


def _population(mu: float, sigma: float) -> float:
    """E[sigmoid(mu + a + b)] for a, b ~ N(0, sigma²): the IIA of the population the simulated examples are drawn from."""
    x, w = np.polynomial.hermite_e.hermegauss(80)
    return float((w * expit(mu + np.sqrt(2) * sigma * x)).sum() / w.sum())


@pytest.mark.parametrize("n_bases,n_sources,square", [(30, 30, True), (24, 32, False)])
def test_the_example_bootstrap_covers_the_population_iia_and_a_pair_bootstrap_does_not(n_bases, n_sources, square):
    """Each Monte-Carlo replicate redraws the examples' effects (a base's a_i, a source's b_j) and the pairs' outcomes, so
    the target is the population IIA. The example bootstrap's 95% interval covers it; resampling pairs, the null that can
    fail, treats the pairs as independent and covers far less often."""
    rng, mu, sigma, runs = np.random.default_rng(12345), 0.3, 1.0, 200
    target, covered, covered_by_pairs = _population(mu, sigma), 0, 0
    for r in range(runs):
        a, b = rng.normal(0, sigma, n_bases), rng.normal(0, sigma, n_sources)
        hits = rng.random((n_bases, n_sources)) < expit(mu + a[:, None] + b[None, :])
        low, high = percentile_interval(ExampleBootstrap(n_bases, n_sources, square=square, n_boot=300, seed=r).share(hits, np.ones_like(hits)))
        covered += low <= target <= high
        counts = rng.multinomial(hits.size, np.full(hits.size, 1 / hits.size), size=300)
        low, high = percentile_interval(counts @ hits.reshape(-1) / hits.size)
        covered_by_pairs += low <= target <= high
    assert covered / runs >= 0.93
    assert covered_by_pairs / runs <= 0.85


def _grid(n=40, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 2, n)
    causal_pred = np.where(values[:, None] != values[None, :], 1, 0).astype(np.int8)
    model_pred = np.where(rng.random((n, n)) < 0.8, causal_pred, 1 - causal_pred).astype(np.int8)
    return model_pred, causal_pred, values, rng.integers(0, 2, n), rng.integers(0, 2, n)


def test_the_summary_gives_every_figure_an_interval_the_same_for_the_same_seed():
    model_pred, causal_pred, values, label, base_pred = _grid()
    s = summarize_matrices("blocks.1.hook_resid_post@w_h", "lexrel", model_pred, causal_pred, values, label, base_pred)
    for name in ("iia", "stays_base", "copies_source", "gap"):
        for suffix in ("", "_causal"):
            assert s[f"{name}{suffix}_low"] <= s[name + suffix] <= s[f"{name}{suffix}_high"], name + suffix
            assert s[f"{name}{suffix}_low"] < s[f"{name}{suffix}_high"]
    assert s["gap_causal"] == pytest.approx(s["iia_causal"] - max(s["stays_base_causal"], s["copies_source_causal"]))
    assert "over 40 examples" in s["interval"] and s["over"] == "40 examples" and "one draw for bases and sources" in s["interval"]
    again = summarize_matrices("blocks.1.hook_resid_post@w_h", "lexrel", model_pred, causal_pred, values, label, base_pred)
    other = summarize_matrices("blocks.1.hook_resid_post@w_h", "lexrel", model_pred, causal_pred, values, label, base_pred, seed=1)
    assert again == s and other["iia_low"] != s["iia_low"]
    text = format_summaries([s])
    assert f"{s['iia_causal']:.3f} [{s['iia_causal_low']:.3f}, {s['iia_causal_high']:.3f}]" in text and "percentile bootstrap" in text
    assert "**" in layer_table([s])  # IIA 0.8 against nulls near 0.5: the gap's interval lies above zero


def test_an_iia_of_one_has_a_collapsed_interval_and_a_gap_inside_noise_is_not_bold():
    model_pred, causal_pred, values, label, base_pred = _grid()
    s = summarize_matrices("blocks.1.hook_resid_post@w_h", "lexrel", causal_pred, causal_pred, values, label, base_pred)
    assert s["iia_causal"] == s["iia_causal_low"] == s["iia_causal_high"] == 1.0
    noise = np.random.default_rng(3).integers(0, 2, model_pred.shape).astype(np.int8)
    s = summarize_matrices("blocks.1.hook_resid_post@w_h", "lexrel", noise, causal_pred, values, label, base_pred)
    assert s["gap_causal_low"] < 0 and "**" not in layer_table([s])


def test_estimate_is_a_float_with_its_interval_and_bad_settings_are_named():
    e = Estimate(0.5, 0.4, 0.6, "m")
    assert e == 0.5 and e + 1 == 1.5 and repr(e) == "0.500 [0.400, 0.600]" and f"{e:.2f}" == "0.50" and not e.collapsed
    with pytest.raises(ConfigError, match="n_boot"):
        ExampleBootstrap(3, 3, square=True, n_boot=1)
    with pytest.raises(ConfigError, match="confidence"):
        ExampleBootstrap(3, 3, square=True, confidence=1.5)
    with pytest.raises(ConfigError, match="square"):
        ExampleBootstrap(3, 4, square=True)


def test_a_result_and_its_file_carry_the_intervals(tiny_classifier_dir, monli_dir, tmp_path):
    import interp

    lab = interp.IntervenableModel(str(tiny_classifier_dir), "monli", data_dir=str(monli_dir))
    examples = lab.task.examples(("pmonli", "nmonli_test"), per_split=10, seed=1)
    res = lab.interchange(examples, examples, "blocks.0.hook_resid_post@w_h", variables=("lexrel",))
    iia = res.iia("lexrel")
    assert isinstance(iia, Estimate) and iia.low <= iia <= iia.high and iia == res.summary("lexrel")["iia_causal"]
    frame = res.summary_frame()
    assert list(frame.pair_set) == ["causal", "all"] and {"iia_low", "gap_high", "interval"} <= set(frame.columns)
    assert frame.iia[0] == pytest.approx(float(iia)) and frame.iia_high[0] == iia.high
    path = res.save(tmp_path / "iv.h5")
    with h5py.File(path, "r") as handle:
        stored = json.loads(handle["lexrel/blocks.0.hook_resid_post@w_h"].attrs["summary"])
    assert stored == pytest.approx(res.summary("lexrel"))
    # Bases that are not the sources: resampled independently (Owen 2007).
    other = lab.interchange(examples[:8], examples[8:], "blocks.0.hook_resid_post@w_h", variables=("lexrel",))
    assert "drawn independently" in other.summary("lexrel")["interval"]


def test_a_split_at_chance_is_named_and_a_good_or_tiny_one_is_told_apart():
    """Accuracy per split with its Wilson interval against the majority label: at chance, too few to tell, or above."""
    from interp.analysis.chance import chance_messages, split_accuracies

    gold = np.array([0, 1] * 100 + [0, 1, 0] + [0, 1] * 100)
    splits = ["good"] * 200 + ["tiny"] * 3 + ["chance"] * 200
    pred = np.concatenate([gold[:200], gold[200:203], np.zeros(200, dtype=int)])  # right on good and tiny, always 0 on chance
    rows = split_accuracies(splits, gold, pred)
    assert [(r["split"], r["at_chance"]) for r in rows] == [("good", False), ("tiny", True), ("chance", True)]
    assert rows[0]["accuracy"] == 1.0 and rows[2]["majority"] == 0.5 and rows[2]["accuracy"].low < 0.5 < rows[2]["accuracy"].high
    messages = chance_messages(rows, "model 'm'")
    assert len(messages) == 2 and "not shown above chance on tiny" in messages[0] and "too few examples" in messages[0]
    assert messages[1].startswith("model 'm' is at chance on chance: accuracy 0.500") and "majority label's share 0.500" in messages[1]


def test_a_warning_on_a_sample_gives_the_whole_split_where_the_model_kept_it(tmp_path):
    """A sample at chance is warned of with the model's own whole-split accuracy beside it (its ``training.json``), read
    from the folder as given or beside the file; a record that is absent or spoiled adds nothing."""
    from interp.analysis.chance import chance_messages, split_accuracies, whole_split_accuracies

    model = tmp_path / "model"
    model.mkdir()
    (model / "training.json").write_text(json.dumps({"metrics": {"chance": {"accuracy": 0.53, "correct": 106, "n": 200}}}))
    rows = split_accuracies(["chance"] * 50, np.array([0, 1] * 25), np.zeros(50, dtype=int))
    whole = whole_split_accuracies(str(model), tmp_path)
    assert whole == whole_split_accuracies("elsewhere/model", tmp_path)  # a run folder moved with its model
    (message,) = chance_messages(rows, "model 'm'", whole)
    assert "(on the whole split, 200 examples: accuracy 0.530 [0.461, 0.598], from " in message and message.startswith("model 'm' is at chance")
    (model / "training.json").write_text("{not json")
    assert whole_split_accuracies(str(model), tmp_path) == {} == whole_split_accuracies(str(tmp_path / "absent"), tmp_path / "x")
    assert "whole split" not in chance_messages(rows, "model 'm'", {})[0]


def test_the_screen_agreement_in_one_sentence_says_when_it_is_not_shown():
    """Spearman's interval reaching 0 reads "not shown to agree"; no rank correlation reads "not judged"."""
    from interp.analysis.attribution import agreement_verdict
    from interp.core.estimates import Estimate

    wide = agreement_verdict({"spearman": Estimate(0.4, -0.2, 0.9), "missed": 2, "drawn": 5, "top": 5})
    assert wide.startswith("The screen's order is not shown to agree") and "its 95% interval reaches 0" in wide and "2 of the 5" in wide
    nan = float("nan")
    assert "is not judged" in agreement_verdict({"spearman": Estimate(nan, nan, nan), "missed": 0, "drawn": 0, "top": 3})


def test_the_printed_accuracy_gives_its_null_and_marks_a_split_not_above_it(monli_dir, tiny_classifier_dir):
    """`interp evaluate` / `interp train` print each split's majority label share beside the accuracy, and say where
    the accuracy's Wilson interval does not lie above it; a split well above it is not marked."""
    from interp.analysis.chance import accuracy_lines
    from interp.api.evaluation import score_checkpoint
    from interp.api.loading import load_task

    metrics = score_checkpoint(str(tiny_classifier_dir), load_task("monli", data_dir=str(monli_dir)), ("nmonli_test",))
    assert metrics["nmonli_test"]["majority"] == 0.5  # NMoNLI test is balanced: 100 of each label
    good = {"accuracy": 0.9, "correct": 180, "n": 200, "majority": 0.5}
    near = {"accuracy": 0.56, "correct": 112, "n": 200, "majority": 0.5}  # interval 49.1-62.7%: not above 50%
    older = {"accuracy": 0.56, "correct": 112, "n": 200}  # a metrics file written before the null was kept
    lines = accuracy_lines({"good": good, "near": near, "older": older})
    assert lines[0].endswith("; majority label 50.0%") and lines[1].endswith("; majority label 50.0%: not above chance")
    assert lines[2].endswith("95% Wilson interval 49.1-62.7%)")


def test_a_table_that_shows_a_point_interval_says_what_it_means():
    """Where every replicate agrees (a model that copies the source everywhere: copies = 1.000 on every resample) the
    intervene summary says what a point interval does and does not tell; with no point interval shown, no such line."""
    from interp.analysis.iia import format_summaries, summarize_matrices

    rng = np.random.default_rng(0)
    n = 12
    values = np.array([0, 1] * (n // 2))
    labels = rng.integers(0, 2, n)
    copies = np.broadcast_to(labels[None, :], (n, n)).astype(np.int8)  # the intervened label is always the source's own
    causal = np.where(values[:, None] != values[None, :], 1 - labels[:, None], labels[:, None]).astype(np.int8)
    point = summarize_matrices("blocks.0.hook_resid_post@w_h", "v", copies, causal, values, labels, labels, n_boot=200)
    assert point["copies_source_low"] == point["copies_source_high"] == 1.0
    noisy = rng.integers(0, 2, (n, n)).astype(np.int8)  # neither null is exact on every resample
    spread = summarize_matrices("blocks.0.hook_resid_post@w_h", "v", noisy, causal, values, labels, rng.integers(0, 2, n), n_boot=200)
    assert all(spread[f"{f}_low"] < spread[f"{f}_high"] for f in ("iia", "stays_base", "copies_source", "gap", "iia_causal", "gap_causal"))
    assert "[x, x]: a point interval" in format_summaries([point]).splitlines()[-1]
    assert "point interval" not in format_summaries([spread])


def test_the_majority_share_counts_gold_labels_as_scored(fragments_dir, tiny_classifier_dir):
    """A two-label MoNLI model on a three-label fragment is scored with gold contradiction read as neutral, so the null
    it must beat is the share of the larger of entailment and neutral + contradiction, not of the raw labels."""
    from collections import Counter

    from interp.api.evaluation import score_checkpoint
    from interp.api.loading import load_task

    task = load_task("fragment:negation", data_dir=str(fragments_dir))
    examples = task.examples(("test",), n=300, seed=0)
    metrics = score_checkpoint(str(tiny_classifier_dir), task, ("test",), fold_labels=True, max_examples=300, seed=0)
    raw = Counter(e.label for e in examples)
    folded = max(raw["entailment"], raw["neutral"] + raw["contradiction"]) / len(examples)
    assert metrics["test"]["n"] == 300 and metrics["test"]["majority"] == pytest.approx(folded)
    assert folded > max(raw.values()) / len(examples)  # the null: the raw labels' majority would be lower


def _clustered_grid(seed: int, square: bool, n_groups: int = 25, per: int = 3, sd: float = 1.5):
    """Examples in groups of ``per`` that share their traits (a base effect and a source effect per group, as MoNLI's
    examples that share a word pair would): the population IIA over new groups is 0.5 by symmetry."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_groups), per)
    source_groups = groups if square else np.repeat(np.arange(n_groups), per)
    a, b = rng.normal(0, sd, n_groups)[groups], rng.normal(0, sd, n_groups)[source_groups]
    hits = rng.random((len(groups), len(source_groups))) < 1 / (1 + np.exp(-(a[:, None] + b[None, :])))
    return hits, groups, source_groups


@pytest.mark.parametrize("square", [True, False])
def test_the_group_bootstrap_covers_new_groups_where_the_example_bootstrap_does_not(square):
    """Coverage at nominal 95% of the population IIA (0.5) over 300 simulated grids of 25 groups of 3 examples: resampling
    groups covers it near nominal; resampling examples, which treats the 75 examples as independent, falls far short."""
    covered = {"example": 0, "group": 0}
    for seed in range(300):
        hits, groups, source_groups = _clustered_grid(seed, square)
        mask = np.ones(hits.shape, dtype=bool)
        for unit, grouped in (("example", {}), ("group", {"base_groups": groups, "source_groups": source_groups})):
            est = ExampleBootstrap(*hits.shape, square=square, n_boot=300, seed=seed, unit="word pairs", **grouped).estimate(hits, mask)
            covered[unit] += est.low <= 0.5 <= est.high
    group, example = covered["group"] / 300, covered["example"] / 300
    assert group >= 0.88 and example <= group - 0.1, covered


def test_a_grouped_interval_says_what_it_is_over_and_weights_each_example_by_its_group():
    groups = np.array(["a", "a", "b", "c"])
    boot = ExampleBootstrap(4, 4, square=True, n_boot=50, seed=0, base_groups=groups, unit="word pairs")
    assert boot.over == "3 word pairs" and "over 3 word pairs" in boot.method
    assert np.array_equal(boot.base_weights[:, 0], boot.base_weights[:, 1])  # drawn together
    assert np.allclose(boot.base_weights[:, [0, 2, 3]].sum(axis=1), 3)  # three groups drawn, each example its group's count
    with pytest.raises(ConfigError, match="base_groups"):
        ExampleBootstrap(5, 5, square=True, base_groups=groups)
    with pytest.raises(ConfigError, match="together"):
        ExampleBootstrap(4, 3, square=False, base_groups=groups)


def test_an_interval_over_few_groups_says_it_under_covers():
    """Under 30 groups the grouped percentile interval covers about 0.91-0.93 (benchmarks/group_coverage.py): the method
    line every interval carries says so; with 30 groups or more, or over examples, nothing is added."""
    import numpy as np

    from interp.analysis.bootstrap import FEW_GROUPS, ExampleBootstrap

    few = ExampleBootstrap(40, 40, square=True, n_boot=50, base_groups=np.arange(40) // 2, unit="word pairs")  # 20 groups
    assert few.over == "20 word pairs" and few.few_groups and "few groups: under 30 this 95% interval covers about 91-93%" in few.method
    assert few.estimate(np.eye(40, dtype=bool), np.ones((40, 40), dtype=bool)).method == few.method  # carried by every interval
    enough = ExampleBootstrap(40, 40, square=True, n_boot=50, base_groups=np.arange(40) % FEW_GROUPS, unit="word pairs")
    assert enough.over == "30 word pairs" and "few groups" not in enough.method
    assert "few groups" not in ExampleBootstrap(12, 12, square=True, n_boot=50).method


def test_a_one_column_grid_is_resampled_over_its_examples_alone():
    """Scores of the examples alone (an ablation, a steering: one dummy source) say one axis, count only the bases'
    groups, and note few groups only where the bases have few; a two-axis grid still names both."""
    from interp.analysis.bootstrap import FEW_GROUPS_NOTE, ExampleBootstrap

    def one(groups):
        return ExampleBootstrap(len(groups), 1, square=False, base_groups=np.asarray(groups), source_groups=np.zeros(1), unit="word pairs")

    many, few = one(np.arange(80) // 2), one(np.arange(20) // 2)
    assert many.one_axis and many.over == "40 word pairs" and "one axis" in many.method and FEW_GROUPS_NOTE not in many.method
    assert few.over == "10 word pairs" and few.method.endswith(FEW_GROUPS_NOTE)
    two = ExampleBootstrap(80, 60, square=False, base_groups=np.arange(80) // 2, source_groups=np.arange(60) // 2, unit="word pairs")
    assert not two.one_axis and two.over == "40 × 30 word pairs (bases × sources)" and "drawn independently" in two.method
    assert ExampleBootstrap(5, 1, square=False).over == "5 examples"
