"""The monotonicity fragment generator: knowledge base against its semantics, polarity marks, every label against finite models, the task and its CLI."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest
from click.testing import CliRunner

from interp.causal.base import run_forward
from interp.cli import main
from interp.core.errors import ConfigError, DataError
from interp.tasks import resolve_task
from interp.tasks.fragments.generated import entailment_label, polarity_causal_model, read_generated
from interp.tasks.fragments.monotonicity import lexicon as L
from interp.tasks.fragments.monotonicity.generate import GenerateConfig, generate_records
from interp.tasks.fragments.monotonicity.grammar import NP, ORC, PP, SRC, VP, Sentence, random_sentence, render
from interp.tasks.fragments.monotonicity.polarity import polarities
from interp.tasks.fragments.monotonicity.semantics import check_label, check_records, sample_models
from interp.tasks.fragments.monotonicity.trees import from_json

COUNTS = [(i, o) for i in range(9) for o in range(9) if i + o > 0]  # a non-empty restrictor


def test_the_determiner_order_and_contradiction_rules_hold_of_every_count():
    for a, b in L.EDGES["det"]:
        assert all(L.DETERMINER_TRUTH[b](i, o) for i, o in COUNTS if L.DETERMINER_TRUTH[a](i, o)), f"{a} ≤ {b}"
    assert not all(L.DETERMINER_TRUTH["every"](i, o) for i, o in COUNTS if L.DETERMINER_TRUTH["some"](i, o))  # the null: some ≰ every
    for a, b in L.CONTRADICTORY:
        assert not any(L.DETERMINER_TRUTH[a](i, o) and L.DETERMINER_TRUTH[b](i, o) for i, o in COUNTS), f"{a} ⊥ {b}"
    assert not L.contradicts("some", "most") and L.contradicts("most", "few")
    for det, d in L.DETERMINERS.items():  # monotonicity declared = monotonicity of the counts (moving a member in or out of B)
        up_scope = all(L.DETERMINER_TRUTH[det](i + 1, o - 1) for i, o in COUNTS if o and L.DETERMINER_TRUTH[det](i, o))
        down_scope = all(L.DETERMINER_TRUTH[det](i - 1, o + 1) for i, o in COUNTS if i and L.DETERMINER_TRUTH[det](i, o))
        declared = d.monotonicity[1]
        assert (declared == "up") == (up_scope and not down_scope) and (declared == "down") == (down_scope and not up_scope), det


def test_polarity_marks_textbook_cases():
    every = polarities(Sentence(NP("every", "black", "dog"), VP("intransitive", "ran")))
    assert (every[("subject", "noun")], every[("subject", "adj")], every[("vp", "verb")]) == ("down", "down", "up")
    negated = polarities(Sentence(NP("no", None, "dog"), VP("transitive", "saw", neg=True, obj=NP("every", None, "cat"))))
    assert negated[("vp", "verb")] == "up" and negated[("vp", "obj", "noun")] == "down" and negated[("vp", "obj", "det")] == "up"
    orc = polarities(Sentence(NP("every", None, "dog", ORC(NP("some", None, "cat"), "saw")), VP("intransitive", "ran")))
    assert orc[("subject", "mod", "np", "noun")] == "down" and orc[("subject", "mod", "verb")] == "down"
    pp = polarities(Sentence(NP("some", None, "dog", PP("without", "faint", "odor")), VP("intransitive", "ran")))
    assert pp[("subject", "mod", "noun")] == "down"
    most = polarities(Sentence(NP("most", None, "dog", SRC(VP("predicate", "happy"))), VP("intransitive", "ran")))
    assert most[("subject", "noun")] == most[("subject", "mod", "vp", "verb")] == "none" and most[("vp", "verb")] == "up"


def test_the_model_check_decides_textbook_pairs():
    models = sample_models(300, seed=1)
    dog = Sentence(NP("every", None, "dog"), VP("intransitive", "ran"))
    assert check_label(dog, replace(dog, subject=NP("every", None, "poodle")), models).label == "entailment"
    assert check_label(dog, replace(dog, subject=NP("every", None, "animal")), models).label == "neutral"
    assert check_label(dog, replace(dog, subject=NP("no", None, "dog")), models).label == "contradiction"
    assert check_label(dog, replace(dog, vp=VP("intransitive", "slept")), models).label == "contradiction"  # moved ⊥ slept
    assert check_label(dog, replace(dog, subject=NP("some", None, "dog")), models).label == "entailment"  # import of every


@pytest.fixture(scope="module")
def generated():
    return {s: generate_records(GenerateConfig(setting=s, n_train=450, n_dev=75, n_test=75, seed=11)) for s in ("simple", "hard")}


@pytest.mark.slow(seconds=12)
def test_every_generated_label_survives_finite_models(generated):
    for setting, records in generated.items():
        result = check_records(records, per_size=600, seed=2)
        counts = {k: v for k, v in result["counts"].items()}
        assert not result["refuted"], (setting, result["refuted"][:5])
        confirmed = sum(c["confirmed"] for c in counts.values())
        assert confirmed >= 0.99 * len(records), (setting, counts)


def test_the_model_check_refutes_wrong_labels(generated):
    """The null: the same check rejects labels the calculus would not give."""
    models = sample_models(300, seed=3)
    records = generated["simple"][:300]
    lexical = [r for r in records if "polarity" in r and r["label"] == "entailment"]
    swapped = [check_label(from_json(r["hypothesis_tree"]), from_json(r["premise_tree"]), models).verdict("entailment") for r in lexical]
    assert len(lexical) >= 20 and swapped.count("refuted") >= 0.9 * len(lexical)
    neutral = [r for r in records if r["label"] == "neutral"]
    as_entailment = [check_label(from_json(r["premise_tree"]), from_json(r["hypothesis_tree"]), models).verdict("entailment") for r in neutral]
    assert as_entailment.count("refuted") >= 0.95 * len(neutral)
    entail = [r for r in records if r["label"] == "entailment"]
    as_contradiction = [check_label(from_json(r["premise_tree"]), from_json(r["hypothesis_tree"]), models).verdict("contradiction") for r in entail]
    assert as_contradiction.count("refuted") == len(entail)


def test_generation_is_seeded_balanced_and_split_by_premise(generated):
    records = generated["simple"]
    again = generate_records(GenerateConfig(setting="simple", n_train=450, n_dev=75, n_test=75, seed=11))
    assert again == records
    assert generate_records(GenerateConfig(setting="simple", n_train=30, n_dev=0, n_test=0, seed=12)) != records[:30]
    for split, n in (("train", 450), ("dev", 75), ("test", 75)):
        rows = [r for r in records if r["split"] == split]
        counts = [sum(r["label"] == label for r in rows) for label in ("entailment", "neutral", "contradiction")]
        assert len(rows) == n and max(counts) - min(counts) <= 1
    premises = {split: {r["premise"] for r in records if r["split"] == split} for split in ("train", "dev", "test")}
    assert not (premises["train"] & premises["test"]) and not (premises["dev"] & premises["test"])
    assert all(r["premise"] != r["hypothesis"] for r in records)
    for r in records:
        if "polarity" in r:
            (step,) = r["steps"]
            (a, b), (c, d) = r["spans"]["sub.p"], r["spans"]["sub.h"]
            assert r["label"] == entailment_label(r["polarity"], r["direction"])
            assert r["premise"][a:b] in (step["old"], L.plural(step["old"]), L.BASE_FORM.get(step["old"]), "an")
            assert r["hypothesis"][c:d] in (step["new"], L.plural(step["new"]), L.BASE_FORM.get(step["new"]), "an")
    hard = generated["hard"]
    assert max(r["clauses"] for r in hard) == 3 and max(r["clauses"] for r in records) == 1
    assert len({s["new"] for r in hard for s in r["steps"] if s["slot"].endswith("det")}) > len(L.SIMPLE_DETERMINERS)


def test_premises_follow_the_grammar_filters():
    rng = random.Random(0)
    for setting in ("simple", "hard"):
        for _ in range(200):
            s = random_sentence(rng, setting)
            text = render(s)
            assert text == text.lower() and "  " not in text
            if setting == "simple":
                assert all(np.det in L.SIMPLE_DETERMINERS for np in _nps(s))


def _nps(node):
    from interp.tasks.fragments.monotonicity.grammar import walk

    return [part for _, part in walk(node) if isinstance(part, NP)]


def test_the_causal_model_is_the_monotonicity_rule_on_its_whole_truth_table():
    model = polarity_causal_model()
    for polarity in ("up", "down"):
        for direction in ("up", "down"):
            label = run_forward(model, {"polarity": polarity, "direction": direction})["label"]
            assert label == ("entailment" if polarity == direction else "neutral")


@pytest.fixture(scope="module")
def generated_file(tmp_path_factory, generated):
    path = tmp_path_factory.mktemp("mono") / "simple.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in generated["simple"]), encoding="utf-8")
    return path


def test_the_task_reads_lexical_splits_and_its_causal_model_fits(generated_file):
    task = resolve_task("monotonicity-fragment", data_file=str(generated_file))
    lexical = task.load(("lexical_test",))
    assert lexical and all(e.split == "lexical_test" and e.lexical for e in lexical)
    task.build_causal_model(lexical)
    values = task.values(task.build_causal_model(lexical), lexical, "polarity")
    assert set(values.names) <= {"up", "down"} and len(values.codes) == len(lexical)
    assert all(e.words["sub.p"] in e.premise for e in lexical)
    every = task.load(("test",))
    with pytest.raises(ConfigError, match="is not a one-word substitution"):
        task.build_causal_model(every)
    with pytest.raises(ConfigError, match="needs data_file="):
        resolve_task("monotonicity-fragment")


def test_spoiled_generated_lines_name_file_and_line(generated_file, tmp_path):
    lines = generated_file.read_text(encoding="utf-8").splitlines()
    index = next(i for i, line in enumerate(lines) if '"polarity"' in line)
    for change, message in (
        ({"label": "maybe"}, "unknown label"),
        ({"label": "contradiction"}, "disagrees with polarity"),
        ({"spans": {"sub.p": [0, 999], "sub.h": [0, 1]}}, "span of sub.p"),
    ):
        spoiled = list(lines)
        spoiled[index] = json.dumps({**json.loads(lines[index]), **change})
        path = tmp_path / "spoiled.jsonl"
        path.write_text("\n".join(spoiled) + "\n", encoding="utf-8")
        with pytest.raises(DataError, match=rf"spoiled.jsonl:{index + 1}: .*{message}"):
            read_generated(path)
    with pytest.raises(DataError, match="unknown split 'lexical'"):
        read_generated(generated_file, ("lexical",))


def test_cli_generate_check_and_bad_input(tmp_path):
    runner = CliRunner()
    out = tmp_path / "hard.jsonl"
    args = ["fragments", "generate", "--setting", "hard", "--n-train", "60", "--n-dev", "0", "--n-test", "30", "--seed", "4", "--out", str(out)]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "train      60 pairs" in result.output and (tmp_path / "hard.stats.json").is_file()
    assert runner.invoke(main, args).exit_code == 2  # exists
    for bad, flag in ((["--n-test", "-3"], "--n-test"), (["--depth", "0"], "--depth")):
        result = runner.invoke(main, [*args, "--overwrite", *bad])
        assert result.exit_code == 2 and flag in result.stderr
    checked = runner.invoke(main, ["fragments", "check", str(out), "--models", "200"])
    assert checked.exit_code == 0 and "refuted    0" in checked.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    wrong = next(i for i, r in enumerate(rows) if r["label"] == "entailment")
    rows[wrong]["label"] = "contradiction"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    refuted = runner.invoke(main, ["fragments", "check", str(out), "--models", "200"])
    assert refuted.exit_code == 1 and rows[wrong]["id"] in refuted.stderr
    assert runner.invoke(main, ["fragments", "check", str(tmp_path / "none.jsonl")]).exit_code == 2


def test_cli_compare_with_the_released_fragment(generated_file, fragments_dir):
    fragments = fragments_dir
    result = CliRunner().invoke(main, ["fragments", "compare", str(generated_file), "--splits", "test", "--data-dir", str(fragments)])
    assert result.exit_code == 0, result.output
    assert "monotonicity_simple" in result.output and "Jaccard" in result.output and "label neutral" in result.output


@pytest.fixture(scope="module")
def tiny_fragment_classifier_dir(tmp_path_factory, minilm_tokenizer):
    from conftest import _tiny_classifier

    from interp.tasks.fragments.data import LABELS

    return _tiny_classifier(tmp_path_factory.mktemp("tiny_fragment"), minilm_tokenizer, LABELS, seed=4, initializer_range=0.2)


def test_polarity_is_a_variable_interventions_target(generated_file, tiny_fragment_classifier_dir, tmp_path):
    runner = CliRunner()
    scored = runner.invoke(main, ["evaluate", "--model", str(tiny_fragment_classifier_dir), "--task", "monotonicity-fragment", "--data-file", str(generated_file), "--json"])
    assert scored.exit_code == 0, scored.output
    table = json.loads(scored.output)  # its own default splits: test and lexical_test
    assert table["test"]["n"] == 75 and table["lexical_test"]["n"] == len(read_generated(generated_file, ("lexical_test",)))
    out = tmp_path / "polarity.h5"
    args = ["intervene", "--model", str(tiny_fragment_classifier_dir), "--task", "monotonicity-fragment", "--data-file", str(generated_file),
            "--variable", "polarity", "--locations", "blocks.1.hook_resid_post@sub.p,blocks.1.hook_resid_post@cls", "--quiet", "--out", str(out)]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert out.is_file() and "polarity" in result.output
    train = runner.invoke(main, ["train", "--model", str(tiny_fragment_classifier_dir), "--task", "monotonicity-fragment", "--data-file", str(generated_file),
                                 "--epochs", "1", "--max-examples", "32", "--eval-splits", "lexical_dev", "--quiet", "--out", str(tmp_path / "m")])
    assert train.exit_code == 0, train.output
