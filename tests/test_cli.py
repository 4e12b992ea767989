"""The command line: exact messages and exit code 2 on bad input, nothing half-written."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import h5py
import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import record

from interp.cli import main


def run(*args: str, env: dict | None = None):
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def test_unknown_split_exits_2(monli_dir, tmp_path):
    result = run("train", "--splits", "snli", "--out", str(tmp_path / "m"), "--data-dir", str(monli_dir))
    assert result.exit_code == 2
    assert result.stderr == "interp: error: unknown split 'snli'; choose from pmonli, nmonli_train, nmonli_test, pmonli_train, pmonli_heldout\n"
    assert list(tmp_path.iterdir()) == []


def test_bad_number_exits_2(tmp_path):
    result = run("train", "--epochs", "0", "--out", str(tmp_path / "m"))
    assert result.exit_code == 2 and result.stderr == "interp: error: --epochs must be at least 1\n"


def test_missing_data_directory_exits_2(tmp_path):
    result = run("evaluate", "--model", "minilm", "--data-dir", str(tmp_path / "none"))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"interp: error: MoNLI directory {tmp_path / 'none'} does not exist")
    result = run("demo", "--out", str(tmp_path / "demo"), "--data-dir", str(tmp_path / "none"), "--quiet")
    assert result.exit_code == 2 and "does not exist" in result.stderr
    assert list(tmp_path.iterdir()) == []  # the run directory was not even created


def test_checksum_mismatch_exits_2(spoil, tiny_classifier_dir):
    directory = spoil("nmonli_test", 2, record(sentence1="the woman does not own a dog", sentence2="the woman does not own a mammal"))
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
    assert m["low"] < m["accuracy"] < m["high"]  # its 95% Wilson interval
    assert m["majority"] == 0.5  # the null: NMoNLI test's labels are balanced
    null = "; majority label 50.0%" + (": not above chance" if m["low"] <= 0.5 else "")
    assert plain.stdout == (f"nmonli_test    accuracy {100 * m['accuracy']:5.1f}%  ({m['correct']}/200; "
                            f"95% Wilson interval {100 * m['low']:.1f}-{100 * m['high']:.1f}%){null}\n")
    # A seeded subset of each split: the task's own draw (SampleSpec), scored with the same reading; batch size changes nothing.
    args = ("evaluate", "--model", str(tiny_classifier_dir), "--splits", "pmonli,nmonli_test", "--data-dir", str(monli_dir), "--json")
    part = json.loads(run(*args, "--max-per-split", "30", "--seed", "2", "--batch-size", "7").stdout)
    assert [part[s]["n"] for s in ("pmonli", "nmonli_test")] == [30, 30]
    from interp.api.evaluation import score
    from interp.api.loading import load_model, load_task

    task = load_task("monli", data_dir=str(monli_dir))
    drawn = task.examples(("pmonli", "nmonli_test"), per_split=30, seed=2)
    assert {s: part[s]["correct"] for s in part} == {s: v["correct"] for s, v in score(load_model(str(tiny_classifier_dir)), task, drawn).items()}
    assert json.loads(run(*args, "--max-per-split", "30", "--seed", "3").stdout) != part  # another draw


@pytest.mark.slow(seconds=35)
def test_demo_pipeline_on_a_tiny_model(monli_dir, tiny_encoder_dir, tmp_path, monkeypatch):
    """The main job's whole path (both trainings, metrics.json, the table), fast, and resumable."""
    import sys

    import interp.models.loading as loading

    out = tmp_path / "demo"
    args = ("demo", "--model", str(tiny_encoder_dir), "--epochs", "1", "--batch-size", "64", "--warmup-ratio", "0.2", "--probe-seeds", "1",
            "--das-pairs", "200", "--screen-examples", "6", "--out", str(out))  # fmt: skip
    reads, resolve = [], loading.resolve_model  # every load or hash of a checkpoint resolves it first

    def counted(spec):
        reads.append((Path(spec), sys._getframe(1).f_code.co_name))
        return resolve(spec)

    monkeypatch.setattr(loading, "resolve_model", counted)
    result = run(*args, "--data-dir", str(monli_dir), "--quiet")
    assert result.exit_code == 0, result.stderr
    # The studied model is read once and hashed once; every stage after the fine-tuning takes the loaded object.
    assert sorted(caller for path, caller in reads if path == out / "model") == ["load_classifier", "model_sha256"]
    assert sorted(p.name for p in out.iterdir()) == [
        "activations.h5", "activations.h5.manifest.json", "behavioral.manifest.json", "challenge_model", "clique.png",
        "cliques.json", "cliques.manifest.json", "das", "graph.graphml", "interventions.h5", "interventions.h5.manifest.json",
        "metrics.json", "model", "probe.manifest.json", "probes.csv", "probes.json", "probes.png", "report", "screen",
    ]  # fmt: skip
    assert (out / "report" / "index.html").stat().st_size > 1_000_000 and "report/index.html" in result.stdout
    with open(out / "probes.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 9 * 2 * 2  # 9 locations of a 2-block model x 2 targets x 2 probe kinds
    assert {r["location"] for r in rows} >= {"blocks.0.hook_resid_pre@cls", "blocks.1.hook_resid_post@w_h"}
    assert "Probes (§6.1)" in result.stdout
    # Interventions at the location the probe table picks, over a seeded mixed set of 150 PMoNLI + 150 NMoNLI-test
    # examples (all 300 x 300 pairs), for lexrel, negated and output; then cliques on lexrel.
    from interp.jobs.demo import choose_location

    location, _ = choose_location(rows)
    assert f"Interchange interventions (§6.2) at {location}" in result.stdout
    with h5py.File(out / "interventions.h5", "r") as f:
        assert list(f.attrs["locations"]) == [location] and f[f"interchange/{location}/model_pred"].shape == (300, 300)
        assert list(f.attrs["variables"]) == ["lexrel", "negated", "output"]
        assert f[f"negated/{location}/causal_pred"].shape == (300, 300)
        assert list(f["split"].asstr()[:]).count("nmonli_test") == 150 and f["values/negated"][:].sum() == 150
    report = json.loads((out / "cliques.json").read_text())
    assert report["location"] == location and report["graph"]["nodes"] == 300 and report["variable"] == "lexrel"
    assert f"Cliques (Appendix A.3) at {location}, variable lexrel: 300 examples" in result.stdout
    assert "block model" in result.stdout and "within and across values of lexrel" in result.stdout
    for variable in ("lexrel", "negated", "output"):
        assert re.search(rf"^{variable} +{re.escape(location)} +all +90000 +\d\.\d{{3}} \[\d\.\d{{3}}, \d\.\d{{3}}\]", result.stdout, re.M), variable
    assert re.search(r"Wall time by stage: fine-tuning and Table 1 \d+ s, activation cache \d+ s, probes \d+ s, interventions \d+ s, "
                     r"cliques \d+ s, DAS \d+ s, screen \d+ s, report \d+ s", result.stdout)  # fmt: skip
    # DAS for lexrel at the cliques' location (k = min(64, 32 // 4) on the tiny model's width 32), 200 training and 100
    # held-out pairs, with its verdict; the screen of 6 + 6 examples at every site, 5 + 5 confirmed.
    with open(out / "das" / "das.csv") as handle:
        das = list(csv.DictReader(handle))
    assert [(r["variable"], r["location"], r["size"]) for r in das] == [("lexrel", location, "8")]
    assert re.search(rf"^lexrel +{re.escape(location)} +8 +1  +\d\.\d{{3}} \[", result.stdout, re.M)
    screen = json.loads((out / "screen" / "screen.json").read_text())
    assert screen["variable"] == "lexrel" and screen["examples"] == 12 and screen["confirm"] == 5
    assert "agreement with the exact interchange over the 10 confirmed locations" in result.stdout
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["config"]["warmup_ratio"] == 0.2  # the flag reaches both fine-tunings
    assert all(json.loads((out / d / "training.json").read_text())["config"]["warmup_ratio"] == 0.2 for d in ("model", "challenge_model"))
    assert metrics["challenge_model"]["trained_on"] == ["pmonli"]
    assert metrics["model"]["trained_on"] == ["pmonli", "nmonli_train"]
    acc = metrics["challenge_model"]["accuracy"]["nmonli_test"]
    assert metrics["checks"]["challenge_effect"]["holds"] == (acc <= 0.20)
    assert f"{100 * acc:5.1f}" in result.stdout and "Table 1, behavioral" in result.stdout
    # Run again: both trainings are reused, the same table comes out.
    again = run(*args, "--data-dir", str(monli_dir))
    assert again.stdout.count("already trained with these settings") == 2
    assert again.stdout.count("already cached with these settings") == 1
    assert again.stdout.count("these interventions are already done") == 1  # the demo's
    assert again.stdout.count("this screen is already done") == 1  # read back: neither estimated nor confirmed again
    assert again.stdout.count("already swept with these settings") == 1
    def table(text: str) -> str:
        return re.sub(r"search \d+ ms", "", text[text.index("Table 1") : text.index("Wall time by stage")])

    assert table(again.stdout) == table(result.stdout)


@pytest.fixture(scope="module")
def tiny_cache(tiny_classifier_dir, monli_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("cli_cache") / "act.h5"
    result = run(
        "cache", "--model", str(tiny_classifier_dir), "--splits", "nmonli_test", "--out", str(path),
        "--data-dir", str(monli_dir), "--quiet",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"wrote {path}\n"
    return path


def test_probe_command_writes_csv_and_figure(tiny_cache, tiny_classifier_dir, tmp_path):
    result = run(
        "probe", "--cache", str(tiny_cache), "--model", str(tiny_classifier_dir), "--out", str(tmp_path / "p"),
        "--locations", "blocks.0.hook_resid_pre@w_h,blocks.1.hook_resid_post@cls", "--probe-seeds", "1", "--quiet",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"wrote {tmp_path / 'p'}/probes.csv (8 rows) and {tmp_path / 'p'}/probes.png\n")
    assert (tmp_path / "p" / "probes.png").read_bytes()[:4] == b"\x89PNG"
    # then a summary per probe kind: each target and role at its most selective layer, with the CSV's interval and chance
    rows = pd.read_csv(tmp_path / "p" / "probes.csv")
    mlp, linear = result.stdout.split("\nProbes (§6.1): ")[1:]
    assert mlp.startswith("mlp probe") and linear.startswith("linear probe") and "95% bootstrap over the" in linear
    for (probe, target, role), group in rows.groupby(["probe", "target", "role"]):
        best = group.loc[group.selectivity_type_mean.idxmax()]
        (line,) = [t for t in (mlp if probe == "mlp" else linear).splitlines() if t.split()[:2] == [target, role]]
        assert line.split()[2] == str(best.hidden_index) and f"{best.chance:.3f}" in line
        assert f"{best.task_acc_mean:.3f} [{best.task_acc_low:.3f}, {best.task_acc_high:.3f}]" in line


def test_probe_seeds_is_a_count_and_the_earlier_seeds_flag_warns_and_means_the_same(tiny_cache, tmp_path):
    """`--seeds` lists seeds in train, demo, das and inoculate; the probe sweep's count is `--probe-seeds`, as in demo.
    Its earlier name still runs the same sweep, with a warning; both at once are refused."""
    common = ("probe", "--cache", str(tiny_cache), "--locations", "blocks.1.hook_resid_post@cls", "--folds", "2", "--quiet")
    new = run(*common, "--out", str(tmp_path / "new"), "--probe-seeds", "2")
    old = run(*common, "--out", str(tmp_path / "old"), "--seeds", "2")
    assert new.exit_code == old.exit_code == 0 and new.stderr == ""
    assert "--seeds 2 in interp probe is a count of seeds: it is now --probe-seeds 2" in old.stderr
    rows = [(tmp_path / d / "probes.csv").read_text() for d in ("new", "old")]
    assert rows[0] == rows[1] and ",2,2," in rows[0].splitlines()[1]  # seeds=2, folds=2 in every row
    both = run(*common, "--out", str(tmp_path / "both"), "--probe-seeds", "2", "--seeds", "2")
    assert both.exit_code == 2 and "not --seeds as well" in both.stderr and not (tmp_path / "both").exists()
    bad = run(*common, "--out", str(tmp_path / "bad"), "--seeds", "0")  # bad input under the old name: one line, naming it
    assert bad.exit_code == 2 and bad.stderr == "interp: error: --seeds must be at least 1, got 0\n"


@pytest.mark.parametrize(
    "location, message",
    [
        ("blocks.7.hook_resid_post@cls", "layer 7 is out of range for a model with 2 blocks"),
        ("blocks.1.hook_resid_post@w_x", "unknown token role 'w_x'"),
        ("blocks.1.attn@w_h", "is not of the form"),
    ],
)
def test_probe_bad_location_exits_2(tiny_cache, tmp_path, location, message):
    result = run("probe", "--cache", str(tiny_cache), "--out", str(tmp_path / "p"), "--locations", location, "--quiet")
    assert result.exit_code == 2 and message in result.stderr
    assert not (tmp_path / "p" / "probes.csv").exists()


def test_probe_bad_cache_files_exit_2(tiny_cache, tmp_path):
    truncated = tmp_path / "t.h5"
    truncated.write_bytes(tiny_cache.read_bytes()[:4096])
    foreign = tmp_path / "f.h5"
    foreign.write_bytes(b"not hdf5 at all")
    for path, message in ((truncated, "not a readable HDF5 file"), (foreign, "not a readable HDF5 file")):
        result = run("probe", "--cache", str(path), "--out", str(tmp_path / "p"), "--quiet")
        assert result.exit_code == 2 and message in result.stderr
    result = run("probe", "--cache", str(tiny_cache), "--model", "minilm", "--out", str(tmp_path / "p"), "--quiet")
    assert result.exit_code == 2 and "not with the weights of 'minilm'" in result.stderr


def test_a_location_deleted_from_the_cache_exits_2(tiny_cache, tmp_path):
    import h5py

    partial = tmp_path / "partial.h5"
    partial.write_bytes(tiny_cache.read_bytes())
    with h5py.File(partial, "a") as f:
        del f["blocks.1.hook_resid_post@w_h"]
    result = run("probe", "--cache", str(partial), "--out", str(tmp_path / "p"), "--locations", "blocks.1.hook_resid_post@w_h", "--quiet")
    assert result.exit_code == 2 and "dataset blocks.1.hook_resid_post@w_h is missing; the file was edited" in result.stderr


def test_cache_bad_wordpiece_exits_2(tiny_classifier_dir, tmp_path):
    result = run("cache", "--model", str(tiny_classifier_dir), "--out", str(tmp_path / "a.h5"), "--wordpiece", "middle")
    assert result.exit_code == 2 and "--wordpiece must be one of first, last, all" in result.stderr
    result = run("cache", "--model", str(tiny_classifier_dir), "--out", str(tmp_path / "a.h5"), "--wordpiece", "all")
    assert result.exit_code == 2 and "the cache keeps one vector per site × role" in result.stderr
    assert list(tmp_path.iterdir()) == []
