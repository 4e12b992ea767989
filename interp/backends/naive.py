"""The reference runner: the Hugging Face model, one batch-1 hooked forward pass per example or per (base, source) pair.

Usage::

    reference = get_runner("hf", model, tokenizer).reference()     # or NaiveRunner(model, pad_token_id)
    reference.interchange_logits(bases, reference.vectors(sources, loc), loc)

Nothing is shared between examples or pairs (:mod:`interp.engine.naive`): the interchange intervention as its
definition reads (Geiger, Richardson & Potts 2020, §6.2). ``interchange(..., naive=True)`` runs on it, and the tests
hold every fast path of :class:`~interp.backends.hf.EncoderRunner` and :class:`~interp.backends.hf.DecoderRunner` to it.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch import Tensor

from interp.backends.base import PlanCalls, SiteGradients
from interp.engine.batched import precision
from interp.engine.gradients import site_gradients
from interp.engine.hooked_pairs import HookedPairs
from interp.engine.naive import hooked_rows, naive_forward, naive_interchange_vectors
from interp.engine.plan import WritePlan, naive_plan_logits
from interp.hooks.encoding import Encoded
from interp.hooks.locations import Location
from interp.models.freezing import frozen_weights


class NaiveRunner(PlanCalls):
    """The one-pass-per-example reference of a Hugging Face classifier (the :class:`~interp.backends.base.Runner` protocol)."""

    name = "hf-reference"
    atp_star = True
    compile_stats = None  # it never compiles

    def __init__(self, model, pad_token_id: int = 0) -> None:
        self.model, self.pad_token_id = model, pad_token_id

    @torch.no_grad()
    def _each(self, encoded: Sequence[Encoded], locations: Sequence[Location]) -> tuple[dict[Location, Tensor], Tensor]:
        """Every example's own batch-1 pass: each location's vectors ``[n, width]`` (CPU) and the logits ``[n, labels]``."""
        found = [naive_forward(self.model, e, self.pad_token_id, read=list(locations)) for e in encoded]
        logits = torch.stack([f[0] for f in found]) if found else torch.empty(0, self.model.config.num_labels)
        return {loc: torch.cat([f[1][loc].float().cpu() for f in found]) for loc in locations}, logits

    def predict(self, encoded: Sequence[Encoded]) -> Tensor:
        return self._each(encoded, [])[1]

    def read(self, encoded: Sequence[Encoded], locations: Sequence[Location]) -> dict[Location, Tensor]:
        return self._each(encoded, locations)[0]

    def vectors_and_logits(self, encoded: Sequence[Encoded], location: Location) -> tuple[Tensor, Tensor]:
        vectors, logits = self._each(encoded, [location])
        return vectors[location].to(next(self.model.parameters()).device), logits

    def vectors(self, encoded: Sequence[Encoded], location: Location) -> Tensor:
        return self.vectors_and_logits(encoded, location)[0]

    def interchange_logits(self, bases: Sequence[Encoded], sources: Tensor, location: Location, *, batch_size: int | None = None,
                           on_rows: Callable[[int], None] | None = None) -> Tensor:  # fmt: skip
        return naive_interchange_vectors(self.model, bases, sources, location, self.pad_token_id, on_rows)

    def plan_logits(self, encoded: Sequence[Encoded], base_rows: Tensor, plan: WritePlan, *, batch_size: int | None = None,
                    on_rows: Callable[[int], None] | None = None, read: Sequence[Location] = ()) -> tuple[Tensor, dict[Location, Tensor]]:  # fmt: skip
        """One batch-1 hooked pass of the whole model per row (:func:`interp.engine.plan.naive_plan_logits`)."""
        logits, found = naive_plan_logits(self.model, encoded, base_rows, plan, self.pad_token_id, read)
        if on_rows is not None:
            on_rows(len(base_rows))
        return logits, found

    def frozen(self):
        """The weights get no gradient within the block (restored after)."""
        return frozen_weights(self.model)

    def pairs(self, encoded: Sequence[Encoded], location: Location) -> HookedPairs:
        return HookedPairs(hooked_rows(self.model, location), self.model, encoded, location, self.vectors(encoded, location), rows_per_pass=1)

    def gradients(self, encoded: Sequence[Encoded], locations: Sequence[Location], *, qk_fix: bool = False,
                  graddrop: bool = False, on_rows: Callable[[int], None] | None = None) -> dict[Location, SiteGradients]:  # fmt: skip
        return site_gradients(self.model, encoded, locations, batch_size=1, qk_fix=qk_fix, graddrop=graddrop, on_rows=on_rows)

    def precision(self, name: str):
        return precision(self.model, name)

    def reference(self) -> "NaiveRunner":
        return self
