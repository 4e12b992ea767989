"""MQNLI: the causal model over its whole abstract space, interchanges, generation, the file format, the CLI."""

import json
import random
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from click.testing import CliRunner

from interp.api.specs import DataSpec, SampleSpec
from interp.causal import run_forward, run_interchange
from interp.cli import main
from interp.core.errors import ConfigError, DataError, OutputError
from interp.natural_logic.composition import evaluate_space, unexposed
from interp.natural_logic.relations import LABEL_OF
from interp.tasks.mqnli.causal_model import (
    EMPTY,
    NEGATION_WORD,
    NODES,
    POSITIONS,
    abstract_tree,
    inputs_of,
    mqnli_causal_model,
)
from interp.tasks import resolve_task
from interp.tasks.mqnli.files import MQNLI_LABELS, read_mqnli
from interp.tasks.mqnli.generate import (
    MQNLIConfig,
    _realize_words,
    _Space,
    generate_mqnli,
    label_shares,
    vocabulary,
)


@pytest.fixture(scope="module")
def space():
    return _Space()


def negatives(words):
    """Negations and negative quantifiers on one side (the papers' count C)."""
    return sum(words[q] in ("no", "not every") for q in ("q_s", "q_o")) + (words["neg"] == NEGATION_WORD)


def test_parity_rule_on_the_whole_abstract_space(space):
    # Geiger et al. 2018 §2 / 2019 §4.2: a contradiction needs an odd count of negations and negative
    # quantifiers across the pair, an entailment an even one. Checked on all 524,288 inputs.
    domains, codes = space.domains, space.codes
    count = np.zeros(len(space.inputs), dtype=int)
    for leaf in ("q_s", "q_o"):
        negative = np.array([sum(q in ("no", "not every") for q in pair.split("/")) for pair in domains[leaf]])
        count += negative[codes[leaf]]
    count += np.array([pair.count("not") for pair in domains["neg"]])[codes["neg"]]
    labels = np.array([LABEL_OF[r] for r in domains["root"]])[codes["root"]]
    assert len(labels) == 524_288
    assert set(labels) == set(MQNLI_LABELS)
    assert np.all(count[labels == "contradiction"] % 2 == 1)
    assert np.all(count[labels == "entailment"] % 2 == 0)
    # Every relation occurs at the root and at the inner quantifier node (the 2018 paper's Figure 1).
    assert len(domains["root"]) == 7 and len(domains["obj_dp"]) == 7 and len(domains["neg_vp"]) == 7


def test_causal_model_on_words_equals_the_abstract_tree(space):
    model = mqnli_causal_model()
    vocab = vocabulary(5)
    rng = random.Random(0)
    for i in rng.sample(range(len(space.inputs)), 400):
        p, h = _realize_words(space, space.inputs[i], vocab, rng)
        values = run_forward(model, inputs_of(p, h))
        for node in NODES:
            assert values[node] == space.domains[node][space.codes[node][i]], node
        assert values["label"] == space.values[i][-1]
        assert (negatives(p) + negatives(h)) % 2 == (values["label"] == "contradiction") or values["label"] == "neutral"


#: The words under each variable: interchanging a node is copying these words from the source.
WORDS_UNDER = {
    "n_s": ("n_s",),
    "neg": ("neg",),
    "subj_np": ("adj_s", "n_s"),
    "vp": ("adv", "v"),
    "obj_dp": ("q_o", "adj_o", "n_o", "adv", "v"),
    "neg_vp": ("neg", "q_o", "adj_o", "n_o", "adv", "v"),
}


def test_interchange_equals_running_the_base_with_the_sources_words(space):
    # Naive reference: a node's value depends only on the words below it, so setting it to the source's
    # value is the same as giving the base the source's words there.
    model = mqnli_causal_model()
    vocab = vocabulary(5)
    rng = random.Random(1)
    changed = Counter()
    for _ in range(300):
        base_i, source_i = rng.sample(range(len(space.inputs)), 2)
        bp, bh = _realize_words(space, space.inputs[base_i], vocab, rng)
        sp, sh = _realize_words(space, space.inputs[source_i], vocab, rng)
        base, source = inputs_of(bp, bh), inputs_of(sp, sh)
        for variable, positions in WORDS_UNDER.items():
            mixed = dict(base)
            for k in positions:
                mixed[f"p_{k}"], mixed[f"h_{k}"] = source[f"p_{k}"], source[f"h_{k}"]
            counterfactual = run_interchange(model, base, {variable: source})
            assert counterfactual["label"] == run_forward(model, mixed)["label"], variable
            changed[variable] += counterfactual["label"] != run_forward(model, base)["label"]
    assert all(changed[v] > 0 for v in WORDS_UNDER), changed


def test_label_shares_match_uniformly_drawn_words(space):
    # The exact shares (a weighted sum over the abstract space) against sampling words at random.
    size, rng, model = 3, random.Random(2), mqnli_causal_model()
    vocab = vocabulary(size)
    counts = Counter()
    for _ in range(6000):
        p, h = {}, {}
        for side in (p, h):
            for q in ("q_s", "q_o"):
                side[q] = rng.choice(("every", "some", "no", "not every"))
            side["neg"] = rng.choice((EMPTY, NEGATION_WORD))
            for k in ("n_s", "v", "n_o"):
                side[k] = rng.choice(vocab[k])
            for k in ("adj_s", "adv", "adj_o"):
                side[k] = rng.choice((EMPTY, *vocab[k]))
        counts[run_forward(model, inputs_of(p, h))["label"]] += 1
    exact = label_shares(space, size, phrase_balanced=False)
    assert abs(sum(exact.values()) - 1) < 1e-9
    for label in MQNLI_LABELS:
        assert abs(counts[label] / 6000 - exact[label]) < 0.02, (label, counts, exact)
    balanced = label_shares(space, 100, phrase_balanced=True)
    assert balanced["neutral"] < label_shares(space, 100, phrase_balanced=False)["neutral"]


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("mqnli") / "fair.jsonl"
    stats = generate_mqnli(MQNLIConfig(n_train=2000, n_test=300, vocab_size=10, seed=3), out)
    return out, stats


def test_generated_file_is_fair_balanced_and_split_by_input(generated, space):
    out, stats = generated
    train, test = read_mqnli(out, ("train",)), read_mqnli(out, ("test",))
    assert (len(train), len(test)) == (2000, 300)
    # The cover examples come first; the rest are drawn so that the labels end up balanced.
    cover = Counter(e.label for e in train[: stats["cover_examples"]])
    assert cover["neutral"] > cover["entailment"]
    assert Counter(e.label for e in train) == {"entailment": 667, "neutral": 667, "contradiction": 666}
    assert Counter(e.label for e in test) == {label: 100 for label in MQNLI_LABELS}
    leaves = space.leaves

    def abstract(e):
        return tuple(Relation_or_pair(e.nodes[leaf]) for leaf in leaves)

    train_inputs = {abstract(e) for e in train}
    test_inputs = {abstract(e) for e in test}
    assert not train_inputs & test_inputs, "a fair split tests on inputs never trained on"
    assert all(not gap for gap in unexposed(abstract_tree(), train_inputs).values())
    assert stats["training_file_fair"] and stats["train_pool"] == stats["fair_pool_size"]
    assert len({(e.premise, e.hypothesis) for e in train + test}) == 2300
    for e in train[:50]:
        assert e.premise.split()[0] in ("every", "some", "no", "not")
        assert set(e.premise_words) == set(POSITIONS)
    assert stats["fragment_pairs"] > 1e10  # vocab 10; the papers' 100 words give over 10^26
    assert generate_mqnli.__doc__


def Relation_or_pair(value):
    from interp.natural_logic.relations import Relation

    return value if "/" in value else Relation.parse(value)


def test_random_split_is_disjoint_and_reported_unfair_or_fair_honestly(tmp_path, space):
    out = tmp_path / "random.jsonl"
    stats = generate_mqnli(MQNLIConfig(n_train=600, n_test=150, split="random", vocab_size=10), out)
    train = read_mqnli(out, ("train",))
    inputs = {tuple(Relation_or_pair(e.nodes[leaf]) for leaf in space.leaves) for e in train}
    gaps = unexposed(abstract_tree(), inputs)
    assert stats["training_file_fair"] == all(not g for g in gaps.values())
    assert stats["cover_examples"] == 0


def test_spoiled_files_name_the_line(generated, tmp_path):
    out, _ = generated
    lines = out.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[4])
    record["label"] = next(label for label in MQNLI_LABELS if label != record["label"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines[:4] + [json.dumps(record)] + lines[5:]) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=rf"{bad}:5: label"):
        read_mqnli(bad)
    bad.write_text(lines[0] + "\n{oops\n", encoding="utf-8")
    with pytest.raises(DataError, match=rf"{bad}:2: malformed JSON"):
        read_mqnli(bad)
    record = json.loads(lines[0])
    record["premise_words"]["q_s"] = "most"
    bad.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=rf"{bad}:1: not a pair of the MQNLI fragment"):
        read_mqnli(bad)
    with pytest.raises(DataError, match="not found"):
        read_mqnli(tmp_path / "missing.jsonl")


def test_bad_settings_and_existing_output(tmp_path, generated):
    with pytest.raises(ConfigError, match="ratio="):
        MQNLIConfig(ratio=-0.1).validate()
    with pytest.raises(ConfigError, match="split="):
        MQNLIConfig(split="fancy").validate()
    with pytest.raises(ConfigError, match="below the"):
        generate_mqnli(MQNLIConfig(n_train=10, n_test=0), tmp_path / "small.jsonl")
    assert not (tmp_path / "small.jsonl").exists()
    with pytest.raises(OutputError, match="already exists"):
        generate_mqnli(MQNLIConfig(), generated[0])


def test_cli_generates_and_refuses_bad_input(tmp_path):
    runner = CliRunner()
    out = tmp_path / "m.jsonl"
    result = runner.invoke(main, ["mqnli", "--out", str(out), "--n-train", "700", "--n-test", "30", "--vocab-size", "8"])
    assert result.exit_code == 0, result.output
    assert "training file fair (every node sees every local input): yes" in result.output
    assert json.loads(out.with_name("m.stats.json").read_text())["n"] == {"train": 700, "test": 30}
    result = runner.invoke(main, ["mqnli", "--out", str(tmp_path / "x.jsonl"), "--ratio", "2"])
    assert result.exit_code == 2 and "--ratio" in result.output
    assert not (tmp_path / "x.jsonl").exists()


def test_every_variable_is_named_and_has_values():
    model = mqnli_causal_model()
    for node in (*NODES, "label"):
        assert node in model.variables
    assert len(model.values["q_s"]) == 16 and len(model.values["neg"]) == 4
    with pytest.raises(ConfigError, match="no variable"):
        model.check_variable("lexrel")
    domains, _ = evaluate_space(abstract_tree())
    assert len(domains["subj_np"]) == 4


def test_train_and_evaluate_on_a_generated_file(tiny_encoder_dir, generated, tmp_path):
    from interp.jobs.train import TrainConfig, train
    from interp.models import load_classifier

    data, _ = generated
    config = TrainConfig(model=str(tiny_encoder_dir), data=DataSpec(data_file=str(data)), epochs=1, batch_size=32, sample=SampleSpec(max_examples=96))
    assert config.splits == ("train",) and config.eval_splits == ("train", "dev", "test")  # a file without dev scores the other two
    result = train(replace(config, out=str(tmp_path / "mq")), progress=False)
    assert result.n_train == 96 and set(result.metrics) == {"train", "test"}
    assert result.metrics["test"]["n"] == 300
    model, _ = load_classifier(str(tmp_path / "mq"), require_head=True)
    assert [model.config.id2label[i] for i in range(3)] == list(MQNLI_LABELS)
    assert train(replace(config, out=str(tmp_path / "mq")), progress=False).reused
    runner = CliRunner()
    out = runner.invoke(main, ["evaluate", "--model", str(tmp_path / "mq"), "--data-file", str(data), "--json"])
    assert out.exit_code == 0, out.output
    metrics = json.loads(out.output)
    assert metrics["test"] == result.metrics["test"]
    bad = runner.invoke(main, ["evaluate", "--model", str(tmp_path / "mq"), "--data-file", str(data), "--splits", "dev"])
    assert bad.exit_code == 2 and "no pairs in split(s) dev" in bad.output and "interp mqnli and --n-dev" in bad.output
    bad = runner.invoke(main, ["evaluate", "--model", str(tmp_path / "mq"), "--data-file", str(data), "--splits", "validation"])
    assert bad.exit_code == 2 and "unknown split 'validation'" in bad.output


def test_iid_split_draws_both_sides_from_the_whole_space(tmp_path):
    out = tmp_path / "iid.jsonl"
    stats = generate_mqnli(MQNLIConfig(n_train=300, n_test=300, split="iid", vocab_size=10), out)
    assert stats["train_pool"] == stats["test_pool"] == 524_288
    examples = read_mqnli(out)
    assert len({(e.premise, e.hypothesis) for e in examples}) == 600, "no sentence pair is in both splits"
    assert Counter(e.label for e in examples if e.split == "test") == {label: 100 for label in MQNLI_LABELS}


def test_a_dev_split_is_drawn_like_test_and_leaves_train_and_test_as_they_were(tmp_path, space):
    """``n_dev`` adds a balanced dev split from the test pool (2019, §4.4); the train and test records stay the same."""
    plain, with_dev = tmp_path / "plain.jsonl", tmp_path / "dev.jsonl"
    generate_mqnli(MQNLIConfig(n_train=700, n_test=150, vocab_size=10, seed=4), plain)
    stats = generate_mqnli(MQNLIConfig(n_train=700, n_test=150, n_dev=90, vocab_size=10, seed=4), with_dev)
    rows = [json.loads(line) for line in with_dev.read_text().splitlines()]
    assert [r for r in rows if r["split"] != "dev"] == [json.loads(line) for line in plain.read_text().splitlines()]
    assert "dev" not in json.loads(plain.with_name("plain.stats.json").read_text())["n"] and stats["n"]["dev"] == 90
    dev, test, train = (read_mqnli(with_dev, (s,)) for s in ("dev", "test", "train"))
    assert Counter(e.label for e in dev) == {label: 30 for label in MQNLI_LABELS}
    assert not {(e.premise, e.hypothesis) for e in dev} & {(e.premise, e.hypothesis) for e in test + train}
    trained = {tuple(Relation_or_pair(e.nodes[leaf]) for leaf in space.leaves) for e in train}
    assert not trained & {tuple(Relation_or_pair(e.nodes[leaf]) for leaf in space.leaves) for e in dev}  # fair: unseen inputs
    task = resolve_task("mqnli", data_file=str(plain))
    with pytest.raises(DataError, match=r"plain.jsonl: no pairs in split\(s\) dev \(a dev split is generated with interp mqnli and n_dev=\)"):
        task.load(("dev",))


def test_the_informative_open_class_subset_is_the_neutral_pairs_that_collapsing_open_class_words_would_decide(generated):
    """Geiger et al. (2018), Table 1: test pairs neutral only because aligned open-class words are independent."""
    from interp.tasks.mqnli.causal_model import OPEN_CLASS, collapsed_label

    out, _ = generated
    task = resolve_task("mqnli", data_file=str(out))
    test = task.load(("test",))
    subset = task.load(("test_informative",))
    assert {e.split for e in subset} == {"test_informative"} and 0 < len(subset) < sum(e.label == "neutral" for e in test)
    chosen = {e.id for e in subset}
    model = mqnli_causal_model()
    for e in test:
        # Naive reference: give the hypothesis the premise's word at each open-class position where both have one.
        h = dict(e.hypothesis_words)
        for k in OPEN_CLASS:
            if EMPTY not in (e.premise_words[k], h[k]):
                h[k] = e.premise_words[k]
        decided = run_forward(model, inputs_of(e.premise_words, h))["label"]
        assert decided == collapsed_label(e.premise_words, e.hypothesis_words)
        assert (e.id in chosen) == (e.label == "neutral" and decided != "neutral")
    # The null: a pair whose open-class words already agree is never in it, whatever its label.
    same = [e for e in test if all(e.premise_words[k] == e.hypothesis_words[k] or EMPTY in (e.premise_words[k], e.hypothesis_words[k]) for k in OPEN_CLASS)]
    assert same and not chosen & {e.id for e in same}
