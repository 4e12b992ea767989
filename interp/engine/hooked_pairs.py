"""Any intervention on chosen (base, source) pairs, each pair's whole forward pass with the site hooked: nothing shared.

Usage::

    pairs = HookedPairs(run, model, encoded, location, vectors)   # run: one hooked forward pass of some rows
    logits = pairs.logits(bases, sources, rotated)                # float [pairs, labels], differentiable in rotated
    with pairs.frozen():                                          # the model's weights get no gradient
        loss(pairs.logits(bases, sources, rotated)).backward()

The pair runner of the definition: run the base with ``intervention(base vector, source vector)`` written at the
location (Geiger, Wu, Potts, Icard & Goodman 2024, §3), every pair its own pass. Two runners use it: the Hugging Face
reference (:class:`~interp.backends.naive.NaiveRunner`, one pair per pass: what
:class:`~interp.engine.pair_suffix.PairSuffix` is tested against) and the TransformerLens bridge (pairs batched,
:class:`~interp.backends.tl_bridge.BridgeRunner`), which has no prefix of its own to share. Rows are grouped by
token length, so none is padded.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Callable, Sequence

import torch
from jaxtyping import Float, Int
from torch import Tensor

from interp.core.errors import ConfigError
from interp.engine.interventions import Intervention
from interp.hooks.encoding import Encoded, location_tokens
from interp.hooks.locations import Location
from interp.models.freezing import frozen_weights

#: ``run(input_ids, token_type_ids, where, write)``: one forward pass of some rows (int64 ``[rows, seq]`` each, unpadded)
#: with the vectors at the location's tokens (``where``, int64 ``[rows, tokens]``) replaced by ``write(old)`` (float
#: ``[rows, width]`` in and out); returns the logits ``[rows, labels]``.
RunRows = Callable[[Tensor, Tensor, Tensor, Callable[[Tensor], Tensor]], Tensor]


class HookedPairs:
    """The :class:`~interp.backends.base.PairRunner` of ``encoded`` at ``location`` that runs each pair's whole forward pass.

    Args:
        run: one hooked forward pass (:data:`RunRows`) of the model the runner wraps.
        module: the ``torch.nn.Module`` whose weights :meth:`frozen` freezes.
        encoded: the examples; pairs index them, as base and as source.
        location: where to intervene.
        vectors: float32 ``[n, width]``, each example's vector at ``location`` (the sources' are written from it).
        rows_per_pass: pairs per forward pass when a call gives no ``batch_size`` (1: the definition, pair by pair).

    Raises:
        ConfigError: an example lacks a role of the location, or token counts differ (:func:`location_tokens`).
    """

    def __init__(self, run: RunRows, module: torch.nn.Module, encoded: Sequence[Encoded], location: Location, vectors: Tensor,
                 rows_per_pass: int = 64) -> None:  # fmt: skip
        self._run, self._module, self.location = run, module, location
        self._encoded = list(encoded)
        self.vectors = vectors
        self.width = int(vectors.shape[1]) if vectors.dim() == 2 else 0
        self.where = torch.tensor(location_tokens(self._encoded, location.roles, f"location {location}"), dtype=torch.long)
        self.lengths = torch.tensor([len(e.input_ids) for e in self._encoded], dtype=torch.long)
        self.rows_per_pass = rows_per_pass

    def __len__(self) -> int:
        return len(self._encoded)

    def frozen(self) -> AbstractContextManager:
        """Within the block the model's weights get no gradient (:func:`~interp.models.freezing.frozen_weights`)."""
        return frozen_weights(self._module)

    def _rows(self, bases: Tensor, new: Callable[[Tensor, Tensor], Callable[[Tensor], Tensor]], batch_size: int | None) -> Tensor:
        """Logits of ``bases`` in order, each run with the write ``new(positions, rows)`` gives, grouped by length."""
        bases = bases.cpu()
        lengths = self.lengths[bases]
        device = self.vectors.device
        pieces, order = [], []
        for seq in torch.unique(lengths).tolist():
            pick = (lengths == seq).nonzero().flatten()
            for chunk in pick.split(batch_size or self.rows_per_pass):
                rows = bases[chunk]
                ids = torch.tensor([self._encoded[i].input_ids for i in rows.tolist()], dtype=torch.long, device=device)
                types = torch.tensor([self._encoded[i].token_type_ids for i in rows.tolist()], dtype=torch.long, device=device)
                pieces.append(self._run(ids, types, self.where[rows].to(device), new(chunk, rows)))
                order.append(chunk)
        if not pieces:
            return torch.empty(0, 0, device=device)
        return torch.cat(pieces)[torch.argsort(torch.cat(order)).to(device)]

    def logits(self, bases: Int[Tensor, "pairs"], sources: Int[Tensor, "pairs"], intervention: Intervention,
               batch_size: int | None = None) -> Float[Tensor, "pairs labels"]:  # fmt: skip
        """The model's logits on each base with ``intervention(base vector, source vector)`` written at the location
        (the base's vector as this very pass reads it); differentiable in the intervention's parameters where
        gradients are enabled.

        Raises:
            ConfigError (a ValueError): ``bases`` and ``sources`` differ in length, or the intervention's width is not the location's.
        """
        if bases.shape != sources.shape:
            raise ConfigError(f"bases and sources must have one index per pair, got {tuple(bases.shape)} and {tuple(sources.shape)}")
        if intervention.width != self.width:
            raise ConfigError(f"intervention width {intervention.width} is not location {self.location}'s {self.width}")
        sources = sources.cpu()

        def new(chunk: Tensor, rows: Tensor) -> Callable[[Tensor], Tensor]:
            source = self.vectors[sources[chunk].to(self.vectors.device)]
            return lambda old: intervention(old, source.to(old.dtype))

        return self._rows(bases, new, batch_size)

    @torch.no_grad()
    def written_logits(self, bases: Int[Tensor, "rows"], vectors: Float[Tensor, "rows width"],
                       batch_size: int | None = None) -> Float[Tensor, "rows labels"]:  # fmt: skip
        """The model's logits on each base with ``vectors[i]`` written at the location.

        Raises:
            ConfigError (a ValueError): ``vectors`` is not ``[len(bases), width]``.
        """
        if vectors.shape != (len(bases), self.width):
            raise ConfigError(f"vectors must be [rows, width] = [{len(bases)}, {self.width}], got {tuple(vectors.shape)}")

        def new(chunk: Tensor, rows: Tensor) -> Callable[[Tensor], Tensor]:
            written = vectors[chunk.to(vectors.device)]
            return lambda old: written.to(old.device, old.dtype)

        return self._rows(bases, new, batch_size)
