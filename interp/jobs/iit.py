"""`interp train --iit VARIABLE@LOCATION`: interchange intervention training (Geiger, Lu, Icard & Potts 2022, ICML, §3).

Usage::

    from interp.jobs.iit import train_iit
    from interp.api.specs import SampleSpec
    from interp.jobs.train import TrainConfig
    train_iit(TrainConfig(sample=SampleSpec(splits=("pmonli", "nmonli_train")), iit="lexrel@blocks.2.hook_resid_post@w_h", out="runs/iit"))

IIT trains a network so that a chosen location implements a chosen
variable of the task's causal model: the loss is :func:`interp.api.iit.iit_loss`
(``iit_weight``, ``iit_subspace``), the one ``interp.fine_tune(..., iit=...)``
adds in memory.

Everything else (seeding, resuming after each epoch, the checkpoint and
``training.json``) is :func:`interp.jobs.train.train`'s; the loss is built by
:func:`interp.api.training.objective`, as for ``fine_tune``.
"""

from __future__ import annotations

from pathlib import Path

from interp.api.iit import parse_iit_alignment
from interp.api.loading import model_is_decoder, model_layers, model_width
from interp.api.training import objective
from interp.core.errors import ConfigError, named
from interp.jobs.train import TrainConfig, TrainResult, older_out, train


def train_iit(config: TrainConfig, out: str | Path | None = None, *, progress: bool = True, overwrite: bool | None = None) -> TrainResult:
    """Fine-tune with the task loss plus the IIT loss of ``config.iit`` (:func:`interp.api.training.objective`) into
    ``config.out``; as :func:`interp.jobs.train.train` otherwise (``out`` and ``overwrite`` as arguments: the older form).

    Raises:
        ConfigError: ``config.iit`` missing or malformed, a variable or role the task lacks, a subspace wider than the location;
            and as :func:`interp.jobs.train.train`.
    """
    config = older_out(config, out, overwrite, "train_iit")
    if not config.iit:
        raise ConfigError("`iit=` names no VARIABLE@LOCATION")
    task = config.resolved_task()
    if task.causal_model is None:
        raise ConfigError(f"`iit=`: task {task.name!r} has no causal model (behavioral only)")
    alignment = parse_iit_alignment(config.iit, task, model_layers(config.model), decoder=model_is_decoder(config.model))  # before any work
    width = min(len(location.roles) for location in alignment.values()) * model_width(config.model)
    if config.iit_subspace is not None and config.iit_subspace > width:
        raise ConfigError(f"{named('iit_subspace', config.iit_subspace)}: at most the location's width {width}")
    extra = objective(task, iit=config.iit, iit_weight=config.iit_weight, iit_subspace=config.iit_subspace, seed=config.seed)
    return train(config, progress=progress, objective=extra)
