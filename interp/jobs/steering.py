"""`interp ablate` and `interp steer`: the settings, the examples drawn, and the file, around :mod:`interp.api.effects`.

Usage::

    from interp.jobs.steering import AblationConfig, SteeringConfig, run_ablation, run_steering
    found = run_ablation(AblationConfig(model="runs/demo/model", location="blocks.3.hook_resid_post@w_h", kind="mean"))
    print(found.to_frame())
    found = run_steering(SteeringConfig(model="runs/demo/model", location="blocks.3.hook_resid_post@w_h",
                                        variable="lexrel", to="reverse", scales=(1.0, 4.0)))

What each figure is, its interval and its null: :mod:`interp.api.effects`. ``out`` (a folder) gets ``ablation.csv``
or ``steering.csv`` with a manifest; nothing is written without it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from interp.api.effects import EffectResult, ablation_effect, format_effect, steering_effect
from interp.api.intervenable import IntervenableModel
from interp.api.loading import Classifier
from interp.api.specs import DataSpec, RunSpec, SampleSpec
from interp.core.outputs import require_writable

__all__ = ["AblationConfig", "SteeringConfig", "run_ablation", "run_steering", "format_effect"]


@dataclass(frozen=True)
class AblationConfig:
    """Which model, location and kind (``zero`` or ``mean``); the examples ablated (``sample``, default the task's
    own set) and mean ablation's reference set (``reference``; ``None``: the ablated examples themselves)."""

    model: str | Classifier
    location: str
    kind: str = "zero"
    data: DataSpec = DataSpec()
    sample: SampleSpec = SampleSpec()
    reference: SampleSpec | None = None
    run: RunSpec = RunSpec()
    seed: int = 0  # the bootstrap's
    out: str | None = None


@dataclass(frozen=True)
class SteeringConfig:
    """Which model and location; the direction: ``variable``'s class means towards the value ``to``, computed on
    ``reference`` (``None``: the task's training splits); the ``scales`` it is added at; the examples steered
    (``sample``); ``seed``: the random direction's and the bootstrap's."""

    model: str | Classifier
    location: str
    variable: str
    to: str
    scales: tuple[float, ...] = (1.0, 2.0, 4.0)
    data: DataSpec = DataSpec()
    sample: SampleSpec = SampleSpec()
    reference: SampleSpec | None = None
    run: RunSpec = RunSpec()
    seed: int = 0
    out: str | None = None


def run_ablation(config: AblationConfig) -> EffectResult:
    """Load, draw the examples (and the reference set), :func:`~interp.api.effects.ablation_effect`, and save into
    ``config.out`` where given.

    Raises:
        ConfigError: as :func:`~interp.api.effects.ablation_effect`.
        DataError, ModelError, OutputError: bad data, model or ``out`` (checked before the model loads).
    """
    if config.out is not None:
        require_writable(Path(config.out))
    lab = IntervenableModel.from_specs(config.model, config.data, config.run,
                                       splits=(*config.sample.splits, *(config.reference.splits if config.reference else ())))  # fmt: skip
    reference = None if config.reference is None else config.reference.draw(lab.task)
    found = ablation_effect(lab, config.sample.draw(lab.task), config.location, kind=config.kind, reference=reference, seed=config.seed)
    if config.out is not None:
        found.save(config.out)
    return found


def run_steering(config: SteeringConfig) -> EffectResult:
    """Load, draw the steered examples and the reference set (default: the task's training splits),
    :func:`~interp.api.effects.steering_effect`, and save into ``config.out`` where given.

    Raises:
        ConfigError: as :func:`~interp.api.effects.steering_effect`.
        DataError, ModelError, OutputError: bad data, model or ``out`` (checked before the model loads).
    """
    if config.out is not None:
        require_writable(Path(config.out))
    lab = IntervenableModel.from_specs(config.model, config.data, config.run, variables=(config.variable,),
                                       splits=(*config.sample.splits, *(config.reference.splits if config.reference else ())))  # fmt: skip
    given = config.reference or SampleSpec()
    reference = replace(given, splits=given.splits or lab.task.training_splits).draw(lab.task)  # the training splits by default
    found = steering_effect(lab, config.sample.draw(lab.task), reference, config.location, config.variable, config.to,
                            scales=config.scales, seed=config.seed)  # fmt: skip
    if config.out is not None:
        found.save(config.out)
    return found
