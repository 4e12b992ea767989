"""`interp inoculate`: every (k, setting) unit runs once, each k keeps its best dev average, and the figures are on test."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from interp.cli import main
from interp.core.errors import InterpWarning


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_pmonli_heldout_is_a_fixed_fifth_of_pmonli_that_pmonli_train_lacks(monli_dir):
    from interp.tasks.monli import load_monli

    pmonli = load_monli(monli_dir, ("pmonli",))
    train, held = load_monli(monli_dir, ("pmonli_train",)), load_monli(monli_dir, ("pmonli_heldout",))
    assert {e.id for e in train}.isdisjoint(e.id for e in held)
    assert sorted(e.id for e in train + held) == sorted(e.id for e in pmonli)
    assert 0.17 < len(held) / len(pmonli) < 0.23 and {e.split for e in held} == {"pmonli_heldout"}
    assert [e.id for e in load_monli(monli_dir, ("pmonli_heldout",))] == [e.id for e in held]  # fixed by id, not by a draw
    assert {e.label for e in held} == {"entailment", "neutral"}


@pytest.fixture(scope="module")
def monli_run(tiny_classifier_dir, monli_dir, tmp_path_factory, ):
    out = tmp_path_factory.mktemp("inoc") / "monli"
    args = ("inoculate", "--model", tiny_classifier_dir, "--original", "monli:pmonli_heldout", "--challenge", "monli:nmonli_train",
            "--challenge-eval", "nmonli_test", "--k", "8,24", "--lr", "1e-3,1e-4", "--epochs", "1", "--out", out, "--quiet")  # fmt: skip
    result = run(*args)
    assert result.exit_code == 0, result.stderr
    return out, args, result.stdout


def test_every_unit_trains_with_the_inoculation_recipe_not_the_fine_tuning_default(tiny_classifier_dir, monli_dir, tmp_path, monkeypatch):
    """The grid varies lr and epochs; each unit's warm-up (0.1) and batch (16) are inoculation's own, whatever
    ``interp train``'s default recipe is, so a grid's units keep their figures when that default moves."""
    import interp.api.training as training
    import interp.jobs.inoculate as inoculate
    from interp.models.settings import FineTuneSettings

    seen, real = [], training.fit  # the one training loop: fine_tune's, interp train's and inoculation's
    monkeypatch.setattr(training, "fit", lambda model, encoded, settings, *a, **k: seen.append(settings) or real(model, encoded, settings, *a, **k))
    result = run("inoculate", "--model", tiny_classifier_dir, "--original", "monli:pmonli_heldout", "--challenge", "monli:nmonli_train",
                 "--challenge-eval", "nmonli_test", "--k", "8", "--lr", "1e-3", "--epochs", "1",
                 "--out", tmp_path / "inoc", "--quiet")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert seen and {(s.warmup_ratio, s.batch_size, s.lr, s.epochs) for s in seen} == {(inoculate.WARMUP_RATIO, 16, 1e-3, 1)}
    assert FineTuneSettings().warmup_ratio != inoculate.WARMUP_RATIO  # the null: the default recipe would train another warm-up


def _rows(out: Path) -> list[dict]:
    with open(out / "inoculation.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def test_each_k_keeps_the_unit_with_the_best_dev_average_and_only_its_weights(monli_run):
    out, _, stdout = monli_run
    rows = _rows(out)
    assert [r["unit"] for r in rows] == ["k0", "k8-lr0.001-e1-s0", "k8-lr0.0001-e1-s0", "k24-lr0.001-e1-s0", "k24-lr0.0001-e1-s0"]
    assert [r["lr"] for r in rows] == ["0", "0.001", "0.0001", "0.001", "0.0001"]
    selected = json.loads((out / "selected.json").read_text())["selected"]
    assert [s["k"] for s in selected] == [0, 8, 24]
    for s in selected[1:]:
        same = [r for r in rows if r["k"] == str(s["k"])]
        best = max(float(r["dev_average"]) for r in same)
        assert s["dev_average"] == pytest.approx(best, abs=1e-4) and s["unit"] in [r["unit"] for r in same]
        record = json.loads((out / "models" / f"k{s['k']}" / "training.json").read_text())
        assert record["unit"] == s["unit"]
    assert sorted(p.name for p in (out / "models").iterdir()) == ["k24", "k8"]
    for r in rows:
        assert float(r["dev_average"]) == pytest.approx((float(r["original_dev"]) + float(r["challenge_dev"])) / 2, abs=1e-4)
    assert (out / "inoculation.png").read_bytes()[:4] == b"\x89PNG" and "k24-lr" in stdout


def test_the_kept_model_scores_what_its_unit_recorded_on_the_test_halves(monli_run, monli_dir):
    """The reference: reload the selected checkpoint and score the test half with the plain evaluation path."""
    from interp.core.subsets import hashed_split
    from interp.jobs.inoculate import HALVES_SALT
    from interp.models import evaluate, load_classifier
    from interp.tasks.monli import LABELS, load_monli

    out, _, _ = monli_run
    chosen = json.loads((out / "selected.json").read_text())["selected"][1]
    model, tokenizer = load_classifier(chosen["model"], require_head=True)
    original_test = hashed_split(load_monli(monli_dir, ("pmonli_heldout",)), lambda e: e.id, 0.5, HALVES_SALT)[1]
    challenge_test = hashed_split(load_monli(monli_dir, ("nmonli_test",)), lambda e: e.id, 0.5, HALVES_SALT)[1]
    assert evaluate(model, tokenizer, original_test, labels=LABELS)["pmonli_heldout"]["accuracy"] == pytest.approx(chosen["original_test"], abs=1e-9)
    assert evaluate(model, tokenizer, challenge_test, labels=LABELS)["nmonli_test"]["accuracy"] == pytest.approx(chosen["challenge_test"], abs=1e-9)
    before, _ = load_classifier(json.loads((out / "selected.json").read_text())["settings"]["model"], require_head=True)
    k0 = json.loads((out / "selected.json").read_text())["selected"][0]
    assert evaluate(before, tokenizer, original_test, labels=LABELS)["pmonli_heldout"]["accuracy"] == pytest.approx(k0["original_test"], abs=1e-9)


def test_each_reported_accuracy_carries_its_interval_over_the_held_out_examples(monli_run, monli_dir):
    """Every test accuracy in selected.json, the CSV and the printed table has its 95% Wilson interval over the test half
    it was scored on; the averages of the two tasks a normal-approximation interval around them."""
    from interp.core.estimates import wilson
    from interp.core.subsets import hashed_split
    from interp.jobs.inoculate import HALVES_SALT
    from interp.tasks.monli import load_monli

    out, _, stdout = monli_run
    n_original = len(hashed_split(load_monli(monli_dir, ("pmonli_heldout",)), lambda e: e.id, 0.5, HALVES_SALT)[1])
    n_challenge = len(hashed_split(load_monli(monli_dir, ("nmonli_test",)), lambda e: e.id, 0.5, HALVES_SALT)[1])
    selected = json.loads((out / "selected.json").read_text())["selected"]
    for s in selected:
        for name, n in (("original_test", n_original), ("challenge_test", n_challenge)):
            expected = wilson(round(s[name] * n), n)
            assert (s[f"{name}_low"], s[f"{name}_high"]) == pytest.approx((expected.low, expected.high))
        for part in ("test", "dev"):
            assert s[f"{part}_average_low"] < s[f"{part}_average"] < s[f"{part}_average_high"]
        assert f"{100 * s['challenge_test']:.1f} [{100 * s['challenge_test_low']:.1f}, {100 * s['challenge_test_high']:.1f}]" in stdout
    assert all(float(r["original_test_low"]) <= float(r["original_test"]) <= float(r["original_test_high"]) for r in _rows(out))
    assert "95% interval over the held-out examples" in stdout


def test_a_rerun_redoes_only_the_missing_unit_and_ends_the_same(monli_run):
    out, args, _ = monli_run
    before = _rows(out)
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "units").iterdir()}
    (out / "units" / "k24-lr0.0001-e1-s0.json").unlink()
    result = run(*args)
    assert result.exit_code == 0, result.stderr
    after = {p.name: p.stat().st_mtime_ns for p in (out / "units").iterdir()}
    assert [n for n in after if after[n] != stamps.get(n)] == ["k24-lr0.0001-e1-s0.json"]
    strip = lambda rows: [{k: v for k, v in r.items() if k != "seconds"} for r in rows]  # noqa: E731
    assert strip(_rows(out)) == strip(before)


def test_a_two_label_model_trains_on_a_three_label_fragment_through_its_mapping(tiny_classifier_dir, monli_dir, tmp_path):
    """Contradiction is read as non-entailment (neutral) for training and scoring, and the unit runs."""
    from interp.jobs.inoculate import InoculateConfig, run_inoculation

    config = InoculateConfig(
        model=str(tiny_classifier_dir), original="monli:pmonli_heldout", challenge="fragment:negation", out=str(tmp_path / "f"),
        ks=(12,), lrs=(1e-3,), epochs=(1,), fold_labels=True,
    )  # fmt: skip
    with pytest.warns(InterpWarning, match="gold contradiction is scored as neutral"):
        rows, selected = run_inoculation(config, progress=False)
    settings = json.loads((tmp_path / "f" / "selected.json").read_text())["settings"]
    assert settings["label_mapping"] == {"contradiction": "neutral"} and settings["challenge_eval"] == "fragment:negation dev / test"
    assert [r["k"] for r in selected] == [0, 12] and 0 <= selected[1]["challenge_test"] <= 1


@pytest.mark.parametrize(
    "change, message",
    [
        ({"--k": ""}, "--k names nothing"),
        ({"--k": "2000"}, "--k 2000 is larger than monli's nmonli_train split (1002 examples)"),
        ({"--challenge": "fragment:nonsense"}, "no such semantic fragment"),
        ({"--original": "monli:pmonli_nope"}, "has no split 'pmonli_nope'"),
        ({"--original": "monli"}, "task 'monli' has no dev and test splits; name one to halve, as monli:SPLIT"),
        ({"--challenge-eval": None}, "--challenge-eval: task 'monli' has no dev and test splits; name one of its splits to halve, as SPLIT"),
        ({"--lr": "fast"}, "--lr takes comma-separated numbers"),
        ({"--out": "/dev/null/o"}, "--out /dev/null/o/units: cannot create directory"),
    ],
)
def test_bad_input_gives_one_line_and_exit_2(tiny_classifier_dir, tmp_path, change, message):
    options = {"--model": tiny_classifier_dir, "--original": "monli:pmonli_heldout", "--challenge": "monli:nmonli_train",
               "--challenge-eval": "nmonli_test", "--k": "8", "--out": tmp_path / "o"}  # fmt: skip
    options = {k: v for k, v in {**options, **change}.items() if v is not None}  # None: the option left out
    result = run("inoculate", *[x for kv in options.items() for x in kv], "--quiet")
    assert result.exit_code == 2 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "o").exists()


def test_the_report_page_shows_each_k_s_choice(monli_run):
    from test_report import page_data

    out, _, _ = monli_run
    result = run("report", out)
    assert result.exit_code == 0, result.stderr
    (shown,) = page_data(out / "report" / "index.html")["inoculation"]
    assert shown["selected"] == json.loads((out / "selected.json").read_text())["selected"]


def test_the_figure_command_tables_each_run_from_its_csv_and_draws_a_panel_per_run(monli_run, tmp_path):
    """The reference: the lossless choice over every k > 0 and the k-max mean, recomputed from the CSV by hand."""
    from interp.analysis.intervals import mean_interval
    from interp.jobs.inoculation_figure import inoculation_table, read_inoculation

    out, _, _ = monli_run
    rows = [r for r in _rows(out) if r["k"] != "0"]
    best_dev = max(float(r["dev_average"]) for r in rows)
    best = next(r for r in rows if float(r["dev_average"]) == best_dev)  # ties: the earlier (smaller k) unit
    (table_row,) = inoculation_table([read_inoculation(out)]).to_dict("records")
    assert table_row["challenge_after"] == pytest.approx(100 * float(best["challenge_test"]), abs=1e-2)
    assert table_row["chosen"] == best["unit"] and table_row["k_max"] == 24 and table_row["units"] == 4
    mean, low, high = mean_interval([100 * float(r["challenge_test"]) for r in rows if r["k"] == "24"])
    assert (table_row["challenge_at_k_max"], table_row["challenge_at_k_max_low"]) == pytest.approx((mean, low), abs=1e-2)
    result = run("inoculation-figure", out, out, "--out", tmp_path / "panels.png", "--columns", 2)
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "panels.png").read_bytes()[:4] == b"\x89PNG" and result.stdout.count(out.name) == 2 and "challenge_after" in result.stdout


def test_the_figure_command_names_a_folder_that_is_not_a_finished_run(tmp_path):
    (tmp_path / "half").mkdir()
    result = run("inoculation-figure", tmp_path / "half", "--out", tmp_path / "panels.png")
    assert result.exit_code == 2 and "selected.json: missing" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "panels.png").exists()
