"""Hooks against a fresh Hugging Face model: every location read exactly, writes exact, hooks always removed."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForSequenceClassification

from interp.core.errors import ConfigError
from interp.hooks import hooked, n_layers, site_modules
from interp.hooks.locations import Location, all_locations
from interp.tasks.monli import collate, encode_examples, load_monli


@pytest.fixture(scope="module")
def setup(tiny_classifier_dir, monli_dir, minilm_tokenizer):
    model = AutoModelForSequenceClassification.from_pretrained(tiny_classifier_dir).eval()
    examples = load_monli(monli_dir, ("pmonli",))[:12]
    batch = collate(encode_examples(examples, minilm_tokenizer), minilm_tokenizer.pad_token_id)
    inputs = {k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    return model, inputs, batch["positions"], tiny_classifier_dir, minilm_tokenizer


def _hook_count(model) -> int:
    return sum(len(m._forward_hooks) for m in site_modules(model))


@pytest.fixture(scope="module")
def tiny_roberta_dir(tmp_path_factory):
    from transformers import RobertaConfig, RobertaForSequenceClassification

    torch.manual_seed(2)
    path = tmp_path_factory.mktemp("tiny_roberta")
    config = RobertaConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=3, num_attention_heads=2,
        intermediate_size=37, max_position_embeddings=130, pad_token_id=0, num_labels=2,
    )  # fmt: skip
    RobertaForSequenceClassification(config).save_pretrained(path, safe_serialization=True)
    return path


@pytest.mark.parametrize("family", ["bert", "roberta"])
@torch.no_grad()
def test_every_location_equals_a_fresh_models_hidden_states(setup, tiny_roberta_dir, family):
    _, inputs, positions, path, _ = setup
    if family == "roberta":
        path, inputs = tiny_roberta_dir, {k: v for k, v in inputs.items() if k != "token_type_ids"}
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    fresh = AutoModelForSequenceClassification.from_pretrained(path).eval()
    hidden = fresh(**inputs, output_hidden_states=True).hidden_states
    locations = all_locations(n_layers(model), ("cls", "w_p", "w_h"))
    assert len(hidden) == n_layers(model) + 1
    with hooked(model, positions, read=locations) as trace:
        logits = model(**inputs).logits
    assert torch.equal(logits, fresh(**inputs).logits)
    rows = torch.arange(len(positions["cls"]))
    for loc in locations:
        expected = hidden[loc.hidden_index][rows, positions[loc.role]]
        assert torch.equal(trace[loc], expected), str(loc)
    assert _hook_count(model) == 0


@torch.no_grad()
def test_writing_a_models_own_vectors_changes_nothing(setup):
    model, inputs, positions, _, _ = setup
    loc = Location.parse("blocks.0.hook_resid_post@w_h")
    with hooked(model, positions, read=[loc]) as trace:
        base = model(**inputs).logits
    with hooked(model, positions, write={loc: trace[loc]}):
        assert torch.equal(model(**inputs).logits, base)


@torch.no_grad()
def test_write_at_the_last_block_cls_gives_the_source_logits(setup):
    """The classifier reads only the last block's [CLS]: swapping it in swaps the prediction."""
    model, inputs, positions, _, _ = setup
    loc = Location(n_layers(model), "cls")
    with hooked(model, positions, read=[loc]) as trace:
        logits = model(**inputs).logits
    source = torch.roll(torch.arange(len(positions["cls"])), 1)
    with hooked(model, positions, write={loc: trace[loc][source]}):
        swapped = model(**inputs).logits
    assert torch.allclose(swapped, logits[source], atol=1e-6)


@torch.no_grad()
def test_write_at_the_embedding_output_of_a_minimal_pair_reproduces_the_source(setup):
    """Base and source differ only in w_h (same length): the source's w_h embedding makes base into source."""
    model, _, _, _, tokenizer = setup
    from interp.tasks.monli import Example, Lexrel

    def ex(word):
        return Example("t:1", "a man owns a dog", f"a man owns a {word}", "neutral", "dog", word, -1, Lexrel.REVERSE, False, "pmonli", "t")

    enc = encode_examples([ex("cat"), ex("pet")], tokenizer)
    batch = collate(enc, tokenizer.pad_token_id)
    inputs = {k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    loc = Location.parse("blocks.0.hook_resid_pre@w_h")
    with hooked(model, batch["positions"], read=[loc]) as trace:
        logits = model(**inputs).logits
    with hooked(model, batch["positions"], write={loc: trace[loc].flip(0)}):
        swapped = model(**inputs).logits
    assert not torch.allclose(logits[0], logits[1])
    assert torch.allclose(swapped, logits.flip(0), atol=1e-6)


def test_hooks_are_removed_when_the_block_raises(setup):
    model, inputs, positions, _, _ = setup
    with pytest.raises(RuntimeError, match="boom"):
        with hooked(model, positions, read=all_locations(n_layers(model), ("cls", "w_p", "w_h"))):
            assert _hook_count(model) == n_layers(model) + 1
            raise RuntimeError("boom")
    assert _hook_count(model) == 0


def test_bad_requests(setup):
    model, _, positions, _, _ = setup
    with pytest.raises(ConfigError, match="out of range for a model with 2 blocks"):
        with hooked(model, positions, read=[Location(5, "cls")]):
            pass
    with pytest.raises(ConfigError, match=r"vectors must be \[batch=12, tokens × width=32\]"):
        with hooked(model, positions, write={Location(1, "cls"): torch.zeros(3, 32)}):
            pass
    with pytest.raises(ConfigError, match="token role 'n_s.p' has no positions here"):
        with hooked(model, positions, read=[Location(1, "n_s.p")]):
            pass
    assert _hook_count(model) == 0
