"""A task's examples bound to a model: their encodings, and what running the model on them gives, computed once and reused.

Usage::

    examples = lab.bind(task.examples(("pmonli", "nmonli_test"), per_split=50, seed=0))   # an ExampleSet
    examples.logits()                           # float32 [n, labels]: the model's own, once
    examples.vectors(loc)                       # float32 [n, width]: the last location's vectors, once
    examples.pairs(loc)                         # the last location's pair runner (DAS trains through it)
    lab.interchange(examples, examples, loc)    # every call of IntervenableModel takes a set or a list

Lifetime: a set belongs to one :class:`~interp.api.intervenable.IntervenableModel`, which keeps the last set it bound
(:meth:`~interp.api.intervenable.IntervenableModel.bind`; every call that takes examples binds them). It is dropped,
and what it holds with it, when another list of examples is bound (a list all of whose examples the set holds is
bound as a :meth:`subset` that shares its encodings and slices what it has computed) or when the model's weights
change (:attr:`~interp.api.loading.Classifier.weights_state`): what it holds is then never stale. It holds the
encodings, the model's own logits, the vectors at the last location read, the pair runner of the last location asked
for, the causal model of its examples, and results derived from them keyed by what they were computed from
(:meth:`cached`: DAS's drawn pairs, vanilla interchange's held-out scores, each pair grid's counterfactuals).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable, Hashable

import numpy as np
import torch
from jaxtyping import Float
from torch import Tensor

from interp.api.loading import Classifier
from interp.backends.base import PairRunner, Runner
from interp.core.errors import ConfigError, ModelError, named
from interp.files.examples import ExampleTable
from interp.hooks.encoding import Encoded
from interp.hooks.locations import Location
from interp.models.labels import LabelReading
from interp.tasks import Task


@dataclass(frozen=True)
class Binding:
    """What an example set is bound to: the task, the model, how its labels read as the task's, the WordPiece rule and
    the runner (:mod:`interp.backends`) that runs it."""

    task: Task
    model: Classifier
    reading: LabelReading
    wordpiece: str
    runner: Runner


class ExampleSet(Sequence):
    """A task's examples bound to a model (see the module docstring for what is kept and for how long).

    Attributes:
        examples: the task's examples, in order.
        encoded: their encodings (:func:`~interp.hooks.encoding.encode_examples`), in the same order.
        binding: the task, model, label reading, WordPiece rule and runner.
        state: the model's :attr:`~interp.api.loading.Classifier.weights_state` when the set was bound.
    """

    def __init__(self, examples: Sequence, encoded: Sequence[Encoded], binding: Binding, state: tuple, *,
                 parent: "ExampleSet | None" = None, rows: Sequence[int] | None = None) -> None:  # fmt: skip
        self.examples, self.encoded = tuple(examples), list(encoded)
        self.binding, self.state = binding, state
        self.ids = tuple(e.id for e in self.examples)
        self._row = {example_id: i for i, example_id in enumerate(self.ids)}
        self._parent, self._parent_rows = parent, None if rows is None else list(rows)
        self._logits: Tensor | None = None
        self._vectors: tuple[Location, Tensor] | None = None
        self._pairs: tuple[Location, PairRunner] | None = None
        self._derived: dict[Hashable, Any] = {}

    def __len__(self) -> int:
        return len(self.examples)

    def __iter__(self):
        return iter(self.examples)

    def __getitem__(self, index):
        return self.examples[index]

    def __repr__(self) -> str:
        return f"ExampleSet({len(self)} examples of {self.binding.task.name!r}, model {self.binding.model.name!r})"

    def has(self, examples: Sequence) -> bool:
        """Whether every one of ``examples`` is in the set: its id, and the example under that id equal to it (two
        lists of one's own examples both number theirs ``own:1``, ...)."""
        return all(e.id in self._row and self.examples[self._row[e.id]] == e for e in examples)

    def rows(self, examples: Sequence) -> list[int]:
        """Each example's row in the set.

        Raises:
            ConfigError: naming ``examples=``: one the set does not hold.
        """
        missing = [e.id for e in examples if e.id not in self._row]
        if missing:
            raise ConfigError(f"{named('examples')}: {missing[0]!r} is not in this example set of {len(self)}")
        return [self._row[e.id] for e in examples]

    def subset(self, examples: Sequence) -> "ExampleSet":
        """The set of ``examples`` (all in this one): their encodings shared, what this set has computed sliced."""
        rows = self.rows(examples)
        return ExampleSet(examples, [self.encoded[i] for i in rows], self.binding, self.state, parent=self, rows=rows)

    def _from_parent(self, what: Callable[["ExampleSet"], Tensor | None]) -> Tensor | None:
        """What the parent set already holds, at this subset's rows (``None`` where it holds nothing)."""
        if self._parent is None:
            return None
        held = what(self._parent)
        return None if held is None else held[self._parent_rows]

    def logits(self) -> Float[Tensor, "n labels"]:
        """The model's own logits on each example, float32 ``[n, labels]`` on CPU, in the model's label order."""
        if self._logits is None:
            self._logits = self._from_parent(lambda p: p._logits)
        if self._logits is None:
            logits = self.binding.runner.predict(self.encoded)
            bad = ~torch.isfinite(logits).all(-1)
            if bool(bad.any()):  # finite weights, yet an activation overflowed: no figure read from these outputs holds
                first = int(bad.nonzero()[0])
                raise ModelError(f"the model's outputs are NaN or infinite on {int(bad.sum())} of {len(bad)} examples (first: "
                                 f"{getattr(self.examples[first], 'id', first)!r}): an activation overflows; no accuracy or IIA "
                                 "read from them would mean anything")  # fmt: skip
            self._logits = logits
        return self._logits

    def own_labels(self) -> np.ndarray:
        """The model's own label on each example as the task's label id, int ``[n]`` (:attr:`Binding.reading`)."""
        return self.binding.reading.predict(self.logits())

    def vectors(self, location: Location, logits: bool = True) -> Float[Tensor, "n width"]:
        """Each example's vector at ``location``, float32 ``[n, width]`` on the model's device (the last location's
        kept). Where the model's own logits are not held yet, the same forward passes give them
        (:meth:`~interp.backends.base.Runner.vectors_and_logits`): the nulls need them, and they then cost no second pass.
        ``logits=False`` (a probe's read, which needs no logits) runs only the blocks up to the location; the logits
        come when something asks for them (:meth:`logits`).

        Raises:
            ConfigError: an example lacks one of the location's roles, or token counts differ.
        """
        if self._vectors is None or self._vectors[0] != location:
            found = self._from_parent(lambda p: p._vectors[1] if p._vectors is not None and p._vectors[0] == location else None)
            if found is None and logits and self._logits is None and self._from_parent(lambda p: p._logits) is None:
                found, self._logits = self.binding.runner.vectors_and_logits(self.encoded, location)
            elif found is None:
                found = self.binding.runner.vectors(self.encoded, location)
            self._vectors = (location, found)
        return self._vectors[1]

    def pairs(self, location: Location) -> PairRunner:
        """The pair runner of these examples at ``location`` (:meth:`~interp.backends.base.Runner.pairs`; the last one kept).

        Raises:
            ConfigError: a component site (trained interventions take residual-stream locations), or a role an example lacks.
        """
        if self._pairs is None or self._pairs[0] != location:
            self._pairs = (location, self.binding.runner.pairs(self.encoded, location))
        return self._pairs[1]

    def causal_model(self):
        """The task's causal model of these examples (:meth:`~interp.tasks.base.Task.build_causal_model`), built once."""
        return self.cached("causal_model", lambda: self.binding.task.build_causal_model(list(self.examples)))

    def cached(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """``make()``, computed once for ``key`` while the set lives: a result derived from these examples and this model."""
        if key not in self._derived:
            self._derived[key] = make()
        return self._derived[key]

    def table(self) -> ExampleTable:
        """What a file keeps of each example (:class:`~interp.files.examples.ExampleTable`)."""
        task = self.binding.task
        return self.cached("table", lambda: ExampleTable.of(self.examples, self.encoded, task.roles, task.labels, task.groups))
