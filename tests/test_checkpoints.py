"""Checkpoints as people keep them: a hub name in the local Hugging Face cache, and ``pytorch_model.bin`` converted once."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from interp.cli import main
from interp.core.errors import ModelError
from interp.models import load_classifier, resolve_model

HUB_NAME = "someone/tiny-nli"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _evaluate(model, monli_dir):
    result = run("evaluate", "--model", model, "--data-dir", monli_dir, "--splits", "nmonli_test", "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _hub_cache(root: Path, checkpoint: Path, name: str = HUB_NAME) -> Path:
    """A cache folder in the hub's layout: blobs by content hash, a snapshot of symlinks to them, refs/main naming it."""
    repo = root / f"models--{name.replace('/', '--')}"
    commit = "0123456789abcdef0123456789abcdef01234567"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snapshot, blobs = repo / "snapshots" / commit, repo / "blobs"
    snapshot.mkdir(parents=True)
    blobs.mkdir()
    for file in checkpoint.iterdir():
        digest = hashlib.sha256(file.read_bytes()).hexdigest()
        shutil.copyfile(file, blobs / digest)
        (snapshot / file.name).symlink_to(os.path.relpath(blobs / digest, snapshot))
    return root


@pytest.fixture
def hub_cache(tiny_classifier_dir, tmp_path, monkeypatch):
    from huggingface_hub import constants

    cache = _hub_cache(tmp_path / "hub", tiny_classifier_dir)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache


def test_a_hub_name_resolves_from_the_local_cache_offline(hub_cache, tiny_classifier_dir, monli_dir):
    source = resolve_model(HUB_NAME)
    assert source.local and Path(source.location).parent.parent == hub_cache / "models--someone--tiny-nli"
    assert _evaluate(HUB_NAME, monli_dir) == _evaluate(tiny_classifier_dir, monli_dir)
    model, _ = load_classifier(HUB_NAME, require_head=True)
    reference, _ = load_classifier(str(tiny_classifier_dir), require_head=True)
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), reference.state_dict().values()))


def test_a_name_the_cache_lacks_is_refused_offline_naming_the_cache(hub_cache):
    with pytest.raises(ModelError, match=f"'someone/other' is not .* in the local Hugging Face cache \\({hub_cache}\\), and HF_HUB_OFFLINE is set"):
        resolve_model("someone/other")


def test_a_cached_checkpoint_gets_a_directorys_checks(hub_cache, monli_dir):
    snapshot = Path(resolve_model(HUB_NAME).location)
    blob = (snapshot / "model.safetensors").resolve()
    blob.write_bytes(blob.read_bytes()[:1000])
    result = run("evaluate", "--model", HUB_NAME, "--data-dir", monli_dir)
    assert result.exit_code == 2 and "model.safetensors: not a valid safetensors file" in result.stderr
    (snapshot / "tokenizer.json").unlink()
    with pytest.raises(ModelError):
        load_classifier(HUB_NAME)


# -- convert-checkpoint -------------------------------------------------------------------------------------------------


def _save_pickled(model, out: Path, shards: int = 1) -> Path:
    """``model`` saved the old way (transformers 5 writes safetensors only): config.json and ``torch.save``'d state
    dicts, one ``pytorch_model.bin`` or ``shards`` files named by ``pytorch_model.bin.index.json``."""
    out.mkdir(parents=True)
    model.config.save_pretrained(out)
    state = model.state_dict()
    if shards == 1:
        torch.save(state, out / "pytorch_model.bin")
        return out
    names, weight_map = list(state), {}
    for i in range(shards):
        file = f"pytorch_model-{i + 1:05d}-of-{shards:05d}.bin"
        part = {k: state[k] for k in names[i::shards]}
        torch.save(part, out / file)
        weight_map.update(dict.fromkeys(part, file))
    (out / "pytorch_model.bin.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    return out


def _as_pickle(model_dir: Path, out: Path) -> Path:
    """``model_dir`` saved again the old way, with its tokenizer."""
    model, tokenizer = load_classifier(str(model_dir), require_head=True)
    _save_pickled(model, out)
    tokenizer.save_pretrained(out)
    return out


def test_a_bin_checkpoint_is_refused_with_the_way_forward_then_converts_to_the_same_model(tiny_classifier_dir, monli_dir, tmp_path):
    pickled = _as_pickle(tiny_classifier_dir, tmp_path / "bin")
    result = run("evaluate", "--model", pickled, "--data-dir", monli_dir)
    assert result.exit_code == 2 and f"it holds pytorch_model.bin: convert it once with interp convert-checkpoint {pickled} NEW_DIR" in result.stderr
    result = run("convert-checkpoint", pickled, tmp_path / "converted")
    assert result.exit_code == 0, result.stderr
    converted = tmp_path / "converted"
    assert (converted / "model.safetensors").is_file() and not list(converted.glob("*.bin"))
    assert (converted / "tokenizer.json").read_bytes() == (pickled / "tokenizer.json").read_bytes()
    assert _evaluate(converted, monli_dir) == _evaluate(tiny_classifier_dir, monli_dir)
    again = run("convert-checkpoint", pickled, converted)
    assert again.exit_code == 2 and "already exists" in again.stderr and "--overwrite" in again.stderr
    assert run("convert-checkpoint", pickled, converted, "--overwrite").exit_code == 0
    done = run("convert-checkpoint", converted, tmp_path / "twice")
    assert done.exit_code == 2 and "already holds safetensors weights" in done.stderr and not (tmp_path / "twice").exists()


def test_sharded_and_tied_weights_convert_exactly(tmp_path, minilm_tokenizer):
    from transformers import BertConfig, BertForMaskedLM

    from interp.models.convert import convert_checkpoint

    torch.manual_seed(0)
    config = BertConfig(vocab_size=minilm_tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=37, tie_word_embeddings=True)  # fmt: skip
    model = BertForMaskedLM(config).eval()
    _save_pickled(model, tmp_path / "bin", shards=3)
    convert_checkpoint(tmp_path / "bin", tmp_path / "out")
    back = BertForMaskedLM.from_pretrained(tmp_path / "out").eval()
    assert back.cls.predictions.decoder.weight.data_ptr() == back.bert.embeddings.word_embeddings.weight.data_ptr()  # tied again
    for (name, a), (_, b) in zip(model.state_dict().items(), back.state_dict().items()):
        assert torch.equal(a, b), name


class _Payload:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


def test_a_pickle_that_is_not_only_tensors_is_refused_and_nothing_is_written(tiny_classifier_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pickled = _as_pickle(tiny_classifier_dir, tmp_path / "bin")
    with open(pickled / "pytorch_model.bin", "wb") as handle:
        pickle.dump({"weight": _Payload()}, handle)
    result = run("convert-checkpoint", pickled, tmp_path / "out")
    assert result.exit_code == 2 and "pytorch_model.bin: refused: it holds Python objects other than tensors" in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "out").exists() and not (tmp_path / "out.partial").exists()
