"""BERT blocks for the suffix's hot loop: fused projections and reused buffers, on unpadded rows.

The engine runs the same blocks on thousands of equally shaped batches
(rows × tokens). Through the model's own modules each block allocates
fresh outputs for every projection, the feed-forward's hidden layer
(tokens × d_ff, tens of MB) among them, and on a CPU the first touch of
those pages, the bias copy into them and the out-of-place GELU cost about
as much as the matmuls. :class:`FastBlocks` computes the same function
(Devlin et al. 2019, §3; Hugging Face's ``BertLayer``, eval mode):

    q, k, v  = x W_qkv + b_qkv                 (one matmul, W_qkv = [W_q; W_k; W_v])
    a        = LayerNorm_1(softmax(q kᵀ / sqrt(d_head)) v W_o + b_o + x)
    out      = LayerNorm_2(act(a W_1 + b_1) W_2 + b_2 + a)

with the block's own weights and LayerNorm modules, the projections written
into buffers that are kept between calls of the same shape, and GELU applied
in place. No attention mask is used: every row is unpadded. Results match
the model's own forward pass to float rounding (the tests compare them).

:func:`supports` says whether a model's blocks have this layout (BERT,
RoBERTa and their kin); otherwise the engine uses the model's own modules.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

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
    return True


class FastBlocks:
    """Blocks ``start .. stop - 1`` of a BERT-family model as one function of ``[rows, seq, d_model]``.

    Args:
        model: a model for which :func:`supports` is true; its weights are
            read (fused Q/K/V concatenated once), not copied otherwise.
        start, stop: the block range, counted as ``model.base_model.encoder.layer``.

    The buffers of the last shape seen are kept inside the instance, so
    use one instance per thread; what :meth:`__call__` returns is a fresh
    tensor, never a buffer.
    """

    def __init__(self, model, start: int, stop: int) -> None:
        blocks = model.base_model.encoder.layer[start:stop]
        # exact (erf) GELU, in place when this torch has the op; any other activation through the block's own
        self.gelu_ = getattr(torch._C._nn, "gelu_", None) if getattr(model.config, "hidden_act", None) == "gelu" else None
        self.layers = []
        for block in blocks:
            sa = block.attention.self
            weight = torch.cat([sa.query.weight, sa.key.weight, sa.value.weight]).detach()
            bias = torch.cat([sa.query.bias, sa.key.bias, sa.value.bias]).detach()
            self.layers.append((block, weight.t(), bias, sa.attention_head_size, sa.scaling))
        self._buffers: dict[str, Tensor] = {}

    def _buffer(self, name: str, shape: tuple[int, ...], like: Tensor) -> Tensor:
        buffer = self._buffers.get(name)
        if buffer is None or buffer.shape != shape or buffer.dtype != like.dtype or buffer.device != like.device:
            buffer = self._buffers[name] = torch.empty(shape, dtype=like.dtype, device=like.device)
        return buffer

    def clear(self) -> None:
        """Drop the kept buffers (before a retry with fewer rows after running out of memory)."""
        self._buffers.clear()

    @torch.no_grad()
    def __call__(self, hidden: Tensor) -> Tensor:
        """The blocks' output: float ``[rows, seq, d_model]`` from ``hidden`` of the same shape (unpadded rows)."""
        rows, seq, d = hidden.shape
        tokens = rows * seq
        x = hidden.reshape(tokens, d)
        for block, w_qkv, b_qkv, head, scaling in self.layers:
            qkv = torch.addmm(b_qkv, x, w_qkv, out=self._buffer("qkv", (tokens, 3 * d), x))
            q, k, v = qkv.view(rows, seq, 3, -1, head).permute(2, 0, 3, 1, 4).unbind(0)
            context = F.scaled_dot_product_attention(q, k, v, scale=scaling)
            context = context.transpose(1, 2).reshape(tokens, d)
            out = block.attention.output
            a = torch.addmm(out.dense.bias, context, out.dense.weight.t(), out=self._buffer("attn", (tokens, d), x))
            a = out.LayerNorm(a.add_(x))
            inner = block.intermediate
            h = torch.addmm(inner.dense.bias, a, inner.dense.weight.t(), out=self._buffer("ff", (tokens, inner.dense.out_features), x))
            h = self.gelu_(h) if self.gelu_ is not None else inner.intermediate_act_fn(h)
            out = block.output
            y = torch.addmm(out.dense.bias, h, out.dense.weight.t(), out=self._buffer("out", (tokens, d), x))
            x = out.LayerNorm(y.add_(a))
        return x.view(rows, seq, d)
