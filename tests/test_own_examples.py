"""Examples of one's own (``interp.examples``): any sentences, roles by word, span or token index; read and patched as
plain hooks on the model's own blocks read and patch them, on an encoder and a decoder; MoNLI's causal model applied
where the values are given; a JSON-lines file of them; and the errors that name what is wrong."""

from __future__ import annotations

import json
import re

import pytest
import torch

import interp
from interp.tasks.own import Example, read_examples

from decoders import decoder_model, tokenizer, tokenizer_kind
from hand_hooks import by_hand

pytestmark = pytest.mark.filterwarnings("ignore::interp.InterpWarning")

PAIRS = [("the man does not own a dog", "the man does not own a mammal"), ("a woman holds a flower", "a woman holds a rose"),
         ("a boy is eating a sandwich", "a boy is eating food")]  # fmt: skip
ROLES = {"w_p": ["dog", "flower", (18, 26)], "w_h": ["mammal", (16, 20), "food"]}
VALUES = [{"lexrel": "⊏", "negated": True}, {"lexrel": "⊐", "negated": False}, {"lexrel": "forward", "negated": False}]


@pytest.fixture(scope="module")
def task(monli_dir):
    return interp.load_task("monli", data_dir=str(monli_dir))


def test_roles_by_word_span_and_token_index_become_the_examples_fields():
    mine = interp.examples(PAIRS, ROLES, values=VALUES)
    assert [e.id for e in mine] == ["own:1", "own:2", "own:3"] and all(e.split == "own" for e in mine)
    assert mine[1].words == {"w_p": "flower", "w_h": "rose"} and mine[1].spans == {"w_h": (16, 20)}
    assert mine[2].words["w_p"] == "sandwich" and mine[2].values == VALUES[2]
    one = interp.examples(["a man sleeps"], {"w_h": -2}, labels=["neutral"], ids=["mine"])[0]
    assert one == Example("a man sleeps", "", {"w_h": "<token -2>"}, {}, {"w_h": -2}, "neutral", {}, "mine")
    assert interp.examples([{"premise": "a b", "hypothesis": "a c", "words": {"w_h": "c"}, "label": "neutral"}])[0].words == {"w_h": "c"}


@pytest.mark.parametrize("call, says", [
    (lambda: interp.examples("a dog"), "pairs= must be a list"),
    (lambda: interp.examples([3]), "pairs= item 0 is a int"),
    (lambda: interp.examples(PAIRS, {"w_h": ["mammal"]}), r"roles\['w_h'\]=` must be a list of 3"),
    (lambda: interp.examples(PAIRS[:1], {"w_h": "cat"}), "role w_h 'cat' does not occur as a whole word"),
    (lambda: interp.examples([("a dog and a dog", "x")], {"w_p": "dog"}), r"occurs 2 times \(give its span"),
    (lambda: interp.examples(PAIRS[:1], {"w_h": (5, 99)}), r"span \(5, 99\) is not inside"),
    (lambda: interp.examples(PAIRS[:1], {"w_x": "man"}), "does not say its sentence"),
    (lambda: interp.examples(PAIRS[:1], {"cls": 0}), "role 'cls' is the token the classifier reads"),
    (lambda: interp.examples(PAIRS[:2], ids=["a", "a"]), "id 'a' is given to examples 0 and 1"),
    (lambda: interp.examples(PAIRS[:1], labels=[3]), "label must be a string"),
], ids=["not a list", "not a pair", "wrong length", "no such word", "word twice", "span outside", "role without sentence", "cls",
        "same id", "label not a string"])  # fmt: skip
def test_bad_examples_name_the_parameter_and_the_item(call, says):
    with pytest.raises(interp.ConfigError, match=says):
        call()


def test_on_an_encoder_own_sentences_are_read_and_patched_as_plain_hooks_do(wide_classifier_dir, task, minilm_tokenizer):
    """The vector at a word, a span and a token index, and an interchange of one sentence's vector into another's,
    against a hook on the model's own block by hand (fp32, within 1e-5)."""
    lab = interp.IntervenableModel(str(wide_classifier_dir), task)
    mine = interp.examples(PAIRS, ROLES)
    module = lab.model.module
    for e in mine:
        enc = minilm_tokenizer(e.premise, e.hypothesis, return_token_type_ids=True)
        tokens = minilm_tokenizer.convert_ids_to_tokens(enc["input_ids"])
        position = len(tokens) - 1 - tokens[::-1].index(e.words["w_h"])  # the hypothesis's word, found by hand
        read, logits = by_hand(module, enc["input_ids"], enc["token_type_ids"], read=(1, position))
        assert torch.allclose(lab.vectors([e], "blocks.1.hook_resid_post@w_h")[0, 0], read, atol=1e-5)
        assert torch.allclose(lab.predict([e])[0], logits, atol=1e-5)
    patched = lab.interchange_logits(mine, mine, lab.location("blocks.0.hook_resid_post@w_h"))  # the first of two blocks
    sources = lab.vectors(mine, "blocks.0.hook_resid_post@w_h")[:, 0]
    for b, e in enumerate(mine):
        enc = minilm_tokenizer(e.premise, e.hypothesis, return_token_type_ids=True)
        position = lab.encode([e])[0].positions["w_h"]
        for s in range(len(mine)):
            _, logits = by_hand(module, enc["input_ids"], enc["token_type_ids"], writes=[(0, position, sources[s])])
            assert torch.allclose(patched[b, s], logits, atol=1e-5)
    assert (patched - patched[:, :1]).abs().amax() > 1e-2  # the null: some patch moves the logits
    # any string, read at the token the classifier reads, with several locations in one pass
    cache = lab.run_with_cache(["a man sleeps", ("a dog runs", "an animal runs")], "blocks.0.hook_resid_post@cls,blocks.1.hook_resid_post@cls")
    for loc, got in cache.items():
        assert torch.allclose(got, lab.vectors(["a man sleeps", ("a dog runs", "an animal runs")], loc)[:, 0], atol=1e-6)


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_on_a_decoder_own_sentences_are_read_and_patched_as_plain_hooks_do(family, task, monli_dir):
    """On a decoder (after its template): a token index against a hook by hand, and a word role lands where the task's
    own example with the same sentences puts it."""
    tok = tokenizer(tokenizer_kind(family), str(monli_dir))
    model = interp.load_model(decoder_model(family, tok), tok)
    lab = interp.IntervenableModel(model, task)
    real = task.examples(("nmonli_test",), n=2, seed=0)
    mine = interp.examples([(e.premise, e.hypothesis) for e in real], {"w_p": [e.w_p for e in real], "w_h": [e.w_h for e in real]})
    assert [enc.positions for enc in lab.encode(mine)] == [enc.positions for enc in lab.encode(real)]
    at = interp.examples([(e.premise, e.hypothesis) for e in real], {"w_h": -3})
    vectors = lab.vectors(at, "blocks.1.hook_resid_post@w_h")[:, 0]
    patched = lab.interchange_logits(at, at, lab.location("blocks.1.hook_resid_post@w_h"))
    for b, enc in enumerate(lab.encode(at)):
        position = len(enc.input_ids) - 3
        read, _ = by_hand(model.module, enc.input_ids, read=(1, position))
        assert torch.allclose(vectors[b], read, atol=1e-5)
        for s in range(len(at)):
            _, logits = by_hand(model.module, enc.input_ids, writes=[(1, position, vectors[s])])
            assert torch.allclose(patched[b, s], logits.to(patched.dtype), atol=1e-5)
    assert (patched - patched[:, :1]).abs().amax() > 1e-3  # the null: some patch moves the logits


def test_monlis_causal_model_applies_where_the_values_are_given(tiny_classifier_dir, task):
    """Values given: INFER labels the examples and counterfactuals follow; a released example rebuilt from its
    sentences and values is the same example to the model. Without values, IIA is refused by name."""
    lab = interp.IntervenableModel(str(tiny_classifier_dir), task)
    mine = lab.bind(interp.examples(PAIRS, ROLES, values=VALUES)).examples
    assert [e.label for e in mine] == ["neutral", "neutral", "entailment"]  # ⊏ under not; ⊐; ⊏
    result = lab.interchange(mine, mine, "blocks.1.hook_resid_post@w_h", variables=("lexrel",))
    # lexrel from the source, negation from the base: own:1 (not, ⊏) with own:2's ⊐ is entailed
    assert result.causal_pred["lexrel"][0, 1] == task.labels.index("entailment") and result.summary("lexrel")["pairs"] == 9
    real = task.examples(("nmonli_test",), n=3, seed=1)
    rebuilt = interp.examples([(e.premise, e.hypothesis) for e in real], {"w_p": [e.w_p for e in real], "w_h": [e.w_h for e in real]},
                              values=[{"lexrel": e.lexrel.value, "negated": e.negated} for e in real], labels=[e.label for e in real])  # fmt: skip
    assert [e.label for e in lab.bind(rebuilt).examples] == [e.label for e in real]
    assert torch.equal(lab.vectors(rebuilt, "blocks.1.hook_resid_post@w_h"), lab.vectors(real, "blocks.1.hook_resid_post@w_h"))
    bare = interp.examples(PAIRS, ROLES)
    with pytest.raises(interp.ConfigError, match=r"'own:1' is one of your own without the input values .* values=\{'lexrel'"):
        lab.interchange(bare, bare, "blocks.1.hook_resid_post@w_h")
    with pytest.raises(interp.ConfigError, match="has no gold label"):
        lab.evaluate(bare)
    for values, says in (([{"lexrel": "⊏"}], "gives lexrel but not negated"), ([{"lexrel": "up", "negated": True}], "lexrel 'up' is not one of"),
                         ([{"lexrel": "⊏", "negated": "no"}], "negated must be true or false")):  # fmt: skip
        with pytest.raises(interp.ConfigError, match=says):
            lab.bind(interp.examples(PAIRS[:1], {"w_p": "dog", "w_h": "mammal"}, values=values))
    with pytest.raises(interp.ConfigError, match="labelled 'entailment', but INFER gives 'neutral'"):
        lab.bind(interp.examples(PAIRS[:1], {"w_p": "dog", "w_h": "mammal"}, values=VALUES[:1], labels=["entailment"]))


def test_a_token_index_past_the_input_and_a_missing_role_are_named(tiny_classifier_dir, task):
    lab = interp.IntervenableModel(str(tiny_classifier_dir), task)
    with pytest.raises(interp.DataError, match="w_h is token 40, outside example own:1's 4 tokens"):  # [CLS] a man [SEP]
        lab.vectors(interp.examples(["a man"], {"w_h": 40}), "blocks.1.hook_resid_post@w_h")
    with pytest.raises(interp.ConfigError, match="example own:1 has no token role 'w_h'"):
        lab.vectors(["a man"], "blocks.1.hook_resid_post@w_h")


def test_a_json_lines_file_of_ones_own_reads_into_the_same_examples(tmp_path):
    path = tmp_path / "mine.jsonl"
    lines = [{"premise": p, "hypothesis": h, "words": {"w_p": ROLES["w_p"][i]} if isinstance(ROLES["w_p"][i], str) else {},
              "spans": {} if isinstance(ROLES["w_p"][i], str) else {"w_p": list(ROLES["w_p"][i])}, "values": VALUES[i]}
             for i, (p, h) in enumerate(PAIRS)]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert read_examples(path) == interp.examples(PAIRS, {"w_p": ROLES["w_p"]}, values=VALUES)
    for text, says in (('{"hypothesis": "x"}', "missing field 'premise'"), ('{"premise": "a b", "words": {"w_h": "z"}}', "role w_h 'z' does not occur"),
                       ('{"premise": "a", "colour": 1}', "unknown field 'colour'")):  # fmt: skip
        path.write_text('{"premise": "a"}\n' + text + "\n", encoding="utf-8")
        with pytest.raises(interp.DataError, match=f"{path}:2: .*{says}"):
            read_examples(path)


def test_a_file_of_ones_own_runs_through_the_commands_as_the_tasks_split_own(tiny_classifier_dir, monli_dir, tmp_path):
    """``--data-file`` with a JSON-lines file of one's own: the task (MoNLI here) reads it as its one split, ``own``;
    INFER labels the examples from their values; a bad line is one message naming the file and line, exit 2."""
    from click.testing import CliRunner

    from interp.cli import main

    path = tmp_path / "mine.jsonl"
    lines = [{"premise": p, "hypothesis": h, "words": {"w_p": w_p, "w_h": w_h}, "values": v}
             for (p, h), w_p, w_h, v in zip(PAIRS, ["dog", "flower", "sandwich"], ["mammal", "rose", "food"], VALUES)]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    common = ["--model", str(tiny_classifier_dir), "--data-file", str(path), "--data-dir", str(monli_dir)]
    result = CliRunner().invoke(main, ["evaluate", *common], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert re.search(r"^own +accuracy +[0-9.]+% +\([0-3]/3;", result.stdout, re.M), result.stdout  # the three, labelled by INFER
    out = tmp_path / "iv.h5"
    result = CliRunner().invoke(main, ["intervene", *common, "--locations", "blocks.0.hook_resid_post@w_h", "--out", str(out), "--quiet"],
                                catch_exceptions=False)  # fmt: skip
    assert result.exit_code == 0, result.output
    import h5py

    with h5py.File(out, "r") as f:
        assert list(f["example_ids"].asstr()[:]) == ["own:1", "own:2", "own:3"]
        assert f["lexrel/blocks.0.hook_resid_post@w_h"]["model_pred"].shape == (3, 3)
    path.write_text(json.dumps(lines[0]) + "\n" + '{"premise": "a b", "words": {"w_h": "b"}}\n', encoding="utf-8")
    bad = CliRunner().invoke(main, ["evaluate", *common])
    assert bad.exit_code == 2 and f"{path}:2: role w_h 'b' does not occur" in bad.stderr, bad.output


def test_characters_no_file_can_store_are_refused_as_the_file_is_read_naming_its_line(tiny_classifier_dir, monli_dir, tmp_path):
    """A NUL in a premise (JSON's \\u0000) or a lone surrogate in a word: refused naming file:line and the field, before
    any model runs, exit 2, nothing written (it used to run every interchange, then fail writing the HDF5 file)."""
    from click.testing import CliRunner

    from interp.cli import main

    path = tmp_path / "mine.jsonl"
    good = {"premise": "the man does not own a dog", "hypothesis": "the man does not own a mammal", "words": {"w_p": "dog", "w_h": "mammal"},
            "values": {"lexrel": "⊏", "negated": True}}  # fmt: skip
    for bad, says in (('{"premise": "a\\u0000dog", "hypothesis": "a mammal"}', "field 'premise' holds a NUL character"),
                      ('{"premise": "a dog", "hypothesis": "a mammal", "id": "\\ud800"}', "field 'id' holds a lone surrogate")):  # fmt: skip
        path.write_text(json.dumps(good) + "\n" + bad + "\n", encoding="utf-8")
        with pytest.raises(interp.DataError, match=f"{path}:2: {says}"):
            read_examples(path)
        out = tmp_path / "iv.h5"
        result = CliRunner().invoke(main, ["intervene", "--model", str(tiny_classifier_dir), "--data-file", str(path), "--data-dir",
                                           str(monli_dir), "--locations", "blocks.0.hook_resid_post@w_h", "--out", str(out), "--quiet"])  # fmt: skip
        assert result.exit_code == 2 and f"{path}:2: {says}" in result.stderr and result.stderr.count("\n") == 1, result.output
        assert not out.exists() and not list(tmp_path.glob("iv.h5*"))


@pytest.mark.parametrize("name, data, says", [
    ("empty", b"", "empty file, no examples"),
    ("blank", b"\n  \n", "empty file, no examples"),
    ("latin1", "caf\xe9\n".encode("latin-1"), "not UTF-8 text"),
    ("array", b'[{"premise": "a"}]\n', ":1: a JSON array, not one object a line"),
    ("nopremise", b'{"hypothesis": "x"}\n', "none of the fields that say a data file's kind"),
    ("extra", b'{"premise": "a dog", "hypothesis": "a mammal", "colour": 1}\n', ":1: unknown field 'colour'"),
    ("missing", None, "file not found"),
])  # fmt: skip
def test_a_data_file_is_read_as_what_its_fields_say_and_a_bad_one_is_named(name, data, says, tiny_classifier_dir, monli_dir, tmp_path):
    """--data-file with the default task: each malformed file one line naming the file (and line) and its problem, not
    taken for an MQNLI file and refused for a variable it lacks; exit 2, nothing written."""
    from click.testing import CliRunner

    from interp.cli import main

    path = tmp_path / f"{name}.jsonl"
    if data is not None:
        path.write_bytes(data)
    out = tmp_path / "iv.h5"
    result = CliRunner().invoke(main, ["intervene", "--model", str(tiny_classifier_dir), "--data-file", str(path), "--data-dir", str(monli_dir),
                                       "--locations", "blocks.0.hook_resid_post@w_h", "--out", str(out), "--quiet"])  # fmt: skip
    assert result.exit_code == 2 and f"{path}" in result.stderr and says in result.stderr, result.output
    assert result.stderr.count("\n") == 1 and "mqnli" not in result.stderr and not out.exists()


def test_a_byte_order_mark_is_read_past(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes('\ufeff{"premise": "the man does not own a dog", "hypothesis": "a mammal"}\n'.encode())
    assert [e.premise for e in read_examples(path)] == ["the man does not own a dog"]


def test_a_lone_string_is_encoded_as_the_tokenizer_alone_encodes_it(wide_classifier_dir, task):
    """run_with_cache(["s"]) on an encoder reads what model(**tokenizer(s)) computes ([CLS] s [SEP], token types 0), not
    a pair with an empty second segment; a pair in the same call is still a pair."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    lab = interp.IntervenableModel(str(wide_classifier_dir), task, complete=False)
    lone, pair = "a man is sleeping on the sofa", ("a man sleeps", "a person sleeps")
    found = lab.run_with_cache([lone, pair], "blocks.0.hook_resid_post@cls,blocks.1.hook_resid_post@cls")
    tok = AutoTokenizer.from_pretrained(wide_classifier_dir)
    model = AutoModelForSequenceClassification.from_pretrained(wide_classifier_dir).eval()
    with torch.no_grad():
        alone = model(**tok(lone, return_tensors="pt"), output_hidden_states=True)
        both = model(**tok(*pair, return_tensors="pt"), output_hidden_states=True)
    for block in (0, 1):
        loc = lab.location(f"blocks.{block}.hook_resid_post@cls")
        assert torch.allclose(found[loc][0], alone.hidden_states[block + 1][0, 0], atol=1e-5)
        assert torch.allclose(found[loc][1], both.hidden_states[block + 1][0, 0], atol=1e-5)
    assert torch.allclose(lab.predict([lone])[0], alone.logits[0], atol=1e-5)
