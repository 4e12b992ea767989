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
* at a component site of block l (a head's ``hook_z``, ``hook_attn_out``,
  ``hook_resid_mid``, ``hook_mlp_out``) the rest of block l runs per pair
  at the intervened tokens only (:mod:`interp.engine.components`), and the
  suffix starts at block l's output;
* the blocks after L (the suffix) run on a batch of rows, each a copy of a
  base's prefix with the source's vectors written at the base's tokens of
  the location (one per role; every piece under ``--wordpiece all``), the
  last block for the [CLS] row only
  (:mod:`interp.engine.slicing`); for BERT and RoBERTa through
  fused blocks that reuse their buffers (:mod:`interp.engine.blocks`),
  where the first suffix block's projection and attention are not run per
  pair: its queries, keys and values are the base's except at the
  intervened token, so its attention comes from each base's share (once per
  base) and each source's row (once per source), :mod:`interp.engine.reuse`.

Other families run the suffix through their own modules; where a block
mixes tokens after a component site (DeBERTa-v2's convolution after block
0) each pair runs its whole forward pass with the site hooked, rows still
batched.

Bases are grouped by token length so no row is ever padded: every row is the
same computation as the naive unpadded pass, and the test suite checks
labels and logits (within 1e-5) against the naive loop.

On a GPU the number of rows per suffix pass is chosen from free memory
(:func:`~interp.engine.rows.auto_batch_size`), and a pass that runs out of memory is retried
with half the rows, down to one: no pair is ever dropped.
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from typing import Callable, Iterator, Sequence

import torch
from torch import Tensor

from interp.core.devices import attention_without_cudnn
from interp.core.errors import ConfigError
from interp.engine.compiled import CompiledSuffix, CompileStats
from interp.engine.components import BlockRest, gather
from interp.engine.plan import Sources, WritePlan, plan_logits
from interp.engine.reuse import BaseAttention, base_attention, interchange_context
from interp.engine.rows import CPU_BATCH_SIZE, GPU_MAX_ROWS, auto_batch_size, grouped_passes, in_passes, interchange_grid, length_groups  # noqa: F401 (also read from here)
from interp.engine.slicing import fast_suffix, run_prefix, run_suffix
from interp.hooks import hooked
from interp.hooks.architecture import architecture, model_inputs
from interp.hooks.locations import Location
from interp.hooks.encoding import Encoded, location_tokens

PRECISIONS = ("fp32", "tf32", "bf16")
#: A named host step in ``torch.profiler``'s tables (``benchmarks/gpu.py --profile``); nearly free when not profiling.
step = torch.profiler.record_function


@contextmanager
def precision(model, name: str) -> Iterator[None]:
    """Run ``model`` in fp32 (the default), with TF32 GPU matmuls, or in bfloat16; restored in ``finally``.

    For bf16 the weights are kept aside in host memory and put back exactly
    afterwards (a round trip through bfloat16 would round them), and
    attention avoids cuDNN's kernel (:func:`~interp.core.devices.attention_without_cudnn`).

    Raises:
        ConfigError (a ValueError): ``name`` is not one of :data:`PRECISIONS`.
    """
    if name not in PRECISIONS:
        raise ConfigError(f"precision must be one of {PRECISIONS}, got {name!r}")
    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    dtype = next(model.parameters()).dtype
    saved = None
    try:
        with ExitStack() as stack:
            if name == "tf32":
                torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
            elif name == "bf16":
                saved = {key: value.detach().to("cpu", copy=True) for key, value in model.state_dict().items()}
                model.to(torch.bfloat16)
                stack.enter_context(attention_without_cudnn())  # no cuDNN plan per batch shape
            yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn
        model.to(dtype)
        if saved is not None:
            model.load_state_dict(saved)


def _inputs(encoded: Sequence[Encoded], indices: Sequence[int], device) -> tuple[Tensor, Tensor]:
    ids = torch.tensor([encoded[i].input_ids for i in indices], dtype=torch.long, device=device)
    types = torch.tensor([encoded[i].token_type_ids for i in indices], dtype=torch.long, device=device)
    return ids, types


def _chunks(items: Sequence[int], size: int) -> list[Sequence[int]]:
    return [items[k : k + size] for k in range(0, len(items), size)]


@torch.no_grad()
def source_vectors(model, encoded: Sequence[Encoded], location: Location, batch_size: int = 64) -> Tensor:
    """Each example's vector at ``location``: float32 ``[len(encoded), tokens × width]`` on the model's device.

    ``width`` is d_model, or d_head at one head's ``attn.hook_z``; a
    component site of block l runs the blocks up to l's output.

    Unpadded batches of equal-length examples, so each vector equals a
    batch-1 forward pass's.

    Raises:
        ConfigError: an example lacks one of the location's roles, or the
            token count at a role differs between examples (:func:`location_tokens`).
    """
    return _read(model, encoded, location, batch_size, whole=False)[0]


@torch.no_grad()
def vectors_and_logits(model, encoded: Sequence[Encoded], location: Location, batch_size: int = 64) -> tuple[Tensor, Tensor]:
    """:func:`source_vectors` and each example's own classifier logits from the same forward passes: float32
    ``[len(encoded), tokens × width]`` on the model's device and float32 ``[len(encoded), n_model_labels]`` on CPU.

    The whole model runs, not only the blocks up to ``location``: the model's own predictions (the nulls' "stays the
    base's" and "copies the source's") cost the blocks after the location instead of a second pass. At a
    residual-stream location those blocks run as the engine runs a pair's (:func:`~interp.engine.slicing.run_suffix`:
    fused where the model allows, the last block for [CLS] only). Unpadded batches, so both equal a batch-1 forward
    pass's. Raises as :func:`source_vectors`.
    """
    return _read(model, encoded, location, batch_size, whole=True)


def _read(model, encoded: Sequence[Encoded], location: Location, batch_size: int, whole: bool) -> tuple[Tensor, Tensor | None]:
    """The vectors at ``location`` (running the blocks up to it, or ``whole``: the model, whose logits come too)."""
    device = next(model.parameters()).device
    tokens = location_tokens(encoded, location.roles, f"location {location}")
    width = len(tokens[0]) * location.token_width(model.config) if tokens else 0
    out = torch.empty(len(encoded), width, dtype=torch.float32, device=device)
    logits = torch.empty(len(encoded), model.config.num_labels, dtype=torch.float32) if whole else None
    index = location.hidden_index
    # at a residual location before the last block, the blocks after it run as the engine runs a pair's
    suffix = whole and location.is_residual and index < len(architecture(model).block_list(model))
    fast = fast_suffix(model, index) if suffix else None
    def run(chunk: list[int]) -> None:
        ids, types = _inputs(encoded, chunk, device)
        positions = {r: torch.tensor([encoded[i].tokens(r) for i in chunk], dtype=torch.long) for r in location.roles}
        with hooked(model, positions, read=[location]) as trace:
            if whole and not suffix:
                logits[torch.tensor(chunk)] = model(**model_inputs(model, ids, types)).logits.float().cpu()
            else:
                hidden = run_prefix(model, ids, types, index)
        out[torch.tensor(chunk, device=device)] = trace[location].float()
        if suffix:
            logits[torch.tensor(chunk)] = run_suffix(model, hidden, index, ids, types, fast).float().cpu()

    grouped_passes(encoded, batch_size, run, device=device)  # a pass out of memory is halved
    return out, logits


def _first_block_context(shares: Sequence[BaseAttention], pair_qkv: Tensor, n_sources: int, start: int, out: Tensor) -> Tensor:
    """The first suffix block's attention context for pairs ``start .. start + len(pair_qkv) - 1`` (pair = base × n_sources + source).

    ``pair_qkv``: float ``[pairs, tokens, 3 d_model]``, each pair's vectors at
    the location through the block's Q/K/V projection; ``out``: float
    ``[pairs, seq, d_model]``, filled and returned. Each base's run of pairs
    is one call of :func:`interchange_context`.
    """
    stop = start + len(pair_qkv)
    for base in range(start // n_sources, (stop - 1) // n_sources + 1):
        lo, hi = max(start, base * n_sources), min(stop, (base + 1) * n_sources)
        interchange_context(shares[base], pair_qkv[lo - start : hi - start], out=out[lo - start : hi - start])
    return out


def _hooked_logits(model, bases, sources, location, batch_size, on_rows, out: Tensor) -> Tensor:
    """:func:`interchange_logits` where the rest of the block mixes tokens (DeBERTa-v2's convolution after block 0):
    each pair's whole forward pass with the source's vectors written at the site, the write plan's one hooked pass over
    the (base, source) pairs (:func:`interp.engine.plan.plan_logits`); ``out`` filled and returned."""
    n_sources = sources.shape[0]
    pairs = torch.cartesian_prod(torch.arange(len(bases)), torch.arange(n_sources)).reshape(-1, 2)  # (base, source)
    plan = WritePlan({location: Sources(sources.reshape(n_sources, -1), pairs[:, 1])})
    size = batch_size or auto_batch_size(model, max(len(e.input_ids) for e in bases))
    logits, _ = plan_logits(model, bases, pairs[:, 0], plan, batch_size=size, on_rows=on_rows)
    out.copy_(logits.view(len(bases), n_sources, -1))
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
    compile: bool = False,
    stats: CompileStats | None = None,
) -> Tensor:
    """Logits of the interchange intervention in an encoder for every (base, source) pair at ``location``.

    Args:
        model: an encoder classifier (:mod:`interp.hooks.architecture`) in eval mode. A decoder's interchange is
            :func:`interp.engine.decoder.decoder_interchange_logits` (its runner, :class:`~interp.backends.hf.DecoderRunner`).
        bases: the encoded base inputs.
        sources: float ``[n_sources, tokens × width]``, the source vectors at ``location``
            (:func:`source_vectors`, or the activation cache); ``width`` is
            d_model, or d_head at one head's ``attn.hook_z``.
        location: where to intervene; the base's tokens at ``location.roles`` are replaced.
            At a component site the rest of its block runs per pair at those
            tokens only (:mod:`interp.engine.components`), then the suffix as
            from the block's output.
        batch_size: rows (pairs) per suffix pass; ``None``: :func:`~interp.engine.rows.auto_batch_size`.
            A pass that runs out of memory is retried with half as many rows, in every mode (:mod:`interp.engine.rows`).
        on_rows: called with the number of pairs after each suffix pass (progress).
        compile: run each length bucket's full batches through the compiled suffix (:mod:`interp.engine.compiled`;
            BERT-layout encoders: other models run eagerly and ``stats.note`` says so). Check the device first with
            :func:`~interp.engine.compiled.use_compile`.
        stats: where compiling's first-call seconds and the compiled and eager pairs are counted.

    Returns:
        float32 ``[len(bases), n_sources, n_labels]``; ``[i, j]`` is the
        model's output on base i with the vectors at ``location`` taken from
        source j.

    Raises:
        ConfigError: ``model`` is a decoder; a base lacks one of the location's roles, its token
            count there is not the sources', or the model lacks the site
            (:func:`~interp.engine.rows.interchange_grid`, :func:`~interp.hooks.site_module`).
    """
    arch = architecture(model)
    if arch.decoder:
        raise ConfigError(f"{type(model).__name__} is a decoder: its interchange runs through "
                          "interp.engine.decoder.decoder_interchange_logits (the decoder runner), not the encoder engine")
    device = next(model.parameters()).device
    tokens, sources, out = interchange_grid(model, bases, sources, location)
    n_sources = sources.shape[0]
    stats = CompileStats() if stats is None else stats
    index = location.hidden_index  # the suffix starts here: after the block of a component
    hooked_pairs = arch.mixes_tokens_after(model, location)
    fast = None if hooked_pairs else fast_suffix(model, index)
    if compile and fast is None:
        stats.note = (f"{location}: no block runs after it, so nothing is compiled" if index >= len(arch.block_list(model)) else
                      f"{type(model).__name__} at {location} runs eagerly: the compiled suffix is BERT-layout encoders' blocks")  # fmt: skip
    if compile and hooked_pairs:  # every pair of these runs eagerly: counted as such
        stats.eager_pairs += len(bases) * n_sources
    if hooked_pairs:
        return _hooked_logits(model, bases, sources, location, batch_size, on_rows, out)
    rest = None if location.is_residual else BlockRest(model, location)
    compiled = CompiledSuffix(model, index, index + len(fast.layers), stats) if compile and fast is not None else None
    # the logits stay on the device until the end: no copy back, and no wait for the device, per batch
    found = out if device.type == "cpu" else torch.empty(out.shape, dtype=out.dtype, device=device)
    source_qkv = None if fast is None or rest is not None else fast.project(sources)  # [n_sources, tokens, 3 d_model]
    first = None if fast is None else fast.layers[0]
    for group in length_groups(bases):
        ids, types = _inputs(bases, group, device)
        size = batch_size or auto_batch_size(model, ids.shape[1])
        where = torch.tensor([tokens[i] for i in group], device=device)  # [bases, tokens]
        rows_of = torch.tensor(group, device=device)
        with step("interp.prefix"):
            if rest is None:
                prefix = torch.cat([run_prefix(model, ids[k : k + size], types[k : k + size], index) for k in range(0, len(group), size)])
            else:
                pieces = [rest.prefix(ids[k : k + size], types[k : k + size], where[k : k + size]) for k in range(0, len(group), size)]
                prefix = torch.cat([hidden for hidden, _ in pieces])
                parts = {name: torch.cat([p[name] for _, p in pieces]) for name in pieces[0][1]}
        if fast is not None:  # each base's share of the first suffix block's attention, once
            with step("interp.base_shares"):
                shares = [base_attention(qkv, tuple(p), first.heads, first.scaling) for qkv, p in zip(fast.project(prefix), where.tolist())]
        def run(rows: Tensor, size: int) -> None:
            b, s = rows // n_sources, rows % n_sources
            at = (torch.arange(len(rows), device=device)[:, None], where[b])
            with step("interp.rows"):
                vectors = sources[s] if rest is None else rest(gather(parts, b), sources[s])  # [rows, tokens, d_model]
                hidden = prefix.index_select(0, b)
                hidden[at] = vectors
            context = None
            if fast is not None:
                with step("interp.first_block_attention"):
                    pair_qkv = source_qkv[s] if rest is None else fast.project(vectors)
                    context = _first_block_context(shares, pair_qkv, n_sources, int(rows[0]), torch.empty_like(hidden))
            suffix = compiled if compiled is not None and len(rows) == size else fast  # a bucket's shorter last batch: eager
            with step("interp.suffix_compiled" if compiled is not None and suffix is compiled else "interp.suffix"):
                logits = run_suffix(model, hidden, index, ids[b], types[b], suffix, context)
            found[rows_of[b], s] = logits.float()
            if compile and suffix is not compiled:
                stats.eager_pairs += len(rows)

        in_passes(len(group) * n_sources, size, run, device=device, on_rows=on_rows, on_out_of_memory=fast.clear if fast is not None else None)
    if found is not out:
        with step("interp.copy_back"):
            out.copy_(found)
    return out
