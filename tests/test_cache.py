"""The HDF5 activation cache: exact vectors, self-description, resume after interruption, refusal of bad files."""

from __future__ import annotations

import h5py
import numpy as np
import pytest
import torch
from transformers import AutoModelForSequenceClassification

from interp.api.intervenable import IntervenableModel
from interp.api.specs import DataSpec, RunSpec, SampleSpec
from interp.core.errors import ConfigError
from interp.files.activations import open_cache
from interp.hooks.locations import all_locations
from interp.jobs.cache import CacheConfig, build_cache
from interp.tasks.monli import ROLES, collate, encode_examples, load_monli


@pytest.fixture(scope="module")
def built(tiny_classifier_dir, monli_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("cache") / "activations.h5"
    config = CacheConfig(model=str(tiny_classifier_dir), out=str(out), data=DataSpec(data_dir=str(monli_dir)), sample=SampleSpec(("nmonli_test",)),
                         run=RunSpec(batch_size=32))  # fmt: skip
    return build_cache(config, progress=False), config


def test_cache_holds_every_location_exactly(built, tiny_classifier_dir, monli_dir, minilm_tokenizer):
    path, config = built
    examples = load_monli(monli_dir, ("nmonli_test",))
    encoded = encode_examples(examples, minilm_tokenizer)
    fresh = AutoModelForSequenceClassification.from_pretrained(tiny_classifier_dir).eval()
    with open_cache(path, model=str(tiny_classifier_dir)) as cache:
        assert cache.example_ids == [e.id for e in examples]
        assert cache.meta["wordpiece"] == "first" and cache.meta["n_layers"] == 2 and len(cache.meta["locations"]) == 9
        stored = {str(loc): cache.vectors(loc) for loc in all_locations(2, ROLES)}
        assert list(cache.column("split")) == ["nmonli_test"] * 200
        assert cache.column("label").tolist() == [e.label_id for e in examples]
        positions = cache.column("positions")
    for start in range(0, 200, 32):
        batch = collate(encoded[start : start + 32], minilm_tokenizer.pad_token_id)
        assert positions[start : start + 32].tolist() == torch.stack([batch["positions"][r] for r in ROLES], 1).tolist()
        with torch.no_grad():
            hidden = fresh(**{k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask")}, output_hidden_states=True).hidden_states
        rows = torch.arange(len(batch["input_ids"]))
        for loc in all_locations(2, ROLES):
            expected = hidden[loc.hidden_index][rows, batch["positions"][loc.role]].numpy()
            np.testing.assert_array_equal(stored[str(loc)][start : start + 32], expected, err_msg=str(loc))


def test_plain_h5py_reads_it(built):
    path, _ = built
    with h5py.File(path, "r") as f:
        assert f.attrs["complete"] and f.attrs["dtype"] == "float32"
        assert f["blocks.1.hook_resid_post@w_h"].shape == (200, 32) and f["blocks.1.hook_resid_post@w_h"].chunks == (32, 32)
        assert f["example_ids"].asstr()[0] == "nmonli_test:1"


def test_interrupted_cache_resumes_without_redoing_batches(built, monkeypatch, tmp_path):
    path, config = built
    out = tmp_path / "a.h5"
    config = CacheConfig(**{**config.__dict__, "out": str(out)})
    calls = {"n": 0}
    real_pass = IntervenableModel.run_with_cache

    def counting_pass(*args, **kwargs):  # one forward pass per batch
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return real_pass(*args, **kwargs)

    monkeypatch.setattr(IntervenableModel, "run_with_cache", counting_pass)
    with pytest.raises(KeyboardInterrupt):
        build_cache(config, progress=False)
    assert not out.exists() and (tmp_path / "a.h5.partial").exists()
    with h5py.File(tmp_path / "a.h5.partial", "r") as f:
        assert f["batches_done"][:].tolist() == [True, True, True, False, False, False, False]
    calls["n"] = 100
    build_cache(config, progress=False)
    assert calls["n"] == 104  # only the 4 unfinished batches were run
    assert not (tmp_path / "a.h5.partial").exists()
    with h5py.File(out, "r") as a, h5py.File(path, "r") as b:
        for name in b.attrs["locations"]:
            np.testing.assert_array_equal(a[name][:], b[name][:])


def test_float16_option(built, tmp_path):
    _, config = built
    out = build_cache(CacheConfig(**{**config.__dict__, "out": str(tmp_path / "h.h5"), "dtype": "float16"}), progress=False)
    with open_cache(out) as cache:
        assert cache.handle["blocks.0.hook_resid_pre@cls"].dtype == np.float16
        assert cache.vectors("blocks.0.hook_resid_pre@cls").dtype == np.float32


def test_bad_cache_files(built, tmp_path):
    path, _ = built
    with pytest.raises(ConfigError, match="does not exist"):
        with open_cache(tmp_path / "none.h5"):
            pass
    truncated = tmp_path / "truncated.h5"
    truncated.write_bytes(path.read_bytes()[:5000])
    with pytest.raises(ConfigError, match="not a readable HDF5 file"):
        with open_cache(truncated):
            pass
    foreign = tmp_path / "foreign.h5"
    with h5py.File(foreign, "w") as f:
        f["x"] = [1, 2]
    with pytest.raises(ConfigError, match="not an interp activation cache"):
        with open_cache(foreign):
            pass
    with pytest.raises(ConfigError, match="was made with model .* not with the weights of 'minilm'"):
        with open_cache(path, model="minilm"):
            pass
    with open_cache(path) as cache:
        with pytest.raises(ConfigError, match="layer 4 is out of range"):
            cache.vectors("blocks.4.hook_resid_post@cls")
        with pytest.raises(ConfigError, match="location blocks.1.hook_resid_post@w_x is not in the cache"):
            cache.vectors("blocks.1.hook_resid_post@w_x")


def test_bad_settings():
    with pytest.raises(ConfigError, match="dtype= must be one of float32, float16"):
        CacheConfig(model="m", out="o", dtype="int8").validate()


def test_reuse_is_keyed_by_the_weights_not_the_path(tiny_classifier_dir, monli_dir, tmp_path):
    """A run folder that is moved still reuses its cache and interventions; other weights at the same path do not."""
    import shutil

    from click.testing import CliRunner

    from interp.cli import main

    def run(*args):
        return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)

    first, moved = tmp_path / "first" / "model", tmp_path / "moved" / "model"
    shutil.copytree(tiny_classifier_dir, first)
    cache, iv = tmp_path / "act.h5", tmp_path / "iv.h5"
    common = ["--splits", "nmonli_test", "--data-dir", monli_dir]
    assert run("cache", "--model", first, "--out", cache, *common).exit_code == 0
    assert run("intervene", "--model", first, "--locations", "blocks.1.hook_resid_post@w_h", "--max-examples", "6", "--out", iv, *common).exit_code == 0
    shutil.move(first.parent, moved.parent)
    again = run("cache", "--model", moved, "--out", cache, *common)
    assert again.exit_code == 0 and "already cached with these settings" in again.output
    again = run("intervene", "--model", moved, "--locations", "blocks.1.hook_resid_post@w_h", "--max-examples", "6", "--out", iv, *common)
    assert again.exit_code == 0 and "already done, reusing them" in again.output
    # the null: other weights at the moved path are not reused
    import torch
    from safetensors.torch import load_file, save_file

    weights = load_file(moved / "model.safetensors")
    weights["classifier.bias"] = weights["classifier.bias"] + torch.tensor([1.0, -1.0])
    save_file(weights, moved / "model.safetensors", metadata={"format": "pt"})
    again = run("cache", "--model", moved, "--out", cache, *common)
    assert again.exit_code == 0 and "already cached" not in again.output
