"""The three settings objects every job shares (interp.api.specs): checked when built, a task resolved once, files' names kept."""

from __future__ import annotations

from dataclasses import replace

import pytest

import interp
from interp.api.specs import flat
from interp.jobs.intervene import InterventionConfig


def test_bad_settings_are_refused_when_built_naming_the_parameter():
    cases = [
        (lambda: interp.SampleSpec(max_examples=0), "max_examples"),
        (lambda: interp.SampleSpec(max_per_split=-1), "max_per_split"),
        (lambda: interp.SampleSpec(splits="nmonli_test"), "splits"),  # a string is not a list of splits
        (lambda: interp.RunSpec(batch_size=0), "batch_size"),
        (lambda: interp.RunSpec(device="tpu"), "device"),
        (lambda: interp.RunSpec(wordpiece="middle"), "wordpiece"),
        (lambda: interp.RunSpec(backend="pyvene"), "backend"),
        (lambda: interp.DataSpec(task=3), "task"),
    ]
    for build, param in cases:
        with pytest.raises(interp.ConfigError) as caught:
            build()
        assert caught.value.params[0] == param
    assert interp.SampleSpec(splits=["pmonli"]).splits == ("pmonli",)  # a list is kept as a tuple (hashable, frozen)


def test_a_task_object_passes_through_and_names_are_checked(monli_dir):
    task = interp.load_task("monli", data_dir=str(monli_dir))
    assert interp.DataSpec(task=task).load() is task
    assert interp.DataSpec(task=task).name == "monli"
    with pytest.raises(interp.ConfigError, match="splits='snli': unknown split"):
        interp.DataSpec(task=task).load(splits=("snli",))
    with pytest.raises(interp.ConfigError, match="variables"):
        interp.DataSpec(task=task).load(variables=("colour",))
    loaded = interp.DataSpec(data_dir=str(monli_dir)).load(splits=("nmonli_test",))
    assert loaded.name == "monli" and loaded is not task  # a name is resolved afresh


def test_the_sample_draws_what_the_task_would(monli_dir):
    task = interp.load_task("monli", data_dir=str(monli_dir))
    sample = interp.SampleSpec(("pmonli", "nmonli_test"), max_examples=30, max_per_split=20, seed=4)
    assert [e.id for e in sample.draw(task)] == [e.id for e in task.examples(("pmonli", "nmonli_test"), n=30, per_split=20, seed=4)]
    assert [e.id for e in replace(sample, seed=5).draw(task)] != [e.id for e in sample.draw(task)]  # the seed matters


def test_flat_gives_the_names_files_recorded_before_specs(monli_dir):
    task = interp.load_task("monli", data_dir=str(monli_dir))
    config = InterventionConfig(model="m", out="o", locations="aligned", data=interp.DataSpec(task=task),
                                sample=interp.SampleSpec(max_per_split=5), run=interp.RunSpec(batch_size=8))  # fmt: skip
    settings = flat(config)
    assert settings["task"] == "monli" and settings["max_per_split"] == 5 and settings["batch_size"] == 8 and settings["wordpiece"] == "first"
    assert not {"data", "sample", "run"} & set(settings)


def test_a_spec_field_the_config_already_names_is_recorded_under_the_specs_name(monli_dir):
    """A training's own ``seed`` and ``batch_size`` (its recipe) beside its sample's seed and its run's batch: both kept."""
    from interp.jobs.train import TrainConfig

    config = TrainConfig(data=interp.DataSpec(data_dir=str(monli_dir)), seed=5, batch_size=8,
                         sample=interp.SampleSpec(max_examples=10, seed=7), run=interp.RunSpec(batch_size=64))  # fmt: skip
    settings = flat(config)
    assert (settings["seed"], settings["sample_seed"], settings["batch_size"], settings["run_batch_size"]) == (5, 7, 8, 64)
    assert settings["splits"] == ("pmonli", "nmonli_train") and settings["max_examples"] == 10  # the task's training splits


JOB_CONFIGS = ("cache.CacheConfig", "intervene.InterventionConfig", "das.DasConfig", "location_sweep.LocationSweepConfig",
               "head_sweep.HeadSweepConfig", "evaluate.EvaluateConfig", "train.TrainConfig", "behavioral.BehavioralConfig")  # fmt: skip
FILE_READERS = ("probe_sweep.ProbeSweepConfig", "cliques.CliqueConfig", "inoculate.InoculateConfig")


def _config(name: str):
    import importlib

    module, cls = name.rsplit(".", 1)
    return getattr(importlib.import_module(f"interp.jobs.{module}"), cls)


def test_every_job_that_reads_a_task_holds_the_three_specs_and_every_job_names_its_output_out():
    from dataclasses import fields

    from interp.analysis.report import ReportConfig

    for name in JOB_CONFIGS:
        types = {f.name: f.type for f in fields(_config(name))}
        assert {types.get("data"), types.get("sample"), types.get("run")} == {"DataSpec", "SampleSpec", "RunSpec"}, name
        assert not {"splits", "max_examples", "device", "wordpiece", "backend"} & set(types), name  # the specs' fields, not loose copies
    for config in [*map(_config, JOB_CONFIGS + FILE_READERS), ReportConfig]:
        names = {f.name for f in fields(config)}
        assert "out_dir" not in names, config.__name__
    assert {f.name for f in fields(_config("inoculate.InoculateConfig"))} >= {"out", "run"}
    assert "behavioral" in {f.name for f in fields(_config("demo.DemoConfig"))}  # the demo's specs are its behavioral settings'


def test_a_job_refuses_a_run_setting_it_does_not_read(monli_dir):
    from interp.jobs.behavioral import BehavioralConfig
    from interp.jobs.evaluate import EvaluateConfig, run_evaluate
    from interp.jobs.train import TrainConfig

    data = interp.DataSpec(data_dir=str(monli_dir))
    with pytest.raises(interp.ConfigError, match="backend='transformer-lens': training runs the Hugging Face model itself"):
        TrainConfig(data=data, run=interp.RunSpec(backend="transformer-lens")).validate()
    with pytest.raises(interp.ConfigError, match="wordpiece='last': training reads each word's first WordPiece"):
        TrainConfig(data=data, run=interp.RunSpec(wordpiece="last")).validate()
    with pytest.raises(interp.ConfigError, match="wordpiece='last': evaluate"):
        run_evaluate(EvaluateConfig(model="m", data=data, run=interp.RunSpec(wordpiece="last")))
    with pytest.raises(interp.ConfigError, match="splits=pmonli: the task's behavioral stage names each training's splits"):
        BehavioralConfig(data=data, sample=interp.SampleSpec(("pmonli",)))


def test_evaluate_takes_a_task_and_a_classifier_held_in_memory(monli_dir, tiny_classifier_dir):
    """As every job: ``DataSpec(task=task)`` and ``model=`` a Classifier score what the names score."""
    from interp.jobs.evaluate import EvaluateConfig, run_evaluate

    task = interp.load_task("monli", data_dir=str(monli_dir))
    sample = interp.SampleSpec(("pmonli", "nmonli_test"), max_per_split=20, seed=1)
    named = run_evaluate(EvaluateConfig(model=str(tiny_classifier_dir), data=interp.DataSpec(data_dir=str(monli_dir)), sample=sample))
    held = run_evaluate(EvaluateConfig(model=interp.load_model(str(tiny_classifier_dir)), data=interp.DataSpec(task=task), sample=sample))
    assert held.metrics == named.metrics and [m["n"] for m in named.metrics["monli"].values()] == [20, 20]
