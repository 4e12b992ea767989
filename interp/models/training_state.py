"""A resumable training state in one safetensors file: tensors in the body, the rest as JSON in its header.

Usage::

    save_training_state(path, model=model, optimizer=optimizer, scheduler=scheduler,
                        info={"fingerprint": "ab12", "epoch": 2, "log": [...]})
    state = read_training_state(path)
    if state is not None and state.info["fingerprint"] == "ab12":
        state.restore(model=model, optimizer=optimizer, scheduler=scheduler)

Nothing here unpickles: the model's and the optimizer's tensors are
safetensors entries (``model.<name>``, ``optimizer.<param index>.<name>``),
and everything else (the optimizer's parameter groups, the learning-rate
schedule, ``info``) is JSON kept in the safetensors metadata. The file is
written beside its path and moved into place with one ``os.replace``, so it
is either the previous epoch's state or the new one, never half of either.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from interp.core.errors import OutputError

_META_KEY = "interp_training_state"
_FORMAT = 1


def save_training_state(path: Path, *, model, optimizer, scheduler, info: dict[str, Any]) -> None:
    """Write the state of ``model``, ``optimizer`` and ``scheduler`` plus ``info`` (JSON) to ``path``.

    Raises:
        OutputError: the file cannot be written (disk full included), naming
            ``path``; whatever was at ``path`` before is left as it was.
    """
    from safetensors import SafetensorError
    from safetensors.torch import save_file

    tensors = {f"model.{k}": v.detach().cpu().contiguous().clone() for k, v in model.state_dict().items()}
    opt = optimizer.state_dict()
    names: dict[str, list[str]] = {}
    for index, entries in opt["state"].items():
        names[str(index)] = sorted(entries)
        for name, value in entries.items():
            tensors[f"optimizer.{index}.{name}"] = torch.as_tensor(value).detach().cpu().contiguous().clone()
    header = {
        "format": _FORMAT,
        "info": info,
        "optimizer": {"param_groups": opt["param_groups"], "state": names},
        "scheduler": scheduler.state_dict(),
    }
    tmp = path.with_name(path.name + ".tmp")
    try:
        save_file(tensors, str(tmp), metadata={_META_KEY: json.dumps(header)})
        os.replace(tmp, path)
    except (OSError, SafetensorError) as exc:  # safetensors reports a full disk as its own error
        tmp.unlink(missing_ok=True)
        raise OutputError(f"{path}: cannot write the training state ({exc})") from None


@dataclass(frozen=True)
class TrainingState:
    """A state read back by :func:`read_training_state`: its ``info`` and what restores the rest."""

    info: dict[str, Any]
    tensors: dict[str, torch.Tensor]
    header: dict[str, Any]

    def restore(self, *, model, optimizer, scheduler) -> bool:
        """Load the state into ``model``, ``optimizer`` and ``scheduler``; ``False`` (nothing changed) if it does not fit them."""
        ours = model.state_dict()
        theirs = {k[len("model.") :]: v for k, v in self.tensors.items() if k.startswith("model.")}
        if set(theirs) != set(ours) or any(theirs[k].shape != ours[k].shape for k in ours):
            return False
        try:
            state = {
                int(index): {name: self.tensors[f"optimizer.{index}.{name}"] for name in entries}
                for index, entries in self.header["optimizer"]["state"].items()
            }
            # Validates the groups against the optimizer's parameters before it changes anything.
            optimizer.load_state_dict({"state": state, "param_groups": self.header["optimizer"]["param_groups"]})
        except (KeyError, TypeError, ValueError):
            return False
        model.load_state_dict(theirs, strict=True)
        scheduler.load_state_dict(self.header["scheduler"])
        return True


def read_training_state(path: Path, device: str | torch.device = "cpu") -> TrainingState | None:
    """The state written by :func:`save_training_state` at ``path``, its tensors on ``device``.

    Returns ``None`` when ``path`` is missing or is not such a file
    (truncated, another format, a pickle planted there): the caller then
    starts afresh. Only safetensors and JSON are read, so nothing in the
    file can run code.
    """
    from safetensors import safe_open

    if not path.is_file():
        return None
    try:
        with safe_open(str(path), framework="pt", device=str(device)) as handle:
            header = json.loads((handle.metadata() or {})[_META_KEY])
            if not isinstance(header, dict) or header.get("format") != _FORMAT:
                return None
            tensors = {key: handle.get_tensor(key) for key in handle.keys()}
    except Exception:  # noqa: BLE001 - any unreadable file means "no usable state", never a crash
        return None
    if not isinstance(header.get("info"), dict):
        return None
    return TrainingState(info=header["info"], tensors=tensors, header=header)
