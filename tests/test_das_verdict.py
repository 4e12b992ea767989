"""DAS judged like every IIA: its gain over the untrained intervention, its gap over the larger null and its margin over
chance must each have an interval above zero, and the verdict names every one it misses."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from interp.analysis import das as das_analysis
from interp.analysis.bootstrap import Estimate
from interp.analysis.das import difference, score_intervention
from interp.analysis.das_figure import format_das, summarize_seeds
from interp.analysis.das_verdict import row_figures, shortfalls, verdict
from interp.api.das_result import DasResult
from interp.engine.interventions import RotatedSubspace
from interp.hooks.locations import Location


def _pairs(n_examples: int = 60, n_pairs: int = 600, seed: int = 0):
    rng = np.random.default_rng(seed)
    bases, sources = rng.integers(0, n_examples, n_pairs), rng.integers(0, n_examples, n_pairs)
    own = rng.integers(0, 2, n_examples)
    return rng, torch.from_numpy(bases), torch.from_numpy(sources), own


def _scored(monkeypatch, predictions: np.ndarray, bases, sources, targets, own) -> dict:
    monkeypatch.setattr(das_analysis, "predict_pairs", lambda *args, **kwargs: predictions)
    return score_intervention(None, RotatedSubspace(4, 2, seed=0), bases, sources, torch.from_numpy(targets), own, n_boot=400)


def test_a_das_that_mostly_keeps_the_base_label_is_below_its_stays_null(monkeypatch):
    """The issue's case in miniature: the intervened label is the base's own on 80% of the pairs, the counterfactual on
    60%: an IIA well above an untrained one can still sit below the stays-the-base null."""
    rng, bases, sources, own = _pairs()
    own_b = own[bases.numpy()]
    targets = np.where(rng.random(len(bases)) < 0.6, own_b, 1 - own_b)
    predictions = np.where(rng.random(len(bases)) < 0.8, own_b, 1 - own_b)
    trained = _scored(monkeypatch, predictions, bases, sources, targets, own)
    untrained = _scored(monkeypatch, 1 - targets, bases, sources, targets, own)  # a baseline it clears by far
    assert trained["gap"] == pytest.approx(trained["iia"] - max(trained["stays_base"], trained["copies_source"]))
    assert trained["over_chance"] == pytest.approx(trained["iia"] - trained["chance"])
    for name in ("gap", "over_chance"):
        assert trained[f"{name}_low"] <= trained[name] <= trained[f"{name}_high"]
    assert trained["gap_high"] < 0 and trained["stays_base"] > 0.7  # below the null, and its interval says so
    gain = difference(trained, untrained, bases, sources)
    assert gain.low > 0.2  # what DAS used to call learned
    figures = {**trained, "gain_low": gain.low}
    said = verdict(figures)
    assert said.startswith("not learned") and f"below the stays-the-base null ({trained['stays_base']:.3f})" in said
    assert "no gain" not in said


def test_a_das_that_gives_the_counterfactual_clears_all_three(monkeypatch):
    """The other side: predictions that are the counterfactual on 95% of pairs, whose nulls sit near a half."""
    rng, bases, sources, own = _pairs(seed=1)
    targets = rng.integers(0, 2, len(bases))
    predictions = np.where(rng.random(len(bases)) < 0.95, targets, 1 - targets)
    trained = _scored(monkeypatch, predictions, bases, sources, targets, own)
    untrained = _scored(monkeypatch, rng.integers(0, 2, len(bases)), bases, sources, targets, own)
    gain = difference(trained, untrained, bases, sources)
    assert verdict({**trained, "gain_low": gain.low}) == "learned" and shortfalls({**trained, "gain_low": gain.low}) == []


def test_chance_is_judged_over_the_same_replicates(monkeypatch):
    """Always answering the majority counterfactual: IIA equals chance, so the margin's interval holds 0 and the verdict
    names chance (the stays null is met too where own labels are that label)."""
    rng, bases, sources, own = _pairs(seed=2)
    targets = (rng.random(len(bases)) < 0.7).astype(int)
    trained = _scored(monkeypatch, np.ones(len(bases), dtype=int), bases, sources, targets, own)
    assert trained["over_chance"] == pytest.approx(0.0) and trained["over_chance_low"] <= 0 <= trained["over_chance_high"]
    assert f"not above chance ({trained['chance']:.3f})" in verdict({**trained, "gain_low": 0.1})


def _result(gain_low: float, gap: float, gap_low: float, stays: float, copies: float, over_low: float, chance: float) -> DasResult:
    e = lambda value, low: Estimate(value, low, value + 0.05, "test")  # noqa: E731
    return DasResult(intervention=RotatedSubspace(4, 2, seed=0), variable="lexrel", location=Location.parse("blocks.0.hook_resid_post@w_h"),
                     iia=e(0.65, 0.5), untrained_iia=e(0.49, 0.4), gain=e(0.16, gain_low), stays_base=e(stays, stays - 0.1),
                     copies_source=e(copies, copies - 0.1), chance=chance, history=[{}], train_pairs=10, held_out_pairs=[],
                     gap=e(gap, gap_low), over_chance=e(0.065, over_low))  # fmt: skip


def test_das_result_learned_needs_all_three_and_its_frame_says_why():
    quantifier = _result(gain_low=0.063, gap=-0.145, gap_low=-0.3, stays=0.795, copies=0.4, over_low=-0.08, chance=0.585)
    assert not quantifier.learned
    assert quantifier.verdict == "not learned: below the stays-the-base null (0.795), not above chance (0.585)"
    assert quantifier.to_frame()["verdict"].item() == quantifier.verdict and "below the stays-the-base" in repr(quantifier)
    copies = _result(gain_low=0.063, gap=0.01, gap_low=-0.02, stays=0.3, copies=0.64, over_low=0.01, chance=0.5)
    assert copies.verdict == "not learned: not above the copies-the-source null (0.640)"
    assert _result(gain_low=0.01, gap=0.1, gap_low=0.02, stays=0.3, copies=0.5, over_low=0.01, chance=0.5).learned


def _row(seed: int, gain_low: float, gap: float, gap_low: float) -> dict:
    row = {"variable": "lexrel", "location": "blocks.0.hook_resid_post@w_h", "size": "16", "k": 16, "seed": seed, "chance": 0.585,
           "das_stays_base": 0.795, "das_copies_source": 0.4, "das_gain": 0.16, "das_gain_low": gain_low, "das_gain_high": 0.28,
           "das_gap": gap, "das_gap_low": gap_low, "das_gap_high": gap + 0.1, "das_over_chance": 0.065, "das_over_chance_low": -0.08,
           "das_over_chance_high": 0.2, "history": "[]"}  # fmt: skip
    for method in ("das", "untrained", "vanilla", "block"):
        row.update({f"{method}_iia": 0.65, f"{method}_iia_low": 0.5, f"{method}_iia_high": 0.78})
    return row


def test_the_command_prints_the_verdict_beside_both_nulls():
    """``interp das``'s table for one seed and for three: the stays null named, both nulls and chance in columns."""
    one = format_das([_row(0, 0.063, -0.145, -0.3)])
    assert "below the stays-the-base null (0.795)" in one and "0.795  0.400  0.585" in one
    several = summarize_seeds([_row(s, 0.06, g, g - 0.1) for s, g in zip(range(3), (-0.14, -0.15, -0.13))])
    assert len(several) == 1 and several[0]["gap_high"] < 0 and "stays-the-base" in several[0]["verdict"]
    older = {k: v for k, v in _row(0, 0.063, 0.1, 0.05).items() if not k.startswith(("das_gap", "das_over"))}
    assert verdict(row_figures(older)).startswith("not judged")  # a row of an older run has no nulls: never "learned"


def test_a_figure_without_its_nulls_is_not_judged_never_learned():
    """An older das.csv row, or a result scored before the nulls were: a gain above zero and nothing else given reads
    "not judged", naming what is missing (it read "learned" before); a shortfall among what is given still reads "not learned"."""
    from interp.analysis.das_figure import summarize_seeds
    from interp.analysis.das_verdict import row_figures, verdict

    gain_only = {"gain": 0.2, "gain_low": 0.1, "stays_base": 0.5, "copies_source": 0.4, "chance": 0.5}
    assert verdict(gain_only) == "not judged: no interval for its gap over the larger null, its difference from chance"
    assert verdict({**gain_only, "gain_low": -0.1}) == "not learned: no gain over the untrained intervention"
    old = {k: v for k, v in _row(0, 0.05, 0.1, 0.02).items() if not k.startswith(("das_gap", "das_over_chance"))}
    assert verdict(row_figures(old)).startswith("not judged: no interval for its gap over the larger null")
    assert summarize_seeds([old])[0]["verdict"].startswith("not judged")
    import dataclasses

    result = dataclasses.replace(_result(gain_low=0.063, gap=0.1, gap_low=0.02, stays=0.3, copies=0.5, over_low=0.01, chance=0.5),
                                 gap=None, over_chance=None)
    assert not result.learned and result.verdict.startswith("not judged")
