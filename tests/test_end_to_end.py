"""End to end with the embedded pretrained model on real MoNLI: train briefly, save, reload, score.

A short PMoNLI-only fine-tuning is the challenge-set experiment in miniature
(Geiger, Richardson & Potts 2020, §5.1): the model learns lexical entailment
on positive examples and applies it unchanged under negation, so it scores
well above chance on the PMoNLI examples it did not train on and below
chance on NMoNLI test.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from interp.cli import main

pytestmark = pytest.mark.slow(seconds=60)


@pytest.fixture(scope="module")
def trained(finetuned_minilm):
    return finetuned_minilm


def test_short_pmonli_training_shows_the_challenge_set_effect(trained):
    out, stdout = trained
    info = json.loads((out / "training.json").read_text())
    assert info["n_train"] == 384 and [e["epoch"] for e in info["epochs"]] == [1, 2, 3]
    assert info["epochs"][-1]["loss"] < info["epochs"][0]["loss"]
    pmonli, nmonli = info["metrics"]["pmonli_heldout"]["accuracy"], info["metrics"]["nmonli_test"]["accuracy"]
    assert pmonli >= 0.58, "fine-tuning on PMoNLI did not teach lexical entailment (PMoNLI examples held out of training)"
    assert nmonli <= 0.45, "a PMoNLI-only model should fail systematically under negation"
    assert f"nmonli_test    accuracy {100 * nmonli:5.1f}%" in stdout


def test_saved_checkpoint_scores_the_same_through_evaluate(trained, monli_dir):
    out, _ = trained
    info = json.loads((out / "training.json").read_text())
    args = ["evaluate", "--model", str(out), "--splits", "nmonli_test", "--data-dir", str(monli_dir), "--json"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["nmonli_test"] == info["metrics"]["nmonli_test"]


def test_interventions_and_cliques_on_real_monli(trained, monli_dir, tmp_path):
    """`interp intervene` then `interp cliques` with the fine-tuned embedded model on 40 real PMoNLI examples."""
    import h5py
    import numpy as np

    out, _ = trained
    iv = tmp_path / "iv.h5"
    args = [
        "intervene", "--model", str(out), "--out", str(iv), "--splits", "pmonli", "--max-examples", "40",
        "--locations", "blocks.2.hook_resid_post@w_h", "--data-dir", str(monli_dir), "--quiet",
    ]  # fmt: skip
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    with h5py.File(iv, "r") as f:
        group = f["lexrel/blocks.2.hook_resid_post@w_h"]
        model_pred, causal_pred = group["model_pred"][:], group["causal_pred"][:]
        base_pred, label, lexrel = f["base_pred"][:], f["label"][:], f["values/lexrel"][:]
    # A self-interchange changes nothing; PMoNLI's counterfactual label is the source's label.
    np.testing.assert_array_equal(np.diagonal(model_pred), base_pred)
    np.testing.assert_array_equal(causal_pred, np.broadcast_to(label[None, :], (40, 40)))
    assert (base_pred == label).mean() >= 0.58
    result = CliRunner().invoke(main, ["cliques", "--interventions", str(iv), "--out", str(tmp_path), "--model", str(out)])
    assert result.exit_code == 0, result.stderr
    report = json.loads((tmp_path / "cliques.json").read_text())
    assert report["graph"]["nodes_model_correct"] == int((base_pred == label).sum())
    correct = {i for i, ok in enumerate(base_pred == label) if ok}
    with h5py.File(iv, "r") as f:
        ids = list(f["example_ids"].asstr()[:])
    for clique in report["cliques"]:
        members = {ids.index(i) for i in clique["example_ids"]}
        assert members <= correct, "an example the model gets wrong is in a clique"
        assert clique["value_counts"]["⊏"] > 0 and clique["value_counts"]["⊐"] > 0  # a causal edge joins ⊏ and ⊐
        assert {int(lexrel[m]) for m in members} == {0, 1}


def test_a_model_at_chance_on_one_split_is_named_by_intervene_das_and_the_report(trained, monli_dir, tmp_path):
    """The PMoNLI-only model fails under negation: intervene, das and the report page name NMoNLI test and its accuracy."""
    from interp.analysis.report.collect import collect_run

    out, _ = trained
    common = ["--model", str(out), "--splits", "pmonli,nmonli_test", "--max-per-split", "24", "--data-dir", str(monli_dir), "--quiet"]
    run = tmp_path / "run"
    result = CliRunner().invoke(main, ["intervene", *common, "--locations", "blocks.2.hook_resid_post@w_h", "--out", str(run / "iv.h5")])
    assert result.exit_code == 0, result.stderr
    warned = [line for line in result.stderr.splitlines() if line.startswith("interp: warning:")]
    assert any("at chance on nmonli_test: accuracy" in line and "majority label's share" in line for line in warned), result.stderr
    result = CliRunner().invoke(main, ["das", *common, "--locations", "blocks.2.hook_resid_post@w_h", "--subspace", "4", "--train-pairs", "32",
                                       "--test-pairs", "16", "--epochs", "1", "--out", str(run / "das")])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "at chance on nmonli_test" in result.stderr
    result = CliRunner().invoke(main, ["cliques", "--interventions", str(run / "iv.h5"), "--out", str(run / "cliques")])
    assert result.exit_code == 0, result.stderr
    assert "iv.h5: model" in result.stderr and "at chance on nmonli_test" in result.stderr
    warnings = collect_run(run)["warnings"]
    assert len(warnings) >= 1 and all("iv.h5" in w for w in warnings) and any("nmonli_test" in w for w in warnings)
