"""Choosing the torch device a command runs on."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager

import torch

from interp.core.errors import ConfigError, named

#: The device names a command takes.
DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?|mps")


def pick_device(device: str | torch.device) -> torch.device:
    """The device ``device`` names: ``auto`` (the first GPU when there is one, else the CPU), ``cpu``, ``cuda``, ``cuda:N`` or ``mps``.

    Raises:
        ConfigError: naming ``device=``: another name, or a GPU that is not there.
    """
    if isinstance(device, torch.device):
        device = str(device)
    if not isinstance(device, str) or not DEVICE.fullmatch(device):
        raise ConfigError(f"{named('device', repr(device))}: not a device; use auto, cpu, cuda, cuda:N or mps")
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ConfigError(f"{named('device', device)}: no CUDA device is available")
        index = int(device.partition(":")[2] or 0)
        if index >= torch.cuda.device_count():
            raise ConfigError(f"{named('device', device)}: there are {torch.cuda.device_count()} CUDA devices (cuda:0 to cuda:{torch.cuda.device_count() - 1})")
    if device == "mps" and not torch.backends.mps.is_available():
        raise ConfigError(f"{named('device', device)}: no MPS device is available")
    return torch.device(device)


def rank_device(device: str) -> str:
    """Under torchrun with GPUs, ``auto``/``cuda`` means this process's own GPU (``cuda:LOCAL_RANK``)."""
    local = os.environ.get("LOCAL_RANK")
    if local is not None and device in ("auto", "cuda") and torch.cuda.is_available():
        return f"cuda:{int(local)}"
    return device


@contextmanager
def attention_without_cudnn() -> Iterator[None]:
    """Scaled dot-product attention on flash, memory-efficient or math kernels, not cuDNN's; restored on exit.

    For bf16 on a Hopper GPU torch picks cuDNN's fused attention, which
    builds an execution plan for each new shape. The engine and fine-tuning
    run batches of many lengths and row counts, so the planning is paid
    again and again: on an H100 (torch 2.11), one bf16 engine call of 32
    bases × 2,678 MoNLI sources spent 564 ms of its 697 ms of CPU time
    there against 105 ms of GPU kernels, and bf16 ran slower than tf32
    (``benchmarks/BENCHMARKS.md``, "GPU on an H100"). The other kernels need no plan
    per shape. On a CPU this changes nothing (no cuDNN). The flash and
    memory-efficient kernels take at most 2**16 - 1 rows (the batch) in one
    call, where cuDNN takes more: the engine keeps its passes under that
    (:data:`interp.engine.batched.GPU_MAX_ROWS`). On an H200 the engine's bf16
    then ran all MoNLI pairs in 12.0 s against tf32's 16.5 s.
    """
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
        yield
