"""The activation cache file: every location's vector for every example, in one self-describing HDF5 file.

Layout (readable with plain h5py): one dataset per location, named by its
canonical string (``blocks.3.hook_resid_post@w_h``), shape
``[n_examples, d_model]``, chunked by batch; ``example_ids``, ``split``,
``label`` (0 entailment, 1 neutral), ``lexrel`` (0 forward ⊏, 1 reverse ⊐),
``w_p``, ``w_h``, ``positions`` (``[n, 3]``: cls, w_p, w_h); file attributes
``model``, ``model_sha256``, ``wordpiece``, ``locations``, ``n_layers``,
``d_model``, ``dtype``, ``complete``. :mod:`interp.jobs.cache` writes it.

Usage::

    with open_cache("runs/demo/activations.h5", model="runs/demo/model") as cache:
        X = cache.vectors("blocks.2.hook_resid_post@w_h")   # float32 [n_examples, d_model]
        cache.example_ids, cache.meta["wordpiece"]
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np

from interp.core.errors import ConfigError
from interp.core.hdf5 import ExampleFile, h5py, open_finished
from interp.hooks.locations import Location
from interp.models.loading import model_sha256
from interp.tasks.monli import ROLES, Lexrel

FORMAT = "interp.activations/1"


def initialise(handle, meta: dict, examples, encoded, locations: list[Location], n_batches: int, *, dtype: str, chunk_rows: int) -> None:
    """Create every dataset of a new activation cache (vectors unwritten, ``batches_done`` all false)."""
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
            str(loc), shape=(n, meta["d_model"]), dtype=dtype, chunks=(min(chunk_rows, n), meta["d_model"])
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
