"""A write plan, and the one hooked pass over it: what every intervention that writes at one or more locations runs.

Usage::

    plan = WritePlan({loc_a: Sources(vectors_a, rows_a), loc_b: Sources(vectors_b, rows_b)})   # a joint interchange
    plan = WritePlan({sender: Sources(vectors, js), **{loc: HELD for loc in frozen}})             # path patching
    logits = plan_logits(model, encoded, base_rows, plan, pad_token_id)                           # float32 [rows, labels]

A row ``r`` runs the base ``encoded[base_rows[r]]`` with, at each location of the plan, one of three writes:

- :class:`Sources`: a vector read beforehand (a source input's, for an interchange intervention; Geiger et al. 2021,
  §3, with several variables each set from its own source in one run), row ``r`` taking ``vectors[index[r]]``;
- :class:`Intervened`: an intervention module's ``intervention(base vector, source vector)`` (DAS's rotation, a
  featurizer, steering, ablation; ``forward(base, source)``);
- :data:`HELD`: the base's own value there, read on a pass over the base first and written back, so that nothing
  computed afresh reaches past it (path patching's frozen components; Wang et al. 2022, §3.1).

Rows are grouped by input length, so no pass holds padding and every row is exact; passes hold at most ``batch_size``
rows and a pass that runs out of memory is halved (:func:`interp.engine.rows.in_passes`). The blocks before the plan's
earliest location compute the base's own values on every row, so each base's input to that block is read once (with
the held values, one reading pass over the group's distinct bases) and each row's pass starts there
(:meth:`~interp.hooks.architecture.Architecture.from_block`). Held values and reads cover every token (the role
:data:`ALL`). The references are one batch-1 hooked pass per row (:func:`interp.engine.joint.naive_joint_logits`,
:func:`interp.engine.paths.naive_path_patch_logits`).
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence, Union

import torch
from jaxtyping import Float, Int
from torch import Tensor

from interp.core.errors import ConfigError
from interp.engine.naive import naive_forward
from interp.engine.rows import in_passes, length_groups
from interp.engine.slicing import run_prefix
from interp.hooks.architecture import architecture, batch_inputs
from interp.hooks.context import hooked
from interp.hooks.encoding import Encoded, collate
from interp.hooks.locations import Location

#: The role of every token of a row (held values, a pass's start, reads over the whole input).
ALL = "all"


@dataclass(frozen=True)
class Sources:
    """Vectors read beforehand: row ``r`` writes ``vectors[index[r]]`` (``vectors`` float ``[n, width]``; ``index``
    int64 ``[rows]``, or ``None``: row ``r`` takes ``vectors[r]``)."""

    vectors: Tensor
    index: Tensor | None = None

    def rows(self, chunk: Tensor) -> Tensor:
        return self.vectors[chunk if self.index is None else self.index[chunk]]


@dataclass(frozen=True)
class Intervened:
    """``intervention(base vector, source vector)`` written in place of the base's vector, the source's from
    :class:`Sources`; float ``[rows, width]`` in and out, differentiable where gradients are on."""

    intervention: Callable[[Tensor, Tensor], Tensor]
    sources: Sources


class _Held:
    """The base's own value at a location, read on a pass over the base and written back (:data:`HELD`)."""

    def __repr__(self) -> str:
        return "HELD"


HELD = _Held()
Write = Union[Sources, Intervened, _Held]


@dataclass(frozen=True)
class WritePlan:
    """What one hooked pass writes: location -> :class:`Sources`, :class:`Intervened` or :data:`HELD`.

    Raises:
        ConfigError: no location, or a write of another kind.
    """

    writes: Mapping[Location, Write]

    def __post_init__(self) -> None:
        if not self.writes:
            raise ConfigError("a write plan needs at least one location")
        wrong = [loc for loc, w in self.writes.items() if not isinstance(w, (Sources, Intervened, _Held))]
        if wrong:
            raise ConfigError(f"location {wrong[0]}: a write is Sources, Intervened or HELD, got {type(self.writes[wrong[0]]).__name__}")

    @property
    def earliest(self) -> Location:
        """The location the model reaches first (the smallest block; a residual stream before a component of it)."""
        return min(self.writes, key=lambda loc: (loc.hidden_index, bool(loc.component)))

    @property
    def start_block(self) -> int | None:
        """The block a row's pass starts at, fed the base's own input to it: the earliest location's; ``None`` where
        that is block 0 or the embeddings (nothing before it to skip)."""
        block = self.earliest.layer
        return block if block > 0 else None

    @property
    def held(self) -> list[Location]:
        return [loc for loc, w in self.writes.items() if w is HELD]

    def row_writes(self, chunk: Tensor, held: Mapping[Location, Tensor], device) -> dict[Location, Tensor | Callable[[Tensor], Tensor]]:
        """The writes of rows ``chunk`` (int64 ``[k]``) for :func:`~interp.hooks.hooked`; ``held``: each held
        location's base values for those rows."""
        out: dict[Location, Tensor | Callable[[Tensor], Tensor]] = {}
        for loc, write in self.writes.items():
            if write is HELD:
                out[loc] = held[loc]
            elif isinstance(write, Sources):
                out[loc] = write.rows(chunk).to(device)
            else:
                source = write.sources.rows(chunk).to(device)
                out[loc] = lambda old, f=write.intervention, s=source: f(old, s.to(old.dtype))
        return out


def positions(batch: dict, rows: int) -> dict[str, Int[Tensor, "rows tokens"]]:
    """A collated batch's role positions with :data:`ALL` (every token of an unpadded batch) added."""
    length = batch["input_ids"].shape[1]
    return {**batch["positions"], ALL: torch.arange(length).expand(rows, length)}


def plan_logits(model, encoded: Sequence[Encoded], base_rows: Int[Tensor, "rows"], plan: WritePlan, pad_token_id: int = 0,
                batch_size: int = 64, on_rows: Callable[[int], None] | None = None, read: Sequence[Location] = (),
                start: bool = True) -> tuple[Float[Tensor, "rows labels"], dict[Location, Tensor]]:  # fmt: skip
    """Every row's logits under ``plan``, float32 ``[rows, n_model_labels]`` on CPU, and each location of ``read``'s
    vectors on that pass (float32 ``[rows, tokens × width]`` on CPU). Under ``torch.no_grad`` unless the caller enables
    gradients (then the logits stay on the model's device, in the graph).

    ``start``: each row's pass starts at the plan's :attr:`~WritePlan.start_block`, fed its base's input there (read
    once per base); ``False`` runs every block on every row.

    Raises:
        ConfigError: as :func:`~interp.hooks.hooked` (a location the model lacks, a write of the wrong width).
    """
    device = next(model.parameters()).device
    arch = architecture(model)
    block = plan.start_block if start else None
    begin = None if block is None else Location(block, (ALL,))
    before = [*plan.held, *([begin] if begin is not None else [])]
    grad = torch.is_grad_enabled()
    out = None if grad else torch.empty(len(base_rows), model.config.num_labels)
    kept: list[tuple[Tensor, Tensor]] = []  # (rows, logits) with gradients
    found: dict[Location, Tensor] = {}
    for group in length_groups([encoded[int(b)] for b in base_rows.tolist()]):
        index = torch.tensor(group)
        distinct, of_row = torch.unique(base_rows[index], return_inverse=True)
        trace = _read_bases(model, encoded, distinct, before, pad_token_id, batch_size, device) if before else {}

        def run(rows: Tensor, _size: int, index: Tensor = index, of_row: Tensor = of_row, trace: dict = trace) -> None:
            chunk, bases = index[rows.cpu()], of_row[rows.cpu()]
            batch = collate([encoded[int(base_rows[r])] for r in chunk], pad_token_id)
            held = {loc: trace[loc][bases.to(trace[loc].device)] for loc in plan.held}
            with ExitStack() as stack:
                seen = stack.enter_context(hooked(model, positions(batch, len(chunk)), write=plan.row_writes(chunk, held, device), read=read))
                if begin is not None:
                    stack.enter_context(arch.from_block(model, block, trace[begin][bases.to(device)].view(len(chunk), batch["input_ids"].shape[1], -1)))
                logits = model(**batch_inputs(model, batch, device)).logits
            if grad:
                kept.append((chunk, logits))
            else:
                out[chunk] = logits.float().cpu()
            for loc in read:
                if loc not in found:
                    found[loc] = torch.empty(len(base_rows), seen[loc].shape[1])
                if found[loc].shape[1] != seen[loc].shape[1]:
                    raise ConfigError(f"read location {loc}: its width differs between rows of different lengths; read one with "
                                      "the same tokens on every row (a role, not every token)")  # fmt: skip
                found[loc][chunk] = seen[loc].float().cpu()

        in_passes(len(group), batch_size, run, device=device, on_rows=on_rows)
    if grad:  # the rows back in their order, in the graph
        order = torch.cat([chunk for chunk, _ in kept]) if kept else torch.empty(0, dtype=torch.long)
        out = torch.cat([logits for _, logits in kept])[torch.argsort(order).to(device)] if kept else torch.empty(0, model.config.num_labels)
    return out, found


def _read_bases(model, encoded: Sequence[Encoded], bases: Tensor, locations: Sequence[Location], pad_token_id: int, batch_size: int,
                device) -> dict[Location, Tensor]:  # fmt: skip
    """Each of ``bases``' (one input length) own vectors at ``locations``, on the model's device: one pass per batch."""
    out: dict[Location, list[Tensor]] = {loc: [] for loc in locations}

    def run(rows: Tensor, _size: int) -> None:
        batch = collate([encoded[int(b)] for b in bases[rows.cpu()]], pad_token_id)
        if len(locations) == 1 and locations[0].is_residual:  # a pass's start alone: only the blocks before it run
            ids, types = batch["input_ids"].to(device), batch["token_type_ids"].to(device)
            with torch.no_grad():
                out[locations[0]].append(run_prefix(model, ids, types, locations[0].hidden_index).flatten(1))
            return
        with torch.no_grad(), hooked(model, positions(batch, len(rows)), read=locations) as trace:
            model(**batch_inputs(model, batch, device))
        for loc in locations:
            out[loc].append(trace[loc])

    in_passes(len(bases), batch_size, run, device=device)
    return {loc: torch.cat(parts) for loc, parts in out.items()}


def naive_plan_logits(model, encoded: Sequence[Encoded], base_rows: Int[Tensor, "rows"], plan: WritePlan, pad_token_id: int = 0,
                      read: Sequence[Location] = ()) -> tuple[Float[Tensor, "rows labels"], dict[Location, Tensor]]:  # fmt: skip
    """:func:`plan_logits` by one batch-1 hooked pass per row over the whole model (and, where the plan holds a
    location, one reading pass of the row's base before it): the reference, nothing shared between rows."""
    logits, found = [], {loc: [] for loc in read}
    for r, b in enumerate(base_rows.tolist()):
        every = {ALL: torch.arange(len(encoded[b].input_ids))[None]}
        held = naive_forward(model, encoded[b], pad_token_id, read=plan.held, extra_positions=every)[1] if plan.held else {}
        device = next(model.parameters()).device
        writes = plan.row_writes(torch.tensor([r]), held, device)
        row, trace = naive_forward(model, encoded[b], pad_token_id, write=writes, read=list(read), extra_positions=every)
        logits.append(row)
        for loc in read:
            found[loc].append(trace[loc].float().cpu())
    out = torch.stack(logits) if logits else torch.empty(0, model.config.num_labels)
    return out, {loc: torch.cat(parts) for loc, parts in found.items() if parts}
