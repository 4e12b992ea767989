"""The engine's fused BERT blocks against the model's own blocks, for BERT and RoBERTa, GELU and another activation."""

from __future__ import annotations

import pytest
import torch
from transformers import (
    BertConfig,
    BertForSequenceClassification,
    RobertaConfig,
    RobertaForSequenceClassification,
)

from interp.engine.blocks import FastBlocks, supports
from interp.engine.reuse import base_attention, interchange_context
from interp.engine.slicing import _only_blocks, fast_suffix, run_suffix

SIZES = dict(vocab_size=100, hidden_size=32, num_hidden_layers=3, num_attention_heads=4, intermediate_size=37,
             max_position_embeddings=40, pad_token_id=0, num_labels=3)  # fmt: skip


def _model(family: str, act: str):
    """A tiny random classifier whose biases and norms are random too (a fresh model's are 0 and 1, which hide a dropped term)."""
    torch.manual_seed(3)
    if family == "roberta":
        model = RobertaForSequenceClassification(RobertaConfig(hidden_act=act, **SIZES)).eval()
    else:
        model = BertForSequenceClassification(BertConfig(hidden_act=act, **SIZES)).eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name.endswith("bias") or "LayerNorm" in name:
                parameter.add_(torch.randn_like(parameter), alpha=0.3)
    return model


def _own_blocks(model, hidden, start, stop):
    """The reference: the model's own block modules, run through its encoder."""
    ids = torch.zeros(hidden.shape[:2], dtype=torch.long)
    with _only_blocks(model, start, stop, embedding_output=hidden):
        return model.base_model(input_ids=ids, token_type_ids=torch.zeros_like(ids)).last_hidden_state


@pytest.mark.parametrize("family,act", [("bert", "gelu"), ("roberta", "gelu"), ("bert", "relu")])
@torch.no_grad()
def test_fast_blocks_compute_the_models_own_blocks(family, act):
    model = _model(family, act)
    assert supports(model)
    for start, stop in [(0, 3), (1, 3), (2, 3), (0, 1), (1, 2)]:
        fast = FastBlocks(model, start, stop)
        for rows, seq in [(5, 7), (2, 11), (5, 7)]:  # a change of shape, then the first shape again (buffers reused)
            hidden = torch.randn(rows, seq, SIZES["hidden_size"])
            expected = _own_blocks(model, hidden, start, stop)
            got = fast(hidden)
            assert got.shape == expected.shape
            assert torch.allclose(got, expected, atol=1e-5, rtol=0), (start, stop, rows, seq)
            assert not torch.equal(got, hidden)
            first = FastBlocks(model, start, stop, first_token_last=True)
            row0 = first(hidden)
            assert row0.shape == (rows, 1, SIZES["hidden_size"])
            assert torch.allclose(row0, expected[:, :1], atol=1e-5, rtol=0), (start, stop, rows, seq)


@pytest.mark.parametrize("start,stop", [(1, 3), (2, 3)])
@torch.no_grad()
def test_fast_blocks_take_the_first_blocks_attention_context(start, stop):
    """Given the first block's context (here the reuse module's, for a base with source rows written in), same output."""
    model = _model("bert", "gelu")
    sa = model.bert.encoder.layer[start].attention.self
    for first_token_last in (False, True):
        fast = FastBlocks(model, start, stop, first_token_last=first_token_last)
        base, sources = torch.randn(9, SIZES["hidden_size"]), torch.randn(4, SIZES["hidden_size"])
        hidden = base.repeat(4, 1, 1)
        hidden[:, 5] = sources
        share = base_attention(fast.project(base), 5, sa.num_attention_heads, sa.scaling)
        context = interchange_context(share, fast.project(sources))
        assert torch.allclose(fast(hidden, context), fast(hidden), atol=1e-5, rtol=0)
        q, k, v = (module(hidden).view(4, 9, sa.num_attention_heads, -1).transpose(1, 2) for module in (sa.query, sa.key, sa.value))
        expected = torch.nn.functional.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(4, 9, -1)
        assert torch.allclose(context, expected, atol=1e-5, rtol=0)
    with pytest.raises(ValueError, match="block range"):
        FastBlocks(model, 2, 2)
    with pytest.raises(ValueError, match="block range"):
        FastBlocks(model, 0, 4)


@torch.no_grad()
def test_run_suffix_is_the_same_with_and_without_fast_blocks():
    model = _model("bert", "gelu")
    ids = torch.randint(1, 100, (6, 9))
    types = torch.zeros_like(ids)
    states = model(input_ids=ids, token_type_ids=types, output_hidden_states=True).hidden_states
    for h in range(3):
        fast = fast_suffix(model, h)
        assert fast is not None
        with_fast = run_suffix(model, states[h], h, ids, types, fast)
        without = run_suffix(model, states[h], h, ids, types)
        assert torch.allclose(with_fast, without, atol=1e-5, rtol=0), h
    assert fast_suffix(model, 3) is None  # nothing after the last block
    assert fast_suffix(model.train(), 1) is None and not supports(model)  # dropout active: the model's own modules
    model.eval()
    model.__class__ = type("MeanPooledHead", (type(model),), {})  # last block runs in full: own modules throughout
    assert fast_suffix(model, 1) is None
