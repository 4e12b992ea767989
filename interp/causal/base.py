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


def interchange_table(
    model: CausalModel, bases: Sequence[Mapping[str, Any]], sources: Sequence[Mapping[str, Any]], variable: str
) -> np.ndarray:
    """The output of every interchange from base i to source j on one variable.

    Equal to ``run_interchange(model, bases[i], {variable: sources[j]})[model.output]``
    for all i, j, but runs the model once per source and once per base and
    distinct value of the variable, not once per pair.

    Returns:
        object array ``[len(bases), len(sources)]`` of output values.
    """
    model.check_variable(variable)
    source_values = [run_forward(model, s)[variable] for s in sources]
    distinct: list[Any] = []
    for value in source_values:
        if value not in distinct:
            distinct.append(value)
    index = [distinct.index(v) for v in source_values]
    table = np.empty((len(bases), len(sources)), dtype=object)
    for i, base in enumerate(bases):
        outcomes = [run_forward(model, base, {variable: v})[model.output] for v in distinct]
        table[i, :] = [outcomes[k] for k in index]
    return table
