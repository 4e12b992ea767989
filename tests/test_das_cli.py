"""`interp das` end to end on a tiny model: outputs, resuming, a saved intervention reloaded, bad input as one line and exit 2."""

from __future__ import annotations

import csv
import json

import pytest
import torch
from click.testing import CliRunner

from interp.cli import main
from interp.files.subspaces import load_trained_intervention, save_intervention
from interp.engine.interventions import RotatedSubspace


def _das(*args, monli_dir):
    return CliRunner().invoke(main, ["das", "--data-dir", str(monli_dir), "--quiet", *map(str, args)])


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, tiny_classifier_dir, monli_dir):
    out = tmp_path_factory.mktemp("das") / "run"
    args = ["--model", tiny_classifier_dir, "--out", out, "--locations", "blocks.1.hook_resid_post@w_h,blocks.0.hook_resid_post@w_p+w_h",
            "--variable", "lexrel,negated", "--splits", "pmonli,nmonli_test", "--max-per-split", "30", "--subspace", "4,boundless",
            "--seeds", "0,1", "--train-pairs", "64", "--test-pairs", "40", "--epochs", "1", "--batch-size", "32"]  # fmt: skip
    result = _das(*args, monli_dir=monli_dir)
    assert result.exit_code == 0, result.output
    return out, args, result.output


def test_das_writes_one_row_per_unit_a_summary_a_heatmap_and_the_interventions(tiny_run):
    out, _, stdout = tiny_run
    rows = list(csv.DictReader(open(out / "das.csv")))
    assert len(rows) == 2 * 2 * 2 * 2  # locations x variables x sizes x seeds
    boundless = [r for r in rows if r["size"] == "boundless"]
    assert len(boundless) == 8 and all(r["subspace"] == "boundless" and 1 <= int(r["k"]) <= int(r["width"]) for r in boundless)
    rows = [r for r in rows if r["size"] == "4"]
    assert {r["location"] for r in rows} == {"blocks.1.hook_resid_post@w_h", "blocks.0.hook_resid_post@w_p+w_h"}
    assert {r["width"] for r in rows} == {"32", "64"}
    for r in rows:
        assert int(r["train_pairs"]) == 64 and int(r["test_pairs"]) == 40 and r["k"] == "4"
        for key in ("das_iia", "vanilla_iia", "block_iia", "chance", "das_stays_base", "das_copies_source"):
            assert 0 <= float(r[key]) <= 1
        intervention, meta = load_trained_intervention(out / r["file"])
        assert meta["variable"] == r["variable"] and meta["location"] == r["location"] and intervention.k == 4
    summary = list(csv.DictReader(open(out / "das_summary.csv")))
    assert len(summary) == 8 and all(s["seeds"] == "2" and float(s["das_low"]) <= float(s["das_iia"]) <= float(s["das_high"]) for s in summary)
    assert (out / "das.png").stat().st_size > 5000
    assert set(json.loads((out / "das.manifest.json").read_text())["files"]) == {"das.csv", "das_summary.csv", "das.png"}
    assert "lexrel" in stdout and "blocks.0.hook_resid_post@w_p+w_h" in stdout


def test_das_reports_the_untrained_baseline_the_history_and_intervals_over_examples(tiny_run):
    """Each unit scores the same intervention before training on the same held-out pairs, and keeps its history; a random
    tiny model has nothing to align, so its DAS does not clear that baseline and the command says so."""
    out, _, output = tiny_run
    rows = list(csv.DictReader(open(out / "das.csv")))
    for r in rows:
        history = json.loads(r["history"])
        assert [h["epoch"] for h in history] == [0, 1] and history[0]["loss"] is None
        assert history[0]["held_out_iia"] == pytest.approx(float(r["untrained_iia"])) and history[-1]["held_out_iia"] == pytest.approx(float(r["das_iia"]))
        assert history[-1]["loss"] == pytest.approx(float(r["final_loss"]), abs=1e-4)
        for name in ("das", "untrained", "vanilla", "block"):
            assert float(r[f"{name}_iia_low"]) <= float(r[f"{name}_iia"]) <= float(r[f"{name}_iia_high"]), name
        assert float(r["das_gain"]) == pytest.approx(float(r["das_iia"]) - float(r["untrained_iia"]))
        assert float(r["das_gap"]) == pytest.approx(float(r["das_iia"]) - max(float(r["das_stays_base"]), float(r["das_copies_source"])))
        assert float(r["das_over_chance"]) == pytest.approx(float(r["das_iia"]) - float(r["chance"]))
        assert r["verdict"].startswith("not learned: ")
    assert "untrained" in output and "history (loss; held-out IIA)" in output and "stays copies chance  verdict" in output
    assert "not learned: no gain over the untrained intervention" in output  # the warning, on stderr (mixed in here)


def test_das_resumes_without_redoing_units_and_reloads_to_the_same_iia(tiny_run, tiny_classifier_dir, monli_dir):
    out, args, _ = tiny_run
    before = {p.name: p.stat().st_mtime_ns for p in (out / "das.parts").glob("*.json")}
    (out / "das.parts" / "negated__blocks.1.hook_resid_post@w_h__k4__s1.json").unlink()  # as if killed during that unit
    (out / "das.parts" / "lexrel__blocks.1.hook_resid_post@w_h__k4__s0.json").write_text('{"das_iia": ')  # damaged on disk
    result = _das(*args, monli_dir=monli_dir)
    assert result.exit_code == 0, result.output
    after = {p.name: p.stat().st_mtime_ns for p in (out / "das.parts").glob("*.json")}
    redone = {name for name in after if after[name] != before.get(name)}
    assert redone == {"negated__blocks.1.hook_resid_post@w_h__k4__s1.json", "lexrel__blocks.1.hook_resid_post@w_h__k4__s0.json"}
    row = next(r for r in csv.DictReader(open(out / "das.csv")) if r["variable"] == "lexrel" and r["seed"] == "1" and "w_p+w_h" in r["location"])
    scored = _das("--model", tiny_classifier_dir, "--load", out / row["file"], "--splits", "pmonli,nmonli_test", "--max-per-split", "30",
                  "--seeds", "1", "--test-pairs", "40", monli_dir=monli_dir)  # fmt: skip
    assert scored.exit_code == 0, scored.output
    assert f"held-out IIA {float(row['das_iia']):.3f} (vanilla {float(row['vanilla_iia']):.3f}" in scored.output


def test_das_bad_input_is_one_line_and_exit_2(tiny_run, tiny_classifier_dir, tiny_mqnli_classifier_dir, monli_dir, tmp_path):
    out, args, _ = tiny_run
    common = ["--model", tiny_classifier_dir, "--out", tmp_path / "x", "--max-examples", "20"]
    cases = {
        "--subspace 33: k must be at most the width of location blocks.1.hook_resid_post@w_h, 32": ["--locations", "blocks.1.hook_resid_post@w_h", "--subspace", "33"],
        "--subspace 'x'": ["--subspace", "x"],
        "unknown token role 'not'": ["--locations", "blocks.1.hook_resid_post@not"],
        "--variable 'polarity'": ["--variable", "polarity"],
        "--seeds takes comma-separated integers": ["--seeds", "a"],
        "--kind must be one of rotated, lowrank": ["--kind", "sparse"],
        # refused only when the pairs are drawn, after the model ran: still nothing written (das.parts/request.json was)
        "--variable 'negated': no pair of these 16 examples changes the output": ["--splits", "pmonli", "--variable", "negated", "--subspace", "4",
                                                                                  "--locations", "blocks.1.hook_resid_post@w_h"],
    }
    for message, extra in cases.items():
        result = _das(*common, *extra, monli_dir=monli_dir)
        assert result.exit_code == 2 and message in result.output and len(result.output.strip().splitlines()) == 1, (message, result.output)
    assert not (tmp_path / "x").exists()  # nothing half-written
    other = tmp_path / "other.safetensors"
    save_intervention(RotatedSubspace(32, 4), other, {"variable": "lexrel", "location": "blocks.1.hook_resid_post@w_h", "model_sha256": "0" * 64})
    result = _das("--model", tiny_classifier_dir, "--load", other, "--max-examples", "20", monli_dir=monli_dir)
    assert result.exit_code == 2 and "trained on another model's weights" in result.output
    changed = [a if a != "64" else "96" for a in args]  # other training settings, same --out
    result = _das(*changed, monli_dir=monli_dir)
    assert result.exit_code == 2 and "holds a DAS run with other settings" in result.output


def test_each_unit_of_the_job_is_train_das_with_the_same_settings(tiny_run, tiny_classifier_dir, monli_dir):
    """One implementation: a row of das.csv holds what ``IntervenableModel.train_das`` returns for its unit (the
    trained and untrained IIA, the baselines, the block, the history), and its saved intervention is that one."""
    from interp.api.intervenable import IntervenableModel
    from interp.api.specs import DataSpec, SampleSpec

    out, _, _ = tiny_run
    lab = IntervenableModel.from_specs(str(tiny_classifier_dir), DataSpec(data_dir=str(monli_dir)), splits=("pmonli", "nmonli_test"))
    examples = SampleSpec(splits=("pmonli", "nmonli_test"), max_per_split=30).draw(lab.task)
    rows = [r for r in csv.DictReader(open(out / "das.csv")) if r["seed"] == "1" and r["variable"] == "negated"]
    for row in rows:
        boundless = row["size"] == "boundless"
        with pytest.warns(interp_warning()):
            found = lab.train_das(examples, row["location"], "negated", k=None if boundless else 4, kind="boundless" if boundless else "rotated",
                                  n_pairs=64, test_pairs=40, epochs=1, batch_size=32, seed=1)  # fmt: skip
        for name, figure in (("das_iia", found.iia), ("untrained_iia", found.untrained_iia), ("vanilla_iia", found.vanilla_iia),
                             ("block_iia", found.block_iia), ("das_gain", found.gain)):  # fmt: skip
            assert float(row[name]) == pytest.approx(float(figure), abs=1e-4) and float(row[f"{name}_low"]) == pytest.approx(figure.low, abs=1e-4), name
        assert row["block"] == found.block and int(row["k"]) == found.k and json.loads(row["history"]) == found.history
        saved, _ = load_trained_intervention(out / row["file"])
        base, source = torch.randn(2, 3, saved.width, generator=torch.Generator().manual_seed(0))
        assert torch.allclose(saved.eval()(base, source), found.intervention(base, source), atol=1e-5)
    assert len(rows) == 4


def interp_warning():
    from interp.core.errors import InterpWarning

    return InterpWarning


def test_each_heatmap_cell_gives_its_interval_over_examples_with_one_seed_and_over_seeds_with_several():
    from interp.analysis.das_figure import METHODS, das_heatmap
    from interp.analysis.intervals import mean_interval

    def row(seed, iia):
        return {"variable": "lexrel", "location": "blocks.1.hook_resid_post@w_h", "size": 4, "k": 4, "chance": 0.5, "seed": seed,
                "das_stays_base": 0.5, "das_copies_source": 0.5, **{f"{m}_iia{end}": iia + shift for m in METHODS for end, shift in (("", 0.0), ("_low", -0.05), ("_high", 0.04))}}  # fmt: skip

    one = das_heatmap([row(0, 0.6)])
    assert [t.get_text() for ax in one.axes for t in ax.texts] == ["0.60\n[0.55, 0.64]"] * len(METHODS)
    several = das_heatmap([row(0, 0.6), row(1, 0.7), row(2, 0.9)])
    mean, low, high = mean_interval([0.6, 0.7, 0.9], bounds=(0.0, 1.0))
    assert [t.get_text() for ax in several.axes for t in ax.texts] == [f"{mean:.2f}\n[{low:.2f}, {high:.2f}]"] * len(METHODS)


def test_das_trains_dbm_over_the_neurons_a_pca_basis_and_an_sae_and_reloads_each_to_its_iia(tiny_classifier_dir, monli_dir, tmp_path):
    """MIB's featurizers as DAS kinds: one row each, the mask's learned size, the saved mask (with its fitted basis)
    scored again to the same held-out IIA."""
    from interp.engine.featurizers import FeatureMask

    out = tmp_path / "dbm"
    common = ["--splits", "pmonli,nmonli_test", "--max-per-split", "30", "--seeds", "0", "--test-pairs", "40"]
    result = _das("--model", tiny_classifier_dir, "--out", out, "--locations", "blocks.1.hook_resid_post@w_h", "--variable", "lexrel",
                  "--kind", "dbm,dbm-pca,dbm-sae", "--train-pairs", "64", "--epochs", "1", "--batch-size", "32", "--lr", "1e-2", *common,
                  monli_dir=monli_dir)  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = {r["subspace"]: r for r in csv.DictReader(open(out / "das.csv"))}
    assert set(rows) == {"dbm", "dbm-pca", "dbm-sae"} and all(0 <= int(r["k"]) for r in rows.values())
    bases = {}
    for kind, row in rows.items():
        mask, _ = load_trained_intervention(out / row["file"])
        assert isinstance(mask, FeatureMask)
        bases[kind] = (mask.featurizer.kind, getattr(mask.featurizer, "name", None), mask.featurizer.n_features)
        scored = _das("--model", tiny_classifier_dir, "--load", out / row["file"], *common, monli_dir=monli_dir)
        assert scored.exit_code == 0 and f"held-out IIA {float(row['das_iia']):.3f}" in scored.output, (kind, scored.output)
    assert bases == {"dbm": ("identity", None, 32), "dbm-pca": ("basis", "pca", 32), "dbm-sae": ("sae", None, 128)}


def test_a_second_run_on_the_same_out_is_refused_at_once_naming_it(tiny_classifier_dir, monli_dir, tmp_path):
    """Two das runs on one --out: the second is one line saying another run writes there (it used to fail halfway with
    'cannot write (No such file or directory)' when the first moved its files into place), and writes nothing."""
    from filelock import FileLock

    out = tmp_path / "run"
    with FileLock(str(tmp_path / ".run.lock")):  # as the first run holds it
        result = _das("--model", tiny_classifier_dir, "--out", out, "--locations", "blocks.1.hook_resid_post@w_h", "--subspace", "4",
                      "--max-examples", "20", "--train-pairs", "16", "--test-pairs", "8", "--epochs", "1", monli_dir=monli_dir)  # fmt: skip
    assert result.exit_code == 2 and "another run is writing into it now" in result.stderr and result.stderr.count("\n") == 1, result.output
    assert not out.exists()
    result = _das("--model", tiny_classifier_dir, "--out", out, "--locations", "blocks.1.hook_resid_post@w_h", "--subspace", "4",
                  "--max-examples", "20", "--train-pairs", "16", "--test-pairs", "8", "--epochs", "1", "--quiet", monli_dir=monli_dir)  # fmt: skip
    assert result.exit_code == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["run"], result.output  # the lock gone with the run
