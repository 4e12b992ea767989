"""Probes, control tasks and the sweep: sklearn's contract, a naive reference, and selectivity's meaning."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.utils.estimator_checks import parametrize_with_checks

from interp.analysis.probes import Probe, ShuffleControl, TypeControl
from interp.analysis.probes.batched import ProbeSettings, fit_probes, predict_probes
from interp.analysis.probes.summary import format_probe_summary
from interp.hooks.locations import Location
from interp.jobs.probe_sweep import ProbeSweepConfig, sweep_location


@parametrize_with_checks([Probe(max_iter=40, random_state=0), Probe(hidden_units=0, max_iter=40, random_state=0)])
def test_sklearn_estimator_contract(estimator, check):
    check(estimator)


def test_batched_training_equals_one_probe_at_a_time():
    """The fast path (all probes in one model, grouped by fold) against a naive loop of single fits."""
    g = torch.Generator().manual_seed(0)
    X = torch.randn(120, 16, generator=g)
    Y = torch.randint(0, 2, (6, 120), generator=g)
    masks = torch.zeros(6, 120, dtype=torch.bool)
    masks[:3, :80] = True
    masks[3:, 40:] = True
    seeds = [11, 12, 13, 14, 15, 16]
    for hidden in (4, 0):
        settings = ProbeSettings(hidden_units=hidden, max_iter=60)
        together = predict_probes(X, fit_probes(X, Y, masks, 2, settings, seeds))
        for p in range(6):
            alone = predict_probes(X, fit_probes(X, Y[p : p + 1], masks[p : p + 1], 2, settings, [seeds[p]]))
            torch.testing.assert_close(together[p], alone[0], atol=1e-4, rtol=1e-4)


def test_mlp_probe_learns_what_a_linear_probe_cannot():
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(400, 2)).astype(np.float32)
    y = (X[:, 0] * X[:, 1] > 0).astype(int)  # XOR of signs
    assert Probe(hidden_units=4, max_iter=500, random_state=0).fit(X, y).score(X, y) > 0.9
    assert Probe(hidden_units=0, max_iter=500, random_state=0).fit(X, y).score(X, y) < 0.7


def test_type_control_is_a_fixed_function_of_the_type():
    types = np.array([f"w{i % 50}" for i in range(1000)])
    y = np.array([0] * 750 + [1] * 250)
    control = TypeControl(random_state=3).fit(types, y)
    labels = control.transform(types)
    by_type = {}
    for t, label in zip(types, labels):
        assert by_type.setdefault(t, label) == label
    assert np.array_equal(control.transform(types[::-1]), labels[::-1])  # order does not matter
    many = TypeControl(random_state=3).fit(types, y).transform([f"t{i}" for i in range(4000)])
    assert abs((many == 0).mean() - 0.75) < 0.03  # drawn with the target's distribution
    assert not np.array_equal(TypeControl(random_state=4).fit(types, y).transform(types), labels)


def test_shuffle_control_permutes_the_labels():
    ids = np.array([f"e{i}" for i in range(200)])
    y = np.array([0] * 60 + [1] * 140)
    shuffled = ShuffleControl(random_state=1).fit_transform(ids, y)
    assert sorted(shuffled) == sorted(y) and not np.array_equal(shuffled, y)
    with pytest.raises(KeyError):
        ShuffleControl(random_state=1).fit(ids, y).transform(["unseen"])


def test_selectivity_against_the_type_control_exposes_word_identity():
    """The issue's case: a vector that is just the word's identity 'predicts' lexrel perfectly, but so
    does it predict a random function of the word, so type selectivity is ~0 while shuffle selectivity is ~0.5."""
    rng = np.random.RandomState(0)
    n_types, n = 40, 800
    word = rng.randint(0, n_types, size=n)
    X = np.eye(n_types, dtype=np.float32)[word] + 0.01 * rng.randn(n, n_types).astype(np.float32)
    lexrel = (np.arange(n_types) % 2)[word]
    words = np.array([f"w{k}" for k in word])
    config = ProbeSweepConfig(cache="", out="", probes=("linear",), seeds=2, folds=4, max_iter=200)
    (row,) = sweep_location(X, Location(3, "w_h"), {"lexrel": lexrel}, np.array([f"e{i}" for i in range(n)]), {"w_p": words, "w_h": words}, config)
    assert row["task_acc_mean"] > 0.97
    assert row["type_control_acc_mean"] > 0.9 and abs(row["selectivity_type_mean"]) < 0.1
    assert abs(row["shuffle_control_acc_mean"] - 0.5) < 0.1 and row["selectivity_shuffle_mean"] > 0.35
    # Intervals over the 800 examples: around each figure (the per-example mean equals the fold mean up to fold sizes), and
    # the shuffle selectivity's excludes zero where the type selectivity's, near zero, holds it.
    for figure in ("task_acc", "selectivity_type", "selectivity_shuffle"):
        assert row[f"{figure}_low"] - 0.01 <= row[f"{figure}_mean"] <= row[f"{figure}_high"] + 0.01, figure
    assert row["selectivity_shuffle_low"] > 0.3 and row["selectivity_type_low"] < 0.05
    assert 0.01 < row["selectivity_shuffle_high"] - row["selectivity_shuffle_low"] < 0.2


@pytest.mark.parametrize("control", [TypeControl, ShuffleControl])
def test_controls_refuse_mismatched_or_empty_input(control):
    with pytest.raises(ValueError, match="non-empty and of equal length, got 2 and 3"):
        control().fit(["a", "b"], [0, 1, 0])
    with pytest.raises(ValueError, match="got 0 and 0"):
        control().fit([], [])


def _row(layer: int, sel_type: float, probe: str = "mlp", site: str = "resid", role: str = "w_h", intervals: bool = True) -> dict:
    row = {"target": "lexrel", "role": role, "site": site, "probe": probe, "hidden_index": layer, "chance": 0.5, "seeds": 3,
           "n_examples": 400, "task_acc_mean": 0.9 + layer / 100, "selectivity_type_mean": sel_type, "selectivity_shuffle_mean": 0.4}
    if intervals:
        row.update(task_acc_low=0.85 + layer / 100, task_acc_high=0.95 + layer / 100, selectivity_type_low=sel_type - 0.05,
                   selectivity_type_high=sel_type + 0.05, selectivity_shuffle_low=0.35, selectivity_shuffle_high=0.45)
    return row


def test_the_probe_summary_shows_the_most_selective_layer_with_its_intervals_and_nulls():
    rows = [_row(1, 0.10), _row(3, 0.30), _row(5, 0.20), _row(2, 0.90, probe="linear")]
    text = format_probe_summary(rows, "mlp")
    (line,) = [t for t in text.splitlines() if t.startswith("lexrel")]
    assert line.split()[:3] == ["lexrel", "w_h", "3"]  # the layer with the largest type selectivity, not the last or the most accurate
    assert "0.930 [0.880, 0.980]" in line and "0.500" in line and "0.300 [0.250, 0.350]" in line and "0.400 [0.350, 0.450]" in line
    assert "95% bootstrap over the 400 examples" in text and "3 probe seeds" in text and "upper estimate" in text
    assert "0.920 [0.870, 0.970]" in format_probe_summary(rows, "linear") and format_probe_summary(rows, "nope") == ""
    old = format_probe_summary([_row(3, 0.30, intervals=False)])  # a sweep written before intervals were kept: means alone
    assert "0.930" in old and "[" not in [t for t in old.splitlines() if t.startswith("lexrel")][0]
    sites = format_probe_summary([_row(3, 0.30), _row(2, 0.20, site="hook_mlp_out")])
    assert "site" in sites and len([t for t in sites.splitlines() if t.startswith("lexrel")]) == 2  # one line per site


def test_the_probe_figure_draws_each_interval_over_examples_as_its_error_bar(monkeypatch, tmp_path):
    """Asymmetric intervals become the bars (not the std over seeds); a row written before intervals were kept gets ± std."""
    import matplotlib.container

    import interp.analysis.probes.figure as figure

    drawn = {}
    monkeypatch.setattr(figure, "save_figure_atomic", lambda fig, path, **_: drawn.setdefault("fig", fig))
    base = {"target": "lexrel", "role": "w_h", "probe": "mlp", "chance": 0.5}
    rows = [{**base, "hidden_index": layer, "task_acc_mean": mean, "task_acc_std": 0.01, "task_acc_low": mean - 0.02 * (layer + 1),
             "task_acc_high": mean + 0.01, **{f"selectivity_{c}_{s}": v for c in ("type", "shuffle") for s, v in
                                              (("mean", 0.2), ("std", 0.03), ("low", 0.1), ("high", 0.25))}}
            for layer, mean in ((0, 0.6), (1, 0.9))]  # fmt: skip
    old = {**rows[1], "hidden_index": 2}
    for key in [k for k in old if k.endswith(("_low", "_high"))]:
        del old[key]
    figure.plot_probes([*rows, old], tmp_path / "probes.png")
    (ax, *_) = drawn["fig"].axes
    bars = {c.get_label(): c for c in ax.containers if isinstance(c, matplotlib.container.ErrorbarContainer)}
    segments = bars["mlp: accuracy"].lines[2][0].get_segments()
    got = [(float(s[0][0]), round(float(s[0][1]), 6), round(float(s[1][1]), 6)) for s in segments]
    assert got == [(0.0, 0.58, 0.61), (1.0, 0.86, 0.91), (2.0, 0.89, 0.91)]  # the intervals, then 0.9 ± std 0.01
    selectivity = bars["mlp: selectivity vs type control"].lines[2][0].get_segments()
    assert [(round(float(s[0][1]), 6), round(float(s[1][1]), 6)) for s in selectivity] == [(0.1, 0.25), (0.1, 0.25), (0.17, 0.23)]
