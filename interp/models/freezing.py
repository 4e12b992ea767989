"""Weights that get no gradient inside a block: ``requires_grad`` off, each flag restored in ``finally``.

Usage::

    with frozen_weights(model):                       # DAS: only the intervention's parameters train
        loss.backward()
    with frozen_weights(model, keep=head_params):     # linear probing: only the head trains
        loss.backward()
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterable, Iterator

import torch


@contextmanager
def frozen_weights(model: torch.nn.Module, keep: Iterable[torch.nn.Parameter] = ()) -> Iterator[None]:
    """Within the block no weight of ``model`` gets a gradient (``requires_grad`` off) except those in ``keep``, which
    are left as they are; every flag is restored in ``finally``, whatever happens inside."""
    kept = {id(p) for p in keep}
    flags = [(p, p.requires_grad) for p in model.parameters() if id(p) not in kept]
    try:
        for p, _ in flags:
            p.requires_grad_(False)
        yield
    finally:
        for p, flag in flags:
            p.requires_grad_(flag)
