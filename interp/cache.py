"""The activation cache: every location's vector for every example, in one self-describing HDF5 file.

Usage::

    from interp.cache import CacheConfig, build_cache, open_cache
    build_cache(CacheConfig(model="runs/demo/model", out="runs/demo/activations.h5"))
    with open_cache("runs/demo/activations.h5", model="runs/demo/model") as cache:
        X = cache.vectors("blocks.2.hook_resid_post@w_h")   # float32 [n_examples, d_model]
        cache.example_ids, cache.meta["wordpiece"]

Layout (readable with plain h5py): one dataset per location, named by its
canonical string (``blocks.3.hook_resid_post@w_h``), shape
``[n_examples, d_model]``, chunked by batch; ``example_ids``, ``split``,
``label`` (0 entailment, 1 neutral), ``lexrel`` (0 forward ⊏, 1 reverse ⊐),
``w_p``, ``w_h``, ``positions`` (``[n, 3]``: cls, w_p, w_h); file attributes
``model``, ``model_sha256``, ``wordpiece``, ``locations``, ``n_layers``,
``d_model``, ``dtype``, ``complete``.

The file is written at ``<out>.partial`` with a per-batch ``batches_done``
mask and moved into place when complete: an interrupted run resumes at the
first unfinished batch, and ``<out>`` is never half-written.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import torch
from tqdm.auto import tqdm

from interp.data import ROLES, SPLITS, Lexrel, collate, encode_examples, load_monli
from interp.data.monli import sha256_of
from interp.errors import ConfigError
from interp.hdf5 import ExampleFile, finished, h5py, open_finished, open_partial
from interp.hooks import hooked, n_layers
from interp.locations import Location, all_locations
from interp.models.loading import load_classifier, resolve_model
from interp.outputs import ensure_writable_dir, partial_path

DTYPES = ("float32", "float16")
FORMAT = "interp.activations/1"


@dataclass(frozen=True)
class CacheConfig:
    """What to cache: a model's vectors at every location for the named MoNLI splits."""

    model: str
    out: str
    splits: tuple[str, ...] = tuple(SPLITS)
    wordpiece: str = "first"
    dtype: str = "float32"
    batch_size: int = 64
    device: str = "auto"
    data_dir: str | None = None
    verify_checksums: bool = True

    def validate(self) -> "CacheConfig":
        if self.dtype not in DTYPES:
            raise ConfigError(f"--dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        if self.batch_size < 1:
            raise ConfigError("--batch-size must be at least 1")
        if self.device not in ("auto", "cpu") and not self.device.startswith("cuda"):
            raise ConfigError(f"--device must be auto, cpu or cuda[:N], got {self.device!r}")
        return self


def pick_device(device: str) -> torch.device:
    """``auto``: the first GPU when there is one, else the CPU."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"--device {device}: no CUDA device is available")
    return torch.device(device)


def model_sha256(spec: str) -> str:
    """SHA-256 of a model's ``model.safetensors``: what identifies the weights a cache was made with."""
    path = Path(resolve_model(spec).location) / "model.safetensors"
    return sha256_of(path) if path.is_file() else ""


def build_cache(config: CacheConfig, *, progress: bool = True) -> Path:
    """Run the model over the examples and store every location's vector.

    Returns:
        The path of the finished file.

    Raises:
        ConfigError, DataError, ModelError: bad settings, data or model.
        OutputError: ``out`` cannot be written.
    """
    config.validate()
    out = Path(config.out)
    examples = load_monli(config.data_dir, config.splits, verify_checksums=config.verify_checksums)
    model, tokenizer = load_classifier(config.model, require_head=True)
    device = pick_device(config.device)
    model.to(device)
    encoded = encode_examples(examples, tokenizer, config.wordpiece)
    locations = all_locations(n_layers(model))
    n, d = len(examples), model.config.hidden_size
    n_batches = -(-n // config.batch_size)
    meta = {
        "format": FORMAT,
        "model": config.model,
        "model_sha256": model_sha256(config.model),
        "wordpiece": config.wordpiece,
        "locations": [str(loc) for loc in locations],
        "n_layers": n_layers(model),
        "d_model": d,
        "dtype": config.dtype,
    }
    ensure_writable_dir(out.parent if str(out.parent) else Path("."))
    ids = np.array([e.id for e in examples], dtype=object)
    if out.exists() and finished(out, meta, ids):
        if progress:
            tqdm.write(f"{out}: already cached with these settings, reusing it")
        return out
    work = partial_path(out)
    handle = open_partial(work, meta, ids)
    try:
        if "batches_done" not in handle:
            _initialise(handle, meta, examples, encoded, locations, n_batches, config)
        done = handle["batches_done"]
        todo = [b for b in range(n_batches) if not done[b]]
        bar = tqdm(todo, desc="cache", unit="batch", disable=not progress, initial=n_batches - len(todo), total=n_batches)
        with torch.no_grad():
            for b in bar:
                start, stop = b * config.batch_size, min((b + 1) * config.batch_size, n)
                batch = collate(encoded[start:stop], tokenizer.pad_token_id)
                inputs = {k: batch[k].to(device) for k in ("input_ids", "token_type_ids", "attention_mask")}
                with hooked(model, batch["positions"], read=locations) as trace:
                    model(**inputs)
                for loc in locations:
                    handle[str(loc)][start:stop] = trace[loc].float().cpu().numpy().astype(config.dtype)
                done[b] = True
                handle.flush()
        handle.attrs["complete"] = True
    finally:
        handle.close()
    os.replace(work, out)
    return out


def _initialise(handle, meta, examples, encoded, locations: list[Location], n_batches: int, config: CacheConfig) -> None:
    n = len(examples)
    strings = h5py().string_dtype()
    handle.create_dataset("example_ids", data=[e.id for e in examples], dtype=strings)
    handle.create_dataset("split", data=[e.split for e in examples], dtype=strings)
    handle.create_dataset("w_p", data=[e.w_p for e in examples], dtype=strings)
    handle.create_dataset("w_h", data=[e.w_h for e in examples], dtype=strings)
    handle.create_dataset("label", data=np.array([e.label_id for e in examples], dtype=np.int8))
    handle.create_dataset(
        "lexrel", data=np.array([0 if e.lexrel is Lexrel.FORWARD else 1 for e in examples], dtype=np.int8)
    )
    handle.create_dataset(
        "positions", data=np.array([[enc.positions[r] for r in ROLES] for enc in encoded], dtype=np.int32)
    )
    for loc in locations:
        handle.create_dataset(
            str(loc), shape=(n, meta["d_model"]), dtype=config.dtype, chunks=(min(config.batch_size, n), meta["d_model"])
        )
    handle.create_dataset("batches_done", data=np.zeros(n_batches, dtype=bool))
    for key, value in meta.items():
        handle.attrs[key] = value
    handle.attrs["complete"] = False
    handle.flush()


class Cache(ExampleFile):
    """A read-only view of a finished activation cache (``example_ids``, ``column`` from :class:`ExampleFile`)."""

    def vectors(self, location: str | Location) -> np.ndarray:
        """float32 ``[n_examples, d_model]`` at ``location``.

        Raises:
            ConfigError: the location is not in the cache.
        """
        loc = location if isinstance(location, Location) else Location.parse(location, self.meta["n_layers"])
        if str(loc) not in self.handle:
            raise ConfigError(f"location {loc} is not in the cache {self.path} (it has {', '.join(self.meta['locations'])})")
        return self.handle[str(loc)][:].astype(np.float32)


@contextmanager
def open_cache(path: str | Path, model: str | None = None) -> Iterator[Cache]:
    """Open a finished cache; with ``model``, check it was made with those weights.

    Raises:
        ConfigError: a missing, truncated or foreign file, an unfinished
            cache, or one made with another model's weights.
    """
    path = Path(path)

    def check(meta: dict) -> None:
        if model is not None and meta["model_sha256"] != model_sha256(model):
            raise ConfigError(f"{path} was made with model {meta['model']!r}, not with the weights of {model!r}")

    handle, meta = open_finished(path, FORMAT, "activation cache", "interp cache", check)
    try:
        yield Cache(path, handle, meta)
    finally:
        handle.close()
