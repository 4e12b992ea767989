"""Resolving model names: the embedded model, local checkpoints, hub names, and what is refused."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from interp.core.errors import ModelError
from interp.models import embedded_model_dir, load_classifier, resolve_model
from interp.models.loading import checkpoint_labels
from interp.tasks import resolve_task
from interp.tasks.monli import LABELS


def test_minilm_resolves_to_site_packages():
    source = resolve_model("minilm")
    assert source.local and (embedded_model_dir() / "model.safetensors").is_file()
    assert "site-packages" in source.location


def test_embedded_model_loads_offline_as_new_classifier():
    model, tokenizer = load_classifier("minilm", labels=LABELS, seed=0)
    assert model.config.model_type == "bert" and model.config.num_hidden_layers == 6
    assert model.config.hidden_size == 384 and model.config.id2label == {0: "entailment", 1: "neutral"}
    assert tokenizer.is_fast and tokenizer("Man")["input_ids"][1] == tokenizer.convert_tokens_to_ids("man")


def test_new_head_is_seeded(tiny_encoder_dir):
    a, _ = load_classifier(str(tiny_encoder_dir), labels=LABELS, seed=3)
    b, _ = load_classifier(str(tiny_encoder_dir), labels=LABELS, seed=3)
    c, _ = load_classifier(str(tiny_encoder_dir), labels=LABELS, seed=4)
    assert torch.equal(a.classifier.weight, b.classifier.weight)
    assert not torch.equal(a.classifier.weight, c.classifier.weight)


def test_encoder_without_head_is_not_a_classifier(tiny_encoder_dir):
    with pytest.raises(ModelError, match="without a trained sequence-classification head"):
        load_classifier(str(tiny_encoder_dir), require_head=True)


def test_a_trained_head_keeps_its_labels_and_a_task_reads_them(tiny_classifier_dir):
    # ``labels=`` names a *new* head; a trained head keeps its own, and the task reads them by name.
    model, _ = load_classifier(str(tiny_classifier_dir), labels=("entailment", "neutral", "contradiction"))
    assert model.config.num_labels == 2
    assert resolve_task("monli").read_labels(checkpoint_labels(model.config)).identity
    with pytest.raises(ModelError, match="'yes'.*label_map="):
        resolve_task("monli").read_labels(("yes", "no"))


def test_classifier_checkpoint_loads_its_head(tiny_classifier_dir):
    model, _ = load_classifier(str(tiny_classifier_dir), require_head=True)
    assert model.config.num_labels == 2 and not model.training


def test_path_that_does_not_exist():
    with pytest.raises(ModelError, match="model directory './no/such/model' does not exist"):
        resolve_model("./no/such/model")


def test_a_file_is_not_a_model(tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"x")
    with pytest.raises(ModelError, match="is a file"):
        resolve_model(str(tmp_path / "weights.bin"))


def test_directory_without_config(tmp_path):
    with pytest.raises(ModelError, match="has no config.json"):
        resolve_model(str(tmp_path))


def test_directory_without_safetensors(tmp_path, tiny_encoder_dir):
    shutil.copy(tiny_encoder_dir / "config.json", tmp_path / "config.json")
    with pytest.raises(ModelError, match="no model.safetensors"):
        resolve_model(str(tmp_path))


def test_a_family_interp_does_not_cover_is_refused_with_the_list(tmp_path, tiny_encoder_dir):
    shutil.copytree(tiny_encoder_dir, tmp_path / "bloom", dirs_exist_ok=True)
    config = json.loads((tmp_path / "bloom/config.json").read_text())
    config.update(model_type="bloom", architectures=["BloomForCausalLM"])
    (tmp_path / "bloom/config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match="is a 'bloom' model; interp supports these families: bert, roberta, xlm-roberta, electra, deberta-v2, "
                                         "distilbert, modernbert, gpt2, llama, qwen2, qwen3, mistral, gemma2, gemma3_text$"):  # fmt: skip
        load_classifier(str(tmp_path / "bloom"), labels=LABELS)


def test_unknown_hub_name_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError, match="model 'no-such-org/no-such-model' is not 'minilm', an existing directory, or a hub name in the local Hugging Face cache"):
        load_classifier("no-such-org/no-such-model", labels=LABELS)
