"""The reference: one hooked forward pass per example or per (base, source) pair, nothing shared.

This is the interchange intervention as its definition reads (Geiger,
Richardson & Potts 2020, §6.2): run the source, read its vector at the
location; run the base with that vector written in. It is what the batched
engine (:mod:`interp.engine.batched`) is tested against, the runner
:class:`~interp.backends.naive.NaiveRunner` (``interchange(..., naive=True)``), and the
baseline of ``benchmarks/``.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch import Tensor

from interp.hooks import hooked
from interp.hooks.architecture import batch_inputs, model_inputs
from interp.hooks.encoding import Encoded, collate
from interp.hooks.locations import Location

#: The one role of a location rebuilt on each row's intervened tokens.
AT = "at"


def naive_forward(model, example: Encoded, pad_token_id: int = 0, extra_positions: dict | None = None, **hooks) -> tuple[Tensor, dict]:
    """One batch-1 forward pass of ``example`` under :func:`~interp.hooks.hooked` (``read=``, ``write=``): its logits,
    float32 ``[labels]`` on CPU, and the trace of what was read. ``extra_positions``: further roles' token indices
    (``{role: int64 [1, tokens]}``, e.g. every token)."""
    device = next(model.parameters()).device
    batch = collate([example], pad_token_id)
    with hooked(model, {**batch["positions"], **(extra_positions or {})}, **hooks) as trace:
        logits = model(**batch_inputs(model, batch, device)).logits
    return logits[0].float().cpu(), trace


def hooked_rows(model, location: Location) -> Callable[[Tensor, Tensor, Tensor, Callable[[Tensor], Tensor]], Tensor]:
    """``run(input_ids, token_type_ids, where, write)``: one forward pass of unpadded rows with the vectors at
    ``location``'s tokens (``where``, int64 ``[rows, tokens]``) replaced by ``write(old)``; the logits ``[rows, labels]``
    (:data:`interp.engine.hooked_pairs.RunRows`)."""
    site = Location(location.hidden_index, AT, location.component, location.head)

    def run(ids: Tensor, types: Tensor, where: Tensor, write: Callable[[Tensor], Tensor]) -> Tensor:
        with hooked(model, {AT: where}, write={site: write}):
            return model(**model_inputs(model, ids, types)).logits

    return run


@torch.no_grad()
def naive_vector(model, example: Encoded, location: Location, pad_token_id: int = 0) -> Tensor:
    """The vector at ``location`` on one example, batch-1 forward: float32 ``[tokens × width]``."""
    _, trace = naive_forward(model, example, pad_token_id, read=[location])
    return trace[location][0].float()


@torch.no_grad()
def naive_interchange_vectors(model, bases: Sequence[Encoded], vectors: Tensor, location: Location, pad_token_id: int = 0,
                              on_rows: Callable[[int], None] | None = None) -> Tensor:  # fmt: skip
    """Logits float32 ``[len(bases), n_sources, labels]``: one batch-1 hooked base pass per pair, writing ``vectors[j]``
    (float ``[n_sources, tokens × width]``) at ``location``."""
    out = torch.empty(len(bases), len(vectors), model.config.num_labels)
    for i, base in enumerate(bases):
        for j, vector in enumerate(vectors):
            out[i, j], _ = naive_forward(model, base, pad_token_id, write={location: vector[None]})
        if on_rows is not None:
            on_rows(len(vectors))
    return out


@torch.no_grad()
def naive_interchange(model, bases: Sequence[Encoded], sources: Sequence[Encoded], location: Location, pad_token_id: int = 0) -> Tensor:
    """Logits float32 ``[len(bases), len(sources), n_labels]``, one batch-1 hooked base pass per pair.

    Source vectors are computed once each (batch 1), as in the baseline the
    issue tracker describes.
    """
    vectors = torch.stack([naive_vector(model, s, location, pad_token_id) for s in sources]) if sources else torch.empty(0, 0)
    return naive_interchange_vectors(model, bases, vectors, location, pad_token_id)


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
            out[i, j], _ = naive_forward(model, base, pad_token_id, write={location: new})
    return out
