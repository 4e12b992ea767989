"""The IOI task: its prompts, its causal model on its whole truth table over four names, the names a tokenizer keeps,
and the task through a causal LM read by the names (interchange against the naive loop, IIA, DBM)."""

from __future__ import annotations

import itertools

import pytest
import torch

import interp
from interp.causal import run_forward, run_interchange
from interp.core.errors import ConfigError
from interp.tasks.ioi import TEMPLATE, ioi_causal_model, ioi_examples, ioi_task, label_words, logit_difference, one_token_names

from decoders import decoder_model, ioi_tokenizer, save_bare_ioi_lm, tokenizer

pytestmark = pytest.mark.filterwarnings("ignore::interp.InterpWarning")

FOUR = ("Mary", "John", "Anna", "Tom")


def test_the_causal_model_on_its_whole_truth_table():
    """Every (name_a, name_b, subject) over four names with the subject one of two distinct names: the answer is the
    name the subject is not; an interchange of output_position takes the source's slot in the base's clause, one of
    output_token the source's answer."""
    model = ioi_causal_model(FOUR)
    inputs = [{"name_a": a, "name_b": b, "subject": s} for a, b in itertools.permutations(FOUR, 2) for s in (a, b)]
    assert len(inputs) == 24
    for base in inputs:
        out = run_forward(model, base)
        io = base["name_a"] if base["subject"] == base["name_b"] else base["name_b"]
        assert out["output_token"] == io and out["output_position"] == (0 if io == base["name_a"] else 1)
        for source in inputs:
            slot = run_forward(model, source)["output_position"]
            assert run_interchange(model, base, {"output_position": source})["output_token"] == (base["name_a"], base["name_b"])[slot]
            assert run_interchange(model, base, {"output_token": source})["output_token"] == run_forward(model, source)["output_token"]


def test_each_draw_is_four_prompts_sharing_names_and_the_splits_share_no_name_pair():
    train, test = ioi_examples(("train",)), ioi_examples(("test",))
    assert len(train) == 4 * 150 and len(test) == 4 * 60 and len({e.id for e in train + test}) == len(train) + len(test)
    for i in range(0, len(test), 4):
        draw = test[i : i + 4]
        assert len({e.draw for e in draw}) == 1 and len({frozenset((e.name_a, e.name_b)) for e in draw}) == 1
        assert {e.order for e in draw} == {"ABBA", "BABA"} and {e.label for e in draw} == {draw[0].name_a, draw[0].name_b}
    for e in train + test:
        assert e.label != e.subject and e.premise.count(e.name_a) == 1 and e.premise.count(e.name_b) == 1
        assert e.hypothesis.split()[0] == e.subject and e.words == {"io_p": e.label, "s1_p": e.subject, "s2_h": e.subject}
    pairs = lambda examples: {frozenset((e.name_a, e.name_b)) for e in examples}  # noqa: E731
    assert not pairs(train) & pairs(test)  # a test figure is about name pairs training never saw together
    assert ioi_examples(("test",))[5] == test[5]  # seeded


def test_a_tokenizer_keeps_the_names_it_reads_as_one_token_and_says_which_it_dropped(monli_dir):
    kept, dropped = one_token_names(ioi_tokenizer("byte-level"))
    assert len(kept) >= 30 and dropped == ()
    monli_only = tokenizer("byte-level", str(monli_dir))  # trained on MoNLI: most names are several pieces to it
    kept, dropped = one_token_names(monli_only)
    assert len(dropped) > len(kept) and all(len(monli_only(" " + n, add_special_tokens=False)["input_ids"]) > 1 for n in dropped)
    split = next(n for n in dropped)
    with pytest.raises(ConfigError, match=f"the name '{split}' is [0-9]+ tokens to this tokenizer; a name asked for must be one token"):
        ioi_task(("Mary", split, "Anna", "Tom"), tokenizer=monli_only)  # asked for by name: refused, not dropped
    with pytest.raises(ConfigError, match="needs 4 or more names a model reads as one token"):
        ioi_task(tokenizer=monli_only)  # the default list: the split names dropped, too few left
    assert ioi_task(tokenizer=ioi_tokenizer("byte-level")).dropped == ()
    assert interp.load_task("ioi").labels == ioi_task().labels and len(ioi_task().labels) >= 30


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tok = ioi_tokenizer("byte-level")
    task = ioi_task(tokenizer=tok, draws={"train": 6, "test": 4})
    path = tmp_path_factory.mktemp("ioi") / "lm"
    decoder_model("gpt2", tok, causal_lm=True).save_pretrained(path, safe_serialization=True)
    tok.save_pretrained(path)
    return interp.IntervenableModel(interp.load_model(str(path), template=TEMPLATE, label_words=label_words(task)), task)


def test_a_causal_lm_reads_the_task_through_its_names_and_the_engine_equals_the_naive_loop(lab):
    task = lab.task
    examples = task.load(("test",))
    assert lab.model.labels == task.labels and [e.label in task.labels for e in examples] == [True] * len(examples)
    logits = lab.predict(examples)
    diff = logit_difference(logits, examples, task.labels)
    rows = torch.arange(len(examples))
    assert diff.shape == (16,) and torch.allclose(diff, logits[rows, [task.labels.index(e.label) for e in examples]]
                                                   - logits[rows, [task.labels.index(e.subject) for e in examples]])  # fmt: skip
    for site in ("blocks.1.hook_resid_post@last", "blocks.0.hook_resid_post@io_p", "blocks.1.hook_resid_post@s2_h"):
        fast = lab.interchange(examples, examples, site)
        naive = lab.interchange(examples, examples, site, naive=True)
        assert torch.allclose(fast.logits, naive.logits, atol=1e-5), site
        summary = fast.summary("output_position")
        assert 0 <= summary["iia"] <= 1 and "name pairs" in str(fast.summaries()), site


def test_dbm_and_das_train_on_the_task(lab):
    examples = lab.task.load(("train",))
    found = lab.train_das(examples, "blocks.1.hook_resid_post@last", "output_position", kind="dbm", n_pairs=32, test_pairs=16,
                          epochs=1, lr=1e-2, batch_size=16)  # fmt: skip
    assert 0 <= float(found.iia) <= 1 and found.kind == "dbm"


@pytest.fixture(scope="module")
def bare_lm(tmp_path_factory):
    """A tiny random GPT-2 causal LM saved with a tokenizer that reads every name as one token: a bare causal LM."""
    return save_bare_ioi_lm(tmp_path_factory.mktemp("ioi") / "bare")


def test_the_commands_read_a_bare_causal_lm_through_the_tasks_own_reading(bare_lm, tmp_path):
    """evaluate and das on --task ioi with no --template or --label-words: the task says how (its names as words)."""
    from click.testing import CliRunner

    from interp.cli import main

    run = lambda *args: CliRunner().invoke(main, [str(a) for a in args])  # noqa: E731
    scored = run("evaluate", "--model", bare_lm, "--task", "ioi", "--splits", "test", "--max-examples", "20", "--json")
    assert scored.exit_code == 0, scored.output
    assert "{premise} {hypothesis}" in scored.output or "test" in scored.stdout
    out = tmp_path / "das"
    trained = run("das", "--model", bare_lm, "--task", "ioi", "--splits", "train", "--max-examples", "48", "--variable", "output_position",
                  "--locations", "blocks.1.hook_resid_post@last", "--kind", "rotated,dbm", "--subspace", "4", "--train-pairs", "32",
                  "--test-pairs", "16", "--epochs", "1", "--batch-size", "16", "--out", out, "--quiet")  # fmt: skip
    assert trained.exit_code == 0, trained.output
    assert (out / "das.csv").is_file() and "name pairs" in (out / "das.csv").read_text()
    plain = run("evaluate", "--model", bare_lm, "--task", "monli", "--splits", "nmonli_test")  # MoNLI says no reading
    assert plain.exit_code == 2 and "--label-words" in plain.output


def test_evaluate_show_gives_each_prompts_answer_and_logits(bare_lm):
    """interp evaluate --show: a line per example (id, gold, answer, wrong ones marked *, the gold's and the answer's
    logits where there are many labels); with --json each split's answers, every name's logit."""
    import json

    from click.testing import CliRunner

    from interp.cli import main

    args = ["evaluate", "--model", str(bare_lm), "--task", "ioi", "--splits", "test", "--max-examples", "6", "--show"]
    shown = CliRunner().invoke(main, args)
    assert shown.exit_code == 0, shown.output
    rows = [line.split() for line in shown.stdout.splitlines() if line.startswith("ioi:test:")]
    assert len(rows) == 6 and all(len(r) == 5 and r[1] in ioi_task().labels for r in rows)
    found = json.loads(CliRunner().invoke(main, [*args, "--json"]).stdout)
    answers = found["test"]["answers"]
    assert [a["id"] for a in answers] == [r[0] for r in rows] and all(len(a["logits"]) == len(ioi_task().labels) for a in answers)
    right = sum(a["predicted"] == a["gold"] for a in answers)
    assert right == found["test"]["correct"] and sum(r[2].endswith("*") for r in rows) == 6 - right


def test_a_bare_causal_lm_named_by_its_spec_is_read_as_the_task_says(bare_lm):
    lab = interp.IntervenableModel(str(bare_lm), "ioi")
    assert lab.model.labels == lab.task.labels and lab.model.template.text == TEMPLATE
    assert lab.predict(lab.task.load(("test",))[:3]).shape == (3, len(lab.task.labels))
    with pytest.raises(interp.ModelError, match="label_words"):
        interp.IntervenableModel(str(bare_lm), "monli")  # MoNLI says no reading: the words must be given
