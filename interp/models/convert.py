"""Turn a ``pytorch_model.bin`` checkpoint into one interp loads: the same directory with ``model.safetensors``.

Usage::

    from interp.models.convert import convert_checkpoint
    convert_checkpoint("downloads/bert-mnli", "models/bert-mnli")    # what `interp convert-checkpoint IN OUT` runs

Every other loader in interp reads safetensors only (a pickle can run code
when it is unpickled). Here the user has named the pickle: each ``.bin``
shard is read once with ``torch.load(weights_only=True)``, which unpickles
tensors and plain containers only, and the tensors are written with
``safetensors``. Only what a checkpoint needs is copied beside them: the
config and the tokenizer files (:data:`KEPT`); never a pickle (an
``optimizer.pt``, a ``training_args.bin``) or anything else. The new directory appears only complete, and is checked as any
checkpoint is (:func:`interp.models.checkpoint.check_weights`).
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

from interp.core.errors import ModelError, OutputError
from interp.core.outputs import partial_path, replace_dir
from interp.models.checkpoint import TOKENIZER_FILES, WEIGHTS, WEIGHTS_INDEX, check_weights

PICKLE = "pytorch_model.bin"
PICKLE_INDEX = "pytorch_model.bin.index.json"
#: The files copied into a converted checkpoint beside its ``model.safetensors``: the config and the tokenizer's.
KEPT: tuple[str, ...] = ("config.json", *TOKENIZER_FILES, "merges.txt", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json")


def pickle_shards(directory: Path) -> list[str]:
    """The ``.bin`` weight files of a checkpoint directory: ``pytorch_model.bin``, else the shards its index names; ``[]`` if none.

    Raises:
        ModelError: an index that is unreadable or names a shard outside ``directory``.
    """
    if (directory / PICKLE).is_file():
        return [PICKLE]
    index = directory / PICKLE_INDEX
    if not index.is_file():
        return []
    try:
        shards = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ModelError(f"{index}: not a weights index ({type(exc).__name__}: {exc})") from None
    for shard in shards:
        if not isinstance(shard, str) or Path(shard).name != shard:
            raise ModelError(f"{index}: shard {shard!r} is not a file in the same directory")
    return shards


def _first_line(exc: BaseException) -> str:
    """An exception's first line, or its type's name when it says nothing (an empty file's ``EOFError``)."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else f"{type(exc).__name__}: empty or truncated"


def convert_checkpoint(source: str | Path, out: str | Path, *, overwrite: bool = False) -> Path:
    """Write ``source`` (a Hugging Face checkpoint saved as ``pytorch_model.bin``) to ``out`` with ``model.safetensors``.

    Args:
        source: the checkpoint directory holding ``pytorch_model.bin`` or ``pytorch_model.bin.index.json`` and its shards.
        out: the directory to create; the same files, with the weights as one ``model.safetensors``.
        overwrite: replace an existing ``out``.

    Returns:
        ``out`` as a path.

    Raises:
        ModelError: naming ``source``: not a directory, no ``config.json``, no ``.bin`` weights (or already
            safetensors), a shard that is missing, not a weights pickle, or holds more than tensors.
        OutputError: naming ``out``: it exists (without ``overwrite``), is ``source`` itself, or cannot be written.
    """
    import torch
    from safetensors import SafetensorError
    from safetensors.torch import save_file

    source, out = Path(source).expanduser(), Path(out).expanduser()
    if not source.is_dir():
        raise ModelError(f"{source} is not a checkpoint directory")
    if not (source / "config.json").is_file():
        raise ModelError(f"checkpoint directory {source} has no config.json: not a Hugging Face checkpoint")
    shards = pickle_shards(source)
    if not shards:
        done = (source / WEIGHTS).is_file() or (source / WEIGHTS_INDEX).is_file()
        raise ModelError(f"checkpoint directory {source} " + ("already holds safetensors weights; load it as it is" if done else f"has no {PICKLE} to convert"))
    if out.resolve() == source.resolve():
        raise OutputError(f"{out} is the checkpoint being converted; give another directory")
    if out.exists() and not overwrite:
        raise OutputError(f"{out} already exists; choose another path or pass `overwrite=True`")
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out} is a file; give a directory")
    state: dict = {}
    for shard in shards:
        path = source / shard
        if not path.is_file():
            raise ModelError(f"checkpoint directory {source}: shard {shard} does not exist")
        try:
            with warnings.catch_warnings():  # torch's own warnings and advice are not for this file's user
                warnings.simplefilter("ignore")
                part = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # noqa: BLE001 - UnpicklingError, RuntimeError, EOFError: all mean "not weights"
            if type(exc).__name__ == "UnpicklingError" and ("weights_only" in str(exc) or "global" in str(exc).lower()):
                raise ModelError(f"{path}: refused: it holds Python objects other than tensors, which unpickling would run; "
                                 "interp converts only files of tensors (and runs no other pickle)") from None
            raise ModelError(f"{path}: not a torch weights file ({_first_line(exc)})") from None
        if not isinstance(part, dict) or not all(isinstance(v, torch.Tensor) for v in part.values()):
            raise ModelError(f"{path}: holds a {type(part).__name__} of more than tensors, not a state dict")
        state.update(part)
    # safetensors keeps one storage per name: tied weights (an MLM decoder and the embeddings) are written apart.
    seen, tensors = set(), {}
    for name, tensor in state.items():
        key = (tensor.untyped_storage().data_ptr(), tensor.untyped_storage().nbytes())
        tensors[name] = tensor.clone().contiguous() if key in seen and key[1] else tensor.contiguous()
        seen.add(key)
    staging = partial_path(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        if staging.exists():
            shutil.rmtree(staging)
        staging.mkdir()
        for name in KEPT:
            if (source / name).is_file() and not (source / name).is_symlink():
                shutil.copyfile(source / name, staging / name)
        save_file(tensors, str(staging / WEIGHTS), metadata={"format": "pt"})
        check_weights(staging)
        replace_dir(staging, out)
    except (OSError, SafetensorError) as exc:  # safetensors reports a full disk as its own error
        raise OutputError(f"{out}: cannot write the checkpoint ({getattr(exc, 'strerror', None) or exc})") from None
    finally:  # an error or an interrupt leaves no half-written directory
        shutil.rmtree(staging, ignore_errors=True)
    return out


__all__ = ["KEPT", "PICKLE", "PICKLE_INDEX", "convert_checkpoint", "pickle_shards"]
