"""Interchange intervention training plants a variable where asked (a tiny model, a toy task), and hooks that IIT needs."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from transformers import AutoModelForSequenceClassification

from interp.causal.pairs import counterfactual_pairs
from interp.cli import main
from interp.engine.interventions import Interchange, RotatedSubspace
from interp.engine.pair_suffix import PairSuffix
from interp.hooks import hooked
from interp.hooks.locations import Location
from interp.tasks import resolve_task
from interp.hooks.encoding import collate, encode_examples

# Premise noun animal or vehicle (a), hypothesis noun likewise (b); entailment iff both are animals. Each noun one WordPiece.
TASK = '''
from dataclasses import dataclass
import random
from interp.causal import CausalModel, Mechanism
from interp.tasks import Task

ANIMALS = ["cat", "dog", "horse", "cow", "bird", "fish", "sheep", "goat"]
VEHICLES = ["car", "boat", "train", "truck", "bus", "plane", "ship", "bike"]

@dataclass(frozen=True)
class Pair:
    id: str
    premise: str
    hypothesis: str
    label: str
    split: str
    words: dict

def load(splits):
    pairs = []
    for i, x in enumerate(ANIMALS + VEHICLES):
        for j, y in enumerate(ANIMALS + VEHICLES):
            label = "entailment" if x in ANIMALS and y in ANIMALS else "neutral"
            split = "test" if random.Random(i * 100 + j).random() < 0.25 else "train"
            pairs.append(Pair(f"{x}-{y}", f"the {x} is here", f"the {y} is there", label, split, {"noun_p": x, "noun_h": y}))
    return [p for p in pairs if p.split in splits]

def causal_model(pairs):
    label = Mechanism(("a", "b"), lambda a, b: "entailment" if a and b else "neutral")
    return CausalModel("same_kind", ("a", "b"), {"label": label}, output="label")

def make_task():
    return Task(name="same_kind", labels=("entailment", "neutral"), splits=("train", "test"), default_splits=("test",),
                load=load, roles=("cls", "noun_p", "noun_h"), causal_model=causal_model,
                inputs=lambda p: {"a": p.words["noun_p"] in ANIMALS, "b": p.words["noun_h"] in ANIMALS},
                alignment={"a": ("noun_p",), "b": ("noun_h",)})
'''


def test_hooks_write_through_a_function_and_read_with_gradients(tiny_classifier_dir, monli_dir, minilm_tokenizer):
    model = AutoModelForSequenceClassification.from_pretrained(tiny_classifier_dir).eval()
    task = resolve_task("monli", data_dir=str(monli_dir))
    encoded = encode_examples(task.load(("nmonli_test",))[:6], minilm_tokenizer, "first", task.labels)
    batch = collate(encoded, 0)
    inputs = {k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    loc = Location.parse("blocks.0.hook_resid_post@w_h")
    with hooked(model, batch["positions"], read=[loc], keep_grad=True) as trace:
        model(**inputs)
    assert trace[loc].requires_grad
    source = trace[loc].flip(0)
    rotated = RotatedSubspace(32, 6, seed=2)
    with hooked(model, batch["positions"], write={loc: lambda base: rotated(base, source)}, read=[loc]) as seen:
        logits = model(**inputs).logits
    assert torch.allclose(seen[loc], rotated(trace[loc], source).detach(), atol=1e-6)
    logits.sum().backward()
    assert rotated.basis.linear.parametrizations.weight.original.grad is not None
    assert model.bert.embeddings.word_embeddings.weight.grad is not None  # through the source's run too


@pytest.fixture(scope="module")
def toy(tmp_path_factory, tiny_classifier_dir):
    """``train(lr, extra)``: the tiny model trained on the toy task (20 epochs at ``lr``, with the options ``extra``), made
    once per setting in this module (the plain training is shared by the tests below); the task's spec beside it."""
    folder = tmp_path_factory.mktemp("toy")
    (folder / "same_kind.py").write_text(textwrap.dedent(TASK))
    spec = f"{folder / 'same_kind.py'}:make_task"
    made: dict = {}

    def train(lr: str, extra: tuple = ()) -> Path:
        key = (lr, tuple(extra))
        if key not in made:
            out = folder / f"model{len(made)}"
            common = ["train", "--model", tiny_classifier_dir, "--task", spec, "--splits", "train", "--eval-splits", "test",
                      "--epochs", "20", "--lr", lr, "--batch-size", "16", "--quiet"]  # fmt: skip
            result = CliRunner().invoke(main, [*map(str, common), "--out", str(out), *extra], catch_exceptions=False)
            assert result.exit_code == 0, result.output
            made[key] = out
        return made[key]

    train.spec = spec
    return train


def _iia(model_dir, task, location: str, tokenizer, subspace: int | None) -> dict:
    """IIA of `a` on balanced held-out pairs (the test split): the whole vector, or the seeded subspace IIT trained; and the test accuracy."""
    model = AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
    examples = task.load(("test",))
    causal = task.build_causal_model(examples)
    encoded = encode_examples(examples, tokenizer, "first", task.labels)
    runner = PairSuffix(model, encoded, Location.parse(location))
    pairs = counterfactual_pairs(causal, [task.inputs(e) for e in examples], "a", range(len(examples)), 400, seed=0)
    targets = np.array([task.labels.index(v) for v in pairs.counterfactual])
    intervention = Interchange(runner.width) if subspace is None else RotatedSubspace(runner.width, subspace, seed=0)  # the training's seed
    with torch.no_grad():
        pred = runner.logits(torch.from_numpy(pairs.base), torch.from_numpy(pairs.source), intervention).argmax(-1).numpy()
        own = runner.logits(torch.arange(len(examples)), torch.arange(len(examples)), Interchange(runner.width)).argmax(-1).numpy()
    gold = np.array([task.labels.index(e.label) for e in examples])
    return {"iia": float((pred == targets).mean()), "accuracy": float((own == gold).mean())}


@pytest.mark.slow(seconds=20)
@pytest.mark.parametrize("subspace, lr", [(None, "1e-3"), (8, "3e-3")])
def test_iit_plants_the_variable_at_the_location_plain_training_does_not(tmp_path, toy, minilm_tokenizer, subspace, lr):
    """`a` is asked to live at [CLS] after block 0, where nothing puts it by itself: after IIT its held-out IIA there
    (the whole vector, or the subspace IIT trained) is high; after plain training with the same settings it is not."""
    spec = toy.spec
    location = "blocks.0.hook_resid_post@cls"
    iit = ["--iit", f"a@{location}"] + (["--iit-subspace", str(subspace)] if subspace else [])
    scores = {name: _iia(toy(lr, extra), resolve_task(spec), location, minilm_tokenizer, subspace) for name, extra in (("plain", ()), ("iit", tuple(iit)))}
    assert scores["plain"]["accuracy"] >= 0.9 and scores["iit"]["accuracy"] >= 0.9, scores  # both learned the task
    assert scores["iit"]["iia"] >= 0.95 and scores["plain"]["iia"] <= 0.75, scores
    if subspace is None:  # a planted alignment: DAS there clears its untrained baseline, so `interp das` warns of nothing
        das = CliRunner().invoke(main, ["das", "--model", str(toy(lr, tuple(iit))), "--task", spec, "--splits", "train,test", "--variable", "a",
                                        "--locations", location, "--subspace", "8", "--train-pairs", "400", "--test-pairs", "200",
                                        "--epochs", "3", "--lr", "1e-2", "--out", str(tmp_path / "das"), "--quiet"])  # fmt: skip
        assert das.exit_code == 0, das.output
        assert "interp: warning" not in das.stderr, das.stderr  # tests/test_das_cli.py: the same warning on a model with nothing planted


def test_iit_bad_input_is_one_line_and_exit_2(tmp_path, tiny_classifier_dir, monli_dir):
    common = ["train", "--model", str(tiny_classifier_dir), "--data-dir", str(monli_dir), "--max-examples", "8", "--quiet", "--out", str(tmp_path / "m")]
    cases = {
        "--iit 'lexrel': write VARIABLE@LOCATION": ["--iit", "lexrel"],
        "--iit 'polarity': task 'monli' has no such variable": ["--iit", "polarity@blocks.0.hook_resid_post@cls"],
        "unknown token role 'not'": ["--iit", "lexrel@blocks.0.hook_resid_post@not"],
        "--iit-subspace 99: at most the location's width 32": ["--iit", "lexrel@blocks.0.hook_resid_post@w_h", "--iit-subspace", "99"],
    }
    for message, extra in cases.items():
        result = CliRunner().invoke(main, [*common, *extra])
        assert result.exit_code == 2 and message in result.output and len(result.output.strip().splitlines()) == 1, (message, result.output)
        assert not (tmp_path / "m").exists() and not (tmp_path / "m.partial").exists()


@pytest.mark.slow(seconds=20)
def test_joint_iit_plants_both_variables_each_from_its_own_source(tmp_path, toy, tiny_classifier_dir):
    """``--iit a@LOC_A,b@LOC_B``: each training run writes both locations, each from its own source, against the causal
    model's output with both values from their sources. After it, the joint interchange at those locations
    (``lab.interchange_jointly``, held out) follows the causal model; after plain training with the same settings it
    does not."""
    import interp

    alignment = {"a": "blocks.0.hook_resid_post@cls", "b": "blocks.0.hook_resid_post@noun_h"}
    scores = {}
    for name, extra in (("plain", ()), ("iit", ("--iit", ",".join(f"{v}@{loc}" for v, loc in alignment.items())))):
        lab = interp.IntervenableModel(str(toy("1e-3", extra)), resolve_task(toy.spec))
        test = lab.task.examples(("test",))
        res = lab.interchange_jointly(test, {"a": test, "b": test}, alignment, per_base=8, seed=0)
        scores[name] = (float(res.summary()["iia_causal"]), float(lab.evaluate(test).accuracy.iloc[0]))
    assert scores["plain"][1] >= 0.9 and scores["iit"][1] >= 0.9, scores  # both learned the task
    assert scores["iit"][0] >= 0.95 and scores["plain"][0] <= 0.75, scores
    bad = CliRunner().invoke(main, ["train", "--model", str(tiny_classifier_dir), "--task", toy.spec, "--out", str(tmp_path / "bad"),
                                    "--iit", "a@blocks.0.hook_resid_post@cls,a@blocks.1.hook_resid_post@cls"])  # fmt: skip
    assert bad.exit_code == 2 and "variable a is named twice" in bad.stderr and not (tmp_path / "bad").exists()
