"""Joint interchange interventions: several locations written in one forward pass, each from its own source.

Usage::

    from interp.engine.joint import joint_logits
    logits = joint_logits(model, encoded, base_rows, {loc_a: vectors_a, loc_b: vectors_b}, pad_token_id)   # [rows, labels]

Row r runs the base ``encoded[base_rows[r]]`` with the vector at each location replaced by that location's row r of
``writes`` (its own source's vector, read beforehand): the intervention a causal abstraction with several variables is
tested by, each variable set from its own source input in one run (Geiger et al. 2021, §3, "interchange interventions
on multiple variables"; pyvene's list of representations patched together, Wu et al. 2024). Rows are grouped by input
length, so no batch holds padding and every row is exact; the whole model runs for each row (no prefix is shared, as
it is for one location: two sites in different blocks have no common suffix). :func:`naive_joint_logits` is the
reference: one hooked batch-1 pass per row.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import torch
from jaxtyping import Float, Int
from torch import Tensor

from interp.engine.batched import length_groups
from interp.engine.naive import naive_forward
from interp.engine.rows import in_passes
from interp.hooks.architecture import batch_inputs
from interp.hooks.context import hooked
from interp.hooks.encoding import Encoded, collate
from interp.hooks.locations import Location


@torch.no_grad()
def joint_logits(model, encoded: Sequence[Encoded], base_rows: Int[Tensor, "rows"], writes: Mapping[Location, Float[Tensor, "rows width"]],
                 pad_token_id: int = 0, batch_size: int = 64, on_rows: Callable[[int], None] | None = None) -> Float[Tensor, "rows labels"]:  # fmt: skip
    """The logits of every row, float32 ``[rows, n_model_labels]`` on CPU: base ``encoded[base_rows[r]]`` with each
    location's vector replaced by ``writes[location][r]`` (``[rows, tokens × width]``), in one pass per batch of rows
    of one input length (at most ``batch_size``, halved where a pass runs out of memory: the engine's row loop,
    :func:`interp.engine.rows.in_passes`). ``on_rows(k)`` is told after each pass."""
    device = next(model.parameters()).device
    out = torch.empty(len(base_rows), model.config.num_labels)
    for group in length_groups([encoded[b] for b in base_rows.tolist()]):
        index = torch.tensor(group)

        def run(rows: Tensor, _size: int) -> None:
            chunk = index[rows.cpu()]
            batch = collate([encoded[int(base_rows[r])] for r in chunk], pad_token_id)
            write = {loc: vectors[chunk].to(device) for loc, vectors in writes.items()}
            with hooked(model, batch["positions"], write=write):
                out[chunk] = model(**batch_inputs(model, batch, device)).logits.float().cpu()

        in_passes(len(group), batch_size, run, device=device, on_rows=on_rows)
    return out


@torch.no_grad()
def naive_joint_logits(model, encoded: Sequence[Encoded], base_rows: Int[Tensor, "rows"], writes: Mapping[Location, Float[Tensor, "rows width"]],
                       pad_token_id: int = 0) -> Float[Tensor, "rows labels"]:  # fmt: skip
    """:func:`joint_logits` by one hooked batch-1 pass per row (the reference)."""
    rows = [naive_forward(model, encoded[int(b)], pad_token_id, write={loc: vectors[r:r + 1] for loc, vectors in writes.items()})[0]
            for r, b in enumerate(base_rows.tolist())]  # fmt: skip
    return torch.stack(rows) if rows else torch.empty(0, model.config.num_labels)


def joint_batches(encoded: Sequence[Encoded], base_rows: Int[Tensor, "rows"], batch_size: int, generator: torch.Generator) -> list[Tensor]:
    """The rows in shuffled batches of at most ``batch_size``, each of one input length (so a pass holds no padding):
    what training over joint runs steps through, seeded by ``generator``."""
    batches = []
    for group in length_groups([encoded[b] for b in base_rows.tolist()]):
        order = torch.tensor(group)[torch.randperm(len(group), generator=generator)]
        batches += list(order.split(batch_size))
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


def intervened_logits(model, encoded: Sequence[Encoded], base_rows: Int[Tensor, "rows"], sources: Mapping[Location, Float[Tensor, "rows width"]],
                      interventions: Mapping[Location, Callable[[Tensor, Tensor], Tensor]], pad_token_id: int = 0) -> Float[Tensor, "rows labels"]:  # fmt: skip
    """The logits of one pass over ``base_rows`` (all of one input length), float ``[rows, n_model_labels]`` on the
    model's device, with autograd: at each location the base's vector ``b`` replaced by ``interventions[location](b,
    s)``, ``s`` that row's source vector there (``sources[location]``, read beforehand). What joint DAS trains and
    scores (:mod:`interp.api.joint_das`); with :class:`~interp.engine.interventions.Interchange` at every location it
    is :func:`joint_logits`."""
    device = next(model.parameters()).device
    batch = collate([encoded[int(b)] for b in base_rows], pad_token_id)
    write = {loc: (lambda old, loc=loc: interventions[loc](old, sources[loc].to(device, old.dtype))) for loc in sources}
    with hooked(model, batch["positions"], write=write):
        return model(**batch_inputs(model, batch, device)).logits
