"""Choosing the torch device a command runs on."""

from __future__ import annotations

import torch

from interp.core.errors import ConfigError, named


def pick_device(device: str) -> torch.device:
    """``auto``: the first GPU when there is one, else the CPU."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"{named('device', device)}: no CUDA device is available")
    return torch.device(device)
