"""--device on every command that runs a model (train with IIT and the node loss, evaluate, demo, inoculate), and
training's --precision bf16. This machine has no GPU: the tests pin what runs on the CPU and that a GPU that is not
there is named before any work; `benchmarks/gpu.py` times the same paths on a GPU."""

from __future__ import annotations

import json

import pytest
import torch
from click.testing import CliRunner
from safetensors.torch import load_file

from interp.cli import main
from interp.models.settings import FineTuneSettings

NO_GPU = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message of a machine without a GPU")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _train(model, out, monli_dir, *extra):
    return run("train", "--model", model, "--splits", "nmonli_test", "--max-examples", "32", "--epochs", "1", "--eval-splits", "nmonli_test",
               "--data-dir", monli_dir, "--out", out, "--quiet", *extra)  # fmt: skip


def test_training_in_bf16_autocast_is_its_own_run_and_says_so(tiny_encoder_dir, monli_dir, tmp_path):
    fp32 = _train(tiny_encoder_dir, tmp_path / "fp32", monli_dir, "--device", "cpu")
    bf16 = _train(tiny_encoder_dir, tmp_path / "bf16", monli_dir, "--device", "auto", "--precision", "bf16", "--warmup-ratio", "0.05",
                  "--batching", "shuffle", "--max-grad-norm", "0.5", "--head-epochs", "1", "--head-lr", "0.01", "--reinit-pooler")  # fmt: skip
    assert fp32.exit_code == 0 and bf16.exit_code == 0, fp32.output + bf16.output
    records = {p: json.loads((tmp_path / p / "training.json").read_text()) for p in ("fp32", "bf16")}
    assert records["bf16"]["config"]["precision"] == "bf16" and records["fp32"]["config"]["precision"] == "fp32"
    assert records["bf16"]["config"]["warmup_ratio"] == 0.05 and records["fp32"]["config"]["warmup_ratio"] == FineTuneSettings().warmup_ratio  # --warmup-ratio
    assert records["bf16"]["config"]["batching"] == "shuffle" and records["fp32"]["config"]["batching"] == "length"  # --batching
    assert records["bf16"]["config"]["max_grad_norm"] == 0.5 and records["fp32"]["config"]["max_grad_norm"] is None  # --max-grad-norm
    assert records["bf16"]["config"]["head_epochs"] == 1 and records["bf16"]["config"]["head_lr"] == 0.01 and records["fp32"]["config"]["head_epochs"] == 0
    assert len(records["bf16"]["epochs"][0]["head_losses"]) == 1 and "head_losses" not in records["fp32"]["epochs"][0]  # --head-epochs
    assert records["bf16"]["config"]["reinit_pooler"] is True and records["fp32"]["config"]["reinit_pooler"] is False  # --reinit-pooler
    refused = _train(tiny_encoder_dir, tmp_path / "clip0", monli_dir, "--max-grad-norm", "0")
    assert refused.exit_code == 2 and "--max-grad-norm must be positive" in refused.output and not (tmp_path / "clip0").exists()
    assert records["bf16"]["fingerprint"] != records["fp32"]["fingerprint"]  # another training, never reused for the other
    a, b = (load_file(tmp_path / p / "model.safetensors") for p in ("fp32", "bf16"))
    assert all(t.dtype == torch.float32 and torch.isfinite(t).all() for t in b.values())  # the weights stay fp32
    assert any(not torch.equal(a[k], b[k]) for k in a)  # the forward pass did run in bfloat16
    same_device = _train(tiny_encoder_dir, tmp_path / "fp32", monli_dir, "--device", "auto")  # the device is not part of the run
    assert same_device.exit_code == 0 and "already trained" not in same_device.stderr
    assert json.loads((tmp_path / "fp32" / "training.json").read_text())["fingerprint"] == records["fp32"]["fingerprint"]


@NO_GPU
@pytest.mark.parametrize("command", ["train", "evaluate", "demo", "inoculate"])
def test_a_gpu_that_is_not_there_is_named_before_any_work(command, tiny_classifier_dir, monli_dir, tmp_path):
    args = {
        "train": ["train", "--model", tiny_classifier_dir, "--out", tmp_path / "m", "--data-dir", monli_dir],
        "evaluate": ["evaluate", "--model", tiny_classifier_dir, "--data-dir", monli_dir],
        "demo": ["demo", "--model", tiny_classifier_dir, "--out", tmp_path / "demo", "--data-dir", monli_dir],
        "inoculate": ["inoculate", "--model", tiny_classifier_dir, "--original", "monli:nmonli_test", "--challenge", "monli:nmonli_train",
                      "--challenge-eval", "nmonli_test", "--k", "8", "--out", tmp_path / "inoc"],
    }[command]
    for device, message in (("cuda", "--device cuda: no CUDA device is available"), ("cuda:3", "no CUDA device is available"),
                            ("tpu", "--device")):  # fmt: skip
        result = run(*args, "--device", device)
        assert result.exit_code == 2 and message in result.stderr and result.stderr.count("\n") == 1, result.output
    assert not any(tmp_path.iterdir())


def test_every_command_that_runs_a_model_takes_device():
    runs_a_model = ("train", "evaluate", "demo", "inoculate", "cache", "intervene", "das", "location-sweep", "head-sweep")
    for name in runs_a_model:
        assert "--device" in {o for p in main.commands[name].params for o in p.opts}, name


def test_reinit_pooler_on_a_model_without_a_pretrained_pooler_is_refused_and_leaves_nothing(minilm_tokenizer, monli_dir, tmp_path):
    from families import save_family_model

    roberta = save_family_model("roberta", tmp_path / "roberta", minilm_tokenizer)
    refused = _train(roberta, tmp_path / "out", monli_dir, "--reinit-pooler")
    assert refused.exit_code == 2 and "--reinit-pooler:" in refused.output and "no pretrained pooler" in refused.output, refused.output
    assert not (tmp_path / "out").exists() and not any(p.name.startswith("out") for p in tmp_path.iterdir())
