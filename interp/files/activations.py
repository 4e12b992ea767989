"""The activation cache file: every location's vector for every example, in one self-describing HDF5 file.

Layout (readable with plain h5py): the per-example datasets of
:mod:`interp.files.examples` (``example_ids``, ``split``, ``label``,
``words/<role>``, ``values/<variable>`` for every causal variable of the
task, ``positions`` with its ``roles``), and one dataset per location, named
by its canonical string (``blocks.3.hook_resid_post@w_h``), shape
``[n_examples, d_model]``, chunked by batch: one dataset per site × role. A
location at several roles reads the roles it names and concatenates their
vectors in its order. File attributes ``format``,
``task``, ``labels``, ``model``, ``model_sha256``, ``wordpiece``,
``locations``, ``n_layers``, ``d_model``, ``dtype``, ``alignment`` (JSON:
each variable's default roles), ``complete``; ``n_heads`` when component
sites are cached. A head's location (``blocks.{l}.attn.hook_z.h{H}``) is
read as its d_head columns of the ``blocks.{l}.attn.hook_z`` dataset.
:mod:`interp.jobs.cache` writes it.

Usage::

    with open_cache("runs/demo/activations.h5", model="runs/demo/model") as cache:
        X = cache.vectors("blocks.2.hook_resid_post@w_h")   # float32 [n_examples, d_model]
        X2 = cache.vectors("blocks.2.hook_resid_post@w_p+w_h")   # float32 [n_examples, 2 × d_model]: both, concatenated
        y = cache.values("lexrel").codes                     # int8 [n_examples]: 0 ⊏, 1 ⊐
        cache.example_ids, cache.meta["wordpiece"]
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np

from interp.core.errors import ConfigError, DataError
from interp.core.hdf5 import open_finished
from interp.files.examples import ExampleTable, PerExampleFile, write_examples
from interp.hooks.locations import Location
from interp.models.loading import model_sha256

FORMAT = "interp.activations/2"


def initialise(
    handle, meta: dict, table: ExampleTable, values, locations: list[Location], n_batches: int, *, dtype: str, chunk_rows: int
) -> None:
    """Create every dataset of a new activation cache (vectors unwritten, ``batches_done`` all false)."""
    n = len(table)
    write_examples(handle, table, values)
    for loc in locations:
        handle.create_dataset(
            str(loc), shape=(n, meta["d_model"]), dtype=dtype, chunks=(min(chunk_rows, n), meta["d_model"])
        )
    handle.create_dataset("batches_done", data=np.zeros(n_batches, dtype=bool))
    for key, value in meta.items():
        handle.attrs[key] = value
    handle.attrs["complete"] = False
    handle.flush()


class Cache(PerExampleFile):
    """A read-only view of a finished activation cache (``example_ids``, ``column`` from :class:`ExampleFile`)."""

    @property
    def alignment(self) -> dict[str, tuple[str, ...]]:
        """Each variable's default roles, as the task aligned them (empty for a cache made before format 3)."""
        return {k: tuple(v) for k, v in json.loads(str(self.meta.get("alignment", "{}"))).items()}

    def _parse(self, location: str | Location) -> Location:
        heads = self.meta.get("n_heads")
        return location if isinstance(location, Location) else Location.parse(location, self.meta["n_layers"], heads and int(heads))

    @staticmethod
    def _stored(loc: Location, role: str) -> str:
        """The dataset holding ``loc`` at ``role``: a head's is its layer's all-heads ``attn.hook_z``."""
        return str(Location(loc.hidden_index, role, loc.component))

    def has(self, location: str | Location) -> bool:
        """Whether the cache holds every role of ``location`` at its site."""
        loc = self._parse(location)
        if loc.head >= 0 and loc.head >= int(self.meta.get("n_heads", 0)):
            return False
        return all(self._stored(loc, r) in self.handle for r in loc.roles)

    def vectors(self, location: str | Location) -> np.ndarray:
        """float32 ``[n_examples, len(roles) × width]`` at ``location``, its roles' vectors concatenated in its order.

        ``width`` is d_model, or d_head for one head's ``attn.hook_z``.

        Raises:
            ConfigError: a role of the location is not in the cache.
            DataError: a row holds NaN or infinity (the file was edited or spoiled), naming the dataset and the examples.
        """
        loc = self._parse(location)
        if not self.has(loc):
            raise ConfigError(f"location {loc} is not in the cache {self.path} (it has {', '.join(self.meta['locations'])})")
        columns = slice(None)
        if loc.head >= 0:
            d_head = int(self.meta["d_model"]) // int(self.meta["n_heads"])
            columns = slice(loc.head * d_head, (loc.head + 1) * d_head)
        parts = []
        for role in loc.roles:
            name = self._stored(loc, role)
            part = self.handle[name][:, columns].astype(np.float32)
            bad = np.flatnonzero(~np.isfinite(part).all(axis=1))
            if bad.size:
                ids = ", ".join(str(self.example_ids[i]) for i in bad[:3]) + (f" and {bad.size - 3} more" if bad.size > 3 else "")
                raise DataError(f"{self.path}: dataset {name} has NaN or infinite values in {bad.size} row(s), examples {ids}; "
                                "the file was edited or spoiled (make it again)")
            parts.append(part)
        return np.concatenate(parts, axis=1)


@contextmanager
def open_cache(path: str | Path, model=None) -> Iterator[Cache]:
    """Open a finished cache; with ``model``, check it was made with those weights.

    ``model``: a spec (a checkpoint directory, ``minilm``), or a model already loaded (anything with ``sha256`` and
    ``name``, such as :class:`interp.api.loading.Classifier`: its weights are not hashed again).

    Raises:
        ConfigError: a missing, truncated or foreign file, an unfinished
            cache, or one made with another model's weights.
        DataError: a dataset of another dtype than the file's ``dtype`` attribute says.
    """
    path = Path(path)

    def check(meta: dict) -> None:
        if model is None:
            return
        sha, name = (model.sha256, model.name) if hasattr(model, "sha256") else (model_sha256(model), model)
        if meta["model_sha256"] != sha:
            raise ConfigError(f"{path} was made with model {meta['model']!r}, not with the weights of {name!r}")

    handle, meta = open_finished(path, FORMAT, "activation cache", "interp cache", check)
    try:
        cache = Cache(path, handle, meta)
        cache.check_layout(lambda n: {name: (n, meta["d_model"]) for name in meta["locations"]})
        odd = [name for name in meta["locations"] if str(handle[name].dtype) != str(meta.get("dtype"))]
        if odd:
            raise DataError(f"{path}: dataset {odd[0]} holds {handle[odd[0]].dtype}, but the file's dtype attribute says "
                            f"{meta.get('dtype')}; the file was edited (make it again with interp cache)")
        yield cache
    finally:
        handle.close()
