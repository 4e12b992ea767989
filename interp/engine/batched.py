"""Batched interchange interventions: many (base, source) pairs at one location, each base's prefix run once.

Usage::

    vectors = source_vectors(model, encoded_sources, loc)           # float32 [n_sources, tokens × d_model]
    logits = interchange_logits(model, encoded_bases, vectors, loc) # float32 [n_bases, n_sources, n_labels]

The interchange intervention from base i to source j at location L (Geiger,
Richardson & Potts 2020, §6.2) runs the model on i with the vector at L
replaced by the vector at L on j. Naively that is one forward pass per
pair (:func:`interp.engine.naive.naive_interchange`). Here:

* each source's vector at L is computed once (or read from the fp32 cache);
* each base's ``hidden_states[L.hidden_index]`` (the prefix) is computed once;
* the blocks after L (the suffix) run on a batch of rows, each a copy of a
  base's prefix with the source's vectors written at the base's tokens of
  the location (one per role; every piece under ``--wordpiece all``), the
  last block for the [CLS] row only
  (:mod:`interp.engine.slicing`); for BERT-family models through
  fused blocks that reuse their buffers (:mod:`interp.engine.blocks`),
  where the first suffix block's projection and attention are not run per
  pair: its queries, keys and values are the base's except at the
  intervened token, so its attention comes from each base's share (once per
  base) and each source's row (once per source), :mod:`interp.engine.reuse`.

Bases are grouped by token length so no row is ever padded: every row is the
same computation as the naive unpadded pass, and the test suite checks
labels and logits (within 1e-5) against the naive loop.

On a GPU the number of rows per suffix pass is chosen from free memory
(:func:`auto_batch_size`), and a pass that runs out of memory is retried
with half the rows, down to one: no pair is ever dropped.
"""

from __future__ import annotations

from collections import defaultdict
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence

import torch
from torch import Tensor

from interp.core.errors import ConfigError
from interp.engine.reuse import BaseAttention, base_attention, interchange_context
from interp.engine.slicing import fast_suffix, run_prefix, run_suffix
from interp.hooks import hooked
from interp.hooks.locations import Location
from interp.tasks.encoding import Encoded, location_tokens

PRECISIONS = ("fp32", "tf32", "bf16")
CPU_BATCH_SIZE = 256


@contextmanager
def precision(model, name: str) -> Iterator[None]:
    """Run ``model`` in fp32 (the default), with TF32 GPU matmuls, or in bfloat16; restored in ``finally``.

    For bf16 the weights are kept aside in host memory and put back exactly
    afterwards (a round trip through bfloat16 would round them).

    Raises:
        ValueError: ``name`` is not one of :data:`PRECISIONS`.
    """
    if name not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {name!r}")
    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    dtype = next(model.parameters()).dtype
    saved = None
    try:
        if name == "tf32":
            torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
        elif name == "bf16":
            saved = {key: value.detach().to("cpu", copy=True) for key, value in model.state_dict().items()}
            model.to(torch.bfloat16)
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn
        model.to(dtype)
        if saved is not None:
            model.load_state_dict(saved)


def auto_batch_size(model, seq_len: int) -> int:
    """Rows per suffix pass: :data:`CPU_BATCH_SIZE` on CPU; on a GPU, what half its free memory holds.

    The per-row estimate is a block's activations under ``no_grad``: the
    input, queries, keys, values, context and output (6 × d_model), the
    feed-forward's hidden layer (d_ff) and the attention scores (heads × seq)
    for each of ``seq_len`` tokens, twice over for temporaries.
    """
    parameter = next(model.parameters())
    if parameter.device.type != "cuda":
        return CPU_BATCH_SIZE
    config = model.config
    free, _ = torch.cuda.mem_get_info(parameter.device)
    per_token = 6 * config.hidden_size + config.intermediate_size + config.num_attention_heads * seq_len
    per_row = 2 * seq_len * per_token * parameter.element_size()
    return int(max(1, min(1 << 16, free // 2 // per_row)))


def length_groups(encoded: Sequence[Encoded]) -> list[list[int]]:
    """Indices of ``encoded`` grouped by token length (groups in order of first appearance)."""
    groups: dict[int, list[int]] = defaultdict(list)
    for index, e in enumerate(encoded):
        groups[len(e.input_ids)].append(index)
    return list(groups.values())


def _inputs(encoded: Sequence[Encoded], indices: Sequence[int], device) -> tuple[Tensor, Tensor]:
    ids = torch.tensor([encoded[i].input_ids for i in indices], dtype=torch.long, device=device)
    types = torch.tensor([encoded[i].token_type_ids for i in indices], dtype=torch.long, device=device)
    return ids, types


def _chunks(items: Sequence[int], size: int) -> list[Sequence[int]]:
    return [items[k : k + size] for k in range(0, len(items), size)]


@torch.no_grad()
def source_vectors(model, encoded: Sequence[Encoded], location: Location, batch_size: int = 64) -> Tensor:
    """Each example's vector at ``location``: float32 ``[len(encoded), tokens × d_model]`` on the model's device.

    Unpadded batches of equal-length examples, so each vector equals a
    batch-1 forward pass's.

    Raises:
        ConfigError: an example lacks one of the location's roles, or the
            token count at a role differs between examples (:func:`location_tokens`).
    """
    device = next(model.parameters()).device
    tokens = location_tokens(encoded, location.roles, f"location {location}")
    width = len(tokens[0]) * model.config.hidden_size if tokens else 0
    out = torch.empty(len(encoded), width, dtype=torch.float32, device=device)
    for group in length_groups(encoded):
        for chunk in _chunks(group, batch_size):
            ids, types = _inputs(encoded, chunk, device)
            positions = {r: torch.tensor([encoded[i].tokens(r) for i in chunk], dtype=torch.long) for r in location.roles}
            with hooked(model, positions, read=[location]) as trace:
                run_prefix(model, ids, types, location.hidden_index)
            out[torch.tensor(chunk, device=device)] = trace[location].float()
    return out


def _first_block_context(shares: Sequence[BaseAttention], source_qkv: Tensor, start: int, stop: int, out: Tensor) -> Tensor:
    """The first suffix block's attention context for pairs ``start .. stop - 1`` (pair = base × n_sources + source).

    ``out``: float ``[stop - start, seq, d_model]``, filled and returned; each
    base's run of pairs takes a contiguous slice of the sources.
    """
    n_sources = source_qkv.shape[0]
    for base in range(start // n_sources, (stop - 1) // n_sources + 1):
        lo, hi = max(start, base * n_sources), min(stop, (base + 1) * n_sources)
        offset = base * n_sources
        interchange_context(shares[base], source_qkv[lo - offset : hi - offset], out=out[lo - start : hi - start])
    return out


@torch.no_grad()
def interchange_logits(
    model,
    bases: Sequence[Encoded],
    sources: Tensor,
    location: Location,
    *,
    batch_size: int | None = None,
    on_rows: Callable[[int], None] | None = None,
) -> Tensor:
    """Logits of the interchange intervention for every (base, source) pair at ``location``.

    Args:
        model: a BERT-family classifier in eval mode.
        bases: the encoded base inputs.
        sources: float ``[n_sources, tokens × d_model]``, the source vectors at ``location``
            (:func:`source_vectors`, or the activation cache).
        location: where to intervene; the base's tokens at ``location.roles`` are replaced.
        batch_size: rows (pairs) per suffix pass; ``None``: :func:`auto_batch_size`.
            A pass that runs out of memory is retried with half as many rows.
        on_rows: called with the number of pairs after each suffix pass (progress).

    Returns:
        float32 ``[len(bases), n_sources, n_labels]``; ``[i, j]`` is the
        model's output on base i with the vectors at ``location`` taken from
        source j.

    Raises:
        ConfigError: a base lacks one of the location's roles, its token
            count there is not the sources' (:func:`location_tokens`).
    """
    device = next(model.parameters()).device
    d_model = model.config.hidden_size
    tokens = location_tokens(bases, location.roles, f"location {location}")
    n_tokens = len(tokens[0]) if tokens else 0
    if sources.dim() != 2 or sources.shape[1] != n_tokens * d_model:
        raise ConfigError(
            f"location {location}: sources must be [n_sources, tokens × d_model = {n_tokens} × {d_model}], got {tuple(sources.shape)}"
        )
    sources = sources.to(device=device, dtype=next(model.parameters()).dtype).view(-1, n_tokens, d_model)
    n_sources = sources.shape[0]
    out = torch.empty(len(bases), n_sources, model.config.num_labels, dtype=torch.float32)
    fast = fast_suffix(model, location.hidden_index)
    source_qkv = None if fast is None else fast.project(sources.reshape(-1, d_model)).view(n_sources, n_tokens, -1)
    first = None if fast is None else fast.layers[0]
    for group in length_groups(bases):
        ids, types = _inputs(bases, group, device)
        size = batch_size or auto_batch_size(model, ids.shape[1])
        prefix = torch.cat(
            [
                run_prefix(model, ids[k : k + size], types[k : k + size], location.hidden_index)
                for k in range(0, len(group), size)
            ]
        )
        where = torch.tensor([tokens[i] for i in group], device=device)  # [bases, tokens]
        if fast is not None:  # each base's share of the first suffix block's attention, once
            shares = [base_attention(qkv, tuple(p), first.heads, first.scaling) for qkv, p in zip(fast.project(prefix), where.tolist())]
        total = len(group) * n_sources
        done = 0
        while done < total:
            rows = torch.arange(done, min(done + size, total), device=device)
            b, s = rows // n_sources, rows % n_sources
            at = (torch.arange(len(rows), device=device)[:, None], where[b])
            try:
                hidden = prefix.index_select(0, b)
                hidden[at] = sources[s]
                context = None
                if fast is not None:
                    context = _first_block_context(shares, source_qkv, done, done + len(rows), torch.empty_like(hidden))
                logits = run_suffix(model, hidden, location.hidden_index, ids[b], types[b], fast, context)
            except torch.OutOfMemoryError:
                if size == 1:
                    raise
                hidden = context = None
                if fast is not None:
                    fast.clear()
                size //= 2  # the same rows again, in smaller passes
                if device.type == "cuda":
                    torch.cuda.empty_cache()
                continue
            out[torch.tensor(group)[b.cpu()], s.cpu()] = logits.float().cpu()
            done += len(rows)
            if on_rows is not None:
                on_rows(len(rows))
    return out
