"""Interchange at a component inside a block: the rest of that block at the intervened tokens only.

A component site of block l (:mod:`interp.hooks.locations`: a head's or all
heads' ``attn.hook_z``, ``hook_attn_out``, ``hook_resid_mid``,
``hook_mlp_out``) lies after block l's attention has mixed the tokens. Every
step after it in the block (output projection, residual, LayerNorm,
feed-forward, residual, LayerNorm; Devlin et al. 2019, §3, and their pre-LN
order in ModernBERT) acts on each
token alone. So replacing the component's vector at tokens P changes block
l's output at P and nowhere else, and an interchange intervention there is
a residual-stream interchange at ``hidden_states[l + 1]`` whose vectors at
P are::

    z'   = the base's z at P with the source's head H (or every head)
    r'   = z' W_O + b_O + x         (from ``attn.hook_z``)
         = attn_out' + x            (from ``hook_attn_out``)
         = resid_mid'               (from ``hook_resid_mid``)
    out' = LayerNorm_2(a' + mlp(a')), a' = LayerNorm_1(r')     (post-LN: BERT, DistilBERT, DeBERTa-v2)
         = r' + mlp(LayerNorm(r'))                             (pre-LN: ModernBERT)
    out' = LayerNorm_2(a + mlp_out')  or  r + mlp_out'         (from ``hook_mlp_out``)

with x, z, r and a the base's own block input, attention context,
``resid_mid`` and first LayerNorm output at P (each family's modules:
:mod:`interp.hooks.architecture`). :class:`BlockRest` computes ``out'`` with the
block's own modules for a batch of (base, source) pairs, from each base's
share (read once per base) and the source's component vector; the batched
engine (:mod:`interp.engine.batched`) then runs the suffix from
``hidden_states[l + 1]`` as for a residual location. The tests compare it
with one hooked forward pass per pair (:mod:`interp.engine.naive`).
"""

from __future__ import annotations

import torch
from jaxtyping import Float, Int
from torch import Tensor

from interp.core.errors import ConfigError
from interp.engine.slicing import run_prefix
from interp.hooks import feature_slice, hooked, site_module
from interp.hooks.architecture import architecture
from interp.hooks.locations import ATTN_OUT, MLP_OUT, RESID_MID, Z, Location

_AT = "at"  # the one role of the locations read here: the intervened tokens


class BlockRest:
    """Block ``location.layer`` from a replaced component vector to its output, at the intervened tokens.

    Args:
        model: a classifier of a family :mod:`interp.hooks.architecture` covers.
        location: a component location (not the residual stream).

    Raises:
        ConfigError (a ValueError): ``location`` is a residual-stream location.
        ConfigError: the model lacks the site, or the head is out of range (:func:`~interp.hooks.site_module`).
    """

    def __init__(self, model, location: Location) -> None:
        if location.is_residual:
            raise ConfigError(f"location {location} is in the residual stream, not a component")
        site_module(model, location)
        self.model, self.location = model, location
        self.arch = architecture(model)
        self.block = self.arch.block_list(model)[location.layer]
        projection = site_module(model, Location(location.hidden_index, _AT, Z))[0]  # the heads' context into the stream
        self.z_to_attn_out = (lambda z: self.arch.z_to_attn_out(self.block, z)) if self.arch.z_to_attn_out else projection
        self.features = feature_slice(model, location)
        self._reads = {
            "x": Location(location.layer, _AT),
            "z": Location(location.hidden_index, _AT, Z),
            "resid_mid": Location(location.hidden_index, _AT, RESID_MID),
        }
        self._site = Location(location.hidden_index, _AT, location.component, location.head)

    def prefix(
        self, input_ids: Int[Tensor, "batch seq"], token_type_ids: Int[Tensor, "batch seq"], where: Int[Tensor, "batch tokens"]
    ) -> tuple[Float[Tensor, "batch seq d_model"], dict[str, Tensor]]:
        """Each base's block output (``hidden_states[l + 1]``) and its share at the tokens ``where``.

        Returns:
            the block output, float ``[batch, seq, d_model]``; and the base's
            ``x`` (block input), ``z`` (all heads' context) and ``resid_mid``
            (block input plus attention output), each float ``[batch, tokens, d_model]``.
        """
        hidden, parts, _ = self.prefix_and_site(input_ids, token_type_ids, where)
        return hidden, parts

    def prefix_and_site(
        self, input_ids: Int[Tensor, "batch seq"], token_type_ids: Int[Tensor, "batch seq"], where: Int[Tensor, "batch tokens"]
    ) -> tuple[Float[Tensor, "batch seq d_model"], dict[str, Tensor], Float[Tensor, "batch tokens width"]]:
        """:meth:`prefix`, and the component's own vectors at the tokens ``where`` (``width`` d_head for one head, else
        the site's), read in the same pass: what an intervention at the site replaces."""
        reads = [*self._reads.values(), self._site]
        with hooked(self.model, {_AT: where.cpu()}, read=list(dict.fromkeys(reads))) as trace:
            hidden = run_prefix(self.model, input_ids, token_type_ids, self.location.hidden_index)
        batch, tokens = where.shape
        return hidden, {name: trace[loc].view(batch, tokens, -1) for name, loc in self._reads.items()}, trace[self._site].view(batch, tokens, -1)

    def __call__(self, parts: dict[str, Tensor], new: Float[Tensor, "rows tokens width"]) -> Float[Tensor, "rows tokens d_model"]:
        """Block l's output at the intervened tokens with ``new`` at the component (one row per pair).

        Args:
            parts: the bases' shares (:meth:`prefix`), each row the pair's base.
            new: float ``[rows, tokens, width]``, the source's vectors (``width`` d_head for one head, else d_model).
        """
        component, block = self.location.component, self.block
        if component == MLP_OUT:
            return self.arch.finish_mlp(block, parts["resid_mid"], new)
        if component == Z:
            z = parts["z"].clone()
            z[..., self.features] = new
            resid_mid = self.z_to_attn_out(z) + parts["x"]
        elif component == ATTN_OUT:
            resid_mid = new + parts["x"]
        else:
            resid_mid = new
        return self.arch.finish(block, resid_mid)


@torch.no_grad()
def gather(parts: dict[str, Tensor], rows: Tensor) -> dict[str, Tensor]:
    """The shares of the bases ``rows`` (int64 ``[n]``), one per pair."""
    return {name: value.index_select(0, rows) for name, value in parts.items()}
