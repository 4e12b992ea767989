"""Causal models: named variables computed by mechanisms, run forward or under interchange interventions.

Usage::

    model = CausalModel(
        name="toy",
        inputs=("a", "b"),
        mechanisms={"c": Mechanism(("a", "b"), lambda a, b: a and b)},
        output="c",
    )
    run_forward(model, {"a": True, "b": False})              # {'a': True, 'b': False, 'c': False}
    run_interchange(model, base={"a": True, "b": False},
                    sources={"b": {"a": False, "b": True}})  # c with b taken from the source

A causal model (Geiger, Richardson & Potts 2020, §6.2; Geiger et al. 2019,
§3 for composition trees) is a set of input variables and a mechanism for
every other variable, a pure function of its parents. An interchange
intervention runs the model on a *base* input while a variable takes the
value it has on a *source* input; the result is the counterfactual the
network is compared against. Nothing here touches torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from interp.core.errors import ConfigError


@dataclass(frozen=True)
class Mechanism:
    """How one variable is computed: ``function(*values of parents)``, pure."""

    parents: tuple[str, ...]
    function: Callable[..., Any]


@dataclass(frozen=True)
class CausalModel:
    """Input variables, a mechanism per other variable (in an order where parents come first), an output.

    ``values`` optionally lists each variable's possible values, so that a
    test can enumerate the whole truth table.

    Raises:
        ConfigError: a mechanism names a parent that is not defined before
            it, a variable is defined twice, or the output is not a variable.
    """

    name: str
    inputs: tuple[str, ...]
    mechanisms: Mapping[str, Mechanism]
    output: str
    values: Mapping[str, tuple] = field(default_factory=dict)

    def __post_init__(self) -> None:
        known = list(self.inputs)
        if len(set(known)) != len(known):
            raise ConfigError(f"causal model {self.name}: an input variable is named twice")
        for var, mechanism in self.mechanisms.items():
            if var in known:
                raise ConfigError(f"causal model {self.name}: variable {var!r} is defined twice")
            missing = [p for p in mechanism.parents if p not in known]
            if missing:
                raise ConfigError(
                    f"causal model {self.name}: mechanism of {var!r} reads {', '.join(map(repr, missing))}, "
                    "not defined before it"
                )
            known.append(var)
        if self.output not in known:
            raise ConfigError(f"causal model {self.name}: output {self.output!r} is not a variable")

    @property
    def variables(self) -> tuple[str, ...]:
        """Every variable, inputs first, then in mechanism order."""
        return (*self.inputs, *self.mechanisms)

    def check_variable(self, name: str) -> str:
        """``name`` if it is a variable of this model.

        Raises:
            ConfigError: it is not.
        """
        if name not in self.variables:
            raise ConfigError(f"causal model {self.name} has no variable {name!r} (it has {', '.join(self.variables)})")
        return name


def run_forward(model: CausalModel, inputs: Mapping[str, Any], interventions: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Every variable's value on ``inputs``; a variable named in ``interventions`` is held at the given value.

    Raises:
        ConfigError: an input variable is missing, or an intervention names
            no variable of the model.
    """
    interventions = dict(interventions or {})
    for name in interventions:
        model.check_variable(name)
    missing = [name for name in model.inputs if name not in inputs and name not in interventions]
    if missing:
        raise ConfigError(f"causal model {model.name} needs input variable(s) {', '.join(missing)}")
    values = {name: interventions.get(name, inputs.get(name)) for name in model.inputs}
    for name, mechanism in model.mechanisms.items():
        if name in interventions:
            values[name] = interventions[name]
        else:
            values[name] = mechanism.function(*(values[p] for p in mechanism.parents))
    return values


def run_interchange(model: CausalModel, base: Mapping[str, Any], sources: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Run on ``base`` with each named variable set to the value it takes on its source input.

    ``sources`` maps a variable to the source input it is taken from; with
    one entry this is the interchange intervention
    INFER_{lexrel(i) -> lexrel(j)}(i) of the paper (§6.2).
    """
    fixed = {var: run_forward(model, source)[model.check_variable(var)] for var, source in sources.items()}
    return run_forward(model, base, fixed)


def _interchange_outcomes(
    model: CausalModel, bases: Sequence[Mapping[str, Any]], sources: Sequence[Mapping[str, Any]], variable: str
) -> tuple[list[list[Any]], np.ndarray]:
    """Each base's output under each distinct source value of ``variable`` (``[bases][distinct]``), and each source's
    index into the distinct values (int ``[len(sources)]``): the causal model runs once per source and once per base
    and distinct value, and a pair's output is ``outcomes[i][index[j]]``."""
    model.check_variable(variable)
    distinct: list[Any] = []
    index = np.empty(len(sources), dtype=np.intp)
    for j, source in enumerate(sources):
        value = run_forward(model, source)[variable]
        if value not in distinct:
            distinct.append(value)
        index[j] = distinct.index(value)
    outcomes = [[run_forward(model, base, {variable: v})[model.output] for v in distinct] for base in bases]
    return outcomes, index


def _width(index: np.ndarray) -> int:
    """How many distinct source values ``index`` points into."""
    return int(index.max()) + 1 if len(index) else 0


def interchange_table(
    model: CausalModel, bases: Sequence[Mapping[str, Any]], sources: Sequence[Mapping[str, Any]], variable: str
) -> np.ndarray:
    """The output of every interchange from base i to source j on one variable.

    Equal to ``run_interchange(model, bases[i], {variable: sources[j]})[model.output]``
    for all i, j, but runs the model once per source and once per base and
    distinct value of the variable, not once per pair; the table is filled by
    array indexing, not per pair.

    Returns:
        object array ``[len(bases), len(sources)]`` of output values.
    """
    outcomes, index = _interchange_outcomes(model, bases, sources, variable)
    small = np.empty((len(bases), _width(index)), dtype=object)
    for i, row in enumerate(outcomes):
        for k, outcome in enumerate(row):
            small[i, k] = outcome
    return small[:, index]


def interchange_codes(
    model: CausalModel, bases: Sequence[Mapping[str, Any]], sources: Sequence[Mapping[str, Any]], variable: str,
    outputs: Sequence[Any],
) -> np.ndarray:  # fmt: skip
    """:func:`interchange_table` as each output's position in ``outputs`` (a task's labels): int8
    ``[len(bases), len(sources)]``, with no Python call per pair (all 7.17M MoNLI pairs in well under a second).

    Raises:
        ConfigError: an output of the causal model is not in ``outputs``.
    """
    outcomes, index = _interchange_outcomes(model, bases, sources, variable)
    outputs = list(outputs)
    unknown = sorted({repr(o) for row in outcomes for o in row if o not in outputs})
    if unknown:
        raise ConfigError(f"causal model {model.name} gives output(s) {', '.join(unknown)}, not one of {', '.join(map(str, outputs))}")
    small = np.array([[outputs.index(o) for o in row] for row in outcomes], dtype=np.int8).reshape(len(bases), _width(index))
    return small[:, index]
