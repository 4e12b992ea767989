"""`interp demo --seeds`: the whole main job once per fine-tuning seed, and tables that give every seed's figure with the
mean and a t interval over seeds."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from interp.analysis.intervals import mean_interval
from interp.cli import main


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


TOY = Path(__file__).resolve().parents[1] / "examples" / "toy_task" / "task.py"


@pytest.mark.slow(seconds=10)
def test_demo_seeds_runs_each_seed_and_aggregates_every_figure(tiny_encoder_dir, tmp_path):
    """On the tasks guide's toy task (32 examples) with a tiny random encoder: two seeds, each a whole demo run."""
    from interp.core.checksums import sha256_of

    out = tmp_path / "demo"
    common = ("demo", "--task", f"{TOY}:make_task", "--model", tiny_encoder_dir, "--epochs", "2", "--examples", "16",
              "--probe-seeds", "1", "--no-das", "--no-screen", "--out", out)  # fmt: skip
    r = _run(*common, "--seeds", "0,1", "--quiet")
    assert r.exit_code == 0, r.output
    assert "fine-tuning seed varied over 0, 1" in r.stdout and "mean [95% t interval over seeds]" in r.stdout
    metrics = {s: json.loads((out / f"seed{s}" / "metrics.json").read_text()) for s in (0, 1)}
    assert (out / "seed0" / "report" / "index.html").is_file() and (out / "seed1" / "cliques.json").is_file()
    summary = {row["figure"]: row for row in _rows(out / "demo_seeds_summary.csv")}
    accuracy = summary["fine-tuning accuracy on all"]
    values = [metrics[s]["model"]["accuracy"]["all"] for s in (0, 1)]
    assert [float(accuracy["seed_0"]), float(accuracy["seed_1"])] == [round(v, 4) for v in values] and accuracy["seeds"] == "2"
    mean, low, high = mean_interval(values)
    assert abs(float(accuracy["mean"]) - mean) < 1e-4 and abs(float(accuracy["t_low"]) - low) < 1e-4 and abs(float(accuracy["t_high"]) - high) < 1e-4
    assert sha256_of(out / "seed0" / "model" / "model.safetensors") != sha256_of(out / "seed1" / "model" / "model.safetensors")  # another fine-tuning
    stages = {row["stage"] for row in summary.values()}
    assert stages == {"behavioral", "interventions", "cliques"}
    page = (out / "report" / "index.html").read_text(encoding="utf-8")  # one page over the seeds, their table first
    shown = json.loads(re.search(r'id="report-data">(.*?)</script>', page, re.S).group(1).replace("<\\/", "</"))
    (table,) = shown["seeds"]
    assert table["seeds"] == [0, 1] and [r["figure"] for r in table["rows"]] == list(summary)
    assert table["rows"][0]["mean"] == float(summary[table["rows"][0]["figure"]]["mean"])
    assert {b["source"].split("/")[-2] for b in shown["behavioral"]} == {"seed0", "seed1"}
    assert f"the page over seeds: {out}/report/index.html" in r.stdout
    per_seed = _rows(out / "demo_seeds.csv")
    assert {row["seed"] for row in per_seed} == {"0", "1"} and len(per_seed) >= 2 * len([f for f in summary if summary[f]["seeds"] == "2"])
    again = _run(*common, "--seeds", "0,1")  # each seed's run is reused, the tables written again the same
    assert again.exit_code == 0 and "already trained with these settings" in again.stdout
    assert _rows(out / "demo_seeds_summary.csv") == list(summary.values())
    both = _run(*common, "--seeds", "0,1", "--seed", "3")
    assert both.exit_code == 2 and "give --seed (one run) or --seeds (one run per seed), not both" in both.stderr
    repeated = _run(*common, "--seeds", "1,1")
    assert repeated.exit_code == 2 and "--seeds 1,1: give one or more distinct seeds" in repeated.stderr
