"""AtP*'s two refinements of attribution patching: the QK fix and GradDrop (Kramár, Lieberum, Shah & Nanda 2024, §3.1-3.2).

The QK fix. A residual site feeds the attention of the block after it through its queries and keys. Where that
softmax saturates, its gradient is near zero although a patch can move the attention from one token to another, so
the first-order estimate misses the effect. The fix recomputes that block's attention probabilities exactly for every
(base, source) pair and linearises only downstream of them:

    logits(b) + (J_ℓ(b) − J^QK_ℓ(b)) · (a_ℓ(s) − a_ℓ(b)) + ∂logits/∂A_L(b) · (A_L(b with s patched) − A_L(b))

with ``J^QK_ℓ`` the part of the gradient that runs through block L's attention probabilities ``A_L`` (a
vector-Jacobian product from ``∂logits/∂A_L``), from the same forward pass as the gradient. Here:

* :func:`attention_weights` records the probabilities each block's attention computes (the model switched to its
  eager attention within the block, which returns them; restored after);
* :func:`qk_terms` runs, per pair, block L alone on the base's block input with the source's vectors written at the
  location's tokens (:meth:`~interp.hooks.architecture.Architecture.from_block`, stopped after the attention):
  a block's attention per pair, not the model's suffix.

GradDrop. A site whose effect runs along several paths that cancel at first order gets an estimate near zero. GradDrop
recomputes the gradient with one later layer's gradient path dropped at a time (:class:`GradDrop`: the outputs of the
layer's attention and MLP keep their values and pass no gradient; the residual path stays), so a cancelling site shows
a large estimate with some layer dropped. One forward pass serves every layer dropped, each one backward pass per
label but the first (of each label's logit minus the first label's: what decides the label).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

import torch
from torch import Tensor

from interp.core.errors import ConfigError
from interp.hooks.architecture import architecture, model_inputs
from interp.hooks.context import site_module
from interp.hooks.encoding import Encoded, location_tokens
from interp.hooks.locations import ATTN_OUT, MLP_OUT, Location


class _Stop(Exception):
    """Raised by a hook once what a pass was run for is recorded: nothing after it runs."""


def _pretrained(model) -> torch.nn.Module:
    """The outermost module of ``model`` that can switch its attention implementation (a wrapper's inner model)."""
    for module in model.modules():
        if hasattr(module, "set_attn_implementation") and hasattr(module, "config"):
            return module
    raise ConfigError(f"the QK fix needs attention probabilities, and {type(model).__name__} has no attention implementation to switch")


@contextmanager
def attention_weights(model, layers: Sequence[int], stop_after: int | None = None) -> Iterator[dict[int, Tensor]]:
    """Within the block each forward pass records, for each of ``layers``, the attention probabilities its block
    computes, float ``[batch, heads, query, key]`` in the autograd graph, into the yielded dict (cleared by the caller
    between passes); ``stop_after``: the pass ends (:class:`_Stop`) once that layer's are recorded.

    The model runs its eager attention inside the block (the others do not return the probabilities), and a module
    that takes ``output_attentions`` by keyword is passed ``True``; the model's own implementation is restored in
    ``finally``.

    Raises:
        ConfigError: a family whose attention returns no probabilities (on the first pass that finds none).
    """
    found: dict[int, Tensor] = {}
    if not layers:
        yield found
        return
    inner = _pretrained(model)
    kept = inner.config._attn_implementation
    blocks = architecture(model).block_list(model)
    handles = []

    def record(layer: int):
        def hook(module, args, output):
            if layer not in found and isinstance(output, tuple) and len(output) > 1 and isinstance(output[1], Tensor) and output[1].dim() == 4:
                found[layer] = output[1]
                if layer == stop_after:
                    raise _Stop

        return hook

    def ask(module, args, kwargs):  # DeBERTa-v2's attention returns its probabilities only when asked by keyword
        return (args, {**kwargs, "output_attentions": True}) if "output_attentions" in kwargs else None

    try:
        inner.set_attn_implementation("eager")
        for layer in layers:
            inside = [m for m in blocks[layer].modules() if m is not blocks[layer]]
            handles += [m.register_forward_hook(record(layer)) for m in inside]
            handles += [m.register_forward_pre_hook(ask, with_kwargs=True) for m in inside]
        yield found
    finally:
        for handle in handles:
            handle.remove()
        inner.set_attn_implementation(kept)


@contextmanager
def block_inputs(model, layers: Sequence[int]) -> Iterator[dict[int, Tensor]]:
    """Within the block each forward pass records each of ``layers``' block input (``hidden_states[layer]``), detached,
    float ``[batch, seq, d_model]``, into the yielded dict."""
    found: dict[int, Tensor] = {}
    blocks = architecture(model).block_list(model)

    def record(layer: int):
        def hook(module, args):
            found[layer] = args[0].detach()

        return hook

    handles = [blocks[layer].register_forward_pre_hook(record(layer)) for layer in layers]
    try:
        yield found
    finally:
        for handle in handles:
            handle.remove()


class GradDrop:
    """Within its block every forward pass marks each block's attention and MLP outputs (``hook_attn_out``,
    ``hook_mlp_out``) so that a backward pass run while :attr:`layer` is set passes no gradient through that layer's
    two outputs: every path through the layer but the residual one is dropped (GradDrop). Values are untouched, and
    with :attr:`layer` ``None`` the gradient is the model's own, so one forward pass serves every layer dropped."""

    def __init__(self, model, layers: Sequence[int]) -> None:
        self.model, self.layers, self.layer = model, list(layers), None
        self.handles: list = []

    def __enter__(self) -> "GradDrop":
        for layer in self.layers:
            for component in (ATTN_OUT, MLP_OUT):
                module, _ = site_module(self.model, Location(layer + 1, ("x",), component))
                self.handles.append(module.register_forward_hook(self._mark(layer)))
        return self

    def _mark(self, layer: int):
        def drop(gradient: Tensor) -> Tensor | None:
            return torch.zeros_like(gradient) if self.layer == layer else None

        def hook(module, args, output):
            out = output[0] if isinstance(output, tuple) else output
            if out.requires_grad:
                out.register_hook(drop)

        return hook

    def __exit__(self, *exc) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles = []


def qk_terms(model, encoded: Sequence[Encoded], location: Location, activations: Tensor, hidden: list[Tensor],
             probabilities: list[Tensor], attention_grads: list[Tensor], batch_size: int = 256) -> Tensor:  # fmt: skip
    """``∂logits/∂A_L(b) · (A_L(b with s's vectors at the location) − A_L(b))`` for every base b and source s: float32
    ``[n, n, labels]`` (CPU), in the logits' units; L = ``location.hidden_index``, the block the residual site feeds.

    Args:
        activations: float32 ``[n, tokens × d_model]``, each example's vectors at ``location``.
        hidden: each example's block-L input, ``[seq, d_model]``; ``probabilities``: its ``A_L``, ``[heads, seq, seq]``;
            ``attention_grads``: ``∂ logit_j / ∂ A_L``, ``[labels, heads, seq, seq]`` (all from its gradient pass).
    """
    from interp.engine.batched import _chunks, _inputs, length_groups

    layer, arch = location.hidden_index, architecture(model)
    device = next(model.parameters()).device
    n = len(encoded)
    out = torch.empty(n, n, attention_grads[0].shape[0]) if n else torch.empty(0, 0, 0)
    tokens = location_tokens(encoded, location.roles, f"location {location}")
    with torch.no_grad(), attention_weights(model, [layer], stop_after=layer) as found:  # eager once, not per chunk
        for group in length_groups(encoded):
            pairs = [(b, s) for b in group for s in range(n)]
            for chunk in _chunks(pairs, batch_size):
                bases = [b for b, _ in chunk]
                rows = torch.stack([hidden[b] for b in bases]).to(device)
                for r, (b, s) in enumerate(chunk):
                    rows[r, list(tokens[b])] = activations[s].view(len(tokens[b]), -1).to(device, rows.dtype)
                ids, types = _inputs(encoded, bases, device)
                found.clear()
                with arch.from_block(model, layer, rows):
                    try:
                        model(**model_inputs(model, ids, types))
                    except _Stop:
                        pass
                if layer not in found:
                    raise ConfigError(f"location {location}: the QK fix needs block {layer}'s attention probabilities, which "
                                      f"{type(model).__name__}'s attention does not return; screen without it (qk_fix=False)")
                moved = found[layer].float().cpu() - torch.stack([probabilities[b] for b in bases])
                term = torch.einsum("rhqk,rlhqk->rl", moved, torch.stack([attention_grads[b] for b in bases]))
                out[torch.tensor(bases), torch.tensor([s for _, s in chunk])] = term
    return out


__all__ = ["GradDrop", "attention_weights", "block_inputs", "qk_terms"]
