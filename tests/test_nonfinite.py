"""A model with a NaN or an infinity in its weights, or whose activations overflow, is refused where it first shows
(its load, or its first forward pass), naming the tensor; before, its all-NaN logits read as the first label and gave
believable accuracies ("75%"), interventions files of NaN logits and a screen of IIA 0.500, each with exit 0."""

from __future__ import annotations

import shutil

import pytest
import torch
from click.testing import CliRunner

import interp
from interp.cli import main
from interp.core.errors import ModelError


def _spoiled(source, folder, value):
    from safetensors.torch import load_file, save_file

    shutil.copytree(source, folder)
    weights = load_file(str(folder / "model.safetensors"))
    name = "bert.encoder.layer.1.output.dense.weight"
    weights[name][0, 0] = value
    save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})
    return folder


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_a_non_finite_weight_is_refused_by_every_command_naming_it(value, tiny_classifier_dir, monli_dir, tmp_path):
    model = _spoiled(tiny_classifier_dir, tmp_path / "model", value)
    for args in (["evaluate", "--splits", "nmonli_test"],
                 ["intervene", "--max-examples", "8", "--locations", "blocks.0.hook_resid_post@w_h", "--out", str(tmp_path / "iv.h5"), "--quiet"],
                 ["screen", "--max-per-split", "4", "--locations", "blocks.0.hook_resid_post@w_h", "--variable", "lexrel", "--confirm", "0",
                  "--out", str(tmp_path / "screen"), "--quiet"]):  # fmt: skip
        result = CliRunner().invoke(main, [*args, "--model", str(model), "--data-dir", str(monli_dir)])
        assert result.exit_code == 2, (args[0], result.output)
        assert "bert.encoder.layer.1.output.dense.weight holds 1 non-finite value" in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]  # nothing written


def test_an_in_memory_model_with_a_non_finite_weight_is_refused(tiny_classifier_dir):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    module = AutoModelForSequenceClassification.from_pretrained(tiny_classifier_dir)
    with torch.no_grad():
        module.classifier.weight[1, 3] = float("nan")
    with pytest.raises(ModelError, match="classifier.weight holds 1 non-finite value"):
        interp.load_model(module, AutoTokenizer.from_pretrained(tiny_classifier_dir))


def test_activations_that_overflow_are_refused_at_the_first_forward_pass(tiny_classifier_dir, monli_dir):
    """Finite weights whose product overflows float32: the outputs are NaN, found when the model's own logits are read."""
    model = interp.load_model(str(tiny_classifier_dir))
    with torch.no_grad():
        model.module.bert.encoder.layer[0].output.dense.weight.mul_(1e37)
    lab = interp.IntervenableModel(model, interp.load_task("monli", data_dir=str(monli_dir)))
    examples = lab.task.examples(("nmonli_test",), per_split=6, seed=0)
    with pytest.raises(ModelError, match="outputs are NaN or infinite on 6 of 6 examples"):
        lab.evaluate(examples)
