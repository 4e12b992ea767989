"""The interventions file: outcome matrices of interchange interventions, grouped by variable and location.

Layout (readable with plain h5py)::

    (the per-example datasets of :mod:`interp.files.examples`: ids, split,
     label, words/<role>, values/<variable> for every task variable, positions)
    /base_pred                               int8 [n]   the model's own label for each example
    /interchange/<location>/logits           float32 [n, n, n_model_labels]  row = base, column = source
    /interchange/<location>/model_pred       int8 [n, n]   the intervened model's label, as the task's label id
    /<variable>/<location>/causal_pred       int8 [n, n]   the causal model's counterfactual for the variable
    /<variable>/<location>/model_pred        a hard link to /interchange/<location>/model_pred

The model's outputs depend on the location only, so they are stored once and
linked into each variable's group; the causal model's counterfactual depends
on the variable. File attributes: ``format``, ``task``, ``causal_model``,
``variables``, ``alignment`` (JSON: each variable's default roles), ``labels``, ``locations``, ``model``, ``model_sha256``,
``wordpiece``, ``unit_size``, ``precision``, ``complete``; for a classifier whose labels are not the task's in
its order (a three-label model on MoNLI), ``model_labels`` (what the logits' last axis means) and ``model_read``
(per model label id, the task label id it reads as). Each
``/interchange/<location>`` group has ``location``, ``hidden_index``, ``roles``
and, after a run in TF32 or bf16, ``fp32_check_pairs``,
``fp32_label_agreement`` (0..1) and ``fp32_max_abs_logit_diff``: a seeded
sample of its pairs run again in fp32 (:mod:`interp.jobs.fp32_check`).
"""

from __future__ import annotations

import io
import json
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from interp.core.errors import ConfigError, named
from interp.core.environment import environment
from interp.core.hdf5 import h5py, open_finished, strings
from interp.core.outputs import write_bytes_atomic
from interp.files.examples import ExampleTable, PerExampleFile, write_examples
from interp.hooks.locations import Location
from interp.causal.values import VariableValues

FORMAT = "interp.interventions/3"
OUTPUTS = "interchange"
#: Names a variable may not take: they are the file's own datasets and groups.
RESERVED = frozenset({"example_ids", "split", "label", "base_pred", "words", "values", "positions", "text", OUTPUTS})


def check_variable_names(variables: Sequence[str]) -> None:
    """Raise :class:`ConfigError` (naming ``variables=``) for a variable the file layout cannot hold."""
    clash = [v for v in variables if v in RESERVED or "/" in v]
    if clash:
        raise ConfigError(f"{named('variables', repr(clash[0]))}: the interventions file cannot hold a variable of that name")


def save_interventions(path: str | Path, meta: dict, table: ExampleTable, base_pred: np.ndarray,
                       values: Sequence[VariableValues], causal_pred: dict[str, np.ndarray], locations: Sequence[Location],
                       logits_at: Callable[[int, Location], np.ndarray], location_attrs: Callable[[int], dict] | None = None,
                       variable_attrs: Callable[[str, Location, np.ndarray], dict] | None = None) -> Path:  # fmt: skip
    """Write a complete interventions file at ``path`` (:func:`write_interventions`, the arguments as there) with the
    environment that made it (versions, threads, BLAS: :func:`interp.core.environment.environment`, not part of what a
    later run compares), built in memory and moved into place whole: a full disk is an :class:`OSError`, never a
    half-written file.

    Returns:
        ``path``.
    """
    buffer = io.BytesIO()
    with h5py().File(buffer, "w") as handle:
        write_interventions(handle, meta, table, base_pred, values, causal_pred, locations, logits_at, location_attrs, variable_attrs)
        handle.attrs["environment"] = json.dumps(environment())  # not part of the request: a file is reused across machines
    write_bytes_atomic(Path(path), buffer.getvalue())
    return Path(path)


def write_interventions(
    handle,
    meta: dict,
    table: ExampleTable,
    base_pred: np.ndarray,
    values: Sequence[VariableValues],
    causal_pred: dict[str, np.ndarray],
    locations: Sequence[Location],
    logits_at: Callable[[int, Location], np.ndarray],
    location_attrs: Callable[[int], dict] | None = None,
    variable_attrs: Callable[[str, Location, np.ndarray], dict] | None = None,
) -> None:
    """Write a complete interventions file into an open, empty HDF5 ``handle``.

    Args:
        meta: the file attributes (``labels`` among them; ``model_labels`` and ``model_read``, per model label id
            the task label id it reads as, for a classifier whose labels are not the task's in its order).
        table: what the file keeps of each example (:class:`~interp.files.examples.ExampleTable`).
        base_pred: int ``[n]`` the model's own label for each example.
        values: per-example values of every variable of the task (kept for display and analysis).
        causal_pred: intervened variable -> int8 ``[n, n]`` counterfactual label ids.
        logits_at: ``(index, location) -> float32 [n, n, n_model_labels]``, called once per location.
        location_attrs: ``index -> extra attributes`` of a location's group (the fp32 check).
        variable_attrs: ``(variable, location, model_pred) -> extra attributes`` of the variable's group at the
            location (its IIA summary with intervals, as JSON text under ``summary``).
    """
    check_variable_names(list(causal_pred))
    write_examples(handle, table, values)
    handle.create_dataset("base_pred", data=np.asarray(base_pred).astype(np.int8))
    for index, loc in enumerate(locations):
        logits = logits_at(index, loc)
        group = handle.create_group(f"{OUTPUTS}/{loc}")
        group.create_dataset("logits", data=logits.astype(np.float32))
        ids = logits.argmax(-1)  # the model's label ids; ``model_read`` (a model with other labels) reads them as the task's
        group.create_dataset("model_pred", data=(np.asarray(meta["model_read"])[ids] if "model_read" in meta else ids).astype(np.int8))
        group.attrs.update({"location": str(loc), "hidden_index": loc.hidden_index, "roles": list(loc.roles)})
        if location_attrs is not None:
            group.attrs.update(location_attrs(index))
        for variable, table in causal_pred.items():
            target = handle.create_group(f"{variable}/{loc}")
            target.create_dataset("causal_pred", data=table.astype(np.int8))
            target["model_pred"] = group["model_pred"]  # a hard link: stored once
            if variable_attrs is not None:
                target.attrs.update(variable_attrs(variable, loc, group["model_pred"][()]))
    handle.attrs.update(meta)
    handle.attrs["complete"] = True


class Interventions(PerExampleFile):
    """A read-only view of a finished interventions file (``example_ids``, ``column`` from :class:`ExampleFile`)."""

    @property
    def locations(self) -> list[str]:
        return list(self.meta["locations"])

    @property
    def variables(self) -> list[str]:
        return list(self.meta["variables"])

    @property
    def alignment(self) -> dict[str, tuple[str, ...]]:
        """Each intervened variable's default roles (what the task aligned it to)."""
        return {k: tuple(v) for k, v in json.loads(str(self.meta["alignment"])).items()}

    def aligned_locations(self, variable: str) -> list[str]:
        """The file's locations at exactly ``variable``'s default roles, in file order."""
        roles = self.alignment.get(variable)
        return [name for name in self.locations if Location.parse(name).roles == roles]

    @property
    def task(self) -> str:
        return str(self.meta["task"])

    def location(self, location: str | None = None) -> str:
        """The canonical name of ``location``; ``None`` picks the file's only location.

        Raises:
            ConfigError: the location is not in the file, or ``None`` and the file has several.
        """
        if location is None:
            if len(self.locations) != 1:
                raise ConfigError(f"{self.path} holds {len(self.locations)} locations ({', '.join(self.locations)}): name one with `location=`")
            return self.locations[0]
        name = str(Location.parse(location))
        if name not in self.locations:
            raise ConfigError(f"location {name} is not in {self.path} (it has {', '.join(self.locations)})")
        return name

    def variable(self, variable: str | None = None) -> str:
        """``variable`` if the file holds it; ``None`` picks the file's only variable.

        Raises:
            ConfigError: the file lacks it (a file of another variable is refused), or ``None`` and it has several.
        """
        if variable is None:
            if len(self.variables) != 1:
                raise ConfigError(f"{self.path} holds {len(self.variables)} variables ({', '.join(self.variables)}): name one with `variable=`")
            return self.variables[0]
        if variable not in self.variables:
            raise ConfigError(
                f"{self.path} holds interventions for variable(s) {', '.join(self.variables)} of task {self.task!r}, "
                f"not for {variable!r}"
            )
        return variable

    def matrix(self, name: str, location: str | None = None, variable: str | None = None) -> np.ndarray:
        """``model_pred`` or ``logits`` at a location, or ``causal_pred`` (int8 ``[n, n]``) for a variable there."""
        loc = self.location(location)
        if name == "causal_pred":
            return self.handle[f"{self.variable(variable)}/{loc}/causal_pred"][:]
        return self.handle[f"{OUTPUTS}/{loc}/{name}"][:]

    def group_attrs(self, location: str | None = None) -> dict:
        """The attributes of a location's outputs (``hidden_index``, ``role``, the fp32 check)."""
        return dict(self.handle[f"{OUTPUTS}/{self.location(location)}"].attrs)

    def values(self, variable: str | None = None) -> VariableValues:
        """Each example's value of ``variable`` (``None``: the file's only intervened variable).

        Raises:
            ConfigError: the file keeps no values of that variable.
        """
        return super().values(self.variable(variable) if variable is None else variable)


@contextmanager
def open_interventions(
    path: str | Path,
    model_sha256: str | None = None,
    example_ids: Sequence[str] | None = None,
    task: str | None = None,
) -> Iterator[Interventions]:
    """Open a finished interventions file, optionally checking the model's weights, the example set and the task.

    Raises:
        ConfigError: a missing, truncated, foreign, unfinished or older-format
            file; one made with other weights than ``model_sha256``; one over
            other examples than ``example_ids``; one of another ``task``.
    """
    path = Path(path)
    handle, meta = open_finished(path, FORMAT, "interventions file", "interp intervene")
    try:
        if model_sha256 is not None and meta["model_sha256"] != model_sha256:
            raise ConfigError(f"{path} was made with model {meta['model']!r}, whose weights differ from the model given")
        if example_ids is not None and strings(handle, "example_ids") != list(example_ids):
            raise ConfigError(f"{path} holds interventions over another example set than the one given")
        if task is not None and meta["task"] != task:
            raise ConfigError(f"{path} holds interventions of task {meta['task']!r}, not of task {task!r}")
        file = Interventions(path, handle, meta)

        def shapes(n: int) -> dict:
            found = {"base_pred": (n,)}
            for loc in meta["locations"]:
                found.update({f"{OUTPUTS}/{loc}/logits": (n, n, len(meta.get("model_labels", meta["labels"]))), f"{OUTPUTS}/{loc}/model_pred": (n, n)})
                found.update({f"{v}/{loc}/causal_pred": (n, n) for v in meta["variables"]})
            return found

        file.check_layout(shapes)
        yield file
    finally:
        handle.close()


@dataclass(frozen=True)
class Fp32Check:
    """Agreement of a reduced-precision run with fp32 at one location."""

    pairs: int  # sampled (base, source) pairs
    agreement: float  # share of them whose predicted label equals fp32's, 0..1
    max_abs_logit_diff: float  # largest |logit − fp32 logit| over them

    def attrs(self) -> dict:
        """The HDF5 group attributes that hold this check."""
        return {"fp32_check_pairs": self.pairs, "fp32_label_agreement": self.agreement, "fp32_max_abs_logit_diff": self.max_abs_logit_diff}

    @classmethod
    def from_attrs(cls, attrs) -> "Fp32Check | None":
        """The check stored in ``attrs``, or ``None`` (an fp32 run has none)."""
        if "fp32_check_pairs" not in attrs:
            return None
        return cls(int(attrs["fp32_check_pairs"]), float(attrs["fp32_label_agreement"]), float(attrs["fp32_max_abs_logit_diff"]))
