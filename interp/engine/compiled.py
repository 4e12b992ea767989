"""The suffix the engine runs per pair, through ``torch.compile``: fused kernels, and CUDA graphs for a bucket's full batches.

Usage::

    stats = CompileStats()
    logits = interchange_logits(model, bases, sources, loc, compile=True, stats=stats)   # as eager, to float rounding
    stats.first_call_seconds, stats.shapes, stats.compiled_pairs, stats.eager_pairs

An interchange run (:mod:`interp.engine.batched`) splits its pairs by token
length and runs each length bucket in batches of equal rows, so the suffix
sees a few shapes over and over. What is compiled is the suffix's blocks as
:class:`~interp.engine.blocks.FastBlocks` computes them (the fused Q/K/V
projection; the last block for [CLS] alone, its keys and values never
formed; the first block's attention context, made from the bases' shares by
:mod:`interp.engine.reuse`, comes in as an input), allocating fresh outputs
(``keep_buffers=False``) so that inductor (Ansel et al. 2024, *PyTorch 2*,
§4) plans the memory and fuses the bias adds, GELU and the hand-written
first-token attention into its own kernels. The model's weights are the
graph's inputs, not constants, so another model of the same shapes and
dtype reuses the graph; another suffix depth (location) or dtype is
another graph.

Shapes: the first shape compiles a static graph, the next a graph dynamic in
rows and tokens that serves the rest (torch's automatic dynamic shapes), so a
run compiles about twice whatever its number of buckets. Only a bucket's full
batches run compiled; the one shorter batch at each bucket's end runs
eagerly, because on a GPU each new shape would record a CUDA graph of its
own. On CUDA the graph is compiled with ``mode="reduce-overhead"``: each
shape's kernels replay as one CUDA graph, without a launch per operation.
Left to its default (``compile=None``, :func:`use_compile`) the suffix is
compiled on CUDA for calls of at least :data:`AUTO_COMPILE_PAIRS` pairs
only, and never on a CPU.

The compiled suffix equals the eager one to float rounding; the tests compare
them on the CPU, and :func:`compile_problem` says what a device lacks.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import time
from dataclasses import dataclass, field
from typing import Callable

import torch
from torch import Tensor

from interp.core.errors import ConfigError
from interp.engine.blocks import FastBlocks

#: The C++ compilers inductor's CPU code can be built with.
CPU_COMPILERS = ("g++", "c++", "clang++")


def compile_problem(device: torch.device) -> str | None:
    """Why ``torch.compile`` cannot build kernels for ``device`` here, in a phrase, or ``None`` when it can.

    On a CPU inductor builds C++ (a compiler must be on ``PATH``, Debian's
    ``build-essential``); on CUDA it builds Triton kernels (``triton`` comes with
    torch's CUDA wheels).
    """
    if device.type == "cuda":
        return None if importlib.util.find_spec("triton") is not None else "triton is not installed (it comes with torch's CUDA wheels)"
    if device.type == "cpu":
        found = any(shutil.which(name) for name in CPU_COMPILERS)
        return None if found else f"no C++ compiler on PATH ({', '.join(CPU_COMPILERS)}; Debian: apt-get install build-essential)"
    return f"torch.compile is not set up for {device.type} here"


#: Under ``compile=None``, a call of at least this many pairs is compiled on CUDA: at the bf16 rates measured on an H200
#: (about 600,000 MiniLM pairs/s) that is seconds of suffix, what compiling costs. A smaller call, as a location sweep's
#: at each of its locations (each a suffix of another depth, so another graph), runs eagerly.
AUTO_COMPILE_PAIRS = 1 << 20


def use_compile(requested: bool | None, device: torch.device, pairs: int | None = None) -> bool:
    """Whether to run the suffix compiled on ``device``: ``requested``, or when ``None`` the default: on for CUDA where it
    can run, for a call of at least :data:`AUTO_COMPILE_PAIRS` ``pairs`` (``None``: any call), and off on a CPU, where the tens of seconds of compiling per graph are recovered only
    by long runs of one location, and not at all at BERT-base's width (``benchmarks/BENCHMARKS.md``).

    Raises:
        ConfigError (a ValueError): naming ``compile=``, ``requested`` is ``True`` and the device cannot compile
            (:func:`compile_problem`).
    """
    if requested is False:
        return False
    problem = compile_problem(device)
    if requested is None:
        return device.type == "cuda" and problem is None and (pairs is None or pairs >= AUTO_COMPILE_PAIRS)
    if problem is not None:
        raise ConfigError(f"`compile=True` on {device.type}: {problem}; pass `compile=False` to run eagerly")
    return True


@dataclass
class CompileStats:
    """What compiling did over a runner's calls: a notebook or job reads it after a run.

    ``first_call_seconds``: the seconds of each shape's first compiled call, compilation included (what compiling
    adds to a run's wall time, less one eager call per shape); ``shapes``: the (rows, tokens, dtype) shapes run
    compiled; ``compiled_pairs`` and ``eager_pairs``: the pairs whose suffix ran compiled, and eagerly (each bucket's
    shorter last batch, or a model without BERT's block layout); ``note``: why a run asked to compile ran eagerly.
    """

    first_call_seconds: float = 0.0
    shapes: set = field(default_factory=set)
    compiled_pairs: int = 0
    eager_pairs: int = 0
    note: str | None = None

    def as_dict(self) -> dict:
        return {"first_call_seconds": self.first_call_seconds, "shapes": len(self.shapes), "compiled_pairs": self.compiled_pairs,
                "eager_pairs": self.eager_pairs, "note": self.note}  # fmt: skip


_COMPILED: dict[str, Callable] = {}  # one compiled function per device type: every model and precision shares it


def _suffix(blocks: FastBlocks, hidden: Tensor, context: Tensor | None) -> Tensor:
    return blocks(hidden, context)


def _separate_kernel_cache() -> None:
    """Inductor's on-disk cache of generated C++ is not keyed by ``ATEN_CPU_CAPABILITY``: kernels generated under one
    capability (AVX-512's vector types) then fail to build under another (``default``'s headers declare none). Under a
    capability the user set, and where they chose no ``TORCHINDUCTOR_CACHE_DIR``, its kernels get a folder of their own
    beside inductor's default one."""
    capability = os.environ.get("ATEN_CPU_CAPABILITY")
    if capability and "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
        from torch._inductor.runtime.runtime_utils import default_cache_dir

        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(default_cache_dir(), f"aten-{capability}")


def _compiled(device_type: str) -> Callable:
    if device_type not in _COMPILED:
        if device_type == "cpu":
            _separate_kernel_cache()
        mode = "reduce-overhead" if device_type == "cuda" else None  # CUDA graphs on a GPU
        _COMPILED[device_type] = torch.compile(_suffix, mode=mode, dynamic=None)
    return _COMPILED[device_type]


class CompiledSuffix:
    """:class:`~interp.engine.blocks.FastBlocks` of ``model`` from block ``start`` on, the last for [CLS] only, compiled.

    Called as the blocks are, ``(hidden, context=None)`` with float ``[rows, seq, d_model]`` tensors, it returns a
    fresh float ``[rows, 1, d_model]`` (on CUDA a copy of the graph's output, which the next replay reuses). Each
    new shape's first call is timed, the device synchronized, into ``stats``.
    """

    def __init__(self, model, start: int, stop: int, stats: CompileStats) -> None:
        self.blocks = FastBlocks(model, start, stop, first_token_last=True, keep_buffers=False)
        self.stats = stats

    def __call__(self, hidden: Tensor, context: Tensor | None = None) -> Tensor:
        device = hidden.device
        shape = (hidden.shape[0], hidden.shape[1], str(hidden.dtype), device.type)
        first = shape not in self.stats.shapes
        if first:
            _sync(device)
            began = time.perf_counter()
        if device.type == "cuda":
            torch.compiler.cudagraph_mark_step_begin()  # the previous replay's output is no longer read
        out = _compiled(device.type)(self.blocks, hidden, context)
        if device.type == "cuda":
            out = out.clone()
        if first:
            _sync(device)
            self.stats.first_call_seconds += time.perf_counter() - began
            self.stats.shapes.add(shape)
        self.stats.compiled_pairs += hidden.shape[0]
        return out


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
