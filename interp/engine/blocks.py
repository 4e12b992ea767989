"""BERT blocks for the suffix's hot loop: fused projections and reused buffers, on unpadded rows.

The engine runs the same blocks on thousands of equally shaped batches
(rows × tokens). Through the model's own modules each block allocates
fresh outputs for every projection, the feed-forward's hidden layer
(tokens × d_ff, tens of MB) among them, and on a CPU the first touch of
those pages, the bias copies into them and the out-of-place adds and GELU
cost about as much as the matmuls. :class:`FastBlocks` computes the same
function (Devlin et al. 2019, §3; Hugging Face's ``BertLayer``, eval mode):

    q, k, v  = x W_qkv + b_qkv                 (one matmul, W_qkv = [W_q; W_k; W_v])
    a        = LayerNorm_1((x + b_o) + softmax(q kᵀ / sqrt(d_head)) v W_o)
    out      = LayerNorm_2((a + b_2) + act(a W_1 + b_1) W_2)

with the block's own weights, every result written into buffers that are
kept between calls of the same shape: the residual and bias are the
accumulator the output projections add into (one pass over memory instead
of a bias copy and an add) and GELU runs in place. No attention mask is
used: every row is unpadded.

Two more savings serve the engine (:mod:`interp.engine.batched`):

* ``first_token_last``: the last block computes its query, attention
  output and feed-forward for the first token ([CLS]) only, all a sequence
  classifier's head reads, and forms no keys or values: the query is folded
  through W_k and the attention weights applied to the block's input before
  W_v (:meth:`FastBlocks._first_token_attention`);
* ``context``: the first block's attention context can be passed in. In an
  interchange intervention every row is a base's prefix with one source
  vector written at one token, so that block's queries, keys and values are
  the base's except at that token, and :mod:`interp.engine.reuse`
  computes its attention from the base's share (once per base) and each
  source's row (:meth:`FastBlocks.project`, once per source).

Results match the model's own forward pass to float rounding (the tests
compare them). :func:`supports` says whether a model's blocks have this
layout (BERT, RoBERTa and their kin); otherwise the engine uses the
model's own modules.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from interp.core.errors import ConfigError

_PARTS = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
          "attention.output.LayerNorm", "intermediate.dense", "output.dense", "output.LayerNorm")  # fmt: skip


def _get(block, dotted: str):
    for name in dotted.split("."):
        block = getattr(block, name, None)
    return block


def supports(model) -> bool:
    """Whether every block of ``model`` has BERT's layout with plain self-attention, in eval mode."""
    blocks = getattr(getattr(getattr(model, "base_model", None), "encoder", None), "layer", None)
    if blocks is None or model.training or getattr(model.config, "is_decoder", False):
        return False
    for block in blocks:
        if getattr(block, "add_cross_attention", False) or any(_get(block, p) is None for p in _PARTS):
            return False
        if getattr(block.attention.self, "position_embedding_type", "absolute") != "absolute":
            return False
        if not all(isinstance(_get(block, p), nn.LayerNorm) for p in _PARTS if p.endswith("LayerNorm")):
            return False
    return True


@dataclass(frozen=True)
class _Layer:
    """One block's weights, transposed for ``x @ w`` (views, not copies, except the concatenated Q/K/V)."""

    w_qkv: Tensor  # [d, 3d]
    b_qkv: Tensor  # [3d]
    heads: int
    scaling: float
    w_o: Tensor
    b_o: Tensor
    norm_1: nn.LayerNorm
    w_1: Tensor
    b_1: Tensor
    act: object  # the block's own activation module, used where GELU cannot run in place
    w_2: Tensor
    b_2: Tensor
    norm_2: nn.LayerNorm


class FastBlocks:
    """Blocks ``start`` to ``stop - 1`` of a BERT-family model as one function of ``[rows, seq, d_model]``.

    Args:
        model: a model for which :func:`supports` is true; its weights are
            read (Q/K/V concatenated once), not copied otherwise.
        start, stop: the block range, counted as ``model.base_model.encoder.layer``.
        first_token_last: compute the last block of the range for the first
            token only (the output is then ``[rows, 1, d_model]``).
        keep_buffers: keep each result's buffer for the next call of the same
            shape (eager use); ``False`` allocates them afresh, as a function
            ``torch.compile`` traces must (:mod:`interp.engine.compiled`).

    The buffers of the last shape seen are kept inside the instance, so
    use one instance per thread; what :meth:`__call__` returns is a fresh
    tensor, never a buffer. The weights are the model's at construction:
    build a new instance after moving the model or changing its dtype.

    Raises:
        ConfigError (a ValueError): ``start .. stop`` is empty or outside the model's blocks.
    """

    def __init__(self, model, start: int, stop: int, first_token_last: bool = False, keep_buffers: bool = True) -> None:
        if not 0 <= start < stop <= len(model.base_model.encoder.layer):
            raise ConfigError(f"block range {start}..{stop} is empty or outside the model's blocks")
        # exact (erf) GELU, in place when this torch has the op; any other activation through the block's own
        self.gelu_ = getattr(torch._C._nn, "gelu_", None) if getattr(model.config, "hidden_act", None) == "gelu" else None
        self.first_token_last = first_token_last
        self.layers = []
        for block in model.base_model.encoder.layer[start:stop]:
            sa, out, inner, final = block.attention.self, block.attention.output, block.intermediate, block.output
            weight = torch.cat([sa.query.weight, sa.key.weight, sa.value.weight]).detach()
            bias = torch.cat([sa.query.bias, sa.key.bias, sa.value.bias]).detach()
            self.layers.append(
                _Layer(weight.t(), bias, sa.num_attention_heads, sa.scaling, out.dense.weight.detach().t(),
                       out.dense.bias.detach(), out.LayerNorm, inner.dense.weight.detach().t(), inner.dense.bias.detach(),
                       inner.intermediate_act_fn, final.dense.weight.detach().t(), final.dense.bias.detach(),
                       final.LayerNorm)  # fmt: skip
            )
        self._buffers: dict[str, Tensor] = {}
        self.keep_buffers = keep_buffers

    def _buffer(self, name: str, shape: tuple[int, ...], like: Tensor) -> Tensor:
        if not self.keep_buffers:
            return torch.empty(shape, dtype=like.dtype, device=like.device)
        buffer = self._buffers.get(name)
        if buffer is None or buffer.shape != shape or buffer.dtype != like.dtype or buffer.device != like.device:
            buffer = self._buffers[name] = torch.empty(shape, dtype=like.dtype, device=like.device)
        return buffer

    def clear(self) -> None:
        """Drop the kept buffers (before a retry with fewer rows after running out of memory)."""
        self._buffers.clear()

    def project(self, hidden: Tensor) -> Tensor:
        """The first block's Q/K/V projection ``hidden W_qkv + b_qkv``: float ``[..., 3 d_model]`` from ``[..., d_model]``.

        A fresh tensor; what :func:`interp.engine.reuse.base_attention` starts from.
        """
        layer = self.layers[0]
        return torch.addmm(layer.b_qkv, hidden.reshape(-1, hidden.shape[-1]), layer.w_qkv).view(*hidden.shape[:-1], -1)

    @staticmethod
    def _norm(norm: nn.LayerNorm, x: Tensor) -> Tensor:
        # a fresh output: LayerNorm's out= variant computes one and copies it, which costs more
        return F.layer_norm(x, norm.normalized_shape, norm.weight, norm.bias, norm.eps)

    def _rest(self, layer: _Layer, context: Tensor, x: Tensor, tag: str) -> Tensor:
        """The block after attention: its output ``[n, d]``, a fresh tensor, from the context and the input ``[n, d]``.

        Buffers are named with ``tag``.
        """
        n, d = x.shape
        acc = torch.add(x, layer.b_o, out=self._buffer(tag + "acc", (n, d), x)).addmm_(context, layer.w_o)
        a = self._norm(layer.norm_1, acc)
        h = torch.addmm(layer.b_1, a, layer.w_1, out=self._buffer(tag + "ff", (n, layer.w_1.shape[1]), x))
        h = self.gelu_(h) if self.gelu_ is not None else layer.act(h)
        acc = torch.add(a, layer.b_2, out=acc).addmm_(h, layer.w_2)
        return self._norm(layer.norm_2, acc)

    @staticmethod
    def _attend(layer: _Layer, q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        """Softmax attention over ``[rows, heads, seq, d_head]`` keys and values; the context as ``[rows * q_len, d]``."""
        context = F.scaled_dot_product_attention(q, k, v, scale=layer.scaling)  # [rows, heads, q_len, d_head]
        return context.transpose(1, 2).reshape(-1, layer.w_o.shape[0])

    @staticmethod
    def _first_token_attention(layer: _Layer, q: Tensor, x: Tensor) -> Tensor:
        """The first token's attention context ``[rows, d]`` from its query ``[rows, heads, d_head]`` and the block's input ``[rows, seq, d]``.

        Keys and values are never formed. Per head, ``q·(x_j W_k + b_k) =
        x_j·(W_k q) + q·b_k``, and the last term is the same for every key, so
        softmax drops it; and since the weights sum to one, ``Σ_j a_j (x_j W_v
        + b_v) = (Σ_j a_j x_j) W_v + b_v``. That is ``2 d² + 2 seq × heads × d``
        multiply-adds a row instead of the ``2 seq × d²`` of the keys and values.
        """
        rows, seq, d = x.shape
        heads, d_head = q.shape[1:]
        w_k = layer.w_qkv[:, d : 2 * d].view(d, heads, d_head)
        w_v = layer.w_qkv[:, 2 * d :].view(d, heads, d_head)
        folded = torch.einsum("dhe,rhe->rdh", w_k, q)  # [rows, d, heads]: each head's query through W_k
        weights = torch.softmax(torch.bmm(x, folded).mul_(layer.scaling), dim=1)  # [rows, seq, heads], over the keys
        mixed = torch.bmm(weights.transpose(1, 2), x)  # [rows, heads, d]: each head's weighted input
        context = torch.einsum("rhd,dhe->rhe", mixed, w_v).add_(layer.b_qkv[2 * d :].view(heads, d_head))
        return context.reshape(rows, d)

    @staticmethod
    def _split(layer: _Layer, projected: Tensor, rows: int, parts: int) -> tuple[Tensor, ...]:
        """``[rows * seq, parts * d]`` as ``parts`` views ``[rows, heads, seq, d_head]``."""
        d_head = projected.shape[-1] // parts // layer.heads
        return projected.view(rows, -1, parts, layer.heads, d_head).permute(2, 0, 3, 1, 4).unbind(0)

    @torch.no_grad()
    def __call__(self, hidden: Tensor, context: Tensor | None = None) -> Tensor:
        """The blocks' output, float ``[rows, seq, d_model]`` (``[rows, 1, d_model]`` with ``first_token_last``).

        Args:
            hidden: float ``[rows, seq, d_model]``, unpadded rows.
            context: optional float ``[rows, seq, d_model]``, the first
                block's attention context (heads concatenated, before the
                output projection), used instead of computing it; see
                :func:`interp.engine.reuse.interchange_context`.
        """
        rows, seq, d = hidden.shape
        tokens = rows * seq
        x = hidden.reshape(tokens, d)
        for index, layer in enumerate(self.layers):
            given = context if index == 0 else None
            if index == len(self.layers) - 1 and self.first_token_last:  # the first token only
                first = x.view(rows, seq, d)[:, 0]
                if given is not None:
                    attended = given[:, 0]
                else:
                    q = torch.addmm(layer.b_qkv[:d], first, layer.w_qkv[:, :d]).view(rows, layer.heads, -1)
                    attended = self._first_token_attention(layer, q, x.view(rows, seq, d))
                return self._rest(layer, attended, first, "first.").view(rows, 1, d)
            if given is not None:
                attended = given.reshape(tokens, d)
            else:
                qkv = torch.addmm(layer.b_qkv, x, layer.w_qkv, out=self._buffer("qkv", (tokens, 3 * d), x))
                attended = self._attend(layer, *self._split(layer, qkv, rows, 3))
            x = self._rest(layer, attended, x, "")
        return x.view(rows, seq, d)
