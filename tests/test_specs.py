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
