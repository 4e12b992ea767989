"""The public face: one `import interp`, objects in memory, the same numbers as the jobs' files, the naive reference behind every fast path."""

from __future__ import annotations

import dataclasses
import subprocess
from dataclasses import replace
import sys
from unittest.mock import patch

import h5py
import numpy as np
import pytest
import torch

import interp
from interp.analysis.iia import summarize
from interp.backends.hf import HFRunner
from interp.engine import batched
from interp.engine.naive import naive_vector
from interp.files.activations import open_cache as interp_open_cache
from interp.jobs.intervene import InterventionConfig, run_interventions

LOCATION = "blocks.0.hook_resid_post@w_h"


@pytest.fixture(scope="module")
def lab(tiny_classifier_dir, monli_dir):
    return interp.IntervenableModel(str(tiny_classifier_dir), "monli", data_dir=str(monli_dir))


@pytest.fixture(scope="module")
def examples(lab):
    return lab.task.examples(("pmonli", "nmonli_test"), per_split=12, seed=3)


def test_import_interp_loads_no_heavy_module_and_every_name_resolves():
    code = "import sys, interp; assert 'torch' not in sys.modules and 'transformers' not in sys.modules; print(len(interp.__all__))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout) == len(interp.__all__)
    missing = [name for name in interp.__all__ if getattr(interp, name, None) is None]
    assert missing == []
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        interp.nope  # noqa: B018


def test_objects_and_strings_give_the_same_binding(tiny_classifier_dir, monli_dir, lab, examples):
    """A model loaded in a cell (module + tokenizer) and a Task built there are taken as they are."""
    model = interp.load_model(str(tiny_classifier_dir))
    task = interp.load_task("monli", data_dir=str(monli_dir))
    again = interp.IntervenableModel(model.module, task, tokenizer=model.tokenizer)
    assert again.task is task and again.model.module is model.module and again.model.name == "<in memory>"
    assert torch.equal(again.vectors(examples, LOCATION), lab.vectors(examples, LOCATION))


def test_the_older_argument_orders_and_names_still_work_and_warn(lab, examples, tmp_path):
    """vectors, interchange and train_das take the examples first; the older orders and load_intervention warn and agree."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the null: the new order warns about nothing
        new = lab.vectors(examples, LOCATION)
    with pytest.warns(DeprecationWarning, match=r"vectors\(examples, location\)"):
        assert torch.equal(lab.vectors(LOCATION, examples), new)
    with pytest.warns(DeprecationWarning, match=r"train_das\(examples, location, variable\)"), pytest.warns(interp.InterpWarning):
        old = lab.train_das("lexrel", LOCATION, examples, k=2, n_pairs=8, epochs=1, test_pairs=8)
    with pytest.warns(interp.InterpWarning):
        again = lab.train_das(examples, LOCATION, "lexrel", k=2, n_pairs=8, epochs=1, test_pairs=8)
    assert torch.equal(old.intervention.matrix, again.intervention.matrix) and old.iia == again.iia
    stem = interp.save_intervention(again.intervention, tmp_path / "r", {"variable": "lexrel"})
    with pytest.warns(DeprecationWarning, match="renamed load_trained_intervention"):
        assert interp.load_intervention(stem)[1]["variable"] == "lexrel"
    assert "load_intervention" not in interp.__all__ and "load_trained_intervention" in interp.__all__


def test_vectors_are_the_naive_batch_one_vectors(lab, examples):
    X = lab.vectors(examples, "blocks.1.hook_resid_post@w_p+w_h")
    assert X.shape == (len(examples), 2, lab.model.d_model)
    loc = lab.location("blocks.1.hook_resid_post@w_p+w_h")
    for i, encoded in enumerate(lab.encode(examples)):
        assert torch.allclose(X[i].reshape(-1), naive_vector(lab.model.module, encoded, loc, lab.model.tokenizer.pad_token_id), atol=1e-5)


@pytest.mark.parametrize("location", [LOCATION, "blocks.1.hook_resid_post@cls", "blocks.0.attn.hook_z.h1@w_h", "blocks.1.hook_mlp_out@w_p"])
def test_interchange_engine_equals_the_naive_reference(lab, examples, location):
    fast = lab.interchange(examples, examples, location)
    naive = lab.interchange(examples, examples, location, naive=True)
    assert fast.logits.shape == (len(examples), len(examples), 2)
    assert np.array_equal(fast.model_pred, naive.model_pred)
    assert torch.allclose(fast.logits, naive.logits, atol=1e-5)


def test_a_trained_style_intervention_equals_the_naive_reference_on_other_sources(lab, examples):
    """Any module with forward(base, source) runs on bases × sources of other examples, fast and naive alike."""
    rotated = interp.RotatedSubspace(lab.model.d_model, k=8, seed=1)
    bases, sources = examples[:7], examples[7:16]
    fast = lab.interchange(bases, sources, LOCATION, intervention=rotated)
    naive = lab.interchange(bases, sources, LOCATION, intervention=rotated, naive=True)
    assert fast.logits.shape == (7, 9, 2) and fast.source_ids == tuple(e.id for e in sources)
    assert torch.allclose(fast.logits, naive.logits, atol=1e-5)
    # The whole subspace is the vanilla interchange.
    whole = lab.interchange(bases, sources, LOCATION, intervention=interp.RotatedSubspace(lab.model.d_model, k=lab.model.d_model))
    assert torch.allclose(whole.logits, lab.interchange(bases, sources, LOCATION).logits, atol=1e-4)


def test_the_result_is_the_files_result(lab, examples, tiny_classifier_dir, monli_dir, tmp_path):
    """`interp intervene`'s file and the in-memory result hold the same numbers; save() writes that format and load gives it back."""
    config = InterventionConfig(
        model=str(tiny_classifier_dir), out=str(tmp_path / "job.h5"), locations=LOCATION, variables=("lexrel", "negated"),
        data=interp.DataSpec(data_dir=str(monli_dir)), sample=interp.SampleSpec(("pmonli", "nmonli_test"), max_per_split=12, seed=3),
    )  # fmt: skip
    path = run_interventions(config, progress=False)
    res = lab.interchange(examples, examples, LOCATION, variables=("lexrel", "negated"))
    from_file = interp.load_interventions(path)
    assert from_file.base_ids == res.base_ids
    assert torch.allclose(from_file.logits, res.logits, atol=1e-6) and np.array_equal(from_file.model_pred, res.model_pred)
    for variable in ("lexrel", "negated"):
        assert np.array_equal(from_file.causal_pred[variable], res.causal_pred[variable])
        file_summary = {k: v for k, v in summarize(path, variable=variable).items() if k != "fp32_check"}
        assert res.summary(variable) == pytest.approx(file_summary)
    saved = interp.load_interventions(res.save(tmp_path / "mem.h5"))
    assert torch.equal(saved.logits, res.logits) and saved.summaries() == res.summaries()
    assert saved.cliques("lexrel").cliques == res.cliques("lexrel").cliques == from_file.cliques("lexrel").cliques
    # One writer (IntervenableModel.write): the job's file and save()'s hold the same datasets and attributes.
    import h5py

    def contents(p):
        found = {}
        with h5py.File(p, "r") as f:
            f.visititems(lambda k, o: found.__setitem__(k, o[()].tolist()) if isinstance(o, h5py.Dataset) else None)
            attrs = {k: str(v) for k, v in f.attrs.items() if k != "unit_size"}
        return found, attrs

    job, mem = contents(path), contents(tmp_path / "mem.h5")
    assert set(job[0]) == set(mem[0]) and job[1] == mem[1]
    for key in job[0]:
        assert np.allclose(job[0][key], mem[0][key], atol=1e-6) if "logits" in key else job[0][key] == mem[0][key], key


@pytest.mark.parametrize("where", ["residual, the suffix as the engine runs it", "component site", "after the last block"])
def test_one_pass_gives_the_sources_vectors_and_the_models_own_logits(lab, examples, where):
    """The pass a vanilla interchange runs for its sources' vectors runs the whole model and keeps the logits: the
    vectors equal the prefix pass's exactly, the logits :meth:`predict`'s (its padded batches: within 1e-5), and the
    result's own predictions equal those :meth:`predict` gives. At a residual location before the last block the
    blocks after it run as the engine's suffix; elsewhere the model's own forward pass runs."""
    from interp.engine.batched import source_vectors, vectors_and_logits

    last = lab.model.module.config.num_hidden_layers - 1
    location = {"residual, the suffix as the engine runs it": LOCATION, "component site": "blocks.0.hook_mlp_out@w_h",
                "after the last block": f"blocks.{last}.hook_resid_post@w_h"}[where]  # fmt: skip
    loc = interp.Location.parse(location)
    encoded = lab.encode(examples)
    with patch("interp.engine.batched.run_suffix", wraps=batched.run_suffix) as suffix:
        vectors, own = vectors_and_logits(lab.model.module, encoded, loc)
    assert suffix.called == (location == LOCATION)
    assert torch.equal(vectors, source_vectors(lab.model.module, encoded, loc))
    assert torch.allclose(own, lab.predict(examples), atol=1e-5) and own.shape == (len(examples), 2)
    if location != LOCATION:
        return
    res = lab.interchange(examples[:5], examples, LOCATION, variables=("lexrel",))
    predicted = lab.reading.predict(lab.predict(examples))
    assert np.array_equal(res.base_pred, predicted[:5]) and np.array_equal(res.source_pred, predicted)


def test_a_probes_read_runs_the_blocks_up_to_the_location_and_the_logits_come_when_asked(lab, examples):
    """``vectors`` (what a probe reads) runs no block after the location: the vectors are the prefix pass's exactly, and
    the model's own logits are computed once, when a call asks for them; ``source_vectors`` (what an interchange reads,
    the null) runs the whole model and keeps its logits."""
    from interp.engine.batched import source_vectors

    fresh = interp.IntervenableModel(lab.model, lab.task)  # nothing bound yet
    whole = patch("interp.backends.hf.vectors_and_logits", wraps=batched.vectors_and_logits)
    with patch("interp.backends.hf.HFRunner.predict", autospec=True, side_effect=HFRunner.predict) as predicted, whole as passes:
        read = fresh.vectors(examples, LOCATION)
        assert passes.call_count == 0 and predicted.call_count == 0
        loc = interp.Location.parse(LOCATION)
        assert torch.equal(read.flatten(1), source_vectors(lab.model.module, lab.encode(examples), loc))
        own = fresh.predict(examples)
        fresh.interchange(examples, examples, LOCATION, variables=("lexrel",))
        assert predicted.call_count == 1 and passes.call_count == 0  # the logits once; the vectors held
        other = interp.IntervenableModel(lab.model, lab.task)
        assert torch.equal(other.source_vectors(examples, LOCATION).cpu(), read.flatten(1)) and passes.call_count == 1
        assert torch.allclose(other.predict(examples), own, atol=1e-5) and predicted.call_count == 1  # the null: kept from its pass


def test_interchange_at_several_locations_is_one_set_and_one_file(lab, examples, tiny_classifier_dir, monli_dir, tmp_path):
    """A list of locations gives each location's own result, one table, and one file: the file `interp intervene` writes
    for the same locations, and each location read back is that location's result."""
    other = "blocks.1.hook_resid_post@w_p"
    fresh = interp.IntervenableModel(lab.model, lab.task)  # nothing bound yet
    whole = patch("interp.backends.hf.vectors_and_logits", wraps=batched.vectors_and_logits)
    with patch("interp.backends.hf.HFRunner.predict", autospec=True, side_effect=HFRunner.predict) as predicted, whole as passes:
        found = fresh.interchange(examples, examples, [LOCATION, other], variables=("lexrel",))
    # the model's own predictions come once for the set, from the first location's pass that reads the sources' vectors
    assert predicted.call_count == 0 and passes.call_count == 1
    assert isinstance(found, interp.InterchangeSet) and found.locations == (LOCATION, other) and len(found) == 2
    assert "a sweep of 2 locations, each interchanged on its own" in repr(found)  # not patched together, as pyvene's list is
    for location in (LOCATION, other):
        alone = lab.interchange(examples, examples, location, variables=("lexrel",))
        assert torch.equal(found[location].logits, alone.logits) and found[location].summary() == alone.summary()
    frame = found.summary_frame()
    assert list(frame["location"].unique()) == [LOCATION, other] and len(frame) == 4
    saved = found.save(tmp_path / "two.h5")
    config = InterventionConfig(
        model=str(tiny_classifier_dir), out=str(tmp_path / "job.h5"), locations=f"{LOCATION},{other}", variables=("lexrel",),
        data=interp.DataSpec(data_dir=str(monli_dir)), sample=interp.SampleSpec(("pmonli", "nmonli_test"), max_per_split=12, seed=3),
    )  # fmt: skip
    job = run_interventions(config, progress=False)
    for location in (LOCATION, other):
        back, from_job = interp.load_interventions(saved, location), interp.load_interventions(job, location)
        assert torch.equal(back.logits, found[location].logits) and torch.allclose(back.logits, from_job.logits, atol=1e-6)
        assert back.summaries() == found[location].summaries()
    with h5py.File(saved, "r") as mem, h5py.File(job, "r") as run:
        assert {k: str(v) for k, v in mem.attrs.items() if k != "unit_size"} == {k: str(v) for k, v in run.attrs.items() if k != "unit_size"}
    with pytest.raises(interp.ConfigError, match="names no location"):
        lab.interchange(examples, examples, [])
    with pytest.raises(interp.ConfigError, match="named twice"):
        lab.interchange(examples, examples, [LOCATION, LOCATION])
    with pytest.raises(interp.ConfigError, match="this set holds"):
        found["blocks.2.hook_resid_post@w_h"]


def test_jobs_take_the_objects_a_notebook_holds(lab, examples, tiny_classifier_dir, tmp_path):
    """A job given a Classifier edited in memory and a Task runs on them, not on the checkpoint on disk: the null is
    the same job given the checkpoint's path, which must differ once the head is changed."""
    from interp.jobs.cache import CacheConfig, build_cache

    module, tokenizer = lab.model.module, lab.model.tokenizer
    edited = interp.load_model(type(module)(module.config).eval(), tokenizer)  # same architecture, other (random) weights
    edited.module.load_state_dict(module.state_dict())
    with torch.no_grad():
        edited.module.classifier.weight.mul_(-1.0)  # the head turned around: other predictions
    sample = interp.SampleSpec(("pmonli", "nmonli_test"), max_per_split=12, seed=3)
    data = interp.DataSpec(task=lab.task)
    common = dict(locations=LOCATION, variables=("lexrel",), data=data, sample=sample)
    mine = interp.load_interventions(run_interventions(InterventionConfig(model=edited, out=str(tmp_path / "mine.h5"), **common), progress=False))
    disk = interp.load_interventions(run_interventions(InterventionConfig(model=str(tiny_classifier_dir), out=str(tmp_path / "disk.h5"), **common),
                                                       progress=False))  # fmt: skip
    expected = interp.IntervenableModel(edited, lab.task).interchange(examples, examples, LOCATION, variables=("lexrel",))
    assert list(mine.base_ids) == [e.id for e in examples]
    assert np.array_equal(mine.model_pred, expected.model_pred) and not np.array_equal(mine.model_pred, disk.model_pred)
    with h5py.File(tmp_path / "mine.h5", "r") as handle:
        assert handle.attrs["model"] == "<in memory>" and handle.attrs["model_sha256"] == edited.sha256 != lab.model.sha256
    cache = build_cache(CacheConfig(model=edited, out=str(tmp_path / "c.h5"), data=data, sample=sample), progress=False)
    with interp_open_cache(cache) as handle:
        assert handle.example_ids == [e.id for e in examples] and handle.meta["model_sha256"] == edited.sha256


def test_iia_nulls_frame_and_graph_agree(lab, examples):
    res = lab.interchange(examples, examples, "blocks.1.hook_resid_post@cls", variables=("lexrel",))
    frame = res.to_frame()
    assert len(frame) == len(examples) ** 2
    causal = frame[frame.causal]
    assert causal.agrees.mean() == pytest.approx(res.iia("lexrel")) and frame.agrees.mean() == pytest.approx(res.iia("lexrel", "all"))
    assert (causal.model_pred == causal.base_pred).mean() == pytest.approx(res.summary("lexrel")["stays_base_causal"])
    graph = res.graph("lexrel")
    agree = res.model_pred == res.causal_pred["lexrel"]
    both_ways = agree & agree.T & np.diagonal(agree)[:, None] & np.diagonal(agree)[None, :]
    np.fill_diagonal(both_ways, False)
    assert np.array_equal(graph.edges, both_ways)


def test_train_das_trains_the_intervention_not_the_model(lab, examples):
    before, blocks = {k: v.clone() for k, v in lab.model.module.state_dict().items()}, []
    with pytest.warns(interp.InterpWarning, match="not learned: no gain over the untrained intervention"):  # a random 2-layer model: nothing to learn
        das = lab.train_das(examples, LOCATION, "lexrel", k=4, n_pairs=64, epochs=1, seed=2, on_blocks=lambda *told: blocks.append(told))
    assert isinstance(das.intervention, interp.RotatedSubspace) and das.k == 4 and not das.intervention.training
    start, stop = map(int, das.block.split(":"))  # the localist baseline: one of d_model / 4 blocks, each scored (told as it went)
    assert stop - start == 4 and start % 4 == 0 and blocks[-1] == (lab.model.d_model // 4,) * 2
    assert all(torch.equal(v, lab.model.module.state_dict()[k]) for k, v in before.items())
    assert not torch.allclose(das.intervention.matrix, interp.RotatedSubspace(lab.model.d_model, k=4, seed=2).matrix)  # it moved
    assert lab.interchange(examples[:4], examples[4:8], LOCATION, intervention=das).logits.shape == (4, 4, 2)
    assert [h["epoch"] for h in das.history] == [0, 1] and das.history[0]["held_out_iia"] == das.untrained_iia
    assert das.history[-1]["held_out_iia"] == das.iia and das.untrained_iia.low <= das.untrained_iia <= das.untrained_iia.high
    assert len(das.held_out_pairs) == das.to_frame().held_out_pairs[0] and das.history_frame().columns.tolist() == ["epoch", "loss", "train_iia", "held_out_iia"]


def test_bad_input_names_the_parameter(lab, examples, tiny_mqnli_classifier_dir, monli_dir, tmp_path):
    with pytest.raises(interp.ModelError, match="model=.*labels .* none for task 'fragment:boolean''s contradiction"):
        interp.IntervenableModel(lab.model, "fragment:boolean")  # a two-label model cannot say contradiction
    with pytest.raises(interp.ConfigError, match=r"location='all' names 9 locations"):
        lab.location("all")
    with pytest.raises(interp.ConfigError, match="variables='nope'"):
        lab.interchange(examples, examples, LOCATION, variables=("nope",))
    with pytest.raises(interp.ConfigError, match="save: .*square"):
        lab.interchange(examples[:2], examples[2:4], LOCATION).save(tmp_path / "x.h5")
    for naive in (False, True):
        with pytest.raises(interp.ConfigError, match="intervention=.*width 7"):
            lab.interchange(examples[:2], examples[:2], LOCATION, intervention=interp.RotatedSubspace(7, k=2), naive=naive)
    with pytest.raises(interp.ConfigError, match="task=.*not a int"):
        interp.load_task(3)
    assert not (tmp_path / "x.h5").exists()


def test_fine_tune_in_memory_gives_the_weights_interp_train_saves(tiny_encoder_dir, monli_dir, tmp_path):
    """The same settings and examples: the checkpoint `interp train` writes and the in-memory classifier are equal, tensor for tensor."""
    from safetensors.torch import load_file

    from interp.jobs.train import TrainConfig, train

    settings = dict(epochs=2, lr=1e-3, batch_size=16, seed=4)
    config = TrainConfig(model=str(tiny_encoder_dir), sample=interp.SampleSpec(splits=("nmonli_test",), max_examples=48, seed=4), eval_splits=(),
                         data=interp.DataSpec(data_dir=str(monli_dir)),
                         **settings)  # fmt: skip
    train(replace(config, out=str(tmp_path / "model")), progress=False)
    task = interp.load_task("monli", data_dir=str(monli_dir))
    trained = interp.fine_tune(str(tiny_encoder_dir), task, task.examples(("nmonli_test",), n=48, seed=4), **settings)
    saved = load_file(tmp_path / "model" / "model.safetensors")
    state = trained.module.state_dict()
    assert [r["epoch"] for r in trained.history] == [1, 2]
    assert all(torch.equal(state[k], v) for k, v in saved.items())
    again = interp.fine_tune(trained, task, task.examples(("nmonli_test",), n=8, seed=0), epochs=1)
    assert not torch.equal(again.module.classifier.weight, trained.module.classifier.weight)  # a copy was trained
    assert torch.equal(trained.module.classifier.weight, state["classifier.weight"])  # the argument is unchanged
    with pytest.raises(interp.ConfigError, match="epochs= must be an integer of at least 1, got 0"):
        interp.fine_tune(trained, task, task.examples(("nmonli_test",), n=8), epochs=0)
    # Interchange intervention training in memory is `interp train --iit`'s, tensor for tensor.
    from interp.jobs.iit import train_iit

    iit = dict(iit="lexrel@blocks.0.hook_resid_post@w_h", iit_weight=0.5)
    train_iit(replace(config, epochs=1, **iit, out=str(tmp_path / "iit")), progress=False)
    planted = interp.fine_tune(str(tiny_encoder_dir), task, task.examples(("nmonli_test",), n=48, seed=4), **{**settings, "epochs": 1}, **iit)
    saved = load_file(tmp_path / "iit" / "model.safetensors")
    assert all(torch.equal(planted.module.state_dict()[k], v) for k, v in saved.items())
    plain = interp.fine_tune(str(tiny_encoder_dir), task, task.examples(("nmonli_test",), n=48, seed=4), **{**settings, "epochs": 1})
    assert not torch.equal(plain.module.classifier.weight, planted.module.classifier.weight)  # the null: the IIT loss moved the weights
    assert planted.settings["iit"] == iit["iit"]
    with pytest.raises(interp.ConfigError, match="iit="):
        interp.fine_tune(str(tiny_encoder_dir), task, task.examples(("nmonli_test",), n=8), iit="lexrel")


def test_the_python_guide_runs(tiny_classifier_dir, monli_dir, tmp_path, monkeypatch):
    """The Python API guide (docs/guides/python.md) runs as written, on the tiny model and the real MoNLI (the model and data paths swapped)."""
    import re
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[1] / "docs" / "guides" / "python.md").read_text(encoding="utf-8")
    block, job = re.findall(r"```python\n(.*?)```", guide, re.S)
    assert block.count("import") == 1 and "import interp" in block
    code = block.replace('"runs/demo/model"', repr(str(tiny_classifier_dir))).replace('"data/monli"', repr(str(monli_dir)))
    (tmp_path / "runs").mkdir()
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(code, "docs/guides/python.md", "exec"), scope)  # noqa: S102 - our own guide
    assert scope["res"].model_pred.shape == (100, 100) and (tmp_path / "runs" / "iv.h5").is_file()
    assert isinstance(scope["das"].intervention, interp.RotatedSubspace)

    # The job block runs on the same objects (a Task and a Classifier held in memory) and writes what res.save wrote.
    exec(compile(job, "docs/guides/python.md (a job on objects)", "exec"), scope)  # noqa: S102
    saved, ran = interp.load_interventions("runs/iv.h5"), interp.load_interventions("runs/iv_job.h5")
    assert ran.model_pred.shape == (100, 100) and np.array_equal(ran.model_pred, saved.model_pred)
    assert np.array_equal(ran.causal_pred["lexrel"], saved.causal_pred["lexrel"])
    with h5py.File("runs/iv_job.h5", "r") as handle:  # the same weights, recorded the same way
        assert handle.attrs["model"] == str(tiny_classifier_dir) and handle.attrs["model_sha256"] == scope["model"].sha256


def test_a_run_that_names_no_unit_size_reuses_or_resumes_an_earlier_runs_on_another_device(tiny_classifier_dir, monli_dir, tmp_path,
                                                                                             monkeypatch):  # fmt: skip
    """The default unit size depends on the device; the same command on another device takes the earlier run's, so a
    finished file is reused (not refused as another setting's) and unfinished units are resumed."""
    import interp.jobs.intervene as job

    sample = interp.SampleSpec(("pmonli", "nmonli_test"), max_per_split=12, seed=3)
    config = InterventionConfig(model=str(tiny_classifier_dir), out=str(tmp_path / "iv.h5"), locations=LOCATION, variables=("lexrel",),
                                data=interp.DataSpec(data_dir=str(monli_dir)), sample=sample)  # fmt: skip
    path = run_interventions(config, progress=False)  # on this CPU: units of 16
    written = path.stat().st_mtime_ns
    monkeypatch.setattr(job, "default_unit_size", lambda *args: 7)  # as if on a device whose default is another
    assert run_interventions(config, progress=False) == path and path.stat().st_mtime_ns == written  # reused as it was
    with h5py.File(path, "r") as handle:
        assert int(handle.attrs["unit_size"]) == 16
    with pytest.raises(interp.OutputError, match="holds other interventions"):  # the null: a unit size named outright is another setting, refused without overwrite
        run_interventions(replace(config, unit_size=7), progress=False)
    assert job._earlier_unit_size(tmp_path / "none.h5") is None
    job.parts_dir(tmp_path / "cut.h5").mkdir()  # a run cut short: its units' request says their size
    (job.parts_dir(tmp_path / "cut.h5") / "request.json").write_text('{"unit_size": 5}')
    assert job._earlier_unit_size(tmp_path / "cut.h5") == 5


def test_intervals_resample_word_pairs_by_default_and_say_so(lab, examples, tmp_path):
    """MoNLI declares its word pairs as groups: a summary's interval is over them (counted), the file keeps them, a
    reader resamples the same way; ``unit="example"`` gives the interval over examples; a task without groups refuses
    ``unit="group"`` naming the parameter."""
    from interp.analysis.iia import summarize

    pairs = {" / ".join(sorted((e.words["w_p"], e.words["w_h"]))) for e in examples}
    assert len(pairs) < len(examples)  # some examples share a pair
    res = lab.interchange(examples, examples, LOCATION)
    grouped, plain = res.summary("lexrel"), res.summary("lexrel", unit="example")
    assert grouped["over"] == f"{len(pairs)} word pairs" and f"over {len(pairs)} word pairs" in grouped["interval"]
    assert plain["over"] == f"{len(examples)} examples" and grouped["iia"] == plain["iia"]
    assert (grouped["iia_low"], grouped["iia_high"]) != (plain["iia_low"], plain["iia_high"])
    path = res.save(tmp_path / "iv.h5")
    assert summarize(path, variable="lexrel") == {**grouped, "fp32_check": None}
    assert summarize(path, variable="lexrel", unit="example")["iia_low"] == plain["iia_low"]
    half = lab.interchange(examples[:10], examples[10:], LOCATION).summary("lexrel")  # bases and sources drawn apart, by their groups
    count = lambda part: len({" / ".join(sorted((e.words["w_p"], e.words["w_h"]))) for e in part})  # noqa: E731
    b, s = count(examples[:10]), count(examples[10:])
    assert half["over"] == (f"{b} word pairs" if b == s else f"{b} × {s} word pairs (bases × sources)")
    with pytest.raises(interp.ConfigError, match="unit="):
        res.summary("lexrel", unit="pairs")
    bare = interp.load_interventions(path)
    bare.examples = dataclasses.replace(bare.examples, groups=None)
    with pytest.raises(interp.ConfigError, match="unit='group'.*no groups"):
        bare.summary("lexrel", unit="group")
    assert bare.summary("lexrel")["over"] == f"{len(examples)} examples"
