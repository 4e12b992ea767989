"""The semantic fragments as tasks: the released files, file:line errors, the label mapping, and scoring against a naive loop."""

from __future__ import annotations

import json
import re
import shutil

import pytest
import torch
from click.testing import CliRunner
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from interp.cli import main
from interp.core.errors import ConfigError, DataError, ModelError
from interp.tasks import Task, resolve_task
from interp.tasks.fragments import FRAGMENTS, load_fragment


def test_every_released_file_loads_with_its_checksum(fragments_dir):
    for name in FRAGMENTS:
        pairs = load_fragment(name, data_dir=fragments_dir)
        assert [sum(p.split == s for p in pairs) for s in ("train", "dev", "test")] == [3000, 1000, 1000], name
        assert {p.label for p in pairs} == {"entailment", "contradiction", "neutral"}
    assert pairs[0].id == "monotonicity_hard/train:1" and pairs[-1].id == "monotonicity_hard/test:1000"


def test_spoiled_files_are_named_with_their_line(fragments_dir, tmp_path):
    copy = tmp_path / "fragments"
    shutil.copytree(fragments_dir / "negation", copy / "negation")
    path = copy / "negation" / "dev.json"
    path.chmod(0o644)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[6] = json.dumps({**json.loads(lines[6]), "gold_label": "maybe"})
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="dev.json: SHA-256 does not match"):
        load_fragment("negation", ("dev",), data_dir=copy)
    with pytest.raises(DataError, match=r"dev.json:7: unknown gold_label 'maybe'"):
        load_fragment("negation", ("dev",), data_dir=copy, verify_checksums=False)
    lines[6] = "{not json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"dev.json:7: malformed JSON"):
        load_fragment("negation", ("dev",), data_dir=copy, verify_checksums=False)
    with pytest.raises(DataError, match="test.json: file not found"):
        load_fragment("boolean", ("test",), data_dir=copy)
    with pytest.raises(ConfigError, match="no such semantic fragment"):
        resolve_task("fragment:negations")


def test_the_label_mapping_folds_contradiction_for_two_label_models(fragments_dir):
    task = resolve_task("fragment:quantifier", data_dir=str(fragments_dir))
    assert task.causal_model is None and task.default_splits == ("test",)
    two = task.read_labels(("entailment", "neutral"))
    assert two.scored[task.labels.index("contradiction")] == task.labels.index("neutral")
    three = task.read_labels(("neutral", "contradiction", "entailment"))
    assert three.complete and three.scored == tuple(range(len(task.labels)))
    with pytest.raises(ModelError, match="'yes'"):
        task.read_labels(("yes", "no"))
    with pytest.raises(ConfigError, match="label_mapping"):
        Task(name="t", labels=("a", "b"), splits=("x",), load=list, roles=("cls",), label_mapping={"a": "c"})


def _naive_correct(model_dir, pairs, mapping) -> int:
    """One batch-1 forward per pair, gold read through ``mapping``."""
    model = AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    names = [model.config.id2label[i].lower() for i in range(model.config.num_labels)]
    hits = 0
    with torch.no_grad():
        for p in pairs:
            logits = model(**tokenizer(p.premise, p.hypothesis, return_tensors="pt")).logits[0]
            hits += names[int(logits.argmax())] == mapping.get(p.label, p.label)
    return hits


@pytest.mark.slow(seconds=18)
def test_evaluate_scores_a_two_and_a_three_label_model_like_the_naive_loop(fragments_dir, tiny_classifier_dir, tiny_mqnli_classifier_dir):
    for model_dir, mapping in ((tiny_classifier_dir, {"contradiction": "neutral"}), (tiny_mqnli_classifier_dir, {})):
        result = CliRunner().invoke(main, ["evaluate", "--model", str(model_dir), "--task", "fragment:comparative", "--splits", "dev",
                                           "--data-dir", str(fragments_dir), "--json", "--fold-labels"])  # fmt: skip
        assert result.exit_code == 0, result.output
        got = json.loads(result.stdout)["dev"]  # one task: its splits (a group, --task fragments: by task)
        pairs = load_fragment("comparative", ("dev",), data_dir=fragments_dir)
        expected = _naive_correct(model_dir, pairs, mapping)
        first = CliRunner().invoke(main, ["evaluate", "--model", str(model_dir), "--task", "fragment:comparative", "--splits", "dev",
                                          "--data-dir", str(fragments_dir), "--json", "--batch-size", "7", "--fold-labels"])  # fmt: skip
        assert json.loads(first.stdout) == json.loads(result.stdout)  # batching does not change a prediction
        assert got["n"] == 1000 and got["correct"] == expected
        assert ("gold contradiction is scored as neutral" in result.stderr) == bool(mapping), result.stderr  # the fold is said
    table = CliRunner().invoke(main, ["evaluate", "--model", str(tiny_classifier_dir), "--task", "fragments", "--splits", "dev",
                                      "--data-dir", str(fragments_dir), "--fold-labels"])  # fmt: skip
    assert table.exit_code == 0 and len(table.stdout.strip().splitlines()) == 1 + 8 + 2
    assert "logic average" in table.stdout and "monotonicity average" in table.stdout
    as_json = CliRunner().invoke(main, ["evaluate", "--model", str(tiny_classifier_dir), "--task", "fragments", "--splits", "dev",
                                        "--data-dir", str(fragments_dir), "--json", "--fold-labels"])  # fmt: skip
    by_task = json.loads(as_json.stdout)
    assert list(by_task) == list(FRAGMENTS) and by_task["comparative"]["dev"]["n"] == 1000
    logic = sum(by_task[f]["dev"]["accuracy"] for f in FRAGMENTS[:6]) / 6
    assert re.search(rf"^logic average +{100 * logic:.1f}$", table.stdout, re.M)


def test_fragment_all_pools_the_eight_with_their_ids(fragments_dir):
    pooled = resolve_task("fragment:all", data_dir=str(fragments_dir)).examples(("dev",))
    assert len(pooled) == 8 * 1000 and len({e.id for e in pooled}) == len(pooled)
    assert {e.id.split("/")[0] for e in pooled} == set(FRAGMENTS)
    with pytest.raises(ConfigError, match="or all, the eight pooled"):
        resolve_task("fragment:every")
