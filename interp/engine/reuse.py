"""The first suffix block's attention for one base and many sources, without recomputing what the base shares.

In an interchange intervention at location L (Geiger, Richardson & Potts
2020, §6.2) the input of the first block after L is the base's hidden state
with one row, the intervened token p, taken from the source. So in that
block every query, key and value is the base's except at p, and for a query
i ≠ p the attention scores are the base's except the one for key p. With
the base's terms over the other keys summed once per base,

    m_i = max_{j≠p} s_ij,   Z_i = Σ_{j≠p} exp(s_ij − m_i),   U_i = Σ_{j≠p} exp(s_ij − m_i) v_j,

the context of query i for a source with key k'_p and value v'_p is, per head,

    c_i = (a U_i + b v'_p) / (a Z_i + b),   a = exp(m_i − M), b = exp(q_i·k'_p / sqrt(d_head) − M),

with M = max(m_i, q_i·k'_p / sqrt(d_head)) so nothing overflows; the
query p (the source's own) attends over all keys in full. Per pair that is
O(seq × d_model) instead of the O(seq² × d_model) attention and the
O(seq × d_model²) Q/K/V projection of a full block: it is the reuse of the
first suffix block's keys and values that issue #5 names. The result
equals softmax attention over the interchanged sequence to float rounding
(the tests compare it with ``scaled_dot_product_attention``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass(frozen=True)
class BaseAttention:
    """One base's share of the first suffix block's attention; shapes ``[seq, heads, d_head]`` or ``[seq, heads]``."""

    q: Tensor
    k: Tensor
    v: Tensor
    m: Tensor  # max score of each query over the keys other than ``where``
    z: Tensor  # Σ exp(score − m) over those keys
    u: Tensor  # Σ exp(score − m) v over those keys
    where: int
    scaling: float


def base_attention(qkv: Tensor, where: int, heads: int, scaling: float) -> BaseAttention:
    """The base's terms of :func:`interchange_context`.

    Args:
        qkv: float ``[seq, 3 d_model]``, the base's Q/K/V projection in the
            first suffix block (queries, keys, values, each heads × d_head).
        where: the intervened token, ``0 <= where < seq``.
        heads: attention heads; scaling: the score scale (1/sqrt(d_head)).

    Raises:
        ValueError: ``where`` is outside the sequence.
    """
    seq = qkv.shape[0]
    if not 0 <= where < seq:
        raise ValueError(f"intervened token {where} is outside a sequence of {seq}")
    q, k, v = qkv.view(seq, 3, heads, -1).unbind(1)
    scores = torch.einsum("ihd,jhd->ihj", q, k).mul_(scaling)  # [seq, heads, seq]
    scores[:, :, where] = float("-inf")
    m = scores.amax(-1)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # a one-token sequence has no other key
    e = scores.sub_(m[..., None]).exp_()
    return BaseAttention(q, k, v, m, e.sum(-1), torch.einsum("ihj,jhd->ihd", e, v), where, scaling)


def interchange_context(base: BaseAttention, source_qkv: Tensor, out: Tensor | None = None) -> Tensor:
    """The first suffix block's attention context for ``base`` with each source's row at ``base.where``.

    Args:
        base: from :func:`base_attention`.
        source_qkv: float ``[n, 3 d_model]``, each source's Q/K/V projection
            of its vector at the location.
        out: optional float ``[n, seq, d_model]`` to write into.

    Returns:
        float ``[n, seq, d_model]``: what softmax attention over the base's
        queries, keys and values, with the source's at ``base.where``,
        gives before the output projection (heads concatenated).
    """
    seq, heads, d_head = base.q.shape
    n = source_qkv.shape[0]
    q_s, k_s, v_s = source_qkv.view(n, 3, heads, d_head).unbind(1)  # [n, heads, d_head]
    context = out.view(n, seq, heads, d_head) if out is not None else source_qkv.new_empty(n, seq, heads, d_head)
    # queries other than p: the base's sums plus the source's key and value
    s = torch.einsum("ihd,nhd->nih", base.q, k_s).mul_(base.scaling)  # [n, seq, heads]
    top = torch.maximum(s, base.m)
    a = torch.sub(base.m, top).exp_()
    b = s.sub_(top).exp_()
    denominator = torch.addcmul(b, a, base.z)
    torch.mul(a.div_(denominator)[..., None], base.u, out=context)
    context.addcmul_(b.div_(denominator)[..., None], v_s[:, None])
    # query p: the source's own, over every key
    p = base.where
    scores = torch.einsum("jhd,nhd->nhj", base.k, q_s)  # [n, heads, seq]
    scores[:, :, p] = (q_s * k_s).sum(-1)
    weights = torch.softmax(scores.mul_(base.scaling), -1)
    row = torch.einsum("nhj,jhd->nhd", weights, base.v)
    context[:, p] = row.addcmul_(weights[:, :, p, None], v_s - base.v[p])
    return context.view(n, seq, heads * d_head)
