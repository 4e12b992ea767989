"""The loop over a length bucket's base and source rows, written once: passes of a few rows each, a pass that runs out
of device memory retried with half as many, so no row is ever dropped.

Usage::

    def run(rows, size):                      # rows: int64 [k] of 0 .. total - 1 (pair = base × n_sources + source)
        out[...] = suffix(rows)               # the run mode's work for these rows, its logits written where they belong
    in_passes(total, size, run, device=device, on_rows=progress)

Every run mode of the engine (the encoder's suffix, fused or compiled; a component site's block rest; a decoder's
suffix with or without each base's prefix reused; a whole hooked pass per pair) is a ``run`` the loop calls
(:mod:`interp.engine.batched`, :mod:`interp.engine.decoder`).
"""

from __future__ import annotations

from typing import Callable

import torch
from torch import Tensor


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
