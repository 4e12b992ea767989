"""`interp cache`: every location's vector for every example, in one self-describing HDF5 file.

Usage::

    from interp.jobs.cache import CacheConfig, build_cache
    from interp.files.activations import open_cache
    build_cache(CacheConfig(model="runs/demo/model", out="runs/demo/activations.h5"))
    with open_cache("runs/demo/activations.h5", model="runs/demo/model") as cache:
        X = cache.vectors("blocks.2.hook_resid_post@w_h")   # float32 [n_examples, d_model]
        cache.example_ids, cache.meta["wordpiece"]

The layout is in :mod:`interp.files.activations`. With ``components=True``
every block's ``attn.hook_z`` (all heads; a head's vector is its slice),
``hook_attn_out``, ``hook_resid_mid`` and ``hook_mlp_out`` are cached too
(:mod:`interp.hooks.locations`); ``backend="transformer-lens"`` reads them
all through a TransformerBridge's hook points (:mod:`interp.backends`).

The file is written at ``<out>.partial`` with a per-batch ``batches_done``
mask and moved into place when complete: an interrupted run resumes at the
first unfinished batch, and ``<out>`` is never half-written.
"""

from __future__ import annotations

import json

import os
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from interp.api.intervenable import IntervenableModel
from interp.api.loading import Classifier
from interp.api.objects import ATTN_OUT, MLP_OUT, RESID_MID, Z, all_locations, component_locations
from interp.api.specs import DataSpec, RunSpec, SampleSpec
from interp.core.errors import ConfigError
from interp.core.hdf5 import check_replaceable, finished, open_partial
from interp.core.outputs import ensure_writable_dir, partial_path, require_free_space, write_file_manifest
from interp.files.activations import FORMAT, initialise

DTYPES = ("float32", "float16")


@dataclass(frozen=True)
class CacheConfig:
    """What to cache: a model's vectors at every location for the named splits of a task (default: all of them)."""

    model: str | Classifier
    out: str
    dtype: str = "float32"
    components: bool = False  # also every block's attn.hook_z, hook_attn_out, hook_resid_mid, hook_mlp_out
    data: DataSpec = DataSpec()
    sample: SampleSpec = SampleSpec()  # splits () : every split of the task
    run: RunSpec = RunSpec()  # batch_size None: 64 examples per pass

    def validate(self) -> "CacheConfig":
        if self.run.wordpiece == "all":
            raise ConfigError(
                "`wordpiece=all`: the cache keeps one vector per site × role; cache with first or last "
                "(interp intervene takes `wordpiece=all` without a cache)"
            )
        if self.dtype not in DTYPES:
            raise ConfigError(f"`dtype=` must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        return self


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
    check_replaceable(out, FORMAT)
    # activations read no prediction: a model whose labels do not cover the task's is cached too
    lab = IntervenableModel.from_specs(config.model, config.data, config.run, splits=config.sample.splits, complete=False)
    task = lab.task
    examples = replace(config.sample, splits=config.sample.splits or task.splits).draw(task)
    causal = task.build_causal_model(examples) if task.causal_model is not None else None
    values = [task.values(causal, examples, v) for v in task.variables] if causal is not None else []
    batch_size = config.run.batch(64)
    table = lab.bind(examples).table()
    roles = list(table.roles)
    n_layers = lab.model.n_layers
    locations = all_locations(n_layers, roles)
    if config.components:
        locations += component_locations(n_layers, roles, (Z, ATTN_OUT, RESID_MID, MLP_OUT))
    n, d = len(examples), lab.model.d_model
    n_batches = -(-n // batch_size)
    meta = {
        "format": FORMAT,
        **task.file_attrs(task.variables),
        "labels": list(task.labels),
        "model": lab.model.name,
        "model_sha256": lab.model.sha256,
        **{k: (v if isinstance(v, str) else json.dumps(v)) for k, v in lab.model.reading_record.items()},  # a decoder's template
        "wordpiece": lab.wordpiece,
        "locations": [str(loc) for loc in locations],
        "n_layers": n_layers,
        "d_model": d,
        "dtype": config.dtype,
    }
    if config.components:
        meta["n_heads"] = lab.model.n_heads
    if config.run.backend != "hf":
        meta["backend"] = config.run.backend
    ensure_writable_dir(out.parent if str(out.parent) else Path("."))
    ids = np.array([e.id for e in examples], dtype=object)
    if out.exists() and finished(out, meta, ids):
        if progress:
            tqdm.write(f"{out}: already cached with these settings, reusing it")
        write_file_manifest(out, "cache", if_missing=True)
        return out
    work = partial_path(out)
    already = work.stat().st_size if work.is_file() else 0
    needed = n * d * len(locations) * np.dtype(config.dtype).itemsize + 300 * n + (1 << 20)
    require_free_space(out, needed - already)
    handle = open_partial(work, meta, ids)
    try:
        if "batches_done" not in handle:
            initialise(handle, meta, table, values, locations, n_batches, dtype=config.dtype, chunk_rows=batch_size)
        done = handle["batches_done"]
        todo = [b for b in range(n_batches) if not done[b]]
        bar = tqdm(todo, desc="cache", unit="batch", disable=not progress, initial=n_batches - len(todo), total=n_batches)
        for b in bar:  # the backend is made on the first batch, after the reuse check: wrapping a bridge copies the model
            start, stop = b * batch_size, min((b + 1) * batch_size, n)
            trace = lab.run_with_cache(examples[start:stop], locations)
            for loc in locations:
                handle[str(loc)][start:stop] = trace[loc].numpy().astype(config.dtype)
            done[b] = True
            handle.flush()
        handle.attrs["complete"] = True
    finally:
        handle.close()
    os.replace(work, out)
    write_file_manifest(out, "cache")
    return out

