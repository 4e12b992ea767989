"""Token alignment of [CLS], w_p and w_h, against a naive reference on every real example."""

from __future__ import annotations

import pytest
import torch

from interp.core.errors import ConfigError, DataError
from interp.tasks.monli import (
    ROLES,
    Example,
    Lexrel,
    collate,
    encode_example,
    encode_examples,
    load_monli,
)


@pytest.fixture(scope="module")
def examples(monli_dir):
    return load_monli(monli_dir)


def _example(premise, hypothesis, w_p, w_h):
    return Example("t:1", premise, hypothesis, "entailment", w_p, w_h, 1, Lexrel.FORWARD, False, "pmonli", "t.jsonl")


def test_every_real_example_aligns_to_its_own_wordpieces(examples, minilm_tokenizer):
    """Naive reference: the word tokenized alone gives the same pieces, in the right segment."""
    first = encode_examples(examples, minilm_tokenizer, "first")
    last = encode_examples(examples, minilm_tokenizer, "last")
    multi = 0
    for e, f, l in zip(examples, first, last):
        assert f.positions["cls"] == 0 and f.input_ids[0] == minilm_tokenizer.cls_token_id
        sep = f.input_ids.index(minilm_tokenizer.sep_token_id)
        for role, word in (("w_p", e.w_p), ("w_h", e.w_h)):
            pieces = f.pieces[role]
            expected = minilm_tokenizer.convert_tokens_to_ids(minilm_tokenizer.tokenize(word))
            assert [f.input_ids[i] for i in pieces] == expected, (e.id, role)
            assert list(pieces) == list(range(pieces[0], pieces[-1] + 1))
            assert (pieces[0] < sep) == (role == "w_p")
            assert f.positions[role] == pieces[0] and l.positions[role] == pieces[-1]
            multi += len(pieces) > 1
    assert multi == sum(len(minilm_tokenizer.tokenize(w)) > 1 for e in examples for w in (e.w_p, e.w_h))
    assert multi > 0


def test_one_batched_tokenizer_call_encodes_as_the_pair_tokenized_alone(examples, minilm_tokenizer):
    """Naive reference: each pair through the tokenizer on its own gives the same ids and segments as the batch."""
    encoded = encode_examples(examples, minilm_tokenizer)
    for e, got in zip(examples, encoded):
        alone = minilm_tokenizer(e.premise, e.hypothesis, truncation=True, return_token_type_ids=True)
        assert got.input_ids == tuple(alone["input_ids"]) and got.token_type_ids == tuple(alone["token_type_ids"]), e.id
    assert [encode_example(e, minilm_tokenizer) for e in examples[::97]] == encoded[::97]
    assert encode_examples([], minilm_tokenizer) == []


def test_case_and_punctuation(minilm_tokenizer):
    enc = encode_example(_example("Man holds plants.", "Man holds sunflowers.", "plants", "sunflowers"), minilm_tokenizer, "last")
    tokens = minilm_tokenizer.convert_ids_to_tokens(enc.input_ids)
    assert tokens[enc.positions["w_p"]] == "plants"
    assert "".join(tokens[i].removeprefix("##") for i in enc.pieces["w_h"]) == "sunflowers"
    assert enc.positions["w_h"] == enc.pieces["w_h"][-1] and len(enc.pieces["w_h"]) > 1


def test_unalignable_example_fails_loudly(minilm_tokenizer):
    with pytest.raises(DataError, match=r"t\.jsonl:1: cannot align w_h 'cat'"):
        encode_example(_example("a dog runs", "a mammal runs", "dog", "cat"), minilm_tokenizer)


def test_truncated_word_fails_loudly(minilm_tokenizer):
    minilm_tokenizer_short = minilm_tokenizer.__class__.from_pretrained(
        minilm_tokenizer.name_or_path, model_max_length=6
    )
    with pytest.raises(DataError, match=r"cannot align w_p 'dog' .* \(the input was truncated to 6 tokens\)"):
        encode_example(_example("a dog runs", "a mammal runs", "dog", "mammal"), minilm_tokenizer_short)


def test_unknown_wordpiece_rule(minilm_tokenizer):
    with pytest.raises(ConfigError, match="wordpiece= must be one of first, last, all"):
        encode_example(_example("a dog", "a mammal", "dog", "mammal"), minilm_tokenizer, "middle")


def test_slow_tokenizer_is_refused(minilm_tokenizer):
    class Slow:
        is_fast = False

    with pytest.raises(ConfigError, match="fast"):
        encode_example(_example("a dog", "a mammal", "dog", "mammal"), Slow())


def test_collate_pads_and_keeps_positions(examples, minilm_tokenizer):
    enc = encode_examples(examples[:5], minilm_tokenizer)
    batch = collate(enc, minilm_tokenizer.pad_token_id)
    longest = max(len(e.input_ids) for e in enc)
    assert batch["input_ids"].shape == (5, longest) and list(batch["positions"]) == list(ROLES)
    for row, e in enumerate(enc):
        k = len(e.input_ids)
        assert batch["input_ids"][row, :k].tolist() == list(e.input_ids)
        assert batch["attention_mask"][row].sum() == k
        assert (batch["input_ids"][row, k:] == minilm_tokenizer.pad_token_id).all()
        assert [int(batch["positions"][r][row]) for r in ROLES] == [e.positions[r] for r in ROLES]
    assert batch["labels"].tolist() == [e.label_id for e in examples[:5]]
    assert batch["input_ids"].dtype == torch.long
