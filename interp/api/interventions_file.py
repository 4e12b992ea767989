"""Writing an interventions file from what a result (or a job) holds: one writer for ``InterchangeResult.save``,
``InterchangeSet.save`` and ``interp intervene``.

Usage::

    contents = FileContents.of(examples, variables)                  # an ExampleSet's counterfactuals, values, own labels
    contents.write("iv.h5", locations, lambda i, loc: logits[loc])  # the weights hashed here, not before

The file's layout is :mod:`interp.files.interventions`; beside each variable's matrices it keeps the IIA summary with
its intervals (:func:`interp.analysis.iia.summarize_matrices`), so a reader needs no recomputation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from interp.analysis.iia import resampled, summarize_matrices
from interp.api.example_set import ExampleSet
from interp.api.loading import ModelIdentity
from interp.causal import interchange_codes
from interp.causal.values import VariableValues
from interp.files.examples import ExampleTable
from interp.files.interventions import FORMAT, save_interventions
from interp.hooks.locations import Location


def file_meta(examples: ExampleSet, variables: Sequence[str], locations: Sequence[Location], *, unit_size: int,
              precision: str = "fp32") -> dict:  # fmt: skip
    """The attributes of an interventions file of ``examples``' model and task (:mod:`interp.files.interventions`),
    without ``model_sha256``, which :meth:`FileContents.write` adds: what a later run compares to reuse it, and what
    the probe, clique and report commands read."""
    binding = examples.binding
    task, reading = binding.task, binding.reading
    return {
        "format": FORMAT, **task.file_attrs(variables), "causal_model": examples.causal_model().name, "variables": list(variables),
        "model": binding.model.name, "wordpiece": binding.wordpiece, "labels": list(task.labels),
        "locations": [str(loc) for loc in locations], "unit_size": unit_size, "precision": precision,
        **({"backend": binding.runner.name} if binding.runner.name != "hf" else {}),
        **({} if reading.identity else {"model_labels": list(reading.model_labels), "model_read": list(reading.read)}),
        **{k: (v if isinstance(v, str) else json.dumps(v)) for k, v in binding.model.reading_record.items()},
    }  # fmt: skip


def counterfactuals(examples: ExampleSet, bases: Sequence, sources: Sequence, variables: Sequence[str]) -> dict[str, np.ndarray]:
    """Each variable's interchange counterfactual as the task's label ids: int8 ``[n_bases, n_sources]`` (Geiger,
    Richardson & Potts 2020, §6.2), from the causal model of ``examples`` (which holds bases and sources); once per grid."""
    task = examples.binding.task
    key = ("counterfactuals", tuple(e.id for e in bases), tuple(e.id for e in sources), tuple(variables))

    def make() -> dict[str, np.ndarray]:
        causal = examples.causal_model()
        base_inputs, source_inputs = [task.inputs(e) for e in bases], [task.inputs(e) for e in sources]
        return {v: interchange_codes(causal, base_inputs, source_inputs, v, task.labels) for v in variables}

    return examples.cached(key, make)


def variable_values(examples: ExampleSet, of: Sequence) -> dict[str, VariableValues]:
    """Every task variable's value on each of ``of`` (examples of the set), by the set's causal model."""
    task = examples.binding.task
    return examples.cached(("values", tuple(e.id for e in of)), lambda: {v: task.values(examples.causal_model(), list(of), v) for v in task.variables})


@dataclass(frozen=True, eq=False)
class FileContents:
    """What an interventions file holds besides each location's logits: its attributes, the model, each example's
    record, the model's own labels, every variable's values and the causal model's counterfactuals (square: the
    examples are the bases and the sources).

    Attributes:
        meta: the file attributes without ``model_sha256`` (:func:`file_meta`; a file read back keeps its own).
        model: the model the logits came from; its weights are hashed by :meth:`write`.
        examples: each example's record (:class:`~interp.files.examples.ExampleTable`).
        base_pred: int8 ``[n]``, the model's own label on each example as the task's label id.
        values: every task variable -> its values on the examples.
        causal_pred: each intervened variable -> int8 ``[n, n]`` counterfactual label ids.
    """

    meta: dict
    model: ModelIdentity
    examples: ExampleTable
    base_pred: np.ndarray
    values: dict[str, VariableValues]
    causal_pred: dict[str, np.ndarray]

    @classmethod
    def of(cls, examples: ExampleSet, variables: Sequence[str], locations: Sequence[Location], *, unit_size: int, precision: str = "fp32",
           base_pred: np.ndarray | None = None) -> "FileContents":  # fmt: skip
        """The contents of the square file of ``examples`` (every pair); ``base_pred``: the model's own task label ids
        where already computed (else predicted, once per set)."""
        every = list(examples.examples)
        return cls(file_meta(examples, variables, locations, unit_size=unit_size, precision=precision), examples.binding.model.identity(),
                   examples.table(), np.asarray(examples.own_labels() if base_pred is None else base_pred).astype(np.int8),
                   variable_values(examples, every), counterfactuals(examples, every, every, variables))  # fmt: skip

    def write(self, path: str | Path, locations: Sequence[Location], logits_at: Callable[[int, Location], np.ndarray],
              location_attrs: Callable[[int], dict] | None = None) -> Path:  # fmt: skip
        """Write the file at ``path`` whole (:func:`interp.files.interventions.save_interventions`), the weights hashed
        now (unless :attr:`meta` already names their SHA-256); ``logits_at(index, location)`` gives float32
        ``[n, n, n_model_labels]``, one location at a time.

        Raises:
            ConfigError: the model's weights changed since the logits were computed (:attr:`ModelIdentity.sha256`).
            OSError: the file cannot be written (nothing is left half-written).
        """
        meta = {**self.meta, "model_sha256": self.meta.get("model_sha256") or self.model.sha256, "locations": [str(loc) for loc in locations]}
        codes = {name: v.codes for name, v in self.values.items()}

        def summary(variable: str, loc: Location, model_pred: np.ndarray) -> dict:  # IIA with its intervals, kept beside the matrices
            found = summarize_matrices(str(loc), variable, model_pred, self.causal_pred[variable], codes[variable], self.examples.labels,
                                       self.base_pred, **resampled(self.examples.groups, self.examples.group_unit, None))  # fmt: skip
            return {"summary": json.dumps(found)}

        return save_interventions(path, meta, self.examples, self.base_pred, list(self.values.values()), self.causal_pred,
                                  list(locations), logits_at, location_attrs, summary)  # fmt: skip
