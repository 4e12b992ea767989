"""Tasks: the MoNLI task's variables, a user's task from a file, and interventions on variables other than lexrel."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from interp.analysis.iia import summarize
from interp.causal import interchange_table
from interp.cli import main
from interp.core.errors import ConfigError, DataError
from interp.tasks import Task, WordPairs, resolve_task
from interp.tasks.monli import LABELS, ROLES, Lexrel, load_monli

REPO = Path(__file__).resolve().parents[1]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_monli_task_values_follow_infer(monli_dir):
    task = resolve_task("monli", data_dir=str(monli_dir))
    examples = task.load(("pmonli", "nmonli_test"))
    causal = task.build_causal_model(examples)
    assert task.variables == ("lexrel", "negated", "output") and task.labels == LABELS
    lexrel, negated, output = (task.values(causal, examples, v) for v in task.variables)
    assert lexrel.names == ("⊏", "⊐") and negated.names == ("False", "True") and output.names == ("⊏", "⊐")
    for i, e in enumerate(examples):
        assert lexrel.codes[i] == (0 if e.lexrel is Lexrel.FORWARD else 1)
        assert negated.codes[i] == int(e.negated)
        # output is lexrel reversed under negation, and decides the label (⊏ entailment)
        assert output.codes[i] == lexrel.codes[i] ^ negated.codes[i]
        assert LABELS[output.codes[i]] == e.label


def test_task_refuses_bad_declarations_and_unknown_variables(monli_dir):
    with pytest.raises(ConfigError, match="variable 'x' is aligned to unknown role"):
        Task(name="t", labels=LABELS, splits=("a",), load=list, roles=ROLES, alignment={"x": ("w_q",)})
    with pytest.raises(ConfigError, match="token role 'w h' is not a name"):
        Task(name="t", labels=LABELS, splits=("a",), load=list, roles=("cls", "w h"))
    with pytest.raises(ConfigError, match="causal_model and inputs come together"):
        Task(name="t", labels=LABELS, splits=("a",), load=list, roles=ROLES, inputs=dict)
    behavioral = Task(name="b", labels=LABELS, splits=("a",), load=list, roles=ROLES)
    with pytest.raises(ConfigError, match="variable='lexrel': task 'b' has no causal model"):
        behavioral.check_variable("lexrel")
    with pytest.raises(ConfigError, match="task='nope': not a built-in task"):
        resolve_task("nope")
    pairs = WordPairs(premise="w_p", hypothesis="w_q", variable="lexrel", general={"⊏": "w_h"})
    with pytest.raises(ConfigError, match="word_pairs .* names a role or variable the task lacks"):
        Task(name="t", labels=LABELS, splits=("a",), load=list, roles=ROLES, alignment={"lexrel": ("w_h",)}, word_pairs=pairs)
    monli = resolve_task("monli")
    assert WordPairs.from_json(monli.word_pairs.to_json()) == monli.word_pairs and monli.probe_targets == ("lexrel", "infer")


TOY_TASK = REPO / "examples" / "toy_task" / "task.py"  # the tasks guide's example


def test_the_tasks_guide_shows_the_example_task_as_it_is():
    guide = (REPO / "docs" / "guides" / "tasks.md").read_text(encoding="utf-8")
    assert TOY_TASK.read_text(encoding="utf-8").strip() in guide


def test_a_causal_model_that_misses_a_gold_label_is_refused_naming_the_example():
    task = resolve_task(f"{TOY_TASK}:make_task")
    examples = task.load(("all",))
    spoiled = [replace(examples[0], label="neutral" if examples[0].label == "entailment" else "entailment"), *examples[1:]]
    with pytest.raises(ConfigError, match="does not fit the dataset: it labels example toy:1 "):
        task.build_causal_model(spoiled)


def test_a_tasks_examples_are_checked_as_they_load():
    """Ids unique within a split and gold labels among the task's, for every loader (the task's own load is wrapped once)."""
    task = resolve_task(f"{TOY_TASK}:make_task")
    examples = task.load(("all",))
    assert len({e.id for e in examples}) == len(examples)  # the toy task itself passes
    repeated = replace(task, load=lambda splits: [*examples, examples[2]])
    with pytest.raises(DataError, match="example id 'toy:3' occurs twice in split 'all'"):
        repeated.load(("all",))
    unknown = replace(task, load=lambda splits: [replace(examples[0], label="maybe"), *examples[1:]])
    with pytest.raises(DataError, match="example 'toy:1' has gold label 'maybe'"):
        unknown.examples(("all",))
    assert replace(task, name="again").load(("all",)) == examples  # a copy wraps the original loader once
    with pytest.raises(DataError, match="has gold label 'entailment'"):  # a copy with other labels checks against its own
        replace(task, labels=("contradiction", "neutral")).load(("all",))
    lacking = [replace(e, words={"noun_p": e.words["noun_p"]}) if i == 4 else e for i, e in enumerate(examples)]
    with pytest.raises(DataError, match="example 'toy:5' has no word for role 'noun_h'"):
        replace(task, load=lambda splits: lacking).load(("all",))
    assert replace(task, load=lambda splits: lacking, optional_roles=("noun_h",)).load(("all",)) == lacking  # declared: allowed
    with pytest.raises(ConfigError, match="optional role 'noun_x' is not one of its roles"):
        replace(task, optional_roles=("noun_x",))


def test_a_users_task_runs_cache_probe_intervene_and_cliques(tiny_classifier_dir, monli_dir, tmp_path):
    task = f"{TOY_TASK}:make_task"
    chosen = [json.loads(line) for line in (TOY_TASK.parent / "pairs.jsonl").read_text().splitlines()]
    cache = tmp_path / "act.h5"
    result = run("cache", "--task", task, "--model", tiny_classifier_dir, "--out", cache, "--quiet")
    assert result.exit_code == 0, result.stderr
    with h5py.File(cache, "r") as f:
        assert f.attrs["task"] == "toy" and sorted(f["values"]) == ["negated", "up"]
        assert list(f["words/noun_h"].asstr()[:]) == [r["w_h"] for r in chosen]
        assert list(f["positions"].attrs["roles"]) == ["cls", "noun_p", "noun_h"]
    probes = tmp_path / "probes"
    result = run("probe", "--cache", cache, "--out", probes, "--locations", "blocks.1.hook_resid_post@noun_h,blocks.1.hook_resid_post@cls",
                 "--probes", "linear", "--probe-seeds", "1", "--folds", "2", "--quiet")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    import csv

    rows = list(csv.DictReader(open(probes / "probes.csv", encoding="utf-8")))
    assert {r["target"] for r in rows} == {"label", "negated", "up"} and len(rows) == 2 * 3
    iv = tmp_path / "iv.h5"
    result = run("intervene", "--task", task, "--model", tiny_classifier_dir, "--variable", "up,negated",
                 "--locations", "blocks.1.hook_resid_post", "--out", iv, "--quiet")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    with h5py.File(iv, "r") as f:
        assert f.attrs["task"] == "toy" and list(f.attrs["variables"]) == ["up", "negated"]
        # the bare site stands for the roles the variables are aligned to: noun_h (up) and cls (negated)
        assert list(f.attrs["locations"]) == ["blocks.1.hook_resid_post@cls", "blocks.1.hook_resid_post@noun_h"]
        up = f["values/up"][:]
    assert up.tolist() == [0 if r["relation"] == "up" else 1 for r in chosen]  # declared values (True, False)
    out = tmp_path / "cl"
    result = run("cliques", "--interventions", iv, "--location", "blocks.1.hook_resid_post@noun_h", "--variable", "up", "--min-size", "2", "--out", out)
    assert result.exit_code == 0, result.stderr
    report = json.loads((out / "cliques.json").read_text())
    assert report["task"] == "toy" and report["variable"] == "up" and report["values"] == ["True", "False"]
    assert report["graph"]["nodes_per_value"] == {"True": int((up == 0).sum()), "False": int((up == 1).sum())}
    result = run("cliques", "--interventions", iv, "--location", "blocks.1.hook_resid_post@noun_h", "--out", out)
    assert result.exit_code == 2 and "holds 2 variables (up, negated): name one with --variable" in result.stderr


def test_causal_pairs_and_edges_come_from_the_intervened_variable(tiny_classifier_dir, monli_dir, tmp_path):
    """Issue #15: on `negated` the causal pairs and edges are those whose negation differs; lexrel's column would give others."""
    iv = tmp_path / "iv.h5"
    result = run("intervene", "--model", tiny_classifier_dir, "--variable", "negated,lexrel", "--splits", "pmonli,nmonli_test",
                 "--max-examples", "30", "--locations", "blocks.0.hook_resid_post@cls", "--out", iv, "--data-dir", monli_dir, "--quiet")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    with h5py.File(iv, "r") as f:
        ids = list(f["example_ids"].asstr()[:])
        negated, lexrel = f["values/negated"][:], f["values/lexrel"][:]
        causal_negated = f["negated/blocks.0.hook_resid_post@cls/causal_pred"][:]
        model_pred = f["interchange/blocks.0.hook_resid_post@cls/model_pred"][:]
    by_id = {e.id: e for e in load_monli(monli_dir, ("pmonli", "nmonli_test"))}
    chosen = [by_id[i] for i in ids]
    assert negated.tolist() == [int(e.negated) for e in chosen]
    task = resolve_task("monli", data_dir=str(monli_dir))
    inputs = [task.inputs(e) for e in chosen]
    expected = interchange_table(task.build_causal_model(chosen), inputs, inputs, "negated")
    np.testing.assert_array_equal(causal_negated, np.vectorize(LABELS.index)(expected))
    pairs_negated = int((negated[:, None] != negated[None, :]).sum())
    pairs_lexrel = int((lexrel[:, None] != lexrel[None, :]).sum())
    assert pairs_negated != pairs_lexrel  # so the checks below would fail on lexrel's column
    summary = summarize(iv, variable="negated")
    assert summary["variable"] == "negated" and summary["causal_pairs"] == pairs_negated
    with h5py.File(iv, "r") as f:
        base_pred = f["base_pred"][:]
    causal = negated[:, None] != negated[None, :]
    assert summary["copies_source_causal"] == pytest.approx((model_pred == base_pred[None, :])[causal].mean())
    assert summary["stays_base_causal"] == pytest.approx((model_pred == base_pred[:, None])[causal].mean())
    assert summary["iia_causal"] == pytest.approx((model_pred == causal_negated)[causal].mean())
    out = tmp_path / "cl"
    result = run("cliques", "--interventions", iv, "--variable", "negated", "--min-size", "2", "--out", out)
    assert result.exit_code == 0, result.stderr
    report = json.loads((out / "cliques.json").read_text())
    agree = (model_pred == causal_negated)
    edges = agree & agree.T & np.diagonal(agree)[:, None] & np.diagonal(agree)[None, :]
    np.fill_diagonal(edges, False)
    assert report["graph"]["causal_edges"] == int((edges & (negated[:, None] != negated[None, :])).sum() // 2)
    assert set(report["graph"]["block_densities"]) == {"False", "True", "False|True"}
    # a variable the file does not hold is refused, naming it
    result = run("cliques", "--interventions", iv, "--variable", "output", "--out", out)
    assert result.exit_code == 2 and "not for 'output'" in result.stderr


def test_a_users_task_trains_and_evaluates(tiny_encoder_dir, tmp_path):
    task = f"{TOY_TASK}:make_task"
    out = tmp_path / "model"
    result = run("train", "--task", task, "--model", tiny_encoder_dir, "--epochs", "1", "--batch-size", "8", "--out", out, "--quiet")
    assert result.exit_code == 0, result.stderr
    info = json.loads((out / "training.json").read_text())
    assert info["n_train"] == 32 and info["config"]["task"] == task and list(info["metrics"]) == ["all"]
    result = run("evaluate", "--task", task, "--model", out, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == info["metrics"]  # the checkpoint on disk is the model that was scored
    result = run("evaluate", "--task", task, "--model", out, "--splits", "test")
    assert result.exit_code == 2 and "unknown split 'test'; choose from all" in result.stderr


def test_a_task_declares_its_demo_stages_and_they_are_checked():
    """Issue #29 item 4: a task owns its behavioral stage and demo plan; a declaration naming what the task lacks is refused."""
    from interp.tasks.stages import STUDIED, BehavioralStage, Check, DemoPlan, Training

    toy = resolve_task(f"{TOY_TASK}:make_task")
    assert toy.behavioral is None and toy.behavioral_stage.trainings == (Training("fine-tuning", STUDIED, ("all",)),)
    assert toy.demo_plan == DemoPlan() and toy.demo_plan.site == "aligned"
    with pytest.raises(ConfigError, match="exactly one of at_most and at_least"):
        Check("c", "t", "all", at_most=0.2, at_least=0.1)
    with pytest.raises(ConfigError, match="one writes 'model'"):
        BehavioralStage(trainings=(Training("a", "a_model", ("all",)),))
    with pytest.raises(ConfigError, match="check 'c' reads a training the stage does not run"):
        BehavioralStage(trainings=(Training("a", "model", ("all",)),), checks=(Check("c", "b", "all", at_least=0.5),))
    with pytest.raises(ConfigError, match="names split 'test', which it lacks"):
        replace(toy, behavioral=BehavioralStage(trainings=(Training("a", "model", ("test",)),)))
    with pytest.raises(ConfigError, match="demo plan names a variable the task lacks"):
        replace(toy, demo=DemoPlan(site="probes", clique_variable="lexrel"))
    with pytest.raises(ConfigError, match="names its clique_variable"):
        DemoPlan(site="probes")
    check = Check("c", "a", "all", at_most=0.25)
    assert (check.holds(0.25), check.holds(0.26)) == (True, False)
    assert check.to_json(0.3) == {"all": 0.3, "at_most": 0.25, "holds": False}
    monli = resolve_task("monli")
    assert [t.directory for t in monli.behavioral.trainings] == ["challenge_model", "model"] and monli.demo.site == "probes"


def test_a_users_task_with_its_own_behavioral_stage_runs_the_demo(tiny_encoder_dir, tmp_path):
    """The demo runs a user's stage (two fine-tunings, a check) and plan like MoNLI's: no job knows the task."""
    spec = tmp_path / "staged.py"
    spec.write_text(
        "from dataclasses import replace\n"
        "import importlib.util\n"
        "from interp.tasks.stages import BehavioralStage, Check, DemoPlan, Training\n"
        f"s = importlib.util.spec_from_file_location('toy_for_stage', {str(TOY_TASK)!r}); m = importlib.util.module_from_spec(s); s.loader.exec_module(m)\n"
        "def make_task():\n"
        "    stage = BehavioralStage(trainings=(Training('short', 'short_model', ('all',)), Training('full', 'model', ('all',))),\n"
        "                            checks=(Check('beats_nothing', 'full', 'all', at_least=0.0), Check('never', 'short', 'all', at_most=-1.0)),\n"
        "                            paper={'paper_toy': {'all': 100.0}})\n"
        "    return replace(m.make_task(), behavioral=stage, demo=DemoPlan(probe_locations='aligned', site='aligned', variables=('up',)))\n"
    )
    out = tmp_path / "demo"
    result = run("demo", "--task", f"{spec}:make_task", "--model", tiny_encoder_dir, "--epochs", "1", "--examples", "12",
                 "--probe-seeds", "1", "--no-das", "--no-screen", "--out", out, "--quiet")  # fmt: skip
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "metrics.json").read_text())
    for directory, name in (("short_model", "short"), ("model", "full")):
        trained = json.loads((out / directory / "training.json").read_text())
        assert metrics[directory]["accuracy"]["all"] == trained["metrics"]["all"]["accuracy"], name
    full = metrics["model"]["accuracy"]["all"]
    assert metrics["checks"] == {
        "beats_nothing": {"all": full, "at_least": 0.0, "holds": True},
        "never": {"all": metrics["short_model"]["accuracy"]["all"], "at_most": -1.0, "holds": False},
    }
    assert metrics["paper_toy"] == {"all": 100.0}
    from interp.analysis.report.collect import behavioral_from_metrics

    page = behavioral_from_metrics(out / "metrics.json")  # the report shows every training of the stage
    assert [r["model"] for r in page["rows"]] == ["short_model", "model"]
    assert page["paper"] == [{"source": "toy", "model": "", "trained_on": "", "figures": "all 100.0%"}]
    assert page["effects"][1].startswith(f"Never does not hold: short_model on all {100 * metrics['short_model']['accuracy']['all']:.1f}% [")
    assert "beats_nothing: holds" in result.output and "never: DOES NOT HOLD" in result.output
    assert "Wall time by stage: fine-tuning " in result.output  # the stage's own title, not MoNLI's "Table 1"
    assert f"{100 * full:.1f}" in result.output
    with h5py.File(out / "interventions.h5", "r") as f:
        assert list(f.attrs["variables"]) == ["up"] and f["split"].shape == (12,)
    assert json.loads((out / "cliques.json").read_text())["variable"] == "up"
