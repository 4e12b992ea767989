"""How far a run in reduced precision (TF32 or bf16) is from fp32: label agreement on a seeded sample of pairs.

``interp intervene --precision tf32|bf16`` trades exactness for speed
(issue #5). After such a run, a sample of its (base, source) pairs, up to
:data:`CHECK_BASES` bases × :data:`CHECK_SOURCES` sources drawn with the
run's seed, is run again by the same engine in fp32, and the labels are
compared. The interventions file keeps the figures as attributes of each
location's group (:mod:`interp.files.interventions`); ``interp intervene``
prints them under its summary.
"""

from __future__ import annotations

import random
from typing import Sequence

import torch
from torch import Tensor

from interp.api.intervenable import IntervenableModel
from interp.api.objects import Location
from interp.core.errors import ConfigError
from interp.files.interventions import Fp32Check

CHECK_BASES = 16
CHECK_SOURCES = 256


def sample_pairs(n: int, seed: int) -> tuple[list[int], list[int]]:
    """Sorted base and source indices of the sample, out of ``n`` examples (all of them where ``n`` is small)."""
    rng = random.Random(seed)
    return sorted(rng.sample(range(n), min(n, CHECK_BASES))), sorted(rng.sample(range(n), min(n, CHECK_SOURCES)))


def compare_with_fp32(lab: IntervenableModel, bases: Sequence, sources: Tensor, location: Location, reduced: Tensor) -> Fp32Check:
    """Run the sampled pairs in fp32, on the run's engine (:meth:`IntervenableModel.interchange_logits`), and compare
    with the reduced-precision logits.

    Args:
        lab: the bound model, in float32 (outside :meth:`IntervenableModel.precision`).
        bases: the sampled base examples; sources: float ``[n_sources, tokens × width]``, their source vectors at ``location``.
        reduced: float ``[len(bases), n_sources, n_labels]``, the run's logits for these pairs.

    Raises:
        ConfigError (a ValueError): the model is not in float32, or ``reduced`` has another shape than the pairs.
    """
    dtype = next(lab.model.module.parameters()).dtype
    if dtype != torch.float32:
        raise ConfigError(f"the fp32 check needs the model in float32, not {dtype}")
    exact = lab.interchange_logits(bases, sources.float(), location)
    if reduced.shape != exact.shape:
        raise ConfigError(f"reduced-precision logits have shape {tuple(reduced.shape)}, the pairs {tuple(exact.shape)}")
    reduced = reduced.float()
    same = reduced.argmax(-1) == exact.argmax(-1)
    return Fp32Check(int(same.numel()), float(same.float().mean()), float((reduced - exact).abs().max()))
