"""Steering and ablation: one intervention written at a location of every example, whatever any source holds.

Usage::

    lab = interp.IntervenableModel("runs/demo/model", "monli")
    logits = lab.ablate(examples, "blocks.3.hook_resid_post@w_h", kind="mean", reference=other_examples)  # [n, labels]
    logits = lab.steer(examples, "blocks.2.hook_resid_post@w_h", vector, scale=4.0)                      # [n, labels]

Zero ablation sets the vector to 0 (Olsson et al. 2022 knock out heads so), mean ablation to its mean over a reference
set (Wang et al. 2022, §3: it keeps the model on its activations' range), and steering adds ``scale`` times a vector
(activation addition; Turner et al. 2023, §2). Each is a module of :mod:`interp.engine.interventions` (``zero``,
``mean``, ``additive``), run by the engine as any intervention is (:meth:`IntervenableModel.interchange` takes them
too): a base's vector is changed, the source is not read, so each example is run once. Like DAS they take
residual-stream locations (a component site is refused by name).
"""

from __future__ import annotations

from typing import Sequence

import torch
from jaxtyping import Float
from torch import Tensor

from interp.core.errors import ConfigError, named, renamed
from interp.engine.interventions import Additive, Intervention, MeanAblation, ZeroAblation

#: The kinds :func:`ablate` takes.
ABLATIONS = ("zero", "mean")


def apply(lab, examples: Sequence, location, intervention: Intervention, *, naive: bool = False) -> Float[Tensor, "n labels"]:
    """The logits of every example with ``intervention`` written at ``location``, float32 ``[n, n_model_labels]`` on CPU
    (a source-free intervention: each example is a base, run once, against one source these kinds never read)."""
    examples = lab.task.check_examples(examples)
    if not examples:
        raise ConfigError(f"{named('examples')} is empty; give at least one example")
    found = lab.interchange(examples, examples[:1], location, variables=(), intervention=intervention, naive=naive)
    return found.logits[:, 0].clone()  # [bases = the examples, labels]: the one source's vector is never read by these kinds


def ablate(lab, examples: Sequence, location, *, kind: str = "zero", reference: Sequence | None = None,
           naive: bool = False) -> Float[Tensor, "n labels"]:  # fmt: skip
    """The logits of every example with its vector at ``location`` zeroed (``kind="zero"``) or set to its mean over
    ``reference`` (``kind="mean"``; default: ``examples`` themselves), float32 ``[n, n_model_labels]`` on CPU.

    Raises:
        ConfigError: naming ``kind=`` (not zero or mean), ``reference=`` (given for zero, or empty), or as
            :meth:`IntervenableModel.interchange`.
    """
    if kind not in ABLATIONS:
        raise ConfigError(f"{named('kind', repr(kind))}: choose {' or '.join(ABLATIONS)}")
    loc = lab.location(location)
    width = lab.width(examples, loc)
    if kind == "zero":
        if reference is not None:
            raise ConfigError(f"{named('reference')}: a zero ablation takes no reference set (kind='mean' does)")
        return apply(lab, examples, loc, ZeroAblation(width), naive=naive)
    with renamed(examples="reference"):
        vectors = lab.source_vectors(examples if reference is None else reference, loc)
    return apply(lab, examples, loc, MeanAblation.of(vectors), naive=naive)


def steer(lab, examples: Sequence, location, vector: Float[Tensor, "width"], *, scale: float = 1.0,
          naive: bool = False) -> Float[Tensor, "n labels"]:  # fmt: skip
    """The logits of every example with ``scale`` times ``vector`` (float ``[width]``: the location's tokens × its
    width, :meth:`IntervenableModel.width`) added to its vector at ``location``, float32 ``[n, n_model_labels]`` on CPU.

    Raises:
        ConfigError: naming ``vector=``: not numbers, another size than the location's width, or not finite; a
            ``scale`` not finite; logits that are not finite after the step (a step so large the model overflows); or as
            :meth:`IntervenableModel.interchange`.
    """
    loc = lab.location(location)
    try:
        direction = torch.as_tensor(vector, dtype=torch.float32)
    except (TypeError, ValueError, RuntimeError):
        raise ConfigError(f"{named('vector')} must be a list or tensor of numbers, got {type(vector).__name__} of "
                          f"{type(next(iter(vector), None)).__name__ if isinstance(vector, (list, tuple)) else 'something else'}") from None  # fmt: skip
    with renamed(width="vector"):
        intervention = Additive(lab.width(examples, loc), direction, scale=scale)
    logits = apply(lab, examples, loc, intervention, naive=naive)
    if not torch.isfinite(logits).all():
        raise ConfigError(f"{named('vector')} times scale = {scale} overflows the model: its logits are not finite (the step's norm "
                          f"is {float(direction.norm()) * abs(scale):.3g}); take a smaller scale or a unit direction")  # fmt: skip
    return logits
