"""Interchange intervention training (Geiger, Lu, Icard & Potts 2022, ICML, §3): the loss that makes a location of the
network implement a variable of the task's causal model, for :func:`interp.api.training.fine_tune` (``iit=``) and
``interp train --iit``.

Usage::

    model = interp.fine_tune("minilm", task, train, iit="lexrel@blocks.2.hook_resid_post@w_h", iit_weight=1.0)

Each training batch of bases gets, besides the task's cross-entropy, the
cross-entropy of the network's output under an interchange intervention
against the causal model's counterfactual: a source is drawn for every base
(seeded by step), the source's vector at the location is read (with
gradients) and written into the base's run, and the target is the causal
model's output with the variable's value taken from the source. With
``subspace = k`` the intervention is DAS's
(:class:`~interp.engine.interventions.RotatedSubspace`, a seeded random
rotation held fixed): only a k-dimensional subspace of the location is
trained to carry the variable. The loss is weighted by ``weight``.

A joint alignment (``"lexrel@blocks.1.hook_resid_post@w_h,negated@blocks.3.hook_resid_post@cls"``) trains several
variables at once: every base gets one source per variable, each written at its variable's location in the same run,
and the target is the causal model's output with every variable from its own source (Geiger et al. 2022, §3, the
interchange intervention on a set of variables).
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import torch
import torch.nn.functional as F

from interp.causal import run_interchange
from interp.core.errors import ConfigError, named, renamed
from interp.engine.interventions import RotatedSubspace
from interp.hooks import hooked
from interp.hooks.architecture import batch_inputs
from interp.hooks.encoding import collate, encode_examples, location_tokens
from interp.models.decoders import template_of
from interp.hooks.inputs import parse_model_locations
from interp.hooks.locations import Location
from interp.models.loading import checkpoint_labels
from interp.tasks import Task


def parse_iit(spec: str, task: Task, n_blocks: int, *, decoder: bool = False) -> tuple[str, Location]:
    """``VARIABLE@LOCATION`` as the task's variable and a location (``SITE@r1+r2``, or a bare site at the variable's aligned roles;
    a ``decoder``'s read token is ``last``, :func:`~interp.hooks.inputs.parse_model_locations`).

    Raises:
        ConfigError: naming ``iit=``: no ``@``, a variable the task lacks, a malformed location.
    """
    variable, _, location = spec.partition("@")
    if not variable or not location:
        raise ConfigError(f"{named('iit', repr(spec))}: write VARIABLE@LOCATION, e.g. lexrel@blocks.2.hook_resid_post@w_h")
    with renamed(variable="iit"):
        task.check_variable(variable)
    try:
        found = parse_model_locations(location, n_blocks, task.roles, (task.alignment[variable],), decoder=decoder)
    except ConfigError as exc:
        raise ConfigError(f"{named('iit', repr(spec))}: {exc}") from None
    if len(found) != 1:
        raise ConfigError(f"{named('iit', repr(spec))}: name one location")
    return variable, found[0]


def parse_iit_alignment(spec: str, task: Task, n_blocks: int, *, decoder: bool = False) -> dict[str, Location]:
    """``VARIABLE@LOCATION[,VARIABLE@LOCATION...]`` as variable -> location (:func:`parse_iit` each): one variable, or a
    joint alignment of several, each at its own location.

    Raises:
        ConfigError: naming ``iit=``: as :func:`parse_iit`; a variable named twice, or one location for two variables.
    """
    found: dict[str, Location] = {}
    for item in str(spec).split(","):
        variable, location = parse_iit(item.strip(), task, n_blocks, decoder=decoder)
        if variable in found or location in found.values():
            raise ConfigError(f"{named('iit', repr(spec))}: {'variable ' + variable if variable in found else 'location ' + str(location)} "
                              "is named twice; a joint alignment puts each variable at its own location")  # fmt: skip
        found[variable] = location
    return found


def iit_loss(model, tokenizer, task: Task, examples: Sequence, alignment: Mapping[str, Location], *, weight: float = 1.0,
             subspace: int | None = None, seed: int = 0) -> Callable[[list[int], int], torch.Tensor]:  # fmt: skip
    """The IIT loss of each variable of ``alignment`` (variable -> location; several: a joint intervention, each from
    its own source) over the training ``examples``: ``loss(batch indices, step)``, a scalar tensor ``[]`` (the weighted
    cross-entropy, nats), the ``extra_loss`` of :func:`interp.models.training.fit`.

    Raises:
        ConfigError: an example lacks a location's roles, or ``subspace`` is wider than a location
            (naming ``iit_subspace=``).
    """
    causal = task.build_causal_model(examples)
    inputs = [task.inputs(e) for e in examples]
    ids = task.read_labels(checkpoint_labels(model.config)).label_ids  # each label's logit in the model's own order
    encoded = encode_examples(examples, tokenizer, "first", task.labels, template_of(model))
    device = next(model.parameters()).device
    rotations: dict[Location, RotatedSubspace] = {}
    for location in alignment.values():
        tokens = location_tokens(encoded, location.roles, f"`iit=` location {location}")  # every example has the roles
        width = len(tokens[0]) * model.config.hidden_size
        if subspace is not None:
            if subspace > width:
                raise ConfigError(f"{named('iit_subspace', subspace)}: at most the location's width {width}")
            rotations[location] = RotatedSubspace(width, subspace, seed=seed).to(device).requires_grad_(False)

    def forward(batch):
        return model(**batch_inputs(model, batch, device)).logits

    def loss(idx: list[int], step: int) -> torch.Tensor:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + step)
        sources = {v: torch.randint(len(examples), (len(idx),), generator=generator).tolist() for v in alignment}  # in order: one variable's as before
        targets = torch.tensor([ids[run_interchange(causal, inputs[b], {v: inputs[sources[v][r]] for v in alignment})[causal.output]]
                                for r, b in enumerate(idx)], device=device)  # fmt: skip
        write = {}
        for v, location in alignment.items():
            source_batch = collate([encoded[s] for s in sources[v]], tokenizer.pad_token_id)
            with hooked(model, source_batch["positions"], read=[location], keep_grad=True) as trace:
                forward(source_batch)
            vectors = trace[location]
            write[location] = vectors if location not in rotations else (lambda base, r=rotations[location], x=vectors: r(base, x))
        base_batch = collate([encoded[b] for b in idx], tokenizer.pad_token_id)
        with hooked(model, base_batch["positions"], write=write):
            logits = forward(base_batch)
        return weight * F.cross_entropy(logits.float(), targets)

    return loss


__all__ = ["iit_loss", "parse_iit", "parse_iit_alignment"]
