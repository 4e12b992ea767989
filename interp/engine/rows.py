"""The loop over a length bucket's base and source rows, written once: passes of a few rows each, a pass that runs out
of device memory retried with half as many, so no row is ever dropped.

Usage::

    tokens, sources, out = interchange_grid(model, bases, vectors, loc)   # checked once: what every mode starts from
    size = batch_size or auto_batch_size(model, longest)                   # rows per pass: 256 on a CPU, from free GPU memory
    def run(rows, size):                      # rows: int64 [k] of 0 .. total - 1 (pair = base × n_sources + source)
        out[...] = suffix(rows)               # the run mode's work for these rows, its logits written where they belong
    in_passes(total, size, run, device=device, on_rows=progress)

Every run mode of the engine (the encoder's suffix, fused or compiled; a component site's block rest; a decoder's
suffix with or without each base's prefix reused; a whole hooked pass per pair) is a ``run`` the loop calls
(:mod:`interp.engine.batched`, the encoder's; :mod:`interp.engine.decoder`, the decoder's).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Sequence

import torch
from jaxtyping import Int
from torch import Tensor

from interp.core.errors import ConfigError
from interp.hooks.encoding import Encoded, location_tokens
from interp.hooks.locations import Location

CPU_BATCH_SIZE = 256
#: The most rows one attention call takes on a GPU: the flash and memory-efficient kernels put the batch on a grid
#: axis that CUDA caps at 2**16 - 1 (pytorch/pytorch#146704); a batch of 2**16 fails with "invalid argument".
GPU_MAX_ROWS = (1 << 16) - 1


def length_groups(encoded: Sequence[Encoded]) -> list[list[int]]:
    """Indices of ``encoded`` grouped by token length (groups in order of first appearance): a group's rows need no padding."""
    groups: dict[int, list[int]] = defaultdict(list)
    for index, e in enumerate(encoded):
        groups[len(e.input_ids)].append(index)
    return list(groups.values())


def grouped_passes(encoded: Sequence[Encoded], size: int, run: Callable[[list[int]], None], *, device: torch.device | str = "cpu",
                   on_rows: Callable[[int], None] | None = None, on_out_of_memory: Callable[[], None] | None = None) -> None:  # fmt: skip
    """Every example of ``encoded`` once, in passes of one input length (no padding) of at most ``size``:
    ``run(indices)`` with the examples' indices into ``encoded``; a pass that runs out of memory is run again in halves
    (:func:`in_passes`, per length group), ``on_rows(k)`` after each pass that finished."""
    for group in length_groups(encoded):
        index = torch.tensor(group)
        in_passes(len(group), size, lambda rows, _size, index=index: run(index[rows.cpu()].tolist()), device=device, on_rows=on_rows,
                  on_out_of_memory=on_out_of_memory)  # fmt: skip


def auto_batch_size(model, seq_len: int) -> int:
    """Rows per suffix pass: :data:`CPU_BATCH_SIZE` on CPU; on a GPU, what half its free memory holds, at most :data:`GPU_MAX_ROWS`.

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
    feed_forward = getattr(config, "intermediate_size", None) or getattr(config, "n_inner", None) or 4 * config.hidden_size
    per_token = 6 * config.hidden_size + feed_forward + config.num_attention_heads * seq_len
    per_row = 2 * seq_len * per_token * parameter.element_size()
    return int(max(1, min(GPU_MAX_ROWS, free // 2 // per_row)))


def interchange_grid(model, bases: Sequence[Encoded], sources: Tensor, location: Location) -> tuple[list, Tensor, Tensor]:
    """What every run mode of the interchange over all (base, source) pairs starts from, checked once.

    Args:
        model: the classifier (its device, dtype, label count and the location's width).
        bases: the encoded base inputs.
        sources: float ``[n_sources, tokens × width]``, the source vectors at ``location``.
        location: where the bases' vectors are replaced.

    Returns:
        ``(tokens, sources, out)``: each base's token indices at the location's roles; the sources as
        ``[n_sources, tokens, width]`` on the model's device and dtype; an empty float32 ``[len(bases), n_sources,
        labels]`` on the CPU for the logits.

    Raises:
        ConfigError: a base lacks one of the location's roles, its token count there is not the sources', or
            ``sources`` is not ``[n_sources, tokens × width]``.
    """
    parameter = next(model.parameters())
    width = location.token_width(model.config)
    tokens = location_tokens(bases, location.roles, f"location {location}")
    n_tokens = len(tokens[0]) if tokens else 0
    if sources.dim() != 2 or sources.shape[1] != n_tokens * width:
        raise ConfigError(
            f"location {location}: sources must be [n_sources, tokens × width = {n_tokens} × {width}], got {tuple(sources.shape)}"
        )
    sources = sources.to(device=parameter.device, dtype=parameter.dtype).view(-1, n_tokens, width)
    return tokens, sources, torch.empty(len(bases), sources.shape[0], model.config.num_labels, dtype=torch.float32)


def in_passes(total: int, size: int, run: Callable[[Tensor, int], None], *, device: torch.device | str = "cpu",
              on_rows: Callable[[int], None] | None = None, on_out_of_memory: Callable[[], None] | None = None) -> None:  # fmt: skip
    """Run every row in consecutive passes, none dropped.

    ``run(rows, size)`` is called on each pass: rows ``0 .. total - 1`` in order, int64 ``[k]`` on ``device``, at most
    ``size`` each (the pass size in force, which a mode may read, e.g. to run only full passes compiled).

    A pass that raises :class:`torch.OutOfMemoryError` is run again with half as many rows (``on_out_of_memory()``
    first, to drop what the mode holds; the CUDA cache is emptied); ``on_rows(k)`` after each pass that finished.

    Raises:
        torch.OutOfMemoryError: even a pass of one row does not fit.
    """
    done = 0
    while done < total:
        rows = torch.arange(done, min(done + size, total), device=device)
        try:
            run(rows, size)
        except torch.OutOfMemoryError:
            if size == 1:
                raise
            if on_out_of_memory is not None:
                on_out_of_memory()
            size //= 2  # the same rows again, in smaller passes
            if torch.device(device).type == "cuda":
                torch.cuda.empty_cache()
            continue
        done += len(rows)
        if on_rows is not None:
            on_rows(len(rows))


def joint_batches(encoded: Sequence[Encoded], base_rows: Int[Tensor, "rows"], batch_size: int, generator: torch.Generator) -> list[Int[Tensor, "batch"]]:
    """The rows in shuffled batches of at most ``batch_size``, each of one input length (so a pass holds no padding):
    what training over joint runs steps through, seeded by ``generator``."""
    batches = []
    for group in length_groups([encoded[b] for b in base_rows.tolist()]):
        order = torch.tensor(group)[torch.randperm(len(group), generator=generator)]
        batches += list(order.split(batch_size))
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]
