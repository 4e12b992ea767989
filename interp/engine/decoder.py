"""Interchange interventions in a decoder, each base's prefix reused: positions before the earliest intervened one run once.

Usage::

    logits = decoder_interchange_logits(model, bases, sources, loc)               # float32 [bases, sources, labels]
    logits = decoder_interchange_logits(model, bases, sources, loc, reuse=False)  # every position of the suffix per pair

In a causal decoder a position sees only itself and the positions before it. An intervention at the tokens P of a
base, earliest p, changes nothing at the positions before p: their keys and values in every block are the base's own.
So for each base the positions ``< p`` run once through the whole model with a cache (``transformers``' own
``DynamicCache``: each family's sliding windows, grouped key/value heads and softcapping stay transformers'), and for
each source only the positions ``≥ p`` run through the blocks after the location (:meth:`~interp.hooks.architecture.
Architecture.from_block`: the earlier blocks pass their input through, each later block keeps its index and cache
slot), their queries attending to the cached prefix. The readout is the last position's (:mod:`interp.models.decoders`).
Without ``reuse`` every position of the suffix runs per pair, as the encoder engine runs it. The rows run in passes of
at most ``batch_size`` (:func:`~interp.engine.rows.in_passes`: a pass that runs out of memory is halved, no pair dropped).
Bases are grouped by
token length and earliest intervened position, so no row is padded; the tests hold both ways equal to one hooked
forward pass per pair (:mod:`interp.engine.naive`) within float rounding.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from typing import Callable, Sequence

import torch
from torch import Tensor

from interp.engine.components import BlockRest, gather
from interp.engine.rows import auto_batch_size, in_passes, interchange_grid
from interp.engine.slicing import run_prefix, run_suffix
from interp.hooks.architecture import architecture, model_inputs
from interp.hooks.encoding import Encoded
from interp.hooks.locations import Location


@torch.no_grad()
def prefix_cache(model, input_ids: Tensor):
    """The key/value cache of ``input_ids`` (int64 ``[bases, p]``, the bases' positions before the intervened ones)
    through every block: one ``DynamicCache`` whose batch rows are the bases."""
    base = model.base_model
    out = base(input_ids=input_ids, use_cache=True)
    return getattr(out, "cache", None) or out.past_key_values


def rows_cache(cache, rows: Tensor):
    """A copy of ``cache`` whose batch rows are ``rows`` (int64 ``[n]``, indices into its rows); ``cache`` is left as it is."""
    mine = copy.copy(cache)
    if hasattr(cache, "layers"):  # transformers 5: a list of layer objects, each shallow-copied before its rows are picked
        mine.layers = [copy.copy(layer) for layer in cache.layers]
    else:
        mine = copy.deepcopy(cache)
    mine.batch_select_indices(rows)
    return mine


def run_suffix_cached(model, hidden: Tensor, hidden_index: int, input_ids: Tensor, cache) -> Tensor:
    """Classifier logits, float ``[rows, labels]``, of rows whose positions from ``p`` on are ``hidden`` (float ``[rows,
    seq - p, d_model]``, as ``hidden_states[hidden_index]``) after a prefix of ``p`` positions held in ``cache``.
    ``input_ids`` (int64 ``[rows, seq - p]``) give the shapes; the last position is read."""
    with architecture(model).from_block(model, hidden_index, hidden):
        return model(**model_inputs(model, input_ids), cache=cache).logits


def reuse_groups(bases: Sequence[Encoded], tokens: Sequence[Sequence[int]]) -> list[list[int]]:
    """Indices of ``bases`` grouped by token length and earliest intervened position (groups in order of first appearance)."""
    groups: dict[tuple[int, int], list[int]] = defaultdict(list)
    for index, (e, where) in enumerate(zip(bases, tokens)):
        groups[len(e.input_ids), min(where)].append(index)
    return list(groups.values())


@torch.no_grad()
def decoder_logits(model, bases: Sequence[Encoded], sources: Tensor, location: Location, tokens: Sequence[Sequence[int]], *,
                   batch_size: int, out: Tensor, on_rows: Callable[[int], None] | None = None, reuse: bool = True) -> Tensor:  # fmt: skip
    """Fill ``out`` (float32 ``[len(bases), n_sources, labels]``) with the logits of every base with its vectors at
    ``location`` (its tokens ``tokens[i]``) replaced by each source's (``sources``: float ``[n_sources, tokens, width]``
    on the model's device); see the module docstring. Returns ``out``."""
    device = next(model.parameters()).device
    rest = None if location.is_residual else BlockRest(model, location)
    index = location.hidden_index  # the suffix starts here: after the block of a component
    n_sources = sources.shape[0]
    for group in reuse_groups(bases, tokens):
        ids = torch.tensor([bases[i].input_ids for i in group], dtype=torch.long, device=device)
        where = torch.tensor([tokens[i] for i in group], device=device)  # [bases, tokens]
        start = int(where.min()) if reuse else 0  # the positions before it are the bases' own in every block
        if rest is None:
            prefix = run_prefix(model, ids, None, index)
        else:
            prefix, parts = rest.prefix(ids, torch.zeros_like(ids), where)
        cache = prefix_cache(model, ids[:, :start]) if start > 0 else None

        def run(rows: Tensor, size: int) -> None:
            b, s = rows // n_sources, rows % n_sources
            vectors = sources[s] if rest is None else rest(gather(parts, b), sources[s])  # [rows, tokens, d_model]
            hidden = prefix.index_select(0, b)
            hidden[torch.arange(len(rows), device=device)[:, None], where[b]] = vectors
            if cache is None:
                logits = run_suffix(model, hidden, index, ids[b], torch.zeros_like(ids[b]))
            else:
                logits = run_suffix_cached(model, hidden[:, start:], index, ids[b][:, start:], rows_cache(cache, b))
            out[torch.tensor(group)[b.cpu()], s.cpu()] = logits.float().cpu()

        in_passes(len(group) * n_sources, batch_size, run, device=device, on_rows=on_rows)
    return out


def decoder_interchange_logits(model, bases: Sequence[Encoded], sources: Tensor, location: Location, *, batch_size: int | None = None,
                               on_rows: Callable[[int], None] | None = None, reuse: bool = True) -> Tensor:  # fmt: skip
    """Logits of the interchange intervention in a decoder for every (base, source) pair at ``location``: the decoder's
    counterpart of :func:`interp.engine.batched.interchange_logits` (what :class:`~interp.backends.hf.DecoderRunner` runs).

    Args:
        model: a decoder classifier (:class:`~interp.models.decoders.DecoderClassifier` or a
            ``...ForSequenceClassification`` decoder) in eval mode; it reads each input's last token.
        bases: the encoded base inputs (joined by the model's template).
        sources: float ``[n_sources, tokens × width]``, the source vectors at ``location``.
        location: where the bases' vectors are replaced (a residual or component site).
        batch_size: rows (pairs) per pass; ``None``: :func:`~interp.engine.rows.auto_batch_size` for the longest base.
            A pass that runs out of memory is run again with half as many rows (:func:`~interp.engine.rows.in_passes`).
        on_rows: called with the number of pairs after each pass (progress).
        reuse: each base's positions before its earliest intervened one run once, their keys and values serving every
            source (the module docstring); ``False``: every position of every pair.

    Returns:
        float32 ``[len(bases), n_sources, n_labels]``; ``[i, j]`` is base i with source j's vectors at ``location``.

    Raises:
        ConfigError: as :func:`~interp.engine.rows.interchange_grid`.
    """
    tokens, sources, out = interchange_grid(model, bases, sources, location)
    size = batch_size or auto_batch_size(model, max((len(e.input_ids) for e in bases), default=1))
    return decoder_logits(model, bases, sources, location, tokens, batch_size=size, out=out, on_rows=on_rows, reuse=reuse)
