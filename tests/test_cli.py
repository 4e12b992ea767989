"""The command line: exact messages and exit code 2 on bad input, nothing half-written."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import record
from interp.cli import main


def run(*args: str, env: dict | None = None):
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def test_unknown_split_exits_2(monli_dir, tmp_path):
    result = run("train", "--splits", "snli", "--out", str(tmp_path / "m"), "--data-dir", str(monli_dir))
    assert result.exit_code == 2
    assert result.stderr == "interp: error: unknown split 'snli'; choose from pmonli, nmonli_train, nmonli_test\n"
    assert list(tmp_path.iterdir()) == []


def test_bad_number_exits_2(tmp_path):
    result = run("train", "--epochs", "0", "--out", str(tmp_path / "m"))
    assert result.exit_code == 2 and result.stderr == "interp: error: --epochs must be at least 1\n"


def test_missing_data_directory_exits_2(tmp_path):
    result = run("evaluate", "--model", "minilm", "--data-dir", str(tmp_path / "none"))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"interp: error: MoNLI directory {tmp_path / 'none'} does not exist")


def test_checksum_mismatch_exits_2(spoil, tiny_classifier_dir):
    directory = spoil("nmonli_test", 2, record())
    args = ("evaluate", "--model", str(tiny_classifier_dir), "--splits", "nmonli_test", "--data-dir", str(directory))
    result = run(*args)
    assert result.exit_code == 2 and "nmonli_test.jsonl: SHA-256" in result.stderr
    assert run(*args, "--skip-checksums").exit_code == 0


def test_spoiled_line_exits_2_naming_file_and_line(spoil, tiny_classifier_dir):
    directory = spoil("nmonli_test", 9, record(gold_label="maybe"))
    result = run("evaluate", "--model", str(tiny_classifier_dir), "--data-dir", str(directory), "--skip-checksums")
    assert result.exit_code == 2
    assert result.stderr == (
        f"interp: error: {directory / 'nmonli_test.jsonl'}:9: unknown gold_label 'maybe'; "
        "MoNLI labels are entailment, neutral\n"
    )


def test_unknown_model_exits_2(monli_dir):
    result = run("evaluate", "--model", "./not/a/model", "--data-dir", str(monli_dir))
    assert result.exit_code == 2 and result.stderr == "interp: error: model directory './not/a/model' does not exist\n"


def test_encoder_is_not_a_classifier_exits_2(monli_dir, tiny_encoder_dir):
    result = run("evaluate", "--model", str(tiny_encoder_dir), "--data-dir", str(monli_dir))
    assert result.exit_code == 2 and "without a trained sequence-classification head" in result.stderr


def test_unwritable_output_exits_2_and_writes_nothing(monli_dir, tiny_encoder_dir, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    for command in (
        ("train", "--model", str(tiny_encoder_dir), "--out", str(blocker / "m")),
        ("demo", "--model", str(tiny_encoder_dir), "--out", str(blocker / "demo")),
    ):
        result = run(*command, "--data-dir", str(monli_dir), "--quiet")
        assert result.exit_code == 2 and "cannot create directory" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_evaluate_prints_accuracy_per_split(monli_dir, tiny_classifier_dir):
    result = run("evaluate", "--model", str(tiny_classifier_dir), "--splits", "nmonli_test", "--data-dir", str(monli_dir), "--json")
    assert result.exit_code == 0
    metrics = json.loads(result.stdout)
    assert list(metrics) == ["nmonli_test"] and metrics["nmonli_test"]["n"] == 200
    m = metrics["nmonli_test"]
    assert m["accuracy"] == pytest.approx(m["correct"] / 200)
    plain = run("evaluate", "--model", str(tiny_classifier_dir), "--splits", "nmonli_test", "--data-dir", str(monli_dir))
    assert plain.stdout == f"nmonli_test    accuracy {100 * m['accuracy']:5.1f}%  ({m['correct']}/200)\n"


def test_demo_pipeline_on_a_tiny_model(monli_dir, tiny_encoder_dir, tmp_path):
    """The main job's whole path (both trainings, metrics.json, the table), fast, and resumable."""
    out = tmp_path / "demo"
    args = ("demo", "--model", str(tiny_encoder_dir), "--epochs", "1", "--batch-size", "64", "--out", str(out))
    result = run(*args, "--data-dir", str(monli_dir), "--quiet")
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["challenge_model", "metrics.json", "model"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["challenge_model"]["trained_on"] == ["pmonli"]
    assert metrics["model"]["trained_on"] == ["pmonli", "nmonli_train"]
    acc = metrics["challenge_model"]["accuracy"]["nmonli_test"]
    assert metrics["checks"]["challenge_effect"]["holds"] == (acc <= 0.20)
    assert f"{100 * acc:5.1f}" in result.stdout and "Table 1, behavioral" in result.stdout
    # Run again: both trainings are reused, the same table comes out.
    again = run(*args, "--data-dir", str(monli_dir))
    assert again.stdout.count("already trained with these settings") == 2
    def table(text: str) -> str:
        return text[text.index("Table 1") : text.index("\nwrote")]

    assert table(again.stdout) == table(result.stdout)
