"""The six logic-fragment generators: each causal model on its truth table against finite models, generation, the check's
flipped-label null, the task with its causal model, and the CLI on the released fragments."""

from __future__ import annotations

import itertools
import json
import random

import pytest
from click.testing import CliRunner

from interp.causal.base import run_forward
from interp.cli import main
from interp.core.errors import ConfigError, DataError
from interp.tasks import resolve_task
from interp.tasks.fragments.data import LOGIC
from interp.tasks.fragments.logic.causal import CAUSAL_MODELS
from interp.tasks.fragments.logic.check import check_logic_records
from interp.tasks.fragments.logic.generate import LogicConfig, generate_records
from interp.tasks.fragments.logic.lexicon import vocabulary
from interp.tasks.fragments.logic.semantics import label
from interp.tasks.fragments.logic.templates import REALIZE

#: Counting's numbers on the truth table: the edges (1, 40), both sides of the listed / numeric switch (30, 31), and neighbours.
COUNTS = (1, 2, 29, 30, 31, 40)


def _table(fragment: str):
    causal = CAUSAL_MODELS[fragment]
    values = [COUNTS if v in ("count", "bound") else causal.values[v] for v in causal.inputs]
    return [dict(zip(causal.inputs, combo)) for combo in itertools.product(*values)]


@pytest.mark.parametrize("fragment", LOGIC)
def test_each_causal_model_gives_what_finite_models_give_on_its_whole_truth_table(fragment):
    """Every input combination (counting: its numbers at the edges) realized three ways: the causal model's label is the one
    every finite model gives; and the three labels all occur."""
    causal, rng, seen = CAUSAL_MODELS[fragment], random.Random(fragment), set()
    for inputs in _table(fragment):
        expected = run_forward(causal, inputs)["label"]
        seen.add(expected)
        for _ in range(3):
            d = REALIZE[fragment](inputs, rng, vocabulary("train"))
            assert label(d.premise_lf, d.hypothesis_lf, people=d.people, places=d.places) == expected, (inputs, d.premise, d.hypothesis)
    assert seen == {"entailment", "contradiction", "neutral"}


def test_the_model_check_decides_textbook_pairs():
    people, places = ["Ann", "Bob"], ["Peru", "Chile"]
    only_peru = ["only", "Ann", ["Peru"]]
    assert label(only_peru, ["visit", "Ann", "Peru"], people=people, places=places) == "entailment"
    assert label(only_peru, ["visit", "Ann", "Chile"], people=people, places=places) == "contradiction"
    assert label(only_peru, ["visit", "Bob", "Chile"], people=people, places=places) == "neutral"
    everyone = ["all", "?x", "person", ["all", "?y", "place", ["visit", "?x", "?y"]]]
    assert label(everyone, ["not", ["visit", "Bob", "Chile"]], people=people, places=places) == "contradiction"
    assert label(["some", "?x", "person", ["visit", "?x", "Peru"]], ["visit", "Bob", "Peru"], people=people, places=places) == "neutral"
    three = ["count", "Ann", "place", "=", 3]
    assert label(three, ["count", "Ann", "place", ">", 2], people=people, places=places) == "entailment"
    assert label(three, ["count", "Ann", "place", "<", 3], people=people, places=places) == "contradiction"
    chain = ["and", ["as_tall", "Ann", "Bob"], ["taller", "Bob", "Cy"]]
    assert label(chain, ["taller", "Ann", "Cy"], people=["Ann", "Bob", "Cy"], places=[]) == "entailment"
    assert label(chain, ["taller", "Ann", "Bob"], people=["Ann", "Bob", "Cy"], places=[]) == "contradiction"
    with pytest.raises(DataError, match="no model"):
        label(["and", ["visit", "Ann", "Peru"], ["not", ["visit", "Ann", "Peru"]]], ["visit", "Ann", "Peru"], people=people, places=places)
    with pytest.raises(DataError, match="unknown operator"):
        label(["maybe", "Ann"], ["visit", "Ann", "Peru"], people=people, places=places)


@pytest.fixture(scope="module")
def generated():
    return {f: generate_records(LogicConfig(fragment=f, n_train=90, n_dev=15, n_test=45, seed=3)) for f in LOGIC}


@pytest.mark.parametrize("fragment", LOGIC)
def test_generation_is_seeded_balanced_and_test_names_are_unseen(generated, fragment):
    records = generated[fragment]
    again = generate_records(LogicConfig(fragment=fragment, n_train=90, n_dev=15, n_test=45, seed=3))
    other = generate_records(LogicConfig(fragment=fragment, n_train=90, n_dev=15, n_test=45, seed=4))
    assert records == again and records != other
    for split, n in (("train", 90), ("dev", 15), ("test", 45)):
        labels = [r["label"] for r in records if r["split"] == split]
        assert len(labels) == n and {labels.count(x) for x in set(labels)} == {n // 3}
    assert len({(r["premise"], r["hypothesis"]) for r in records}) == len(records)
    names = {s: {n for r in records if r["split"] == s for n in r["people"] + r["places"]} for s in ("train", "test")}
    assert names["train"] and names["test"] and not names["train"] & names["test"]
    for r in records:  # each role's span holds its word
        for role, (a, b) in r["spans"].items():
            text = r["premise"] if role.endswith(".p") else r["hypothesis"]
            assert text[a:b] == text[a:b].strip() and text[a:b]


@pytest.mark.parametrize("fragment", LOGIC)
def test_the_check_confirms_every_label_and_refutes_each_flipped_one(generated, fragment):
    records = generated[fragment]
    result = check_logic_records(records)
    assert result["refuted"] == [] and sum(c["confirmed"] for c in result["counts"].values()) == len(records)
    flipped = [dict(r, label={"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}[r["label"]])
               for r in records]  # fmt: skip
    assert sorted(check_logic_records(flipped)["refuted"]) == sorted(r["id"] for r in records)


def test_bad_config_and_records_name_what_is_wrong():
    with pytest.raises(ConfigError, match="fragment"):
        LogicConfig(fragment="monotonicity").validate()
    with pytest.raises(ConfigError, match="n_dev"):
        LogicConfig(n_dev=-1).validate()
    with pytest.raises(DataError, match="records:2"):
        check_logic_records([generate_records(LogicConfig(n_train=1, n_dev=0, n_test=0))[0], {"id": "x"}])


@pytest.fixture(scope="module")
def counting_file(tmp_path_factory, generated):
    path = tmp_path_factory.mktemp("logic") / "counting.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in generated["counting"]), encoding="utf-8")
    return path


def test_the_task_reads_a_file_with_its_causal_model_and_roles(counting_file, minilm_tokenizer, tmp_path):
    from interp.hooks.encoding import encode_examples

    task = resolve_task("logic-fragment", data_file=str(counting_file))
    examples = task.load(("test",))
    assert len(examples) == 45 and task.variables == ("count", "comparison", "bound", "label")
    causal = task.build_causal_model(examples)
    assert all(run_forward(causal, task.inputs(e))["label"] == e.label for e in examples)
    assert {e.words["comparison.h"] for e in examples} == {"more", "less"}
    encoded = encode_examples(examples, minilm_tokenizer, labels=task.labels)
    for e, enc in zip(examples, encoded):  # the role's first word piece is its word's
        piece = minilm_tokenizer.decode([enc.input_ids[enc.positions["bound.h"]]])
        assert e.words["bound.h"].lower().startswith(piece.replace("##", ""))
    rows = counting_file.read_text(encoding="utf-8").splitlines()
    spoiled = json.loads(rows[4])
    spoiled["inputs"]["bound"] = spoiled["inputs"]["count"] + (1 if spoiled["label"] == "entailment" else 0)
    spoiled["label"] = "neutral" if spoiled["label"] != "neutral" else "entailment"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([*rows[:4], json.dumps(spoiled), *rows[5:]]) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.jsonl:5: label"):
        resolve_task("logic-fragment", data_file=str(bad)).load(("train",))


@pytest.fixture(scope="module")
def tiny_three_label_dir(tmp_path_factory, minilm_tokenizer):
    from conftest import _tiny_classifier

    from interp.tasks.fragments.data import LABELS

    return _tiny_classifier(tmp_path_factory.mktemp("tiny_logic"), minilm_tokenizer, LABELS, seed=4, initializer_range=0.2)


def test_cli_generate_check_evaluate_and_intervene(tiny_three_label_dir, tmp_path):
    runner = CliRunner()
    out = tmp_path / "negation.jsonl"
    args = ["fragments", "generate", "--fragment", "negation", "--n-train", "30", "--n-dev", "0", "--n-test", "30", "--out", str(out)]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "train      30 pairs" in result.output and "confirmed in finite models" in result.output
    for bad in (["--setting", "hard"], ["--depth", "2"]):
        result = runner.invoke(main, [*args, "--overwrite", *bad])
        assert result.exit_code == 2 and bad[0] in result.stderr and not result.stdout
    assert runner.invoke(main, ["fragments", "check", str(out)]).exit_code == 0
    scored = runner.invoke(main, ["evaluate", "--model", str(tiny_three_label_dir), "--task", "logic-fragment", "--data-file", str(out), "--json"])
    assert scored.exit_code == 0, scored.output
    table = json.loads(scored.output)
    assert table["test"]["n"] == 30 and sum(v["n"] for v in table["test"]["by"]["person"].values()) == 30
    iv = tmp_path / "iv.h5"
    result = runner.invoke(main, ["intervene", "--model", str(tiny_three_label_dir), "--task", "logic-fragment", "--data-file", str(out),
                                  "--variable", "place", "--locations", "blocks.1.hook_resid_post@place.h", "--quiet", "--out", str(iv)])
    assert result.exit_code == 0, result.output
    assert iv.is_file()
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    rows[7]["label"] = "neutral" if rows[7]["label"] != "neutral" else "entailment"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    refuted = runner.invoke(main, ["fragments", "check", str(out)])
    assert refuted.exit_code == 1 and rows[7]["id"] in refuted.stderr


def test_cli_compare_with_the_released_fragment(counting_file, fragments_dir):
    result = CliRunner().invoke(main, ["fragments", "compare", str(counting_file), "--splits", "test", "--data-dir", str(fragments_dir)])
    assert result.exit_code == 0, result.output
    assert "counting" in result.output.splitlines()[0] and "label neutral" in result.output and "Jaccard" in result.output
