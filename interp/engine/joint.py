"""Joint interchange interventions: several locations written in one forward pass, each from its own source.

Usage::

    from interp.engine.joint import joint_logits
    logits = joint_logits(model, encoded, base_rows, {loc_a: vectors_a, loc_b: vectors_b}, pad_token_id)   # [rows, labels]

Row r runs the base ``encoded[base_rows[r]]`` with the vector at each location replaced by that location's row r of
``writes`` (its own source's vector, read beforehand): the intervention a causal abstraction with several variables is
tested by, each variable set from its own source input in one run (Geiger et al. 2021, §3, "interchange interventions
on multiple variables"; pyvene's list of representations patched together, Wu et al. 2024). Rows are grouped by input
length, so no batch holds padding and every row is exact; each row's pass starts at the earliest site's block, from its
base's input there (read once per base): the write plan's one hooked pass (:mod:`interp.engine.plan`).
:func:`naive_joint_logits` is the reference: one hooked batch-1 pass per row.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import torch
from jaxtyping import Float, Int
from torch import Tensor

from interp.engine.naive import naive_forward
from interp.engine.plan import Intervened, Sources, WritePlan, plan_logits
from interp.hooks.encoding import Encoded
from interp.hooks.locations import Location


@torch.no_grad()
def joint_logits(model, encoded: Sequence[Encoded], base_rows: Int[Tensor, "rows"], writes: Mapping[Location, Float[Tensor, "rows width"]],
                 pad_token_id: int = 0, batch_size: int = 64, on_rows: Callable[[int], None] | None = None) -> Float[Tensor, "rows labels"]:  # fmt: skip
    """The logits of every row, float32 ``[rows, n_model_labels]`` on CPU: base ``encoded[base_rows[r]]`` with each
    location's vector replaced by ``writes[location][r]`` (``[rows, tokens × width]``): the write plan's one hooked pass
    (:func:`interp.engine.plan.plan_logits`: rows of one input length in passes of at most ``batch_size``, halved where
    a pass runs out of memory, each starting at the earliest location's block from its base's input there).
    ``on_rows(k)`` is told after each pass."""
    plan = WritePlan({loc: Sources(vectors) for loc, vectors in writes.items()})
    return plan_logits(model, encoded, base_rows, plan, pad_token_id, batch_size, on_rows)[0]


@torch.no_grad()
def naive_joint_logits(model, encoded: Sequence[Encoded], base_rows: Int[Tensor, "rows"], writes: Mapping[Location, Float[Tensor, "rows width"]],
                       pad_token_id: int = 0) -> Float[Tensor, "rows labels"]:  # fmt: skip
    """:func:`joint_logits` by one hooked batch-1 pass per row (the reference)."""
    rows = [naive_forward(model, encoded[int(b)], pad_token_id, write={loc: vectors[r:r + 1] for loc, vectors in writes.items()})[0]
            for r, b in enumerate(base_rows.tolist())]  # fmt: skip
    return torch.stack(rows) if rows else torch.empty(0, model.config.num_labels)


def intervened_logits(model, encoded: Sequence[Encoded], base_rows: Int[Tensor, "rows"], sources: Mapping[Location, Float[Tensor, "rows width"]],
                      interventions: Mapping[Location, Callable[[Tensor, Tensor], Tensor]], pad_token_id: int = 0) -> Float[Tensor, "rows labels"]:  # fmt: skip
    """The logits over ``base_rows``, float ``[rows, n_model_labels]`` on the model's device, with autograd: at each
    location the base's vector ``b`` replaced by ``interventions[location](b, s)``, ``s`` that row's source vector there
    (``sources[location]``, read beforehand). What joint DAS trains and scores (:mod:`interp.api.joint_das`); the write
    plan's pass (:func:`interp.engine.plan.plan_logits`) with :class:`~interp.engine.plan.Intervened` writes; with
    :class:`~interp.engine.interventions.Interchange` at every location it is :func:`joint_logits`."""
    plan = WritePlan({loc: Intervened(interventions[loc], Sources(vectors)) for loc, vectors in sources.items()})
    return plan_logits(model, encoded, base_rows, plan, pad_token_id, batch_size=max(len(base_rows), 1))[0]
