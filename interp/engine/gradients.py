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

from typing import Callable, Sequence

import torch
from torch import Tensor

from interp.engine.batched import _chunks, _inputs, length_groups
from interp.hooks import hooked
from interp.hooks.architecture import model_inputs
from interp.hooks.encoding import Encoded, location_tokens
from interp.hooks.locations import Location
from interp.models.freezing import frozen_weights


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

    def gradients(self, logits: Tensor, locations: Sequence[Location]) -> dict[Location, tuple[Tensor, Tensor]]:
        """Each location's vectors, float32 ``[rows, width]``, and every label's gradient, float32 ``[rows, labels, width]``
        (CPU), from the ``logits`` (``[rows, labels]``) of the pass the probes were added in: one backward pass per label."""
        deltas = [self.deltas[loc] for loc in locations]
        n_labels = logits.shape[-1]
        grads = [torch.autograd.grad(logits[:, j].sum(), deltas, retain_graph=j < n_labels - 1) for j in range(n_labels)]
        return {loc: (self.read[loc].float().cpu(), torch.stack([g[k] for g in grads], 1).float().cpu()) for k, loc in enumerate(locations)}


def site_gradients(model, encoded: Sequence[Encoded], locations: Sequence[Location], batch_size: int = 64) -> dict[Location, tuple[Tensor, Tensor]]:
    """Each location's activations, float32 ``[n, width]``, and the gradient of every label's logit with respect to
    them, float32 ``[n, labels, width]``, both on CPU (``width``: tokens × d_model, × d_head at one head's ``attn.hook_z``).

    Raises:
        ConfigError: an example lacks a role of a location, or token counts differ (:func:`location_tokens`); a
            location out of range for the model (:func:`~interp.hooks.site_module`).
    """
    device = next(model.parameters()).device
    roles = list(dict.fromkeys(r for loc in locations for r in loc.roles))
    out = empty_gradients(encoded, locations, model.config)
    with frozen_weights(model), torch.enable_grad():
        for group in length_groups(encoded):
            for chunk in _chunks(group, batch_size):
                ids, types = _inputs(encoded, chunk, device)
                positions = {r: torch.tensor([encoded[i].tokens(r) for i in chunk], dtype=torch.long) for r in roles}
                probes = Probes()
                with hooked(model, positions, write={loc: probes.at(loc) for loc in locations}):
                    logits = model(**model_inputs(model, ids, types)).logits
                fill(out, torch.tensor(chunk), probes.gradients(logits, locations))
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
