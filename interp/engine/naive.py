"""The reference: one hooked forward pass per (base, source) pair, nothing shared.

This is the interchange intervention as its definition reads (Geiger,
Richardson & Potts 2020, §6.2): run the source, read its vector at the
location; run the base with that vector written in. It is what the batched
engine (:mod:`interp.engine.batched`) is tested against, and the
baseline of ``benchmarks/``.
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import Tensor

from interp.hooks import hooked
from interp.hooks.architecture import batch_inputs
from interp.hooks.locations import Location
from interp.hooks.encoding import Encoded, collate


def _forward(model, example: Encoded, pad_token_id: int, **hooks) -> tuple[Tensor, dict]:
    device = next(model.parameters()).device
    batch = collate([example], pad_token_id)
    inputs = batch_inputs(model, batch, device)
    with hooked(model, batch["positions"], **hooks) as trace:
        logits = model(**inputs).logits
    return logits[0].float().cpu(), trace


@torch.no_grad()
def naive_vector(model, example: Encoded, location: Location, pad_token_id: int = 0) -> Tensor:
    """The vector at ``location`` on one example, batch-1 forward: float32 ``[d_model]``."""
    _, trace = _forward(model, example, pad_token_id, read=[location])
    return trace[location][0].float()


@torch.no_grad()
def naive_interchange(
    model, bases: Sequence[Encoded], sources: Sequence[Encoded], location: Location, pad_token_id: int = 0
) -> Tensor:
    """Logits float32 ``[len(bases), len(sources), n_labels]``, one batch-1 hooked base pass per pair.

    Source vectors are computed once each (batch 1), as in the baseline the
    issue tracker describes.
    """
    vectors = [naive_vector(model, s, location, pad_token_id) for s in sources]
    out = torch.empty(len(bases), len(sources), model.config.num_labels)
    for i, base in enumerate(bases):
        for j, vector in enumerate(vectors):
            out[i, j], _ = _forward(model, base, pad_token_id, write={location: vector[None]})
    return out


@torch.no_grad()
def naive_intervene(
    model, bases: Sequence[Encoded], sources: Sequence[Encoded], location: Location, intervention, pad_token_id: int = 0
) -> Tensor:
    """Logits float32 ``[len(bases), len(sources), n_labels]`` with ``intervention(base vector, source vector)`` written at ``location``.

    The reference for any intervention module (:mod:`interp.engine.interventions`):
    every vector from its own batch-1 pass, one hooked base pass per pair.
    With :class:`~interp.engine.interventions.Interchange` it is :func:`naive_interchange`.
    """
    base_vectors = [naive_vector(model, b, location, pad_token_id) for b in bases]
    source_vectors = [naive_vector(model, s, location, pad_token_id) for s in sources]
    out = torch.empty(len(bases), len(sources), model.config.num_labels)
    for i, (base, vector) in enumerate(zip(bases, base_vectors)):
        for j, source in enumerate(source_vectors):
            new = intervention(vector[None].to(source.dtype), source[None])
            out[i, j], _ = _forward(model, base, pad_token_id, write={location: new})
    return out
