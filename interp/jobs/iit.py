"""`interp train --iit VARIABLE@LOCATION`: interchange intervention training (Geiger, Lu, Icard & Potts 2022, ICML, §3).

Usage::

    from interp.jobs.iit import train_iit
    from interp.jobs.train import TrainConfig
    train_iit(TrainConfig(splits=("pmonli", "nmonli_train"), iit="lexrel@blocks.2.hook_resid_post@w_h"), "runs/iit")

IIT trains a network so that a chosen location implements a chosen
variable of the task's causal model. Each training batch of bases gets,
besides the task's cross-entropy, the cross-entropy of the network's output
under an interchange intervention against the causal model's
counterfactual: a source is drawn for every base (seeded by step), the
source's vector at the location is read (with gradients) and written into
the base's run, and the target is INFER with the variable's value taken
from the source. With ``iit_subspace = k`` the intervention is DAS's
(:class:`~interp.engine.interventions.RotatedSubspace`, a seeded random
rotation held fixed): only a k-dimensional subspace of the location is
trained to carry the variable. The loss is weighted by ``iit_weight``.

Everything else (seeding, resuming after each epoch, the checkpoint and
``training.json``) is :func:`interp.jobs.train.train`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import torch
import torch.nn.functional as F

from interp.causal import run_interchange
from interp.core.errors import ConfigError, named
from interp.engine.interventions import RotatedSubspace
from interp.hooks import hooked, n_layers
from interp.hooks.architecture import batch_inputs
from interp.hooks.locations import Location, parse_locations
from interp.models.loading import checkpoint_labels, model_layers, model_width
from interp.jobs.train import TrainConfig, TrainResult, train
from interp.tasks import Task
from interp.hooks.encoding import collate, encode_examples, location_tokens


def parse_iit(spec: str, task: Task, n_blocks: int) -> tuple[str, Location]:
    """``VARIABLE@LOCATION`` as the task's variable and a location (``SITE@r1+r2``, or a bare site at the variable's aligned roles).

    Raises:
        ConfigError: naming ``--iit``: no ``@``, a variable the task lacks, a malformed location.
    """
    variable, _, location = spec.partition("@")
    if not variable or not location:
        raise ConfigError(f"{named('iit', repr(spec))}: write VARIABLE@LOCATION, e.g. lexrel@blocks.2.hook_resid_post@w_h")
    task.check_variable(variable, "iit")
    found = parse_locations(location, n_blocks, task.roles, (task.alignment[variable],))
    if len(found) != 1:
        raise ConfigError(f"{named('iit', repr(spec))}: name one location")
    return variable, found[0]


def iit_objective(config: TrainConfig, task: Task):
    """The ``objective`` :func:`interp.jobs.train.train` takes: builds the IIT loss for a model and its training examples."""

    def build(model, tokenizer, examples: Sequence):
        variable, location = parse_iit(config.iit, task, n_layers(model))
        causal = task.build_causal_model(examples)
        inputs = [task.inputs(e) for e in examples]
        ids = task.read_labels(checkpoint_labels(model.config)).label_ids  # each label's logit in the model's own order
        encoded = encode_examples(examples, tokenizer, "first", task.labels)
        tokens = location_tokens(encoded, location.roles, f"`iit=` location {location}")  # every example has the roles
        width = len(tokens[0]) * model.config.hidden_size
        device = next(model.parameters()).device
        rotation = None
        if config.iit_subspace is not None:
            if config.iit_subspace > width:
                raise ConfigError(f"{named('iit_subspace', config.iit_subspace)}: at most the location's width {width}")
            rotation = RotatedSubspace(width, config.iit_subspace, seed=config.seed).to(device).requires_grad_(False)

        def loss(idx: list[int], step: int) -> torch.Tensor:
            generator = torch.Generator().manual_seed(config.seed * 1_000_003 + step)
            sources = torch.randint(len(examples), (len(idx),), generator=generator).tolist()
            targets = torch.tensor(
                [ids[run_interchange(causal, inputs[b], {variable: inputs[s]})[causal.output]] for b, s in zip(idx, sources)],
                device=device,
            )
            source_batch, base_batch = collate([encoded[s] for s in sources], tokenizer.pad_token_id), collate([encoded[b] for b in idx], tokenizer.pad_token_id)

            def forward(batch):
                return model(**batch_inputs(model, batch, device)).logits

            with hooked(model, source_batch["positions"], read=[location], keep_grad=True) as trace:
                forward(source_batch)
            vectors = trace[location]
            write = vectors if rotation is None else (lambda base: rotation(base, vectors))
            with hooked(model, base_batch["positions"], write={location: write}):
                logits = forward(base_batch)
            return config.iit_weight * F.cross_entropy(logits.float(), targets)

        return loss

    return build


def train_iit(config: TrainConfig, out_dir: str | Path, *, progress: bool = True, overwrite: bool = False) -> TrainResult:
    """Fine-tune with the task loss plus the IIT loss of ``config.iit``; as :func:`interp.jobs.train.train` otherwise.

    Raises:
        ConfigError: ``config.iit`` missing or malformed, a variable or role the task lacks, a subspace wider than the location;
            and as :func:`interp.jobs.train.train`.
    """
    if not config.iit:
        raise ConfigError("`iit=` names no VARIABLE@LOCATION")
    task = config.resolved_task()
    if task.causal_model is None:
        raise ConfigError(f"`iit=`: task {task.name!r} has no causal model (behavioral only)")
    _, location = parse_iit(config.iit, task, model_layers(config.model))  # before any work: errors leave nothing behind
    width = len(location.roles) * model_width(config.model)
    if config.iit_subspace is not None and config.iit_subspace > width:
        raise ConfigError(f"{named('iit_subspace', config.iit_subspace)}: at most the location's width {width}")
    return train(config, out_dir, progress=progress, overwrite=overwrite, objective=iit_objective(config, task))
