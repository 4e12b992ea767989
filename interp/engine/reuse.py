"""The first suffix block's attention for one base and many sources, without recomputing what the base shares.

In an interchange intervention at location L (Geiger, Richardson & Potts
2020, §6.2) the input of the first block after L is the base's hidden state
with the rows of the intervened tokens P (one, or several for a location
at several roles) taken from the source. So in that block every query, key
and value is the base's except at P, and for a query i ∉ P the attention
scores are the base's except those for the keys in P. With the base's terms
over the other keys summed once per base,

    m_i = max_{j∉P} s_ij,   Z_i = Σ_{j∉P} exp(s_ij − m_i),   U_i = Σ_{j∉P} exp(s_ij − m_i) v_j,

the context of query i for a source with keys k'_p and values v'_p (p ∈ P) is, per head,

    c_i = (a U_i + Σ_p b_p v'_p) / (a Z_i + Σ_p b_p),   a = exp(m_i − M), b_p = exp(q_i·k'_p / sqrt(d_head) − M),

with M = max(m_i, max_p q_i·k'_p / sqrt(d_head)) so nothing overflows; the
queries in P (the source's own) attend over all keys in full. Per pair that is
``O(seq × |P| × d_model)`` instead of the O(seq² × d_model) attention and the
O(seq × d_model²) Q/K/V projection of a full block: it is the reuse of the
first suffix block's keys and values that issue #5 names. The result
equals softmax attention over the interchanged sequence to float rounding
(the tests compare it with ``scaled_dot_product_attention``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from interp.core.errors import ConfigError


@dataclass(frozen=True)
class BaseAttention:
    """One base's share of the first suffix block's attention; shapes ``[seq, heads, d_head]`` or ``[seq, heads]``."""

    q: Tensor
    k: Tensor
    v: Tensor
    m: Tensor  # max score of each query over the keys not in ``where``
    z: Tensor  # Σ exp(score − m) over those keys
    u: Tensor  # Σ exp(score − m) v over those keys
    where: tuple[int, ...]
    scaling: float


def base_attention(qkv: Tensor, where: int | tuple[int, ...], heads: int, scaling: float) -> BaseAttention:
    """The base's terms of :func:`interchange_context`.

    Args:
        qkv: float ``[seq, 3 d_model]``, the base's Q/K/V projection in the
            first suffix block (queries, keys, values, each heads × d_head).
        where: the intervened token(s), distinct, each ``0 <= p < seq``, in
            the order the sources' rows come (a location's tokens).
        heads: attention heads; scaling: the score scale (1/sqrt(d_head)).

    Raises:
        ConfigError (a ValueError): a token outside the sequence, or one named twice.
    """
    seq = qkv.shape[0]
    where = (where,) if isinstance(where, int) else tuple(int(p) for p in where)
    if not where or any(not 0 <= p < seq for p in where) or len(set(where)) != len(where):
        raise ConfigError(f"intervened tokens {where} are not distinct tokens of a sequence of {seq}")
    q, k, v = qkv.view(seq, 3, heads, -1).unbind(1)
    scores = torch.einsum("ihd,jhd->ihj", q, k).mul_(scaling)  # [seq, heads, seq]
    scores[:, :, list(where)] = float("-inf")
    m = scores.amax(-1)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # every key intervened: no base term
    e = scores.sub_(m[..., None]).exp_()
    return BaseAttention(q, k, v, m, e.sum(-1), torch.einsum("ihj,jhd->ihd", e, v), where, scaling)


def interchange_context(base: BaseAttention, source_qkv: Tensor, out: Tensor | None = None) -> Tensor:
    """The first suffix block's attention context for ``base`` with each source's rows at ``base.where``.

    Args:
        base: from :func:`base_attention`.
        source_qkv: float ``[n, tokens, 3 d_model]`` (or ``[n, 3 d_model]``
            for one token), each source's Q/K/V projection of its vectors at
            the location, row t going to token ``base.where[t]``.
        out: optional float ``[n, seq, d_model]`` to write into.

    Returns:
        float ``[n, seq, d_model]``: what softmax attention over the base's
        queries, keys and values, with the source's at ``base.where``,
        gives before the output projection (heads concatenated).
    """
    seq, heads, d_head = base.q.shape
    n = source_qkv.shape[0]
    where = list(base.where)
    t = len(where)
    q_s, k_s, v_s = source_qkv.reshape(n, t, 3, heads, d_head).unbind(2)  # [n, t, heads, d_head]
    context = out.view(n, seq, heads, d_head) if out is not None else source_qkv.new_empty(n, seq, heads, d_head)
    # queries other than the intervened: the base's sums plus the sources' keys and values
    s = torch.einsum("ihd,nthd->niht", base.q, k_s).mul_(base.scaling)  # [n, seq, heads, t]
    top = torch.maximum(s.amax(-1), base.m)
    a = torch.sub(base.m, top).exp_()  # [n, seq, heads]
    b = s.sub_(top[..., None]).exp_()  # [n, seq, heads, t]
    denominator = torch.addcmul(b.sum(-1), a, base.z)
    torch.mul(a.div_(denominator)[..., None], base.u, out=context)
    context += torch.einsum("niht,nthd->nihd", b.div_(denominator[..., None]), v_s)
    # the intervened queries: the sources' own, over every key (the sources' at ``where``)
    scores = torch.einsum("jhd,nthd->nthj", base.k, q_s)  # [n, t, heads, seq]
    scores[..., where] = torch.einsum("nthd,nuhd->nthu", q_s, k_s)
    weights = torch.softmax(scores.mul_(base.scaling), -1)
    rows = torch.einsum("nthj,jhd->nthd", weights, base.v)
    rows += torch.einsum("nthu,nuhd->nthd", weights[..., where], v_s - base.v[where])
    context[:, where] = rows
    return context.view(n, seq, heads * d_head)
