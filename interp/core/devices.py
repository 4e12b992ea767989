"""Choosing the torch device a command runs on."""

from __future__ import annotations

import os
import re

import torch

from interp.core.errors import ConfigError, named

#: The device names a command takes.
DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?|mps")


def pick_device(device: str | torch.device, argument: str = "device") -> torch.device:
    """The device ``device`` names: ``auto`` (the first GPU when there is one, else the CPU), ``cpu``, ``cuda``, ``cuda:N`` or ``mps``.

    Raises:
        ConfigError: naming ``argument``: another name, or a GPU that is not there.
    """
    if isinstance(device, torch.device):
        device = str(device)
    if not isinstance(device, str) or not DEVICE.fullmatch(device):
        raise ConfigError(f"{named(argument, repr(device))}: not a device; use auto, cpu, cuda, cuda:N or mps")
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ConfigError(f"{named(argument, device)}: no CUDA device is available")
        index = int(device.partition(":")[2] or 0)
        if index >= torch.cuda.device_count():
            raise ConfigError(f"{named(argument, device)}: there are {torch.cuda.device_count()} CUDA devices (cuda:0 to cuda:{torch.cuda.device_count() - 1})")
    if device == "mps" and not torch.backends.mps.is_available():
        raise ConfigError(f"{named(argument, device)}: no MPS device is available")
    return torch.device(device)


def rank_device(device: str) -> str:
    """Under torchrun with GPUs, ``auto``/``cuda`` means this process's own GPU (``cuda:LOCAL_RANK``)."""
    local = os.environ.get("LOCAL_RANK")
    if local is not None and device in ("auto", "cuda") and torch.cuda.is_available():
        return f"cuda:{int(local)}"
    return device
