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

from collections import defaultdict
from typing import Callable, Mapping, Sequence

import torch
from jaxtyping import Float, Int
from torch import Tensor

from interp.engine.naive import naive_forward
from interp.hooks.architecture import batch_inputs
from interp.hooks.context import hooked
from interp.hooks.encoding import Encoded, collate
from interp.hooks.locations import Location


@torch.no_grad()
def joint_logits(model, encoded: Sequence[Encoded], base_rows: Int[Tensor, "rows"], writes: Mapping[Location, Float[Tensor, "rows width"]],
                 pad_token_id: int = 0, batch_size: int = 64, on_rows: Callable[[int], None] | None = None) -> Float[Tensor, "rows labels"]:  # fmt: skip
    """The logits of every row, float32 ``[rows, n_model_labels]`` on CPU: base ``encoded[base_rows[r]]`` with each
    location's vector replaced by ``writes[location][r]`` (``[rows, tokens × width]``), in one pass per batch of rows
    of one input length (at most ``batch_size``). ``on_rows(k)`` is told after each batch."""
    device = next(model.parameters()).device
    by_length: dict[int, list[int]] = defaultdict(list)
    for r, b in enumerate(base_rows.tolist()):
        by_length[len(encoded[b].input_ids)].append(r)
    out = torch.empty(len(base_rows), model.config.num_labels)
    for length in sorted(by_length):
        rows = by_length[length]
        for start in range(0, len(rows), batch_size):
            chunk = rows[start:start + batch_size]
            batch = collate([encoded[int(base_rows[r])] for r in chunk], pad_token_id)
            index = torch.tensor(chunk)
            write = {loc: vectors[index].to(device) for loc, vectors in writes.items()}
            with hooked(model, batch["positions"], write=write):
                out[index] = model(**batch_inputs(model, batch, device)).logits.float().cpu()
            if on_rows is not None:
                on_rows(len(chunk))
    return out


@torch.no_grad()
def naive_joint_logits(model, encoded: Sequence[Encoded], base_rows: Int[Tensor, "rows"], writes: Mapping[Location, Float[Tensor, "rows width"]],
                       pad_token_id: int = 0) -> Float[Tensor, "rows labels"]:  # fmt: skip
    """:func:`joint_logits` by one hooked batch-1 pass per row (the reference)."""
    rows = [naive_forward(model, encoded[int(b)], pad_token_id, write={loc: vectors[r:r + 1] for loc, vectors in writes.items()})[0]
            for r, b in enumerate(base_rows.tolist())]  # fmt: skip
    return torch.stack(rows) if rows else torch.empty(0, model.config.num_labels)
