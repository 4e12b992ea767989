"""Labels by name: a checkpoint's id2label read as a task's labels in any order and spelling, extra labels folded.

The null of the mapping tests is a three-label checkpoint whose contradiction
logit sits *above* the others: folded into neutral it changes every prediction,
so equal results from the checkpoint whose contradiction logit sits below are
not an accident of the comparison.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch
from click.testing import CliRunner

from interp.cli import main
from interp.core.errors import ConfigError, ModelError
from interp.models.labels import canonical_label, parse_label_map, read_labels
from interp.tasks.base import NOT_ENTAILED

LOCATION = "blocks.1.hook_resid_post@w_h"
MONLI = ("entailment", "neutral")
FRAGMENT = ("entailment", "contradiction", "neutral")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


# -- the reading, on its whole table ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name, canonical", [("ENTAILMENT", "entailment"), ("entails", "entailment"), (" Neutral ", "neutral"),
                                             ("not_entailment", "non-entailment"), ("Non-Entailment", "non-entailment"),
                                             ("CONTRADICTION", "contradiction"), ("LABEL_0", "label_0"), ("yes", "yes")])  # fmt: skip
def test_spellings_read_as_one_name(name, canonical):
    assert canonical_label(name) == canonical


def test_every_order_of_the_same_labels_reads_back_to_the_task():
    from itertools import permutations

    for order in permutations(FRAGMENT):
        reading = read_labels([x.upper() for x in order], FRAGMENT, NOT_ENTAILED)
        assert [FRAGMENT[j] for j in reading.read] == list(order)  # each model id reads as its own name
        assert reading.scored == (0, 1, 2) and reading.complete
        assert [order[i] for i in reading.target] == list(FRAGMENT)  # and trains toward its own logit
        assert reading.identity == (order == FRAGMENT)


def test_a_three_label_model_on_two_labels_folds_contradiction_into_neutral():
    reading = read_labels(("CONTRADICTION", "NEUTRAL", "ENTAILMENT"), MONLI, NOT_ENTAILED)
    assert reading.read == (1, 1, 0) and reading.target == (2, 1) and reading.scored == (0, 1)
    assert reading.folded == {"contradiction": "neutral"}
    logits = torch.tensor([[5.0, 1.0, 0.0], [0.0, 1.0, 5.0], [0.0, 5.0, 1.0]])
    assert reading.predict(logits).tolist() == [1, 0, 1]
    assert reading.targets([0, 1, 1]).tolist() == [2, 1, 1]
    # two-label models that say non-entailment, in either order
    assert read_labels(("not_entailment", "entailment"), MONLI, NOT_ENTAILED).read == (1, 0)
    assert read_labels(("entailment", "not_entailment"), MONLI, NOT_ENTAILED).target == (0, 1)


def test_a_two_label_model_on_three_labels_scores_contradiction_as_neutral():
    reading = read_labels(MONLI, FRAGMENT, NOT_ENTAILED)
    assert reading.read == (0, 2) and reading.scored == (0, 2, 2) and reading.target == (0, 1, 1)
    assert not reading.complete


@pytest.mark.parametrize("model, match", [
    (("LABEL_0", "LABEL_1", "LABEL_2"), r"names its labels LABEL_0, LABEL_1, LABEL_2; say what each means with label_map="),
    (("yes", "no"), r"has label 'yes', which task 'the task' neither has \(entailment, neutral\) nor folds"),
    (("entailment", "ENTAILS"), "two read as the same name"),
    (("entailment", "contradiction", "non-entailment"), "several read as task 'the task'.s label 'neutral'"),
])  # fmt: skip
def test_labels_that_cannot_be_read_are_refused(model, match):
    with pytest.raises(ModelError, match=match):
        read_labels(model, MONLI, NOT_ENTAILED)


def test_without_a_fold_an_extra_label_is_refused():
    with pytest.raises(ModelError, match="neither has"):
        read_labels(("contradiction", "neutral", "entailment"), MONLI)


@pytest.mark.parametrize("text, names", [("0=contradiction,1=neutral,2=entailment", ("contradiction", "neutral", "entailment")),
                                         (" 1 = b , 0 = a ", ("a", "b"))])  # fmt: skip
def test_a_label_map_gives_names_in_id_order(text, names):
    assert parse_label_map(text, len(names)) == names
    assert parse_label_map(dict(enumerate(names))) == names == parse_label_map(list(names))


@pytest.mark.parametrize("text, n, match", [
    ("0=contradiction,1=neutral", 3, "leaves out id 2"),
    ("0=a,1=b,3=c", 3, "there is no id 3"),
    ("0=a,0=b", 2, "id 0 is named twice"),
    ("0=entails,1=ENTAILMENT", 2, "names 'entailment' twice"),
    ("contradiction", 1, "is not ID=NAME"),
    ("", 2, "names no label"),
])  # fmt: skip
def test_a_bad_label_map_names_the_parameter(text, n, match):
    with pytest.raises(ConfigError, match=f"`label_map=`.*{match}|{match}"):
        parse_label_map(text, n)


# -- checkpoints derived from a two-label one -------------------------------------------------------------------------


def three_label_from(two, path: Path, offset: float) -> Path:
    """A (entailment, neutral) classifier ``two`` saved at ``path`` as CONTRADICTION/NEUTRAL/ENTAILMENT (roberta-large-mnli's
    order and case): the same logits for its two labels, and a contradiction logit of constant ``offset``."""
    from transformers import BertForSequenceClassification

    names = ("CONTRADICTION", "NEUTRAL", "ENTAILMENT")
    config = type(two.config)(**{**two.config.to_dict(), "num_labels": 3, "id2label": dict(enumerate(names)),
                                 "label2id": {x: i for i, x in enumerate(names)}})  # fmt: skip
    three = BertForSequenceClassification(config).eval()
    weight, bias = two.classifier.weight.detach(), two.classifier.bias.detach()
    state = {k: v for k, v in two.state_dict().items() if not k.startswith("classifier.")}
    state["classifier.weight"] = torch.stack([torch.zeros_like(weight[0]), weight[1], weight[0]])
    state["classifier.bias"] = torch.stack([torch.tensor(offset), bias[1], bias[0]])
    three.load_state_dict(state)
    three.save_pretrained(path, safe_serialization=True)
    return path


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory, minilm_tokenizer):
    """A wide random two-label classifier and checkpoints derived from it: three labels in roberta-large-mnli's
    order and case with contradiction far below (``below``) or far above (``above``, the null), and LABEL_k names."""
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(4)
    root = tmp_path_factory.mktemp("labels")
    config = BertConfig(vocab_size=minilm_tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=37, max_position_embeddings=128, num_labels=2, initializer_range=0.2,
                        id2label=dict(enumerate(MONLI)), label2id={x: i for i, x in enumerate(MONLI)})  # fmt: skip
    two = BertForSequenceClassification(config).eval()
    paths = {"two": root / "two"}
    two.save_pretrained(paths["two"], safe_serialization=True)
    for name, offset in (("below", -1e3), ("above", 1e3)):
        paths[name] = three_label_from(two, root / name, offset)
    generic = json.loads((paths["below"] / "config.json").read_text())
    paths["generic"] = root / "generic"
    shutil.copytree(paths["below"], paths["generic"])
    generic.update(id2label={str(i): f"LABEL_{i}" for i in range(3)}, label2id={f"LABEL_{i}": i for i in range(3)})
    (paths["generic"] / "config.json").write_text(json.dumps(generic))
    for path in paths.values():
        minilm_tokenizer.save_pretrained(path)
    return paths


GENERIC_MAP = "0=contradiction,1=neutral,2=entailment"


def _evaluate(model, monli_dir, *extra):
    result = run("evaluate", "--model", model, "--data-dir", monli_dir, "--splits", "pmonli,nmonli_test", "--json", *extra)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_a_three_label_checkpoint_scores_as_the_two_label_one_it_was_built_from(checkpoints, monli_dir):
    two = _evaluate(checkpoints["two"], monli_dir)
    assert _evaluate(checkpoints["below"], monli_dir) == two
    assert _evaluate(checkpoints["generic"], monli_dir, "--label-map", GENERIC_MAP) == two
    null = _evaluate(checkpoints["above"], monli_dir)  # every prediction contradiction, read as neutral
    assert null != two
    assert null["nmonli_test"]["correct"] == sum(1 for line in (monli_dir / "nmonli_test.jsonl").open() if '"neutral"' in line)


def _intervene(model, monli_dir, out, *extra):
    result = run("intervene", "--model", model, "--data-dir", monli_dir, "--splits", "pmonli,nmonli_test", "--max-per-split", "12",
                 "--locations", LOCATION, "--out", out, "--quiet", *extra)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    with h5py.File(out) as handle:
        group = handle[f"interchange/{LOCATION}"]
        return {"model_pred": group["model_pred"][:], "logits": group["logits"][:], "base_pred": handle["base_pred"][:],
                "model_labels": list(handle.attrs.get("model_labels", handle.attrs["labels"]))}  # fmt: skip


def _cliques(path, out):
    result = run("cliques", "--interventions", path, "--out", out, "--variable", "lexrel", "--alphas", "1-3", "--format", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads((out / "cliques.json").read_text())["cliques"]


def test_interventions_iia_and_cliques_of_the_three_label_checkpoint_are_the_two_label_ones(checkpoints, monli_dir, tmp_path):
    from interp import load_interventions

    files = {name: tmp_path / f"{name}.h5" for name in ("two", "below", "generic", "above")}
    got = {name: _intervene(checkpoints[name], monli_dir, files[name], *(["--label-map", GENERIC_MAP] if name == "generic" else []))
           for name in files}  # fmt: skip
    two = got["two"]
    assert len(set(two["model_pred"].reshape(-1).tolist())) == 2  # the wide model moves: both labels occur
    for name in ("below", "generic"):
        assert got[name]["model_labels"] == ["contradiction", "neutral", "entailment"]
        np.testing.assert_array_equal(got[name]["model_pred"], two["model_pred"])
        np.testing.assert_array_equal(got[name]["base_pred"], two["base_pred"])
        np.testing.assert_allclose(got[name]["logits"][..., [2, 1]], two["logits"], atol=1e-5)  # kept in the model's own labels
        a, b = load_interventions(files[name]), load_interventions(files["two"])
        assert a.summaries() == b.summaries()
        assert _cliques(files[name], tmp_path / f"c_{name}") == _cliques(files["two"], tmp_path / "c_two")
    assert (got["above"]["model_pred"] == 1).all() and not (two["model_pred"] == 1).all()  # the null moves


def test_das_of_the_three_label_checkpoint_is_the_two_label_ones(checkpoints, monli_dir, tmp_path):
    rows = {}
    for name in ("two", "below"):
        result = run("das", "--model", checkpoints[name], "--data-dir", monli_dir, "--splits", "pmonli,nmonli_test", "--max-per-split", "40",
                     "--locations", LOCATION, "--subspace", "4", "--train-pairs", "64", "--test-pairs", "64", "--epochs", "1",
                     "--out", tmp_path / name, "--quiet")  # fmt: skip
        assert result.exit_code == 0, result.stderr
        rows[name] = (tmp_path / name / "das.csv").read_text().splitlines()
    strip = lambda lines: [",".join(c for i, c in enumerate(line.split(",")) if i != lines[0].split(",").index("train_seconds")) for line in lines]  # noqa: E731
    assert strip(rows["below"]) == strip(rows["two"])


def test_fine_tuning_a_three_label_checkpoint_on_two_labels_keeps_its_head(checkpoints, monli_dir, tmp_path):
    common = ["--data-dir", monli_dir, "--splits", "pmonli", "--max-examples", "48", "--epochs", "1", "--eval-splits", "nmonli_test", "--quiet"]
    for name in ("two", "below"):
        assert run("train", "--model", checkpoints[name], "--out", tmp_path / name, *common).exit_code == 0
    config = json.loads((tmp_path / "below" / "config.json").read_text())
    assert [config["id2label"][str(i)] for i in range(3)] == ["CONTRADICTION", "NEUTRAL", "ENTAILMENT"]
    records = {n: json.loads((tmp_path / n / "training.json").read_text()) for n in ("two", "below")}
    assert records["below"]["metrics"] == records["two"]["metrics"]
    assert records["two"]["labels"] == {}
    assert records["below"]["labels"] == {"model": ["contradiction", "neutral", "entailment"], "read_as": {"contradiction": "neutral"}}
    from interp.analysis.report.collect import behavioral_from_checkpoint

    assert behavioral_from_checkpoint(tmp_path / "below" / "training.json")["notes"] == [
        "the model's labels: contradiction, neutral, entailment; scored reading contradiction as neutral"]
    from interp.models import load_classifier

    trained = {n: load_classifier(str(tmp_path / n))[0] for n in ("two", "below")}
    ids = torch.tensor([[101, 2023, 2003, 1037, 3231, 102, 2023, 2003, 102]])
    with torch.no_grad():
        two, three = (trained[n](input_ids=ids).logits for n in ("two", "below"))
    torch.testing.assert_close(three[:, [2, 1]], two, atol=1e-4, rtol=1e-4)  # each gold label trained its own logit


def test_label_k_names_need_a_map(checkpoints, monli_dir, tmp_path):
    out = tmp_path / "x.h5"
    result = run("intervene", "--model", checkpoints["generic"], "--data-dir", monli_dir, "--locations", LOCATION, "--out", out, "--quiet")
    assert result.exit_code == 2
    assert "names its labels LABEL_0, LABEL_1, LABEL_2; say what each means with --label-map" in result.stderr
    assert result.stderr.count("\n") == 1 and not out.exists()


def test_a_notebook_reads_labels_by_name_too(checkpoints, monli_dir):
    import interp

    task = interp.load_task("monli", data_dir=str(monli_dir))
    examples = task.examples(("nmonli_test",), n=16, seed=0)
    two = interp.IntervenableModel(str(checkpoints["two"]), task)
    three = interp.IntervenableModel(interp.load_model(str(checkpoints["generic"]), label_map=GENERIC_MAP), task)
    assert three.reading.folded == {"contradiction": "neutral"}
    a, b = two.interchange(examples, examples, LOCATION), three.interchange(examples, examples, LOCATION)
    np.testing.assert_array_equal(a.model_pred, b.model_pred)
    assert b.model_labels == ("contradiction", "neutral", "entailment") and b.logits.shape[-1] == 3
    assert a.to_frame().equals(b.to_frame())
    with pytest.raises(ModelError, match="^model=: .* none for task 'fragment:boolean''s contradiction"):
        interp.IntervenableModel(interp.load_model(str(checkpoints["two"])), interp.load_task("fragment:boolean"))


def test_caching_reads_no_prediction_so_a_two_label_model_caches_a_three_label_task(checkpoints, fragments_dir, tmp_path):
    out = tmp_path / "a.h5"
    result = run("cache", "--model", checkpoints["two"], "--task", "fragment:boolean", "--data-dir", fragments_dir,
                 "--splits", "dev", "--out", out, "--quiet")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    with h5py.File(out) as handle:
        assert handle["label"].shape[0] == 1000


@pytest.mark.slow(seconds=100)
def test_the_fine_tuned_embedded_model_as_three_labels_scores_and_intervenes_the_same_on_real_monli(finetuned_minilm, monli_dir, tmp_path):
    from interp.models import load_classifier

    two_dir, _ = finetuned_minilm
    model, tokenizer = load_classifier(str(two_dir), require_head=True)
    three_dir = three_label_from(model, tmp_path / "three", -1e3)
    tokenizer.save_pretrained(three_dir)
    splits = ["--splits", "pmonli_heldout,nmonli_test"]  # both labels, negated and not; the fold is per example
    scores = {n: run("evaluate", "--model", d, "--data-dir", monli_dir, *splits, "--json") for n, d in (("two", two_dir), ("three", three_dir))}
    assert all(r.exit_code == 0 for r in scores.values())
    assert json.loads(scores["three"].stdout) == json.loads(scores["two"].stdout)
    a = _intervene(two_dir, monli_dir, tmp_path / "two.h5")
    b = _intervene(three_dir, monli_dir, tmp_path / "three.h5")
    np.testing.assert_array_equal(a["model_pred"], b["model_pred"])
    np.testing.assert_allclose(b["logits"][..., [2, 1]], a["logits"], atol=1e-4)
