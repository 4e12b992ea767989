"""The MoNLI loader on the released files and on spoiled copies of them."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from conftest import REPO, record

from interp.core.checksums import sha256_of
from interp.core.errors import DataError
from interp.tasks.monli import SPLITS, Lexrel, load_monli, read_split, resolve_data_dir
from interp.tasks.monli.data import ENV_VAR


@pytest.fixture(scope="module")
def examples(monli_dir):
    return load_monli(monli_dir)


def test_sizes_and_label_balance_match_the_release(examples):
    by_split = Counter(e.split for e in examples)
    assert by_split == {name: info.n_examples for name, info in SPLITS.items()}
    for name in SPLITS:
        labels = Counter(e.label for e in examples if e.split == name)
        assert labels["entailment"] == labels["neutral"]


def test_fields_follow_the_raw_lines(examples, monli_dir):
    """Each example carries exactly its file line's fields, with lexrel the sign of depth."""
    by_id = {e.id: e for e in examples}
    assert len(by_id) == len(examples)
    for name in SPLITS:
        for lineno, line in enumerate((monli_dir / f"{name}.jsonl").read_text().splitlines(), start=1):
            raw, e = json.loads(line), by_id[f"{name}:{lineno}"]
            assert (e.premise, e.hypothesis, e.label, e.w_p, e.w_h, e.depth) == (
                raw["sentence1"],
                raw["sentence2"],
                raw["gold_label"],
                raw["sentence1_lex"],
                raw["sentence2_lex"],
                raw["depth"],
            )
            assert e.lexrel == (Lexrel.FORWARD if raw["depth"] > 0 else Lexrel.REVERSE)
            assert e.negated == name.startswith("nmonli")
            assert (e.label == "entailment") == ((e.lexrel is Lexrel.FORWARD) != e.negated)


def test_sentence_text_is_not_a_key(examples):
    pairs = Counter((e.premise, e.hypothesis) for e in examples)
    assert sum(1 for c in pairs.values() if c > 1) == 12


def test_test_split_general_words_are_unseen_in_training(examples):
    """§5.2: NMoNLI test's general (hypernym) words never occur in NMoNLI train."""

    def general(e):
        return e.w_h if e.lexrel is Lexrel.FORWARD else e.w_p

    train = {general(e).lower() for e in examples if e.split == "nmonli_train"}
    test = {general(e).lower() for e in examples if e.split == "nmonli_test"}
    assert test and not test & train


def test_repository_checksum_file_agrees_with_the_loader(monli_dir):
    listed = dict(line.split()[::-1] for line in (REPO / "datasets/monli/SHA256SUMS").read_text().splitlines())
    assert listed == {info.filename: info.sha256 for info in SPLITS.values()}
    assert all(sha256_of(monli_dir / f) == s for f, s in listed.items())


def test_directory_from_environment(monkeypatch, monli_dir):
    monkeypatch.setenv(ENV_VAR, str(monli_dir))
    assert len(load_monli(splits=("nmonli_test",))) == 200


def test_no_directory_says_how_to_get_monli(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    with pytest.raises(DataError, match="github.com/atticusg/MoNLI.*INTERP_MONLI_DIR"):
        resolve_data_dir(None)


def test_missing_directory_is_named(tmp_path):
    with pytest.raises(DataError, match=f"{tmp_path / 'nowhere'} does not exist"):
        load_monli(tmp_path / "nowhere")


def test_missing_file_is_named(tmp_path):
    with pytest.raises(DataError, match=r"pmonli\.jsonl: file not found"):
        load_monli(tmp_path, splits=("pmonli",))


def test_unknown_split():
    with pytest.raises(DataError, match="unknown MoNLI split 'snli'"):
        load_monli("unused", splits=("snli",))


def test_checksum_mismatch_names_the_file(spoil):
    directory = spoil("nmonli_test", 3, record(sentence1="the woman does not own a dog", sentence2="the woman does not own a mammal"))
    with pytest.raises(DataError, match=r"nmonli_test\.jsonl: SHA-256 [0-9a-f]{64} does not match"):
        load_monli(directory, splits=("nmonli_test",))
    assert len(load_monli(directory, splits=("nmonli_test",), verify_checksums=False)) == 200
    repeated = spoil("nmonli_test", 3, record())  # line 1 word for word
    with pytest.raises(DataError, match=r"nmonli_test\.jsonl:3: repeats line 1 word for word"):
        load_monli(repeated, splits=("nmonli_test",), verify_checksums=False)


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"sentence1": "a dog", ', r"malformed JSON"),
        ("[1, 2]", r"expected a JSON object, got list"),
        (record(gold_label=None), r"missing field 'gold_label'"),
        (record(sentence2_lex=None), r"missing field 'sentence2_lex'"),
        (record(depth="4"), r"field 'depth' must be int"),
        (record(depth=True), r"field 'depth' must be int"),
        (record(gold_label="contradiction"), r"unknown gold_label 'contradiction'"),
        (record(depth=0), r"depth is 0"),
        (record(sentence1_lex="cat"), r"sentence1_lex 'cat' does not occur as a whole word in sentence1"),
        (record(sentence2_lex="mamm"), r"sentence2_lex 'mamm' does not occur"),
        (record(sentence1="the dog does not own a dog"), r"sentence1_lex 'dog' occurs 2 times"),
        (record(gold_label="entailment"), r"gold_label 'entailment' contradicts depth 4 in a negated file"),
        ("   ", r"empty line"),
    ],
)
def test_spoiled_line_is_reported_with_file_and_line(spoil, line, message):
    directory = spoil("nmonli_test", 7, line)
    with pytest.raises(DataError, match=rf"nmonli_test\.jsonl:7: {message}"):
        load_monli(directory, splits=("nmonli_test",), verify_checksums=False)


def test_empty_file(spoil):
    directory = spoil("pmonli", whole="")
    with pytest.raises(DataError, match=r"pmonli\.jsonl: empty file"):
        read_split(directory / "pmonli.jsonl", "pmonli")


def test_word_match_ignores_case_and_attached_punctuation(spoil):
    line = record(sentence1="The Dog, not a cat, is not owned.", sentence2="The mammal, not a cat, is not owned.")
    directory = spoil("nmonli_test", 1, line)
    (e,) = [x for x in load_monli(directory, ("nmonli_test",), verify_checksums=False) if x.id == "nmonli_test:1"]
    assert (e.w_p, e.w_h, e.lexrel) == ("dog", "mammal", Lexrel.FORWARD)


def test_a_file_read_again_gives_what_it_holds_now(monli_dir, tmp_path):
    """The parsed examples are kept per process for the same text: a file changed in place is parsed anew (the same
    path, other text), the same text gives equal examples, and the list returned is the caller's own."""
    path = tmp_path / "nmonli_test.jsonl"
    path.write_text((monli_dir / "nmonli_test.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    first = read_split(path, "nmonli_test")
    first.clear()
    again = read_split(path, "nmonli_test")
    released = read_split(monli_dir / "nmonli_test.jsonl", "nmonli_test")
    assert len(again) == 200 and [(e.id, e.premise) for e in again] == [(e.id, e.premise) for e in released]
    assert {e.source for e in again} == {str(path)}  # each path's own examples
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[0] = record(sentence1="the man does not own a cat", sentence2="the man does not own a mammal", sentence1_lex="cat")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    changed = read_split(path, "nmonli_test")
    assert changed[0].premise == "the man does not own a cat" and changed[1:] == again[1:] and again[0].premise != changed[0].premise
    lines[1] = "{not json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=rf"{path.name}:2"):
        read_split(path, "nmonli_test")
