"""Activation gradients: every label's logit differentiated with respect to the vectors at many locations at once.

Usage::

    found = site_gradients(model, encoded, locations)     # {location: (activations, gradients)}
    activations, gradients = found[loc]                   # float32 [n, width], [n, labels, width]

What attribution patching needs (Nanda 2023; Syed, Rager & Conmy 2023): at each location, the gradient of each
label's logit with respect to the site's vectors at the location's tokens, every path from the site to the output
included. A zero tensor ``δ`` that requires a gradient is added to the site's vectors there (a write through a
function, :func:`interp.hooks.hooked`), so ``∂ logit / ∂ δ`` is the gradient at the site; no path is cut, so one
forward pass serves every location, and one backward pass per label serves every location and row. Rows run in
unpadded batches of one length and do not interact (eval mode), so each row's gradient is its own. The weights get
no gradient (:func:`~interp.models.freezing.frozen_weights`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import torch
from jaxtyping import Float
from torch import Tensor

from interp.core.errors import ConfigError
from interp.engine.batched import _inputs
from interp.engine.rows import grouped_passes
from interp.hooks import hooked
from interp.hooks.architecture import architecture, model_inputs
from interp.hooks.encoding import Encoded, location_tokens
from interp.hooks.locations import Location
from interp.models.freezing import frozen_weights


@dataclass
class SiteGradients:
    """The activations at one location and the gradient of every label's logit with respect to them.

    Attributes:
        activations: float32 ``[n, width]`` (CPU).
        gradients: float32 ``[n, labels, width]`` (CPU): ``∂ logit_j / ∂ activation`` at the location's tokens, every
            path from the site to the output included.
        qk_gradients: with the QK fix, at a residual site that feeds a block's attention: the part of ``gradients``
            that runs through that block's attention probabilities, float32 ``[n, labels, width]``; else ``None``.
        qk_term: with it, ``∂logits/∂A · (A with the source patched − A)`` for every base and source, float32 ``[n, n,
            labels]`` in the logits' units (:func:`~interp.engine.atp_star.qk_terms`); else ``None``.
        dropped: with GradDrop, each later layer's gradients with that layer's path dropped, layer -> float32
            ``[n, labels, width]``, of each label's logit minus the first label's (label 0's row is zero;
            :class:`~interp.engine.atp_star.GradDrop`); else empty.
    """

    activations: Float[Tensor, "n width"]
    gradients: Float[Tensor, "n labels width"]
    qk_gradients: Tensor | None = None
    qk_term: Tensor | None = None
    dropped: dict[int, Tensor] = field(default_factory=dict)


class Probes:
    """Zero tensors that require a gradient, each added to a site's vectors in one forward pass (:meth:`at`, a write
    through a function), then every label's gradient with respect to them (:meth:`gradients`)."""

    def __init__(self) -> None:
        self.read: dict[Location, Tensor] = {}
        self.deltas: dict[Location, Tensor] = {}

    def at(self, location: Location) -> Callable[[Tensor], Tensor]:
        """The write at ``location``: its vectors (``[rows, width]``) kept, and returned plus a zero that requires a gradient."""

        def add(old: Tensor) -> Tensor:
            self.read[location] = old.detach()
            self.deltas[location] = torch.zeros_like(old, requires_grad=True)
            return old + self.deltas[location]

        return add

    def gradients(self, logits: Tensor, locations: Sequence[Location], attention: dict[int, Tensor] | None = None,
                  qk: dict[Location, int] | None = None) -> dict[Location, tuple[Tensor, ...]]:  # fmt: skip
        """Each location's vectors, float32 ``[rows, width]``, and every label's gradient, float32 ``[rows, labels, width]``
        (CPU), from the ``logits`` (``[rows, labels]``) of the pass the probes were added in: one backward pass per label.

        With ``attention`` (layer -> its probabilities in this pass, :func:`~interp.engine.atp_star.attention_weights`)
        and ``qk`` (location -> the layer whose attention it feeds) each such location's tuple also holds the part of
        its gradient through that attention (``[rows, labels, width]``) and, per layer, ``∂ logit / ∂ A`` (float32
        ``[rows, labels, heads, seq, seq]``) as ``attention_grads`` (:attr:`attention_grads`)."""
        deltas = [self.deltas[loc] for loc in locations]
        qk, attention = qk or {}, attention or {}
        layers = sorted(set(qk.values()))
        n_labels = logits.shape[-1]
        grads, through, self.attention_grads = [], {loc: [] for loc in qk}, {layer: [] for layer in layers}
        for j in range(n_labels):
            found = torch.autograd.grad(logits[:, j].sum(), deltas + [attention[layer] for layer in layers], retain_graph=True, allow_unused=True)
            grads.append(found[: len(deltas)])
            for layer, g in zip(layers, found[len(deltas) :]):
                self.attention_grads[layer].append(g.float().cpu())
                for loc in [loc for loc, at in qk.items() if at == layer]:
                    (part,) = torch.autograd.grad(attention[layer], self.deltas[loc], grad_outputs=g, retain_graph=True)
                    through[loc].append(part.float().cpu())
        out = {loc: (self.read[loc].float().cpu(), torch.stack([_zero_if_none(g[k], deltas[k]) for g in grads], 1).float().cpu())
               for k, loc in enumerate(locations)}  # fmt: skip
        for loc, parts in through.items():
            out[loc] = (*out[loc], torch.stack(parts, 1))
        self.attention_grads = {layer: torch.stack(g, 1) for layer, g in self.attention_grads.items()}
        return out

    def margin_gradients(self, logits: Tensor, locations: Sequence[Location]) -> dict[Location, Tensor]:
        """Each location's gradient of every label's logit minus the first label's, float32 ``[rows, labels, width]``
        (CPU; label 0's row zero): one backward pass per label but the first, the graph kept."""
        deltas = [self.deltas[loc] for loc in locations]
        grads = [torch.autograd.grad((logits[:, j] - logits[:, 0]).sum(), deltas, retain_graph=True, allow_unused=True) for j in range(1, logits.shape[-1])]
        return {loc: torch.stack([torch.zeros_like(deltas[k]), *(_zero_if_none(g[k], deltas[k]) for g in grads)], 1).float().cpu()
                for k, loc in enumerate(locations)}  # fmt: skip


def _zero_if_none(gradient: Tensor | None, like: Tensor) -> Tensor:
    """A site no path reaches the logits from (a dropped layer's own site) has gradient zero."""
    return torch.zeros_like(like) if gradient is None else gradient


def site_gradients(model, encoded: Sequence[Encoded], locations: Sequence[Location], batch_size: int = 64, *, qk_fix: bool = False,
                   graddrop: bool = False, on_rows: Callable[[int], None] | None = None) -> dict[Location, SiteGradients]:  # fmt: skip
    """Each location's activations, float32 ``[n, width]``, and the gradient of every label's logit with respect to
    them, float32 ``[n, labels, width]``, both on CPU (``width``: tokens × d_model, × d_head at one head's ``attn.hook_z``).

    ``qk_fix``: at each residual location that feeds a block's attention, the part of the gradient through that
    attention's probabilities and the exact change of those probabilities per pair (:mod:`interp.engine.atp_star`).
    ``graddrop``: for every layer at or after a location's block, its gradients with that layer's path dropped (of
    each label's logit minus the first label's). ``on_rows(k)``: told after each batch of ``k`` examples (a progress bar).

    Raises:
        ConfigError: an example lacks a role of a location, or token counts differ (:func:`location_tokens`); a
            location out of range for the model (:func:`~interp.hooks.site_module`); with ``qk_fix``, a family whose
            attention returns no probabilities.
    """
    from interp.engine.atp_star import GradDrop, attention_weights, block_inputs, qk_terms

    device = next(model.parameters()).device
    roles = list(dict.fromkeys(r for loc in locations for r in loc.roles))
    blocks = len(architecture(model).block_list(model))
    qk = {loc: loc.hidden_index for loc in locations if qk_fix and loc.is_residual and loc.hidden_index < blocks}
    layers = sorted(set(qk.values()))
    out = {loc: SiteGradients(*pair) for loc, pair in empty_gradients(encoded, locations, model.config).items()}
    hidden, probabilities, attention_grads = ({layer: [None] * len(encoded) for layer in layers} for _ in range(3))
    drops = {layer: [loc for loc in locations if loc.hidden_index <= layer] for layer in range(blocks)} if graddrop else {}
    drops = {layer: at for layer, at in drops.items() if at}
    for loc in qk:
        out[loc].qk_gradients = torch.empty_like(out[loc].gradients)
    for layer, at in drops.items():
        for loc in at:
            out[loc].dropped[layer] = torch.empty_like(out[loc].gradients)
    with frozen_weights(model), torch.enable_grad():
        def run(chunk: list[int]) -> None:
            ids, types = _inputs(encoded, chunk, device)
            positions = {r: torch.tensor([encoded[i].tokens(r) for i in chunk], dtype=torch.long) for r in roles}
            rows = torch.tensor(chunk)
            probes = Probes()
            with hooked(model, positions, write={loc: probes.at(loc) for loc in locations}), attention_weights(model, layers) as attention, \
                    block_inputs(model, layers) as inputs, GradDrop(model, list(drops)) as dropping:  # fmt: skip
                logits = model(**model_inputs(model, ids, types)).logits
            if any(layer not in attention for layer in layers):
                raise ConfigError(f"the QK fix needs attention probabilities, which {type(model).__name__}'s attention does not return; "
                                  "screen without it (qk_fix=False)")  # fmt: skip
            found = probes.gradients(logits, locations, attention, qk)
            for loc, parts in found.items():
                out[loc].activations[rows], out[loc].gradients[rows] = parts[0], parts[1]
                if loc in qk:
                    out[loc].qk_gradients[rows] = parts[2]
            for layer in layers:
                for r, i in enumerate(chunk):
                    hidden[layer][i] = inputs[layer][r].cpu()
                    probabilities[layer][i] = attention[layer][r].detach().float().cpu()
                    attention_grads[layer][i] = probes.attention_grads[layer][r]
            for layer, at in drops.items():
                dropping.layer = layer
                for loc, gradients in probes.margin_gradients(logits, at).items():
                    out[loc].dropped[layer][rows] = gradients
                dropping.layer = None

        grouped_passes(encoded, batch_size, run, device=device, on_rows=on_rows)  # a pass out of memory is halved
    for loc, layer in qk.items():
        out[loc].qk_term = qk_terms(model, encoded, loc, out[loc].activations, hidden[layer], probabilities[layer], attention_grads[layer])
    return out


def empty_gradients(encoded: Sequence[Encoded], locations: Sequence[Location], config) -> dict[Location, tuple[Tensor, Tensor]]:
    """Each location's (activations ``[n, width]``, gradients ``[n, labels, width]``), to be filled (:func:`fill`).

    Raises:
        ConfigError: an example lacks a role of a location, or token counts differ (:func:`location_tokens`).
    """
    out = {}
    for loc in locations:
        tokens = location_tokens(encoded, loc.roles, f"location {loc}")
        width = len(tokens[0]) * loc.token_width(config) if tokens else 0
        out[loc] = (torch.empty(len(encoded), width), torch.empty(len(encoded), config.num_labels, width))
    return out


def fill(out: dict[Location, tuple[Tensor, Tensor]], rows: Tensor, found: dict[Location, tuple[Tensor, Tensor]]) -> None:
    """Write one batch's ``found`` (:meth:`Probes.gradients`: float32 ``[rows, width]`` and ``[rows, labels, width]``
    per location) at ``rows`` (int64 ``[rows]``) of ``out`` (:func:`empty_gradients`)."""
    for loc, (activations, gradients) in found.items():
        out[loc][0][rows], out[loc][1][rows] = activations, gradients
