"""The first suffix block's attention from a base's share and each source's row, against plain softmax attention."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from interp.engine.reuse import base_attention, interchange_context

HEADS, D_HEAD = 4, 8


def _reference(base_qkv, where, source_qkv):
    """Softmax attention over the interchanged sequences, one per source: ``[n, seq, d]``."""
    n, (seq, width) = source_qkv.shape[0], base_qkv.shape
    qkv = base_qkv.repeat(n, 1, 1)
    qkv[:, where] = source_qkv
    q, k, v = qkv.view(n, seq, 3, HEADS, D_HEAD).permute(2, 0, 3, 1, 4).unbind(0)
    return F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(n, seq, width // 3)


@pytest.mark.parametrize("seq", [1, 2, 9])
def test_interchange_context_is_softmax_attention_at_every_token(seq):
    torch.manual_seed(seq)
    base = torch.randn(seq, 3 * HEADS * D_HEAD)
    sources = torch.randn(6, 3 * HEADS * D_HEAD)
    sources[0, HEADS * D_HEAD : 2 * HEADS * D_HEAD] *= 40  # a source key far above every base score
    sources[1, HEADS * D_HEAD : 2 * HEADS * D_HEAD] *= -40  # and far below
    for where in range(seq):
        share = base_attention(base, where, HEADS, D_HEAD**-0.5)
        got = interchange_context(share, sources)
        assert torch.isfinite(got).all()
        assert torch.allclose(got, _reference(base, where, sources), atol=1e-5, rtol=1e-5), where
        out = torch.full_like(got, float("nan"))
        assert interchange_context(share, sources, out=out) is not None and torch.equal(out, got)


@pytest.mark.parametrize("where", [(0, 3), (5, 1, 2), (4, 0), (0, 1, 2, 3, 4, 5, 6)])
def test_several_intervened_tokens_are_softmax_attention_at_every_token(where):
    """A location at several roles: the sources' rows at every token of ``where`` at once, in its order."""
    torch.manual_seed(len(where))
    seq = 7
    base = torch.randn(seq, 3 * HEADS * D_HEAD)
    sources = torch.randn(5, len(where), 3 * HEADS * D_HEAD)
    sources[0, :, HEADS * D_HEAD : 2 * HEADS * D_HEAD] *= 40
    share = base_attention(base, where, HEADS, D_HEAD**-0.5)
    got = interchange_context(share, sources)
    assert torch.isfinite(got).all()
    assert torch.allclose(got, _reference(base, list(where), sources), atol=1e-5, rtol=1e-5)
    # the null that could fail: the same rows written at the tokens in another order differ
    swapped = interchange_context(base_attention(base, where[::-1], HEADS, D_HEAD**-0.5), sources)
    assert not torch.allclose(swapped, got, atol=1e-3)


def test_base_attention_names_a_token_outside_the_sequence():
    with pytest.raises(ValueError, match=r"intervened tokens \(5,\) are not distinct tokens of a sequence of 5"):
        base_attention(torch.randn(5, 3 * HEADS * D_HEAD), 5, HEADS, 1.0)
    with pytest.raises(ValueError, match="not distinct"):
        base_attention(torch.randn(5, 3 * HEADS * D_HEAD), (2, 2), HEADS, 1.0)
