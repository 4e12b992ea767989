"""What ``interp demo`` does with a task: its behavioral stage and its plan for the rest, declared by the task.

A task owns these as data; :mod:`interp.jobs.behavioral` and
:mod:`interp.jobs.demo` carry them out for every task alike, so no job tests
a task's name.

* :class:`BehavioralStage`: the fine-tunings the demo starts with, the splits
  each is scored on, the accuracy bounds that say whether an effect holds,
  the paper's figures and how the table reads. MoNLI's is Table 1 of Geiger,
  Richardson & Potts (2020), §5 (:mod:`interp.tasks.monli.behavior`). A task
  without one gets :func:`fine_tuning`: one fine-tuning on its training
  splits, scored on every split.
* :class:`DemoPlan`: which example set is cached and intervened on, where
  probes look, and how the intervention site and the clique variable are
  chosen.

Usage::

    stage = task.behavioral or fine_tuning(task)
    plan = task.demo or DemoPlan()
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from interp.core.errors import ConfigError

#: The fine-tuning the rest of the demo studies writes this directory.
STUDIED = "model"


@dataclass(frozen=True)
class Training:
    """One fine-tuning of a behavioral stage: its name, the directory it writes under the run and its training splits."""

    name: str
    directory: str
    splits: tuple[str, ...]


@dataclass(frozen=True)
class Check:
    """An effect read off one accuracy: ``training``'s accuracy on ``split`` is at most ``at_most`` (or at least ``at_least``)."""

    name: str
    training: str
    split: str
    at_most: float | None = None
    at_least: float | None = None

    def __post_init__(self) -> None:
        if (self.at_most is None) == (self.at_least is None):
            raise ConfigError(f"check {self.name!r} takes exactly one of at_most and at_least")

    def holds(self, accuracy: float) -> bool:
        return accuracy <= self.at_most if self.at_most is not None else accuracy >= self.at_least

    def to_json(self, accuracy: float) -> dict:
        """As ``metrics.json`` records it: the accuracy under the split's name, the bound and whether it holds."""
        bound = {"at_most": self.at_most} if self.at_most is not None else {"at_least": self.at_least}
        return {self.split: accuracy, **bound, "holds": self.holds(accuracy)}


@dataclass(frozen=True)
class BehavioralStage:
    """The fine-tunings a task's demo starts with and how their accuracies are read.

    Attributes:
        trainings: run in order; one of them writes :data:`STUDIED` (``model/``), the model the demo goes on to study.
        eval_splits: scored after each training (``()``: every split of the task).
        checks: the effects the accuracies must show, recorded in ``metrics.json``.
        paper: the paper's figures, merged into ``metrics.json`` under the task's keys (MoNLI: ``paper_bert``).
        table: ``(result, model) -> text``; ``result`` has ``accuracy[training][split]`` (a fraction) and
            ``holds[check]``; ``None``: a plain table of trainings × splits.
        title: how the demo's timing line names the stage.
    """

    trainings: tuple[Training, ...]
    eval_splits: tuple[str, ...] = ()
    checks: tuple[Check, ...] = ()
    paper: Mapping[str, Any] = field(default_factory=dict)
    table: Callable[[Any, str], str] | None = None
    title: str = "fine-tuning"

    def __post_init__(self) -> None:
        names = [t.name for t in self.trainings]
        if STUDIED not in [t.directory for t in self.trainings] or len(set(names)) != len(names):
            raise ConfigError(f"a behavioral stage's trainings have distinct names and one writes {STUDIED!r}; got {self.trainings}")
        unknown = [c.name for c in self.checks if c.training not in names]
        if unknown:
            raise ConfigError(f"check {unknown[0]!r} reads a training the stage does not run")

    def splits(self) -> set[str]:
        """Every split the stage names (to check against the task's)."""
        return {s for t in self.trainings for s in t.splits} | set(self.eval_splits) | {c.split for c in self.checks}


def fine_tuning(task) -> BehavioralStage:
    """The stage of a task that declares none: one fine-tuning on its training splits into ``model/``, scored on every split."""
    return BehavioralStage(trainings=(Training("fine-tuning", STUDIED, task.training_splits),))


@dataclass(frozen=True)
class DemoPlan:
    """How the demo studies the fine-tuned model: the example sets, where probes look, the site and the clique variable.

    Attributes:
        cache_splits: the splits cached and probed (``()``: the task's default example set).
        probe_locations: ``aligned`` (each variable at its aligned roles, every layer) or ``all``.
        site: ``aligned``: intervene at every variable's aligned roles at every layer, then search cliques
            where IIA stands furthest above both nulls; ``probes``: intervene at the one location where
            probes read ``clique_variable`` most selectively relative to the label (§6.1 of Geiger,
            Richardson & Potts 2020), and search cliques there.
        splits: the splits of the intervention set (``()``: the task's default example set).
        per_split: a seeded mixed set of this many from each split (``None``: a seeded sample of the demo's ``examples``).
        variables: the variables compared (``()``: every variable of the task).
        clique_variable: the variable whose cliques are searched (needed with ``site="probes"``).
    """

    cache_splits: tuple[str, ...] = ()
    probe_locations: str = "aligned"
    site: str = "aligned"
    splits: tuple[str, ...] = ()
    per_split: int | None = None
    variables: tuple[str, ...] = ()
    clique_variable: str | None = None

    def __post_init__(self) -> None:
        if self.probe_locations not in ("aligned", "all"):
            raise ConfigError(f"a demo plan's probe_locations is aligned or all, got {self.probe_locations!r}")
        if self.site not in ("aligned", "probes"):
            raise ConfigError(f"a demo plan's site is aligned or probes, got {self.site!r}")
        if self.site == "probes" and self.clique_variable is None:
            raise ConfigError("a demo plan that reads its site off the probes names its clique_variable")
