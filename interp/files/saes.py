"""A sparse autoencoder on disk, in SAELens's folder layout: ``cfg.json`` and ``sae_weights.safetensors``.

Usage::

    save_sae(sae, "runs/saes/blocks.3.hook_resid_post", {"hook_name": "blocks.3.hook_resid_post"})
    sae = load_sae("runs/saes/blocks.3.hook_resid_post", width=576)    # refused unless it reads 576-wide vectors

The layout is SAELens's (``SAE.save_model`` / ``SAE.load_from_disk``), so an SAE trained here opens in SAELens and
one trained with SAELens opens here: the weights ``W_enc`` (``[d_in, d_sae]``), ``b_enc`` (``[d_sae]``), ``W_dec``
(``[d_sae, d_in]``) and ``b_dec`` (``[d_in]``) as safetensors, and ``cfg.json`` with ``d_in``, ``d_sae``,
``architecture`` (``standard``: ReLU; ``topk`` with ``k``), ``apply_b_dec_to_input`` and ``normalize_activations``.
Other architectures (JumpReLU, gated) and normalized inputs are refused, naming the field. No code is loaded.

Raises:
    DataError: naming the folder and the file: a missing or unreadable file, a field missing or of another kind, an
        architecture or normalization not read here, a tensor missing or of a shape ``cfg.json`` does not give, a
        NaN or an infinity, an SAE of another width than ``width``.
    OutputError: ``save_sae`` into a folder that exists (unless ``overwrite=True``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from interp.core.errors import ConfigError, DataError, OutputError, named
from interp.core.outputs import ensure_writable_dir, partial_path, replace_dir
from interp.engine.featurizers import SparseAutoencoder

CONFIG, WEIGHTS = "cfg.json", "sae_weights.safetensors"
TENSORS = ("W_enc", "b_enc", "W_dec", "b_dec")


def save_sae(sae: SparseAutoencoder, folder: str | Path, meta: dict | None = None, *, overwrite: bool = False) -> Path:
    """Write ``sae`` into ``folder`` (built beside it and moved in whole); ``meta`` joins ``cfg.json`` (SAELens's
    ``hook_name``, ``model_name``, ...). Returns the folder.

    Raises:
        OutputError: naming ``out=``: the folder exists and ``overwrite`` is not set, or it cannot be written.
    """
    folder = Path(folder)
    if (folder.exists() or folder.is_symlink()) and not overwrite:
        raise OutputError(f"{named('out', folder)} already exists; choose another folder or pass `overwrite=True`")
    ensure_writable_dir(folder.parent)
    staged = partial_path(folder)
    shutil.rmtree(staged, ignore_errors=True)
    staged.mkdir()
    try:
        config = {**(meta or {}), "d_in": sae.width, "d_sae": sae.n_features, "architecture": "topk" if sae.activation == "topk" else "standard",
                  "apply_b_dec_to_input": sae.center, "normalize_activations": "none", "dtype": "float32", "device": "cpu"}  # fmt: skip
        if sae.activation == "topk":
            config["k"] = sae.k
        save_file({name: getattr(sae, name).detach().float().contiguous() for name in TENSORS}, str(staged / WEIGHTS))
        (staged / CONFIG).write_text(json.dumps(config, indent=1, sort_keys=True), encoding="utf-8")
        replace_dir(staged, folder)
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    return folder


def _field(config: dict, name: str, kind: type, where: Path):
    value = config.get(name)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise DataError(f"{where}: field {name!r} must be {'an int' if kind is int else 'true or false' if kind is bool else 'a string'}, got {value!r}")
    return value


def load_sae(folder: str | Path, width: int | None = None) -> SparseAutoencoder:
    """The SAE in ``folder`` (SAELens's layout), checked; ``width``: the location's width it must read.

    Raises:
        DataError: as the module says, naming the folder's file.
    """
    folder = Path(folder)
    config_path, weights_path = folder / CONFIG, folder / WEIGHTS
    for path in (config_path, weights_path):
        if not path.is_file():
            raise DataError(f"{path}: not found; an SAE folder holds {CONFIG} and {WEIGHTS} (SAELens's layout)")
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"{config_path}: not a readable JSON object ({type(exc).__name__})") from None
    if not isinstance(config, dict):
        raise DataError(f"{config_path}: not a JSON object")
    d_in, d_sae = _field(config, "d_in", int, config_path), _field(config, "d_sae", int, config_path)
    architecture = config.get("architecture", "standard")
    if architecture not in ("standard", "topk"):
        raise DataError(f"{config_path}: architecture {architecture!r} is not read here (standard or topk)")
    if config.get("normalize_activations", "none") not in ("none", None):
        raise DataError(f"{config_path}: normalize_activations {config['normalize_activations']!r} is not read here (none)")
    k = _field(config, "k", int, config_path) if architecture == "topk" else None
    center = config.get("apply_b_dec_to_input", True)
    if not isinstance(center, bool):
        raise DataError(f"{config_path}: field 'apply_b_dec_to_input' must be true or false, got {center!r}")
    try:
        tensors = load_file(str(weights_path))
    except (OSError, SafetensorError, ValueError) as exc:
        raise DataError(f"{weights_path}: not a readable safetensors file ({next(iter(str(exc).splitlines()), type(exc).__name__)})") from None
    missing = [name for name in TENSORS if name not in tensors]
    if missing:
        raise DataError(f"{weights_path}: no tensor {missing[0]!r}; an SAE holds {', '.join(TENSORS)}")
    shapes = {"W_enc": (d_in, d_sae), "b_enc": (d_sae,), "W_dec": (d_sae, d_in), "b_dec": (d_in,)}
    for name, shape in shapes.items():
        if tuple(tensors[name].shape) != shape:
            raise DataError(f"{weights_path}: {name} has shape {tuple(tensors[name].shape)}; {CONFIG} (d_in {d_in}, d_sae {d_sae}) gives {shape}")
    if width is not None and d_in != width:
        raise DataError(f"{folder}: the SAE reads {d_in}-wide vectors (d_in); the location is {width} wide")
    try:
        return SparseAutoencoder(*(tensors[name].float() for name in TENSORS), activation="topk" if k else "relu", k=k, center=center).eval()
    except ConfigError as exc:
        raise DataError(f"{weights_path}: {exc}") from None
