"""`interp intervene`: interchange interventions for all (base, source) pairs of an example set, to HDF5.

Usage::

    from interp.api.specs import SampleSpec
    from interp.jobs.intervene import InterventionConfig, run_interventions
    run_interventions(InterventionConfig(
        model="runs/demo/model", out="runs/demo/interventions.h5",
        locations="blocks.0.hook_resid_post@w_h", sample=SampleSpec(splits=("nmonli_test",))))

For every location, every base i and source j: the model's prediction with
the vector at the location on i replaced by the one on j (``model_pred``),
and the causal model's counterfactual for the same interchange on its
variable (``causal_pred``; for INFER on lexrel, §6.2 of Geiger, Richardson &
Potts 2020). The file layout is in :mod:`interp.files.interventions`.

Work is done in units of ``unit_size`` bases (all sources each; by default
16 on a CPU and up to 512 on a GPU, :func:`default_unit_size`); each
finished unit is a file of its own in ``<out>.parts/``, moved into place
atomically (:mod:`interp.jobs.shards`), so a run interrupted at any
moment, even by ``kill -9``, started again, runs only the missing units. When
all are done the HDF5 file is assembled in ``<out>.partial`` and moved to
``out``. Under ``torchrun`` the units are dealt out across processes
(:mod:`interp.jobs.distributed`).
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from interp.api.intervenable import IntervenableModel
from interp.api.interventions_file import FileContents, file_meta
from interp.api.objects import PRECISIONS, Location, Task
from interp.api.loading import Classifier
from interp.core.errors import ConfigError, OutputError, named
from interp.core.hdf5 import attr, check_replaceable, finished, h5py
from interp.core.outputs import (
    ensure_writable_dir,
    read_json,
    require_free_space,
    write_file_manifest,
)
from interp.files.activations import open_cache
from interp.files.interventions import FORMAT, Fp32Check, check_variable_names
from interp.jobs.distributed import Workers, workers
from interp.jobs.fp32_check import compare_with_fp32, sample_pairs
from interp.jobs.shards import Shards, parts_dir
from interp.api.specs import DataSpec, RunSpec, SampleSpec


#: What a unit file's outputs depend on (and a file's variables do not): a unit of another variable is reused.
UNIT_KEYS = ("model_sha256", "wordpiece", "labels", "model_labels", "locations", "unit_size", "precision", "backend")


@dataclass(frozen=True)
class InterventionConfig:
    """Which interventions to run and where to write them.

    ``model``: a checkpoint (directory, hub name) or a :class:`~interp.api.loading.Classifier` held in memory.
    ``variables`` are the task's causal variables whose counterfactuals the
    model is compared with (one file holds them all: the model's outputs
    depend on the location only). ``data`` names the task
    (:class:`~interp.api.specs.DataSpec`), ``sample`` its examples (empty
    splits: the task's default set), ``run`` the device, pairs per forward
    pass (``None``: 256 on CPU, from free memory on a GPU), WordPiece rule
    and backend. A location without ``@ROLE`` stands for the role sets the
    variables are aligned to (``aligned``: every site at them).
    ``precision``: ``fp32``, ``tf32`` (GPU matmuls) or ``bf16``. ``pairs="all"``: every example of every split of
    the task (``sample``'s splits are ignored; it takes no ``max_examples``).
    """

    model: str | Classifier
    out: str
    locations: str
    variables: tuple[str, ...] = ("lexrel",)
    data: DataSpec = DataSpec()
    sample: SampleSpec = SampleSpec()
    run: RunSpec = RunSpec()
    cache: str | None = None
    pairs: str | None = None
    unit_size: int | None = None  # None: :func:`default_unit_size` for the model's device
    precision: str = "fp32"
    overwrite: bool = False
    command: str = "intervene"  # what the file's manifest names as its writer (``screen`` for a screen's confirmation)

    def validate(self) -> "InterventionConfig":
        if self.pairs not in (None, "all"):
            raise ConfigError(f"{named('pairs', repr(self.pairs))}: give 'all' (every pair of all the task's examples) or None (the sampled examples)")
        if self.pairs == "all" and self.sample.max_examples is not None:
            raise ConfigError(f"{named('pairs', 'all')} runs every example: it cannot be combined with `max_examples=`")
        if self.precision not in PRECISIONS:
            raise ConfigError(f"`precision=` must be one of {', '.join(PRECISIONS)}, got {self.precision!r}")
        if self.run.backend != "hf" and self.precision != "fp32":
            raise ConfigError(f"{named('precision', self.precision)} runs on the hf backend only; {named('backend', self.run.backend)} runs fp32")
        if self.unit_size is not None and self.unit_size < 1:
            raise ConfigError("`unit_size=` must be at least 1")
        if self.sample.max_examples is not None and self.sample.max_examples < 2:
            raise ConfigError("`max_examples=` must be at least 2")
        if not self.variables:
            raise ConfigError("`variables=` names no variable")
        check_variable_names(self.variables)
        return self


#: Bases per unit on a CPU (a unit is seconds to minutes of work there) and at most on a GPU, where a unit of 16 bases
#: would run its length groups as passes of a few thousand rows and stop for a file every fraction of a second; the
#: GPU figures in ``benchmarks/BENCHMARKS.md`` were measured with units of 512.
CPU_UNIT_SIZE, GPU_UNIT_SIZE = 16, 512


def default_unit_size(device: torch.device, n_bases: int, world: int = 1) -> int:
    """Bases per unit when none is given: :data:`CPU_UNIT_SIZE` on a CPU; on a GPU up to :data:`GPU_UNIT_SIZE`, but
    small enough that each of ``world`` processes (``torchrun``) gets a unit of the ``n_bases``, and never below the
    CPU's."""
    if device.type != "cuda":
        return CPU_UNIT_SIZE
    return max(CPU_UNIT_SIZE, min(GPU_UNIT_SIZE, -(-n_bases // max(1, world))))


def _earlier_unit_size(out: Path) -> int | None:
    """The unit size of an earlier run of ``out``: its finished file's, else its unfinished units' (``None``: neither).
    A run that names no unit size takes it, so the same command reuses or resumes that run on another device."""
    try:
        with h5py().File(out, "r") as handle:
            if attr(handle, "complete") and isinstance(attr(handle, "unit_size"), int):
                return attr(handle, "unit_size")
    except (OSError, KeyError, ValueError):
        pass
    request = read_json(parts_dir(out) / "request.json")
    size = request.get("unit_size") if isinstance(request, dict) else None
    return size if isinstance(size, int) and size >= 1 else None


def _cache_rows(config: InterventionConfig, lab: IntervenableModel, ids: list[str], locations: list[Location]) -> list[int]:
    """Check ``config.cache`` can give the source vectors; returns each example's row in it.

    Raises:
        ConfigError: the cache is missing or foreign, made with other weights,
            another WordPiece rule or float16, or lacks an example or a location.
        DataError: a location's vectors hold NaN or infinity (the rows named).
    """
    with open_cache(config.cache) as cache:
        if cache.meta["model_sha256"] != lab.model.sha256:
            raise ConfigError(f"{named('cache', config.cache)} was made with model {cache.meta['model']!r}, not with the weights of {lab.model.name!r}")
        if cache.meta["wordpiece"] != lab.wordpiece:
            raise ConfigError(f"{named('cache', config.cache)} used WordPiece rule {cache.meta['wordpiece']!r}, not {lab.wordpiece!r}")
        if cache.meta["dtype"] != "float32":
            raise ConfigError(f"{named('cache', config.cache)} is {cache.meta['dtype']}; interventions need a float32 cache")
        row = {example_id: i for i, example_id in enumerate(cache.example_ids)}
        missing = [i for i in ids if i not in row]
        if missing:
            raise ConfigError(f"{named('cache', config.cache)} lacks {len(missing)} of the examples (first: {missing[0]})")
        for loc in locations:
            if not cache.has(loc):
                raise ConfigError(f"location {loc} is not in the cache {config.cache}")
            cache.vectors(loc)  # a NaN or infinite row is named now, before any unit starts
    return [row[i] for i in ids]


def _cached_vectors(path: str, rows: list[int], location: Location) -> torch.Tensor:
    with open_cache(path) as cache:
        return torch.from_numpy(cache.vectors(location)[rows])


def run_interventions(config: InterventionConfig, *, progress: bool = True) -> Path:
    """Run (or resume, or reuse) the interventions of ``config``; returns the finished file's path.

    Under ``torchrun`` every process calls this with the same config; the
    units are dealt out by rank (:mod:`interp.jobs.distributed`).

    Raises:
        ConfigError: bad settings, a location out of range or absent from
            ``cache``, a causal model that does not fit the examples.
        DataError, ModelError: bad data or model.
        OutputError: ``out`` holds other interventions (without ``overwrite``) or cannot be written.
    """
    out = Path(config.validate().out)
    check_replaceable(out, FORMAT)
    lab = IntervenableModel.from_specs(config.model, config.data, config.run, variables=config.variables, splits=config.sample.splits)
    sample = replace(config.sample, splits=lab.task.splits) if config.pairs == "all" else config.sample
    examples = sample.draw(lab.task)
    if config.unit_size is None:  # an earlier run's, else the device's default; the file records it
        world = int(os.environ.get("WORLD_SIZE", "1"))
        config = replace(config, unit_size=_earlier_unit_size(out) or default_unit_size(lab.model.device, len(examples), world))
    bound = lab.bind(examples)
    bound.causal_model()  # one that does not fit is refused before any work
    locations = lab.locations(config.locations, config.variables)
    for loc in locations:  # every example has the location's roles, with the same token count each
        lab.width(examples, loc)
    ids = [e.id for e in examples]
    meta = {**file_meta(bound, config.variables, locations, unit_size=config.unit_size, precision=config.precision),
            "model_sha256": lab.model.sha256}  # fmt: skip
    rows = _cache_rows(config, lab, ids, locations) if config.cache is not None else None
    n, size, n_labels = len(ids), config.unit_size, len(lab.model.labels)
    shards = Shards(parts_dir(out), unit_request(meta, lab.task, ids), shape=lambda u: (min(size, n - u * size), n, n_labels))
    done = out.exists() and finished(out, meta, ids)
    if not done:  # the unit files, then the assembled file beside them: n x n x labels float32 per location
        require_free_space(out, 2 * len(ids) ** 2 * (len(lab.model.labels) * 4 + 2) * len(locations) + (1 << 20))
    if _reuse(out, done, shards, config, progress):
        _warn_at_chance(lab, examples)
        return out
    with workers(lab.model.device) as team:
        if team.leader and (damaged := shards.prepare()) and progress:
            tqdm.write(f"{shards.directory}: {len(damaged)} damaged unit file(s) ({damaged[0].name}…) removed; computing them again")
        team.barrier()
        with lab.precision(config.precision):
            ran = sum(_run_location(config, shards, i, lab, examples, rows, loc, team, progress and team.leader) for i, loc in enumerate(locations))
            compiled = lab.runner.compile_stats
        if progress and team.leader and compiled is not None and (compiled.shapes or compiled.note):
            tqdm.write(f"compiled suffix: {len(compiled.shapes)} shapes, their first calls {compiled.first_call_seconds:.1f} s (compiling included); "
                       f"{compiled.compiled_pairs:,} pairs compiled, {compiled.eager_pairs:,} eagerly" + (f"; {compiled.note}" if compiled.note else ""))  # fmt: skip
        if progress and team.world > 1:
            tqdm.write(f"worker {team.rank} of {team.world}: ran {ran} units")
        team.barrier()
        own = None
        if team.leader:  # the fp32 checks run in fp32, outside the reduced precision
            checks = None if config.precision == "fp32" else _fp32_checks(config, shards, lab, examples, rows, locations)
            with lab.precision(config.precision):
                own = _assemble(out, meta, lab, examples, locations, shards, checks, command=config.command)
        team.barrier()
    _warn_at_chance(lab, examples, own)
    return out


def _warn_at_chance(lab: IntervenableModel, examples, own: np.ndarray | None = None) -> None:
    """Once the file is there (under torchrun, by the first process only): a warning for each split of ``examples`` on
    which the model is not above chance (:meth:`IntervenableModel.split_accuracies`; ``own``: the model's task label
    ids on them when the file's writing already predicted them)."""
    if os.environ.get("RANK", "0") == "0":
        lab.split_accuracies(examples, own)


def unit_request(meta: dict, task: Task, ids: list[str]) -> dict:
    """What a unit file was made under: the model outputs' settings (:data:`UNIT_KEYS`; not the variables, so another
    variable reuses the units), the task and the example set."""
    return {**{k: meta[k] for k in UNIT_KEYS if k in meta}, "task": task.name, "examples": hashlib.sha256("\n".join(ids).encode()).hexdigest(),
            "n_examples": len(ids)}  # fmt: skip


def _reuse(out: Path, done: bool, shards: Shards, config: InterventionConfig, progress: bool) -> bool:
    """Whether to reuse ``out``: it is ``done`` (then its manifest is made sure of and stale units dropped).

    Raises:
        OutputError: ``out`` holds other interventions and ``config.overwrite`` is off.
    """
    ensure_writable_dir(out.parent if str(out.parent) else Path("."))
    if not out.exists():
        return False
    if not done:
        if not config.overwrite:
            raise OutputError(
                f"{named('out', out)} holds other interventions (another model, example set, location or setting); "
                "pass `overwrite=True` to replace it or choose another `out=`"
            )
        return False
    if progress:
        tqdm.write(f"{out}: these interventions are already done, reusing them")
    write_file_manifest(out, config.command, if_missing=True)
    if shards.directory.is_dir():  # a run killed after its file landed, before it dropped its units
        shards.remove()
    return True


def _run_location(config, shards: Shards, index: int, lab: IntervenableModel, examples, cache_rows, loc: Location, team: Workers,
                  progress: bool) -> int:  # fmt: skip
    """Run this worker's unfinished units at one location; returns how many it ran."""
    n, size = len(examples), config.unit_size
    units = team.mine(range(-(-n // size)))
    todo = [u for u in units if not shards.done(index, u)]
    if not todo:
        return 0
    sources = _cached_vectors(config.cache, cache_rows, loc) if cache_rows is not None else lab.source_vectors(examples, loc)
    total = sum(min(size, n - u * size) for u in units) * n
    remaining = sum(min(size, n - u * size) for u in todo) * n
    bar = tqdm(total=total, initial=total - remaining, desc=str(loc), unit="pair", unit_scale=True, disable=not progress)
    # each unit's file is written on another thread while the next unit runs; an interruption waits for the write
    # under way (atomic either way) and a failed write is raised at the next unit
    writing = None
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="interp-unit-writer") as writer:
            for u in todo:
                logits = lab.interchange_logits(examples[u * size : (u + 1) * size], sources, loc, on_rows=bar.update)
                if writing is not None:
                    writing.result()
                writing = writer.submit(shards.write, index, u, logits.numpy())
            writing.result()
    finally:
        bar.close()
    return len(todo)


def _fp32_checks(config: InterventionConfig, shards: Shards, lab: IntervenableModel, examples, cache_rows,
                 locations: list[Location]) -> list[Fp32Check]:  # fmt: skip
    """At each location, the finished run's labels against fp32 on the seeded sample of :mod:`~interp.jobs.fp32_check`."""
    bases, sources = sample_pairs(len(examples), config.sample.seed)
    size = config.unit_size
    checks = []
    for index, loc in enumerate(locations):
        if cache_rows is not None:
            vectors = _cached_vectors(config.cache, [cache_rows[j] for j in sources], loc)
        else:
            vectors = lab.source_vectors([examples[j] for j in sources], loc)
        reduced = torch.from_numpy(np.stack([shards.read(index, b // size)[b % size, sources] for b in bases]))
        checks.append(compare_with_fp32(lab, [examples[b] for b in bases], vectors, loc, reduced))
    return checks


def _assemble(out: Path, meta: dict, lab: IntervenableModel, examples, locations: list[Location], shards: Shards,
              checks: list[Fp32Check] | None = None, command: str = "intervene") -> np.ndarray:  # fmt: skip
    """Write the file from the shards (:meth:`~interp.api.interventions_file.FileContents.write`), its manifest, and drop the shards; returns the
    model's own task label ids on ``examples`` (the file's base predictions), for the chance check.

    ``checks``: with a reduced precision, each location's agreement with fp32, kept as group attributes.
    The file is built afresh each time, so a run killed while assembling assembles again.

    Raises:
        OutputError: a unit's shard is missing (a worker failed), or the file cannot be written.
    """
    n_units = -(-len(examples) // meta["unit_size"])
    missing = [(loc, u) for i, loc in enumerate(locations) for u in range(n_units) if not shards.done(i, u)]
    if missing:
        raise OutputError(f"{len(missing)} units were not run (first: {missing[0][0]} unit {missing[0][1]}); run the same command again")

    def logits_at(index: int, loc: Location) -> np.ndarray:
        return np.concatenate([shards.read(index, u) for u in range(n_units)])

    bound = lab.bind(examples)
    own = bound.own_labels()
    contents = FileContents.of(bound, meta["variables"], locations, unit_size=meta["unit_size"], precision=meta["precision"], base_pred=own)
    replace(contents, meta={**contents.meta, "model_sha256": meta["model_sha256"]}).write(  # the weights as the run began
        out, locations, logits_at, (lambda i: checks[i].attrs()) if checks is not None else None)
    write_file_manifest(out, command)
    shards.remove()
    return own
