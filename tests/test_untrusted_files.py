"""Files beside --out or in a model directory never run code, and broken checkpoints are refused in one line.

A pickle payload that creates a marker file when unpickled is planted at
every path a command might read; the marker must never appear. Corrupt
weights, shards that are pickles, missing tokenizer files and a checkpoint
with the wrong label count each give exit 2 and one line naming the file.
"""

from __future__ import annotations

import ast
import json
import pickle
import shutil
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from interp.cli import main
from interp.core.errors import ModelError
from interp.models.checkpoint import check_tokenizer_ids

PACKAGE = Path(__file__).resolve().parents[1] / "interp"


class _Payload:
    """Unpickling this creates ``marker``: proof that a pickle was executed."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def plant(path: Path, marker: Path) -> Path:
    """Write a torch-saved pickle whose loading creates ``marker``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"fingerprint": "x", "epoch": 1, "model": _Payload(marker)}, path)
    return path


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_the_payload_would_run_if_unpickled(tmp_path):
    """The null for the tests below: loading the planted file with pickle does create the marker."""
    marker = tmp_path / "ran"
    path = plant(tmp_path / "state.pt", marker)
    torch.load(path, weights_only=False)
    assert marker.exists()


#: The one place a pickle is read: ``interp convert-checkpoint``, which the user names it to, with ``weights_only=True``.
CONVERT = PACKAGE / "models" / "convert.py"
#: MIB's submission files are torch.save's: read with weights_only=True (tensors, dicts and numbers, nothing run).
MIB = PACKAGE / "files" / "mib.py"


def test_the_package_never_unpickles():
    """No torch.load (but convert-checkpoint's and MIB's units', weights_only=True), no pickle-family import, no
    allow_pickle=True and no weights_only=False in interp/."""
    offences, allowed = [], set()
    for source in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(source.read_text(encoding="utf-8"), filename=str(source))
        for node in ast.walk(tree):  # breadth first: a call is met before the torch.load it calls
            where = f"{source.relative_to(PACKAGE.parent)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Call) and source in (CONVERT, MIB) and ast.unparse(node.func) == "torch.load" \
                    and any(k.arg == "weights_only" and getattr(k.value, "value", None) is True for k in node.keywords):
                allowed.add(id(node.func))
            if isinstance(node, ast.Attribute) and node.attr == "load" and getattr(node.value, "id", "") == "torch" and id(node) not in allowed:
                offences.append(f"{where}: torch.load")
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if any(n.split(".")[0] in ("pickle", "cPickle", "dill", "joblib", "cloudpickle") for n in names):
                    offences.append(f"{where}: imports a pickle library")
            if isinstance(node, ast.keyword) and isinstance(node.value, ast.Constant):
                if (node.arg, node.value.value) in (("allow_pickle", True), ("weights_only", False)):
                    offences.append(f"{where}: {node.arg}={node.value.value}")
    assert offences == [] and len(allowed) == 2


def test_a_mib_unit_that_carries_a_pickle_payload_is_refused_unrun(tmp_path):
    from interp.core.errors import DataError
    from interp.files.mib import read_mib_unit

    marker = tmp_path / "ran"
    plant(tmp_path / "unit_featurizer", marker)
    (tmp_path / "unit_indices").write_text("null\n")
    with pytest.raises(DataError, match="not a MIB featurizer file"):
        read_mib_unit(tmp_path / "unit", width=4)
    assert not marker.exists()


def test_train_never_unpickles_what_lies_beside_out(tiny_encoder_dir, monli_dir, tmp_path):
    marker = tmp_path / "ran"
    out = tmp_path / "run"
    work = tmp_path / "run.partial"
    for name in ("state.pt", "state.safetensors", "state.safetensors.tmp", "optimizer.pt", "scheduler.pt", "rng_state.pth"):
        plant(work / name, marker)
    args = ["train", "--model", str(tiny_encoder_dir), "--splits", "nmonli_test", "--max-examples", "16",
            "--epochs", "2", "--batch-size", "8", "--eval-splits", "", "--data-dir", str(monli_dir), "--out", str(out), "--quiet"]  # fmt: skip
    result = run(*args)
    assert result.exit_code == 0, result.stderr
    assert "resuming" not in result.output  # the planted state is not a state
    assert not marker.exists()
    assert (out / "model.safetensors").is_file() and not work.exists()


def test_model_directory_pickles_are_never_read(tiny_classifier_dir, monli_dir, tmp_path):
    marker = tmp_path / "ran"
    model = tmp_path / "model"
    shutil.copytree(tiny_classifier_dir, model)
    for name in ("pytorch_model.bin", "training_args.bin", "optimizer.pt", "scheduler.pt", "rng_state.pth"):
        plant(model / name, marker)
    result = run("evaluate", "--model", str(model), "--splits", "nmonli_test", "--data-dir", str(monli_dir))
    assert result.exit_code == 0, result.stderr
    result = run("cache", "--model", str(model), "--splits", "nmonli_test", "--out", str(tmp_path / "a.h5"),
                 "--data-dir", str(monli_dir), "--quiet")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert not marker.exists()


def _without_weights(tiny_classifier_dir: Path, tmp_path: Path) -> Path:
    model = tmp_path / "model"
    shutil.copytree(tiny_classifier_dir, model)
    (model / "model.safetensors").unlink()
    return model


def _index(model: Path, shard: str) -> None:
    (model / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {}, "weight_map": {"bert.embeddings.word_embeddings.weight": shard}})
    )


@pytest.mark.parametrize(
    "shard, message",
    [
        ("pytorch_model-00001-of-00001.bin", "is not a .safetensors file in the same directory"),
        ("model-00001-of-00001.safetensors", "not a valid safetensors file"),  # a pickle under a safetensors name
        ("../outside.safetensors", "is not a .safetensors file in the same directory"),
    ],
)
def test_an_index_naming_a_pickle_is_refused_before_loading(tiny_classifier_dir, monli_dir, tmp_path, shard, message):
    marker = tmp_path / "ran"
    model = _without_weights(tiny_classifier_dir, tmp_path)
    plant(model / Path(shard).name, marker)
    plant(tmp_path / "outside.safetensors", marker)
    _index(model, shard)
    result = run("evaluate", "--model", str(model), "--splits", "nmonli_test", "--data-dir", str(monli_dir))
    assert result.exit_code == 2 and message in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert not marker.exists()


def _spoil_weights(model: Path, how: str) -> None:
    path = model / "model.safetensors"
    data = path.read_bytes()
    spoiled = {
        "truncated": data[: len(data) // 2],
        "empty": b"",
        "bad header": (20).to_bytes(8, "little") + b"{not json at all}xxx" + data[28:],
        "trailing bytes": data + b"\0" * 16,
        "a pickle": pickle.dumps({"weights": [1, 2, 3]}),
    }[how]
    path.write_bytes(spoiled)


CORRUPT = ["truncated", "empty", "bad header", "trailing bytes", "a pickle"]


@pytest.mark.parametrize("how", CORRUPT)
@pytest.mark.parametrize("command", ["evaluate", "cache", "intervene", "train"])
def test_corrupt_weights_give_one_line_naming_the_file(tiny_classifier_dir, monli_dir, tmp_path, command, how):
    model = tmp_path / "model"
    shutil.copytree(tiny_classifier_dir, model)
    _spoil_weights(model, how)
    out = tmp_path / "out"
    args = {
        "evaluate": ["evaluate", "--model", str(model), "--splits", "nmonli_test"],
        "cache": ["cache", "--model", str(model), "--splits", "nmonli_test", "--out", str(out)],
        "intervene": ["intervene", "--model", str(model), "--locations", "blocks.0.hook_resid_post@w_h", "--out", str(out)],
        "train": ["train", "--model", str(model), "--splits", "nmonli_test", "--out", str(out)],
    }[command]
    result = run(*args, "--data-dir", str(monli_dir))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"interp: error: {model / 'model.safetensors'}: not a valid safetensors file (")
    assert result.stderr.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]  # nothing written


def test_missing_tokenizer_is_refused_not_scored_at_chance(tiny_classifier_dir, monli_dir, tmp_path):
    model = tmp_path / "model"
    shutil.copytree(tiny_classifier_dir, model)
    for name in ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json"):
        (model / name).unlink(missing_ok=True)
    result = run("evaluate", "--model", str(model), "--splits", "nmonli_test", "--data-dir", str(monli_dir))
    assert result.exit_code == 2
    assert result.stderr == (
        f"interp: error: model directory {model} has no tokenizer files (tokenizer.json, vocab.txt, vocab.json, ...): "
        "without them every word would become [UNK]; copy the tokenizer the model was trained with\n"
    )


def test_a_tiny_vocabulary_is_refused(tiny_classifier_dir, monli_dir, tmp_path):
    model = tmp_path / "model"
    shutil.copytree(tiny_classifier_dir, model)
    (model / "tokenizer.json").unlink()
    (model / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "man"]) + "\n")
    result = run("evaluate", "--model", str(model), "--splits", "nmonli_test", "--data-dir", str(monli_dir))
    assert result.exit_code == 2
    assert "its tokenizer knows 7 tokens, the model's embedding has 30522 rows" in result.stderr


class _Config:
    def __init__(self, vocab_size: int):
        self.vocab_size = vocab_size


def test_token_ids_past_the_embedding_are_refused(minilm_tokenizer):
    check_tokenizer_ids(minilm_tokenizer, _Config(len(minilm_tokenizer)), "m")  # exactly covered: fine
    with pytest.raises(ModelError, match="tokenizer has token id 30521, but the model's embedding has only 30000 rows"):
        check_tokenizer_ids(minilm_tokenizer, _Config(30000), "m")
