"""Any intervention on chosen (base, source) pairs: each example's prefix run once, only the suffix per pair, with gradients when training.

Usage::

    runner = PairSuffix(model, encoded, location)          # runs every example's prefix once (no gradients)
    with runner.frozen():                                   # the model's weights get no gradients; restored after
        logits = runner.logits(bases, sources, rotated)     # float [n_pairs, n_labels], differentiable in rotated's weights
    with torch.no_grad():
        logits = runner.logits(bases, sources, Interchange(runner.width))

The prefix below a location (``hidden_states[L.hidden_index]``) does not
depend on the intervention, so training a DAS rotation (Geiger, Wu, Potts,
Icard & Goodman 2024, §3) needs only the blocks after it per step: the base's
hidden states and the source's vector at the location are both read from
one prefix pass per example and kept. pyvene's DAS tutorial runs the full
base and source forward passes at every step instead; ``benchmarks/das.py``
measures the difference.

With gradients the suffix runs through the model's own modules on padded
rows with their attention mask, so gradients flow and a batch may mix
lengths. On a CPU a batch is first split into runs of similar length
(:func:`length_chunks`, :func:`chunk_cost`): a padded token costs what a
real one does, and a training batch of MoNLI pairs padded to its longest
base is about a fifth padding. Without gradients the suffix runs as the
engine does: unpadded rows of one length through the fused blocks
(:mod:`interp.engine.blocks`), the last block for [CLS] only.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Callable, Sequence

import torch
from jaxtyping import Float, Int
from torch import Tensor

from interp.core.errors import ConfigError
from interp.engine.batched import _inputs
from interp.engine.rows import length_groups
from interp.engine.components import BlockRest, gather
from interp.engine.rows import auto_batch_size
from interp.engine.interventions import Intervention
from interp.engine.slicing import fast_suffix, first_token_block, run_prefix, run_suffix, run_suffix_masked
from interp.hooks.architecture import architecture
from interp.hooks.locations import INPUTS, Location
from interp.hooks.encoding import Encoded, location_tokens
from interp.models.freezing import frozen_weights


#: On a CPU, what one more padded pass costs, in padded token rows × d_model² × blocks run over every token: a pass's
#: fixed cost (module calls, smaller matmuls) over a token's. Measured with ``benchmarks/das.py``'s pairs at MiniLM's and
#: BERT-base's shapes (about 34 token rows at BERT-base's middle block, 340 at MiniLM's).
CPU_PASS_COST = 1e8


def chunk_cost(model, location: Location) -> int | None:
    """The padded token rows one more pass costs for :func:`length_chunks` when training at ``location`` on a CPU.

    ``None`` (one padded pass per batch) where no block after the location runs over every token (the last block
    runs for [CLS] only), or where the model is not on a CPU: there small passes cost more than padding.
    """
    blocks = architecture(model).block_list(model)
    full = len(blocks) - location.hidden_index - (1 if first_token_block(model, blocks[-1]) else 0)
    if full <= 0 or next(model.parameters()).device.type != "cpu":
        return None
    return max(1, round(CPU_PASS_COST / (model.config.hidden_size**2 * full)))


def length_chunks(lengths: Sequence[int], cost: int) -> list[list[int]]:
    """Positions of ``lengths`` in groups of similar length whose padded size, plus ``cost`` per group, is least.

    Each group is a run of the positions sorted by length (ties in position
    order) and is padded to its longest; the groups minimise ``Σ rows ×
    longest + cost × groups`` over all such runs (exact, by dynamic
    programming over the distinct lengths). One group (every position, in
    order) where splitting does not pay.

    Args:
        lengths: token count of each row (``[rows]``, ints ≥ 1).
        cost: the padded token rows one more group costs (≥ 0).

    Returns:
        Lists of positions into ``lengths``, shortest rows first; together each position once.
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    distinct = sorted(set(lengths))
    if len(distinct) <= 1:
        return [list(range(len(lengths)))] if lengths else []
    counts = [0] * len(distinct)
    rank = {value: n for n, value in enumerate(distinct)}
    for value in lengths:
        counts[rank[value]] += 1
    upto = [0]  # rows of the first j distinct lengths
    for c in counts:
        upto.append(upto[-1] + c)
    best, cut = [0] + [None] * len(distinct), [0] * (len(distinct) + 1)
    for j in range(1, len(distinct) + 1):  # a group ends at distinct length j - 1 and starts at i
        best[j], cut[j] = min((best[i] + (upto[j] - upto[i]) * distinct[j - 1] + cost, i) for i in range(j))
    if best[-1] >= upto[-1] * distinct[-1] + cost:  # one group, in the given order
        return [list(range(len(lengths)))]
    bounds, j = [], len(distinct)
    while j > 0:
        bounds.append((cut[j], j))
        j = cut[j]
    return [order[upto[i] : upto[j]] for i, j in reversed(bounds)]


class PairSuffix:
    """The examples' prefixes at ``location``, and the intervened model's logits on any pairs of them.

    Args:
        model: an encoder classifier in eval mode (dropout off: the
            outputs are the model's function, with or without gradients).
        encoded: the examples; pairs index them, as base and as source.
        location: where to intervene.
        batch_size: examples per prefix pass.

    Attributes:
        vectors: float32 ``[n, tokens × d_model]``, each example's vector at ``location``.
        width: ``tokens × d_model``.

    Each prefix is run unpadded (with examples of its length) and kept
    zero-padded to the longest example, with its attention mask.

    ``chunk_cost`` (an attribute, :func:`chunk_cost`) is what one more
    padded pass costs in token rows when a batch with gradients is split by
    length (:func:`length_chunks`); ``None`` runs each such batch as one
    padded pass.

    Raises:
        ConfigError: an example lacks a role of the location, or token counts differ (:func:`location_tokens`),
            or the location is a head's query, key or value input.
        ConfigError (a ValueError): the model is in training mode.
    """

    def __init__(self, model, encoded: Sequence[Encoded], location: Location, batch_size: int = 64) -> None:
        if location.component in INPUTS:
            raise ConfigError(f"location {location} is a head's query, key or value input: a receiver of path patching, not a site to "
                              "intervene at (use attn.hook_z.h<H>, a head's output, or the residual stream)")  # fmt: skip
        if model.training:
            raise ConfigError("model is in training mode: call model.eval() (dropout would make the outputs random)")
        self.model, self.location = model, location
        device = next(model.parameters()).device
        d_model = model.config.hidden_size
        tokens = location_tokens(encoded, location.roles, f"location {location}")
        n = len(encoded)
        self.n_tokens = len(tokens[0]) if tokens else 0
        #: a component site's rest of its block (:class:`~interp.engine.components.BlockRest`), ``None`` in the stream
        self.rest = None if location.is_residual else BlockRest(model, location)
        self.width = self.n_tokens * (d_model if self.rest is None else location.token_width(model.config))
        self.lengths = torch.tensor([len(e.input_ids) for e in encoded], dtype=torch.long)
        longest = int(self.lengths.max()) if n else 0
        self.ids = torch.zeros(n, longest, dtype=torch.long, device=device)
        self.types = torch.zeros(n, longest, dtype=torch.long, device=device)
        self.mask = torch.zeros(n, longest, dtype=torch.long, device=device)
        self.where = torch.tensor(tokens, dtype=torch.long, device=device).view(n, self.n_tokens)
        dtype = next(model.parameters()).dtype
        self.hidden = torch.zeros(n, longest, d_model, dtype=dtype, device=device)
        #: a component site's base shares at its tokens (``x``, ``z``, ``resid_mid``, each ``[n, tokens, d_model]``)
        self.parts: dict[str, Tensor] = {}
        sites = torch.zeros(n, self.n_tokens, self.width // max(self.n_tokens, 1), dtype=dtype, device=device) if self.rest else None
        with torch.no_grad():
            for group in length_groups(encoded):
                ids, types = _inputs(encoded, group, device)
                rows, seq = torch.tensor(group, device=device), ids.shape[1]
                self.ids[rows, :seq], self.types[rows, :seq], self.mask[rows, :seq] = ids, types, 1
                for k in range(0, len(group), batch_size):
                    some = rows[k : k + batch_size]
                    if self.rest is None:
                        self.hidden[some, :seq] = run_prefix(model, ids[k : k + batch_size], types[k : k + batch_size], location.hidden_index)
                        continue
                    hidden, parts, site = self.rest.prefix_and_site(ids[k : k + batch_size], types[k : k + batch_size], self.where[some])
                    self.hidden[some, :seq], sites[some] = hidden, site
                    for name, value in parts.items():
                        self.parts.setdefault(name, torch.zeros(n, *value.shape[1:], dtype=value.dtype, device=device))[some] = value
            at = (torch.arange(n, device=device)[:, None], self.where)
            self.vectors = (self.hidden[at] if self.rest is None else sites).reshape(n, -1).float()
        self._fast = fast_suffix(model, location.hidden_index)
        self.chunk_cost = chunk_cost(model, location)

    def __len__(self) -> int:
        return len(self.lengths)

    def frozen(self) -> AbstractContextManager:
        """Within the block the model's weights get no gradient (:func:`~interp.models.freezing.frozen_weights`): training
        trains the intervention only."""
        return frozen_weights(self.model)

    def _applied(self, intervention: Intervention, rows: Tensor, sources: Tensor) -> Tensor:
        """``intervention(base vectors, source vectors)`` for ``rows`` (bases) and their ``sources``, in the model's dtype."""
        dtype = self.hidden.dtype
        return intervention(self.vectors[rows].to(dtype), self.vectors[sources].to(dtype))

    def _intervened(self, rows: Tensor, new: Tensor, seq: int) -> Tensor:
        """The bases' hidden states ``[rows, seq, d_model]`` with ``new`` (``[rows, width]``) written at the location: in
        the stream, the vectors themselves; at a component, its block's output recomputed from them at its tokens."""
        hidden = self.hidden[rows, :seq]
        at = (torch.arange(len(rows), device=hidden.device)[:, None], self.where[rows])
        new = new.to(hidden.dtype).view(len(rows), self.n_tokens, -1)
        if self.rest is not None:
            new = self.rest(gather(self.parts, rows), new)
        return hidden.index_put(at, new)

    def _padded_logits(self, rows: Tensor, sources: Tensor, intervention: Intervention, seq: int) -> Tensor:
        """One padded pass with gradients over ``rows`` (bases) and their ``sources``, ``seq`` tokens long."""
        hidden = self._intervened(rows, self._applied(intervention, rows, sources), seq)
        index = self.location.hidden_index
        return run_suffix_masked(self.model, hidden, index, self.ids[rows, :seq], self.types[rows, :seq], self.mask[rows, :seq])

    def logits(
        self,
        bases: Int[Tensor, "pairs"],
        sources: Int[Tensor, "pairs"],
        intervention: Intervention,
        batch_size: int | None = None,
    ) -> Float[Tensor, "pairs labels"]:
        """The model's logits on each base with ``intervention(base vector, source vector)`` written at the location.

        With gradients enabled the pairs run padded through the model's own
        modules with the attention mask
        (:func:`~interp.engine.slicing.run_suffix_masked`), in runs of similar
        length where :attr:`chunk_cost` is set (the logits are the same to
        float rounding), differentiable in the intervention's parameters: wrap
        the call in :func:`frozen_weights` so the weights get none. Without,
        each token length runs unpadded through the fused blocks,
        ``batch_size`` rows per pass (the engine's exact path).

        Args:
            bases, sources: int64 ``[pairs]``, indices into the examples.

        Returns:
            float ``[pairs, n_labels]`` on the model's device, in pair order.

        Raises:
            ConfigError (a ValueError): ``bases`` and ``sources`` differ in length, or the
                intervention's width is not the location's.
        """
        if bases.shape != sources.shape:
            raise ConfigError(f"bases and sources must have one index per pair, got {tuple(bases.shape)} and {tuple(sources.shape)}")
        if intervention.width != self.width:
            raise ConfigError(f"intervention width {intervention.width} is not location {self.location}'s {self.width}")
        device = self.hidden.device
        bases, sources = bases.to(device), sources.to(device)
        if torch.is_grad_enabled():
            lengths = self.lengths[bases.cpu()].tolist()
            if not lengths:
                return torch.empty(0, self.model.config.num_labels, device=device)
            chunks = [] if self.chunk_cost is None else length_chunks(lengths, self.chunk_cost)
            if len(chunks) <= 1:  # one padded pass, in pair order
                return self._padded_logits(bases, sources, intervention, max(lengths))
            out = [self._padded_logits(bases[chunk], sources[chunk], intervention, max(lengths[i] for i in chunk)) for chunk in chunks]
            where = torch.tensor([i for chunk in chunks for i in chunk], device=device)
            return torch.cat(out)[torch.argsort(where)]
        return self._unpadded(bases, lambda chunk: self._applied(intervention, bases[chunk], sources[chunk]), batch_size)

    @torch.no_grad()
    def written_logits(
        self, bases: Int[Tensor, "rows"], vectors: Float[Tensor, "rows width"], batch_size: int | None = None
    ) -> Float[Tensor, "rows labels"]:
        """The model's logits on each base with ``vectors[i]`` written at the location, without gradients.

        What :meth:`logits` computes for an intervention whose output is
        ``vectors`` (the same unpadded path through the fused blocks), for
        vectors made elsewhere: several interventions' outputs on the same
        pairs run in one call, in passes of one length
        (:func:`~interp.analysis.das.best_block`).

        Args:
            bases: int64 ``[rows]``, indices into the examples.
            vectors: float ``[rows, width]``, each row's vector at the location.

        Returns:
            float ``[rows, n_labels]`` on the model's device, in row order.

        Raises:
            ConfigError (a ValueError): ``vectors`` is not ``[len(bases), width]``.
        """
        if vectors.shape != (len(bases), self.width):
            raise ConfigError(f"vectors must be [rows, width] = [{len(bases)}, {self.width}], got {tuple(vectors.shape)}")
        device = self.hidden.device
        bases, vectors = bases.to(device), vectors.to(device)
        return self._unpadded(bases, lambda chunk: vectors[chunk], batch_size)

    def _unpadded(self, bases: Tensor, new: Callable[[Tensor], Tensor], batch_size: int | None) -> Tensor:
        """Logits of ``bases`` (on the model's device) with ``new(positions)`` (``[positions, width]``) written at the
        location: each token length unpadded through the fused blocks, the last block for [CLS] only."""
        device, index = self.hidden.device, self.location.hidden_index
        lengths = self.lengths.to(device)[bases]
        out = None
        for seq in torch.unique(lengths).tolist():
            pick = (lengths == seq).nonzero().flatten()
            size = batch_size or auto_batch_size(self.model, seq)
            for chunk in pick.split(size):
                rows = bases[chunk]
                hidden = self._intervened(rows, new(chunk), seq)
                logits = run_suffix(self.model, hidden, index, self.ids[rows, :seq], self.types[rows, :seq], self._fast)
                if out is None:
                    out = torch.empty(len(bases), logits.shape[-1], dtype=logits.dtype, device=device)
                out[chunk] = logits
        return out if out is not None else torch.empty(0, self.model.config.num_labels, device=device)
