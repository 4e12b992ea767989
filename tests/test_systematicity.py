"""Yanaka et al.'s systematicity generator: polarity, labels against finite models (with a null), the four protocols, the task and CLI."""

from __future__ import annotations

import json
import random
from itertools import product

import pytest
from click.testing import CliRunner

from interp.causal.base import run_forward
from interp.cli import main
from interp.core.errors import ConfigError, DataError
from interp.tasks import resolve_task
from interp.tasks.systematicity import grammar as G
from interp.tasks.systematicity.generate import from_tree, polarity_at, sample_pairs
from interp.tasks.systematicity.protocols import ProtocolConfig, protocol_records
from interp.tasks.systematicity.semantics import COUNTS, check_records, sample_models
from interp.tasks.systematicity.task import read_systematicity, systematicity_causal_model


def test_quantifier_readings_have_the_papers_monotonicity():
    for q, truth in COUNTS.items():
        up = all(truth(i + 1) for i in range(12) if truth(i))
        down = all(truth(i - 1) for i in range(1, 12) if truth(i))
        assert (q in G.UP_QUANTIFIERS) == (up and not down) and (q in G.DOWN_QUANTIFIERS) == (down and not up), q


def test_polarity_is_the_product_of_the_quantifiers_above():
    assert polarity_at(["some"]) == "up" and polarity_at(["no"]) == "down"
    assert polarity_at(["no", "few", "some"]) == "up" and polarity_at(["no", "some", "a few", "at least three", "more than three"]) == "down"


@pytest.fixture(scope="module")
def models():
    return sample_models(300, seed=1)


def test_every_generated_label_holds_in_finite_models_and_flipped_labels_do_not(models):
    rng = random.Random(5)
    records = []
    for depth in range(1, 6):
        records += [{"split": "x", "id": str(i), **p} for i, p in enumerate(sample_pairs(rng, depth, G.QUANTIFIERS, list(G.REPLACEMENTS), 60))]
    for variant in ("adverb", "preposition", "object"):
        records += [{"split": variant, "id": variant, **p} for p in sample_pairs(rng, 1, G.QUANTIFIERS, list(G.REPLACEMENTS), 40, variant)]
    result = check_records(records, per_size=300, seed=1)
    assert not result["refuted"]
    assert all(c["unconfirmed"] == 0 for c in result["counts"].values()), result["counts"]
    # the null: every label flipped is refuted or unconfirmed, never confirmed
    flipped = [{**r, "label": "neutral" if r["label"] == "entailment" else "entailment"} for r in records]
    again = check_records(flipped, per_size=300, seed=1)
    assert sum(c["confirmed"] for c in again["counts"].values()) == 0
    assert len(again["refuted"]) == sum(r["label"] == "entailment" for r in flipped)


def test_pairs_balance_labels_and_polarities_and_repeat_no_content_word():
    pairs = sample_pairs(random.Random(0), 3, G.QUANTIFIERS, ["adjective", "hyponym"], 200)
    assert sum(p["label"] == "entailment" for p in pairs) == 100 and sum(p["polarity"] == "up" for p in pairs) == 100
    for p in pairs:
        t = from_tree(p["premise_tree"])
        nouns = [np.noun for np in t.nps]
        assert len(set(nouns)) == len(nouns) and len(set(t.verbs)) == len(t.verbs)
        assert p["premise"] != p["hypothesis"] and p["depth"] == 3
    up_only = sample_pairs(random.Random(0), 1, ["some"], ["hyponym"], 10)
    assert {p["polarity"] for p in up_only} == {"up"} and {p["label"] for p in up_only} == {"entailment", "neutral"}


def test_protocols_keep_their_test_quantifiers_and_depths_unseen():
    records = protocol_records(ProtocolConfig(protocol="predicate", step=2, n_train=160, n_test=40, seed=2))
    train = [r for r in records if r["split"] == "train"]
    test = [r for r in records if r["split"] == "test"]
    assert not any("some" in r["quantifiers"] and r["replacement"] != "hyponym" for r in test)
    assert all(r["replacement"] != "hyponym" for r in test)
    train_pairs = {(q, r["replacement"]) for r in train for q in r["quantifiers"]}
    assert all((q, r["replacement"]) not in train_pairs for r in test for q in r["quantifiers"])  # unseen combinations
    assert {r["split"] for r in records} == {"train", "test", "test_adverb", "test_preposition", "test_object"}
    prod = protocol_records(ProtocolConfig(protocol="productivity", step=2, n_train=90, n_test=30))
    assert {r["depth"] for r in prod if r["split"] == "train"} == {1, 2, 3} and {r["split"] for r in prod} == {"train", "test_d4", "test_d5"}
    local = protocol_records(ProtocolConfig(protocol="localism", step=3, n_train=30, n_test=20))
    assert {r["depth"] for r in local if r["split"] == "train"} == {3} and {r["split"] for r in local} == {"train", "test_d1", "test_d2", "test_d3"}
    quant = protocol_records(ProtocolConfig(protocol="quantifier", step=1, n_train=60, n_test=20, seed=3))
    seen2 = {q for r in quant if r["split"] == "train" and r["depth"] == 2 for q in r["quantifiers"]}
    assert all(not set(r["quantifiers"]) & seen2 for r in quant if r["split"] == "test")
    train_texts = {(r["premise"], r["hypothesis"]) for r in records if r["split"] == "train"}
    assert not any((r["premise"], r["hypothesis"]) in train_texts for r in records if r["split"] != "train")


def test_bad_protocol_settings_are_refused():
    for config, message in (
        (ProtocolConfig(protocol="productivity", step=4), "test set is empty"),
        (ProtocolConfig(protocol="localism", step=2), "3 to 5"),
        (ProtocolConfig(protocol="predicate", quantifier="most"), "quantifier='most'"),
        (ProtocolConfig(protocol="predicate", replacement="negation"), "replacement='negation'"),
    ):
        with pytest.raises(ConfigError, match=message):
            protocol_records(config)
    with pytest.raises(ConfigError, match="depth=0"):
        sample_pairs(random.Random(0), 0, G.QUANTIFIERS, ["hyponym"], 1)
    with pytest.raises(ConfigError, match="no replacement"):
        sample_pairs(random.Random(0), 2, G.QUANTIFIERS, ["adverb"], 1)


def test_the_causal_model_on_its_whole_truth_table():
    model = systematicity_causal_model()
    for mono, context, direction in product(("up", "down"), repeat=3):
        values = run_forward(model, {"monotonicity": mono, "context": context, "direction": direction})
        polarity = mono if context == "up" else ("down" if mono == "up" else "up")
        assert values["polarity"] == polarity and values["label"] == ("entailment" if polarity == direction else "neutral")


def test_cli_generates_checks_and_the_task_reads(tmp_path, tiny_classifier_dir):
    runner = CliRunner()
    out = tmp_path / "prod.jsonl"
    args = ["monotonicity", "generate", "--protocol", "productivity", "--step", "1", "--n-train", "60", "--n-test", "20", "--out", str(out)]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "test_d3" in result.output and "paper, Table 1: 12.3" in result.output
    assert runner.invoke(main, args).exit_code == 2
    bad = runner.invoke(main, [*args[:4], "--step", "9", "--out", str(tmp_path / "x.jsonl")])
    assert bad.exit_code == 2 and "--step 9" in bad.stderr and not (tmp_path / "x.jsonl").exists()
    checked = runner.invoke(main, ["monotonicity", "check", str(out), "--models", "100"])
    assert checked.exit_code == 0 and "refuted    0" in checked.output
    task = resolve_task("monotonicity", data_file=str(out))
    examples = task.load(("test_d3",))
    task.build_causal_model(examples)
    assert all(e.words["target.p"] in e.premise for e in examples)
    scored = runner.invoke(main, ["evaluate", "--model", str(tiny_classifier_dir), "--task", "monotonicity", "--data-file", str(out), "--splits", "test_d3,test_d4", "--json"])
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.output)["test_d3"]["n"] == 20
    rows = out.read_text().splitlines()
    record = json.loads(rows[0])
    record["label"] = "neutral" if record["label"] == "entailment" else "entailment"
    (tmp_path / "bad.jsonl").write_text(json.dumps(record) + "\n")
    with pytest.raises(DataError, match=r"bad.jsonl:1: label .* disagrees"):
        read_systematicity(tmp_path / "bad.jsonl", ("train",))


def test_accuracy_is_broken_down_by_upward_and_downward_inferences(tmp_path, tiny_classifier_dir):
    """Each split's accuracy per polarity (Yanaka et al. 2020, §4), against a count by hand from the same predictions."""
    from interp.hooks.encoding import encode_pair
    from interp.api.evaluation import score
    from interp.api.loading import Classifier
    from interp.models.evaluation import predict_logits
    from interp.models.loading import checkpoint_labels, load_classifier
    from interp.tasks.systematicity.task import polarity_of

    out = tmp_path / "prod.jsonl"
    records = protocol_records(ProtocolConfig(protocol="productivity", step=1, n_train=40, n_test=30, seed=3))
    out.write_text("".join(json.dumps(r) + "\n" for r in records))
    task = resolve_task("monotonicity", data_file=str(out))
    examples = task.load(("test_d3", "test_d4"))
    # The polarity the task computes from its causal inputs is the one each record was written with.
    written = {r["id"]: r["polarity"] for r in records}
    assert [polarity_of(e) for e in examples] == [written[e.id] for e in examples] and {polarity_of(e) for e in examples} == {"up", "down"}
    model, tokenizer = load_classifier(str(tiny_classifier_dir), require_head=True)
    scores = score(Classifier(model, tokenizer), task, examples)
    reading = task.read_labels(checkpoint_labels(model.config))
    predicted = reading.predict(predict_logits(model, [encode_pair(e, tokenizer, reading.label_ids) for e in examples], tokenizer.pad_token_id)).tolist()
    right = [p == reading.scored[reading.task_labels.index(e.label)] for e, p in zip(examples, predicted)]
    for split in ("test_d3", "test_d4"):
        by = scores[split]["by"]["polarity"]
        for value in ("up", "down"):
            mine = [r for e, r in zip(examples, right) if e.split == split and polarity_of(e) == value]
            assert (by[value]["correct"], by[value]["n"]) == (sum(mine), len(mine))
        assert sum(v["n"] for v in by.values()) == scores[split]["n"] and sum(v["correct"] for v in by.values()) == scores[split]["correct"]
    shown = CliRunner().invoke(main, ["evaluate", "--model", str(tiny_classifier_dir), "--task", "monotonicity", "--data-file", str(out), "--splits", "test_d3"])
    assert shown.exit_code == 0 and "  polarity=up" in shown.output and "  polarity=down" in shown.output
