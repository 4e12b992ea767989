"""End to end with the embedded pretrained model on real MoNLI: train briefly, save, reload, score.

A short PMoNLI-only fine-tuning is the challenge-set experiment in miniature
(Geiger, Richardson & Potts 2020, §5.1): the model learns lexical entailment
on positive examples and applies it unchanged under negation, so it scores
well above chance on PMoNLI and below chance on NMoNLI test.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from interp.cli import main

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def trained(finetuned_minilm):
    return finetuned_minilm


def test_short_pmonli_training_shows_the_challenge_set_effect(trained):
    out, stdout = trained
    info = json.loads((out / "training.json").read_text())
    assert info["n_train"] == 384 and [e["epoch"] for e in info["epochs"]] == [1, 2, 3]
    assert info["epochs"][-1]["loss"] < info["epochs"][0]["loss"]
    pmonli, nmonli = info["metrics"]["pmonli"]["accuracy"], info["metrics"]["nmonli_test"]["accuracy"]
    assert pmonli >= 0.58, "fine-tuning on PMoNLI did not teach lexical entailment"
    assert nmonli <= 0.45, "a PMoNLI-only model should fail systematically under negation"
    assert f"nmonli_test    accuracy {100 * nmonli:5.1f}%" in stdout


def test_saved_checkpoint_scores_the_same_through_evaluate(trained, monli_dir):
    out, _ = trained
    info = json.loads((out / "training.json").read_text())
    args = ["evaluate", "--model", str(out), "--splits", "nmonli_test", "--data-dir", str(monli_dir), "--json"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["nmonli_test"] == info["metrics"]["nmonli_test"]
