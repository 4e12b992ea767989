"""The Python face's bad-input table: every public call checks its arguments at the edge and raises an `InterpError`
naming the parameter (never a `TypeError`, `AttributeError` or torch's `RuntimeError` from deep inside), and no call
overwrites a file it did not write.

One row per case, as `tests/test_bad_input.py` holds the CLI's: (name, call, error type, what the message must say).
"""

from __future__ import annotations

import math

import pytest
import torch

import interp
from interp.core.errors import InterpError

LOCATION = "blocks.0.hook_resid_post@w_h"


@pytest.fixture(scope="module")
def setting(tiny_classifier_dir, monli_dir, mqnli_file):
    lab = interp.IntervenableModel(str(tiny_classifier_dir), "monli", data_dir=str(monli_dir))
    examples = lab.task.examples(("pmonli", "nmonli_test"), per_split=6, seed=1)
    other = interp.load_task("mqnli", data_file=str(mqnli_file)).examples(n=8)  # another task's examples
    result = lab.interchange(examples, examples, LOCATION, variables=("lexrel",))
    return {"lab": lab, "ex": examples, "other": other, "res": result, "dir": str(tiny_classifier_dir)}


CASES = [
    ("an unknown device", lambda s: interp.IntervenableModel(s["dir"], s["lab"].task, device="tpu"), interp.ConfigError, "device='tpu': not a device"),
    ("a location that is a number", lambda s: s["lab"].interchange(s["ex"], s["ex"], 5), interp.ConfigError, "location= must be a location string"),
    # plain strings are examples of one's own (interp.examples), read at [CLS] only: a location at a word is refused
    ("bases that are strings", lambda s: s["lab"].interchange(["a", "b"], s["ex"], LOCATION), interp.ConfigError, "example own:1 has no token role 'w_h'"),
    ("bases that are numbers", lambda s: s["lab"].interchange([1, 2], s["ex"], LOCATION), interp.ConfigError, "bases=: example 0 .int. has no 'id'"),
    ("one string as bases", lambda s: s["lab"].interchange("ab", s["ex"], LOCATION), interp.ConfigError, "bases= must be a list"),
    ("no sources", lambda s: s["lab"].interchange(s["ex"], [], LOCATION), interp.ConfigError, "sources= is empty"),
    ("an intervention that is not one", lambda s: s["lab"].interchange(s["ex"], s["ex"], LOCATION, intervention="das"), interp.ConfigError, "intervention= must be an Intervention"),
    ("vectors of no example", lambda s: s["lab"].vectors([], LOCATION), interp.ConfigError, "examples= is empty"),
    ("predict on another task's examples", lambda s: s["lab"].predict(s["other"]), interp.ConfigError, "examples=: example .* another task's"),
    ("DAS for 0 epochs", lambda s: s["lab"].train_das(s["ex"], LOCATION, "lexrel", k=2, epochs=0), interp.ConfigError, "epochs= must be an integer of at least 1, got 0"),
    ("DAS at lr nan", lambda s: s["lab"].train_das(s["ex"], LOCATION, "lexrel", k=2, lr=math.nan), interp.ConfigError, "lr= must be a finite number above 0, got nan"),
    ("DAS in batches of 0", lambda s: s["lab"].train_das(s["ex"], LOCATION, "lexrel", k=2, batch_size=0), interp.ConfigError, "batch_size= must be an integer of at least 1"),
    ("DAS on 1 pair", lambda s: s["lab"].train_das(s["ex"], LOCATION, "lexrel", k=2, n_pairs=1), interp.ConfigError, "n_pairs= must be an integer of at least 2"),
    ("DAS with a share that is text", lambda s: s["lab"].train_das(s["ex"], LOCATION, "lexrel", k=2, test_share="0.2"), interp.ConfigError, "test_share= must be a finite number"),
    ("DAS on another task's examples", lambda s: s["lab"].train_das(s["other"], LOCATION, "lexrel", k=2), interp.ConfigError, "examples=: .* another task's"),
    ("fine-tuning on another task's examples", lambda s: interp.fine_tune(s["dir"], s["lab"].task, s["other"]), interp.ConfigError, "examples=: .* another task's"),
    ("fine-tuning with an unknown setting", lambda s: interp.fine_tune(s["dir"], s["lab"].task, s["ex"], nope=3), interp.ConfigError, "nope= is not a fine-tuning setting"),
    ("fine-tuning at warm-up 1", lambda s: interp.fine_tune(s["dir"], s["lab"].task, s["ex"], warmup_ratio=1.0), interp.ConfigError, "warmup_ratio= must be a finite number"),
    ("a new head with no labels", lambda s: interp.load_model(s["dir"], labels=()), interp.ConfigError, r"labels=\(\): give the new head's label names, at least two"),
    ("a new head with one label twice", lambda s: interp.load_model(s["dir"], labels=("a", "a")), interp.ConfigError, "labels=.*distinct"),
    ("a negative per-split count", lambda s: s["lab"].task.examples(per_split=-3), interp.ConfigError, "per_split= must be an integer of at least 0, got -3"),
    ("a split given as one string", lambda s: s["lab"].task.examples("pmonli"), interp.ConfigError, "splits='pmonli' must be a tuple"),
    ("a saved intervention without meta", lambda s: interp.save_intervention(interp.RotatedSubspace(8, 2), "x", None), interp.ConfigError, "meta= must be a dict"),
    ("a saved intervention that is not one", lambda s: interp.save_intervention("x", "x", {}), interp.ConfigError, "intervention= must be an interp Intervention"),
    ("cliques of minimum size -1", lambda s: s["res"].cliques("lexrel", min_size=-1), interp.ConfigError, "min_size= must be an integer of at least 2, got -1"),
    ("cliques with no α", lambda s: s["res"].cliques("lexrel", alphas=[]), interp.ConfigError, "alphas= is empty"),
    ("cliques with α 0", lambda s: s["res"].cliques("lexrel", alphas=[0, 1]), interp.ConfigError, "alphas= must be an integer of at least 1, got 0"),
    ("saving to no path", lambda s: s["res"].save(None), interp.ConfigError, "path=None: give the file to write"),
    ("a bootstrap seed below 0", lambda s: s["res"].summary("lexrel", seed=-1), interp.ConfigError, "seed= must be an integer of at least 0, got -1"),
    ("IIT at a block past the last", lambda s: interp.fine_tune(s["dir"], s["lab"].task, s["ex"], iit="lexrel@blocks.99.hook_resid_post@w_h"),
     interp.ConfigError, "iit='lexrel@blocks.99.hook_resid_post@w_h': .*layer 99 is out of range"),
    # switches are bools: a string or a number Python would read as true or false is refused by name
    ("compile given as a string", lambda s: interp.IntervenableModel(s["dir"], s["lab"].task, compile="no"), interp.ConfigError, "compile= must be True, False or None, got 'no'"),
    ("compile given as a number", lambda s: interp.IntervenableModel(s["dir"], s["lab"].task, compile=2), interp.ConfigError, "compile= must be True, False or None, got 2"),
    ("the QK fix given as a string", lambda s: s["lab"].screen(s["ex"], s["ex"], LOCATION, variable="lexrel", qk_fix="yes"), interp.ConfigError, "qk_fix= must be True, False or None, got 'yes'"),
    ("GradDrop given as a number", lambda s: s["lab"].screen(s["ex"], s["ex"], LOCATION, variable="lexrel", graddrop=5), interp.ConfigError, "graddrop= must be True, False or None, got 5"),
    ("screen locations given as a number", lambda s: s["lab"].screen(s["ex"], s["ex"], 5, variable="lexrel"), interp.ConfigError, "locations=5 must be a string"),
    ("label words given as a number", lambda s: interp.load_model(s["dir"], label_words=7), interp.ConfigError, "label_words=7 must be 'LABEL=WORD"),
    ("a label word given as a number", lambda s: interp.load_model(s["dir"], label_words={"entailment": 5, "neutral": " no"}), interp.ConfigError, "each word must be a string, got 5"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_a_bad_argument_is_an_interp_error_naming_the_parameter(case, setting, tmp_path, monkeypatch):
    _, call, kind, message = case
    monkeypatch.chdir(tmp_path)  # nothing may be written, even by mistake, outside the test's folder
    with pytest.raises(kind, match=message) as caught:
        call(setting)
    assert isinstance(caught.value, InterpError) and "\n" not in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_the_path_a_classifier_saves_to_loads_it_and_binds_it(setting, tmp_path):
    """``Classifier.save`` returns a ``pathlib.Path`` "to pass to load_model": load_model and IntervenableModel take it."""
    saved = setting["lab"].model.save(tmp_path / "model")
    model = interp.load_model(saved)
    assert model.name == str(saved) and model.labels == setting["lab"].model.labels
    lab = interp.IntervenableModel(saved, setting["lab"].task)
    assert torch.allclose(lab.predict(setting["ex"]), setting["lab"].predict(setting["ex"]), atol=1e-5)


def test_no_call_overwrites_a_file_it_did_not_write(setting, tmp_path):
    res, other = setting["res"], tmp_path / "notes.h5"
    other.write_bytes(b"a user's own file")
    with pytest.raises(interp.OutputError, match="notes.h5 already exists; choose another path or pass overwrite=True"):
        res.save(other)
    assert other.read_bytes() == b"a user's own file" and not (tmp_path / "notes.h5.manifest.json").exists()
    first = res.save(tmp_path / "iv.h5")
    with pytest.raises(interp.OutputError, match="already exists"):
        res.save(first)  # even another interventions file: replaced only when asked
    assert interp.load_interventions(res.save(first, overwrite=True)).summary("lexrel") == res.summary("lexrel")
    with pytest.raises(interp.OutputError, match="is a folder"):
        res.save(tmp_path, overwrite=True)

    iv, meta = interp.RotatedSubspace(8, 2, seed=0), {"variable": "lexrel"}
    (tmp_path / "saved.json").write_text("{}")
    with pytest.raises(interp.OutputError, match="saved.json already exists"):
        interp.save_intervention(iv, tmp_path / "saved", meta)
    assert (tmp_path / "saved.json").read_text() == "{}" and not (tmp_path / "saved.safetensors").exists()
    path = interp.save_intervention(iv, tmp_path / "saved", meta, overwrite=True)
    assert interp.load_trained_intervention(path)[1]["variable"] == "lexrel"

    by_hand = interp.InterchangeResult(**{f: getattr(res, f) for f in ("location", "labels", "base_ids", "source_ids", "logits", "base_pred",
                                                                       "source_pred", "base_label", "causal_pred", "values", "source_values")})
    with pytest.raises(interp.ConfigError, match="holds no examples= and model="):
        by_hand.save(tmp_path / "hand.h5")


def test_a_job_refuses_to_replace_a_file_no_manifest_lists(setting, tmp_path):
    """A job's folder may hold a user's files: a name the job writes is replaced only when a manifest there lists it."""
    from interp.core.outputs import OutputSet, write_json_atomic

    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "cliques.json").write_text("mine")
    with pytest.raises(interp.OutputError, match="cliques.json exists and interp did not write it"):
        with OutputSet(folder, "cliques") as outputs:
            write_json_atomic(outputs.path("cliques.json"), {"a": 1})
    assert (folder / "cliques.json").read_text() == "mine" and sorted(p.name for p in folder.iterdir()) == ["cliques.json"]
    (folder / "cliques.json").unlink()
    for value in (1, 2):  # interp's own file, listed by its manifest, is replaced on a rerun
        with OutputSet(folder, "cliques") as outputs:
            write_json_atomic(outputs.path("cliques.json"), {"a": value})
    assert '"a": 2' in (folder / "cliques.json").read_text()


def test_saving_into_a_read_only_folder_is_an_output_error_naming_it(setting, tmp_path):
    from test_bad_input import tmpfs

    with tmpfs(tmp_path / "ro", "ro,") as folder:
        with pytest.raises(interp.OutputError, match="path=.*cannot write in .*ro .it is on a read-only file system"):
            setting["res"].save(folder / "iv.h5")
        with pytest.raises(interp.OutputError, match="read-only file system"):
            interp.save_intervention(interp.RotatedSubspace(8, 2), folder / "saved", {"variable": "lexrel"})
        assert not any(folder.iterdir())


def test_a_fine_tuned_classifier_saves_as_a_checkpoint_and_never_over_a_foreign_folder(tiny_encoder_dir, monli_dir, tmp_path):
    task = interp.load_task("monli", data_dir=str(monli_dir))
    trained = interp.fine_tune(str(tiny_encoder_dir), task, task.examples(("nmonli_test",), n=16, seed=0), epochs=1, batch_size=8)
    path = trained.save(tmp_path / "model")
    again = interp.load_model(str(path))
    assert again.labels == trained.labels and again.sha256 != trained.sha256  # a file's hash now names the same weights
    examples = task.examples(("nmonli_test",), n=6, seed=1)
    import torch

    assert torch.allclose(interp.IntervenableModel(again, task).predict(examples), interp.IntervenableModel(trained, task).predict(examples), atol=1e-6)
    record = __import__("json").loads((path / "training.json").read_text())
    assert record["config"]["epochs"] == 1 and record["config"]["model"] == str(tiny_encoder_dir) and len(record["epochs"]) == 1
    with pytest.raises(interp.OutputError, match="model already exists"):
        trained.save(path)
    assert trained.save(path, overwrite=True) == path  # its own checkpoint, replaced when asked
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep\n")
    with pytest.raises(interp.OutputError, match="is not a checkpoint interp wrote"):
        trained.save(tmp_path / "mine", overwrite=True)
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep\n"
