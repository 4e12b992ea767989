"""`interp ablate` and `interp steer` on a tiny random BERT and real MoNLI: the figures they print are the library's
calls scored by hand (ablation against the intact model, steering along the class-mean difference computed here), the
random null has the direction's norm, files are written only when asked and never over another's, and bad input is
one line with exit code 2."""

from __future__ import annotations

import csv

import numpy as np
import pytest
import torch
from click.testing import CliRunner

import interp
from interp.causal import run_forward
from interp.cli import main

SITE = "blocks.1.hook_resid_post@w_h"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def lab(tiny_classifier_dir, monli_dir):
    return interp.IntervenableModel(str(tiny_classifier_dir), interp.load_task("monli", data_dir=str(monli_dir)))


def _pred(lab, logits):
    return np.asarray(lab.reading.read)[logits.argmax(-1).numpy()]


def test_ablate_scores_the_ablated_model_against_itself_intact_per_split(lab, tiny_classifier_dir, monli_dir, tmp_path):
    from interp.jobs.steering import AblationConfig, run_ablation
    from interp.api.specs import DataSpec, SampleSpec

    sample = SampleSpec(("pmonli", "nmonli_test"), max_per_split=20, seed=1)
    found = run_ablation(AblationConfig(model=str(tiny_classifier_dir), location=SITE, kind="mean", data=DataSpec(data_dir=str(monli_dir)),
                                        sample=sample))  # fmt: skip
    examples = sample.draw(lab.task)
    gold = np.array([lab.task.labels.index(e.label) for e in examples])
    intact, ablated = _pred(lab, lab.predict(examples)), _pred(lab, lab.ablate(examples, SITE, kind="mean"))
    rows = {r["split"]: r for r in found.rows}
    assert list(rows) == ["pmonli", "nmonli_test", "all"]
    for split, where in (("pmonli", slice(0, 20)), ("nmonli_test", slice(20, 40)), ("all", slice(0, 40))):
        r = rows[split]
        assert r["examples"] == len(gold[where])
        assert float(r["accuracy"]) == pytest.approx((intact[where] == gold[where]).mean())
        assert float(r["ablated_accuracy"]) == pytest.approx((ablated[where] == gold[where]).mean())
        assert float(r["change"]) == pytest.approx(float(r["ablated_accuracy"]) - float(r["accuracy"]))
        assert float(r["changed"]) == pytest.approx((intact[where] != ablated[where]).mean())
        for name in ("accuracy", "ablated_accuracy", "change", "changed"):
            assert r[name].low <= float(r[name]) <= r[name].high, (split, name)
    assert "word pairs" in found.method and "×" not in found.method  # MoNLI's groups resampled whole, over one axis
    assert set(found.to_frame().columns) >= {"split", "change", "change_low", "change_high"}

    out = tmp_path / "ablation"
    result = run("ablate", "--model", tiny_classifier_dir, "--location", SITE, "--kind", "mean", "--splits", "pmonli,nmonli_test",
                 "--max-per-split", "20", "--seed", "1", "--data-dir", monli_dir, "--out", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"mean ablation at {SITE}" in result.stdout and "the null is no change" in result.stdout
    with open(out / "ablation.csv") as handle:
        written = list(csv.DictReader(handle))
    assert [w["split"] for w in written] == ["pmonli", "nmonli_test", "all"]
    assert float(written[2]["change"]) == pytest.approx(float(rows["all"]["change"]), abs=1e-4)
    assert (out / "ablate.manifest.json").is_file()


def test_steer_moves_along_the_class_mean_difference_beside_a_random_direction(lab, tiny_classifier_dir, monli_dir, tmp_path):
    from interp.api.specs import DataSpec, SampleSpec
    from interp.jobs.steering import SteeringConfig, format_effect, run_steering

    sample, reference = SampleSpec(("nmonli_test",), max_examples=30, seed=2), SampleSpec(("nmonli_train",), max_examples=60, seed=2)
    found = run_steering(SteeringConfig(model=str(tiny_classifier_dir), location=SITE, variable="lexrel", to="reverse", scales=(1.0, 50.0),
                                        data=DataSpec(data_dir=str(monli_dir)), sample=sample, reference=reference))  # fmt: skip
    examples, refs = sample.draw(lab.task), reference.draw(lab.task)
    causal = lab.task.build_causal_model([*examples, *refs])
    vectors = lab.source_vectors(refs, SITE).cpu()
    reverse = torch.tensor([e.lexrel.value == "reverse" for e in refs])
    direction = vectors[reverse].mean(0) - vectors[~reverse].mean(0)
    assert found.settings["norm"] == pytest.approx(float(direction.norm()), rel=1e-5)
    reverse_value = next(run_forward(causal, lab.task.inputs(e))["lexrel"] for e in refs if e.lexrel.value == "reverse")
    target = np.array([lab.task.labels.index(run_forward(causal, lab.task.inputs(e), {"lexrel": reverse_value})[causal.output]) for e in examples])
    eligible = np.array([e.lexrel.value == "forward" for e in examples])  # setting lexrel to reverse flips the label where it was forward
    own = _pred(lab, lab.predict(examples))
    assert [(r["direction"], r["scale"]) for r in found.rows] == [("direction", 1.0), ("direction", 50.0), ("random", 1.0), ("random", 50.0)]
    for r in found.rows[:2]:
        pred = _pred(lab, lab.steer(examples, SITE, direction, scale=r["scale"]))
        assert r["eligible"] == eligible.sum() > 0
        assert float(r["changed"]) == pytest.approx((pred != own).mean())
        assert float(r["to_counterfactual"]) == pytest.approx((pred == target)[eligible].mean())
        assert float(r["before"]) == pytest.approx((own == target)[eligible].mean())
    # The null is a random direction of the same norm, seeded: the same seed gives the same rows.
    again = run_steering(SteeringConfig(model=str(tiny_classifier_dir), location=SITE, variable="lexrel", to="reverse", scales=(1.0, 50.0),
                                        data=DataSpec(data_dir=str(monli_dir)), sample=sample, reference=reference))  # fmt: skip
    assert [float(r["changed"]) for r in again.rows] == [float(r["changed"]) for r in found.rows]
    text = format_effect(found)
    assert "towards lexrel = reverse" in text and "random" in text and "of the" in text

    result = run("steer", "--model", tiny_classifier_dir, "--location", SITE, "--to", "reverse", "--scales", "1,50", "--splits", "nmonli_test",
                 "--max-examples", "30", "--seed", "2", "--data-dir", monli_dir)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "towards lexrel = reverse" in result.stdout and not list(tmp_path.iterdir())  # nothing written without --out


@pytest.mark.parametrize(
    "args, message",
    [
        (("ablate", "--kind", "half"), "--kind 'half': choose zero or mean"),
        (("ablate", "--kind", "zero", "--reference-splits", "pmonli"), "--reference-splits: a zero ablation takes no reference set"),
        (("steer", "--to", "sideways"), "--to 'sideways': lexrel takes ⊏ (forward), ⊐ (reverse) on the reference examples"),
        (("steer", "--to", "reverse", "--scales", "1,nan"), "--scales 1.0,nan: give one or more finite numbers"),
        (("steer", "--to", "reverse", "--variable", "colour"), "colour"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message, tiny_classifier_dir, monli_dir, tmp_path):
    result = run(*args, "--model", tiny_classifier_dir, "--location", SITE, "--data-dir", monli_dir, "--max-examples", "8", "--out", tmp_path / "o")
    assert result.exit_code == 2 and message in result.stderr and result.stderr.count("\n") == 1, result.output
    assert not (tmp_path / "o").exists()


def test_an_out_folder_holding_a_file_interp_did_not_write_is_refused(tiny_classifier_dir, monli_dir, tmp_path):
    (tmp_path / "ablation.csv").write_text("mine\n")
    result = run("ablate", "--model", tiny_classifier_dir, "--location", SITE, "--max-examples", "8", "--data-dir", monli_dir, "--out", tmp_path)
    assert result.exit_code == 2 and "interp did not write it" in result.stderr, result.output
    assert (tmp_path / "ablation.csv").read_text() == "mine\n"


def test_a_steering_vector_of_no_numbers_or_one_that_overflows_the_model_is_refused_naming_it(lab):
    examples = lab.task.examples(("nmonli_test",), per_split=3, seed=0)
    width = lab.width(examples, SITE)
    with pytest.raises(interp.ConfigError, match=r"vector.* must be a list or tensor of numbers") as caught:
        lab.steer(examples, SITE, ["a"] * width)
    assert "\n" not in str(caught.value)
    early = "blocks.0.hook_resid_post@w_h"  # a block reads it after (SITE is the last block's, which the head never reads at w_h)
    huge = torch.zeros(width)
    huge[0] = 1e38  # finite, but ten of it is not
    with pytest.raises(interp.ConfigError, match=r"vector.* times scale = 10.0 overflows the model: its logits are not finite"):
        lab.steer(examples, early, huge, scale=10.0)
    assert torch.isfinite(lab.steer(examples, early, huge / 1e36, scale=10.0)).all()  # a large but finite step is run


def test_steer_caps_its_reference_set_and_says_each_warning_once(tiny_classifier_dir, monli_dir):
    result = run("steer", "--model", tiny_classifier_dir, "--data-dir", monli_dir, "--location", SITE, "--to", "forward",
                 "--max-examples", "12", "--max-reference", "100", "--scales", "1,2", "--quiet")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "difference of class means over 100 examples of pmonli, nmonli_train" in result.stdout
    warned = [line for line in result.stderr.splitlines() if line.startswith("interp: warning:")]
    assert warned and len(warned) == len(set(warned))  # the at-chance check of every scale and direction, said once
    assert run("steer", "--model", tiny_classifier_dir, "--data-dir", monli_dir, "--location", SITE, "--to", "forward",
               "--max-reference", "0").exit_code == 2


def test_beside_each_flip_count_stands_a_continuous_figure_read_from_the_logits(lab, monli_dir):
    """Ablation's margin change and steering's logit shift (on the examples whose counterfactual is not the model's own
    answer) equal the logits read by hand, each with its interval; both printed."""
    from interp.api import ablation, effects

    task = lab.task
    examples = task.examples(("pmonli", "nmonli_test"), per_split=12, seed=2)
    columns = np.arange(len(task.labels))  # the tiny model's labels are the task's, in order
    assert list(np.asarray(lab.reading.read)) == list(columns)
    found = effects.ablation_effect(lab, examples, SITE, kind="zero")
    before, after = lab.predict(examples).double(), ablation.ablate(lab, examples, SITE, kind="zero").double()
    own = before.argmax(-1)
    rows = torch.arange(len(examples))

    def margin(z):
        others = z.clone()
        others[rows, own] = -torch.inf
        return z[rows, own] - others.max(-1).values

    whole = next(r for r in found.rows if r["split"] == "all")
    assert float(whole["margin_change"]) == pytest.approx((margin(after) - margin(before)).mean().item(), abs=1e-5)
    assert whole["margin_change"].low <= whole["margin_change"] <= whole["margin_change"].high
    reference = task.examples(("nmonli_train",), n=60, seed=0)
    steered = effects.steering_effect(lab, examples, reference, SITE, "lexrel", "reverse", scales=(0.5,))
    causal = task.build_causal_model([*{e.id: e for e in [*examples, *reference]}.values()])
    setting = next(v for v in causal.values["lexrel"] if "reverse" in effects._spellings(v))
    target = torch.tensor([task.labels.index(run_forward(causal, task.inputs(e), {"lexrel": setting})[causal.output]) for e in examples])
    output = torch.tensor([task.labels.index(run_forward(causal, task.inputs(e))[causal.output]) for e in examples])
    direction = effects._direction(lab, reference, lab.location(SITE), "lexrel", effects.value_name(setting), causal)
    pushed = ablation.steer(lab, examples, SITE, direction, scale=0.5).double()
    moved = (pushed[rows, target] - pushed[rows, own]) - (before[rows, target] - before[rows, own])
    mask = (target != output) & (target != own)
    assert float(steered.rows[0]["logit_shift"]) == pytest.approx(moved[mask].mean().item(), abs=1e-5)
    assert "logit shift" in effects.format_effect(steered) and "margin change" in effects.format_effect(found)
