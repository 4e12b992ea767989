"""Weights that get no gradient inside a block: ``requires_grad`` off, each flag restored in ``finally``.

Usage::

    with frozen_weights(model):                       # DAS: only the intervention's parameters train
        loss.backward()
    with frozen_weights(model, keep=head_params):     # linear probing: only the head trains
        loss.backward()
    with frozen_weights(model, keep=top_parameters(model, 2)):   # the last 2 blocks, the final norm and the head train
        loss.backward()
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterable, Iterator

import torch

from interp.core.errors import ConfigError, named


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


def top_parameters(model: torch.nn.Module, blocks: int) -> list[torch.nn.Parameter]:
    """The weights of ``model``'s last ``blocks`` transformer blocks and of everything above the block stack (the final
    norm, a pooler, the classification head): what a fine-tuning of the top blocks trains (``train_blocks``), the
    embeddings and the lower blocks frozen. ``blocks=0``: the parts above the stack alone. A weight shared with the
    embeddings (a causal LM's tied output matrix, SmolLM2's and Gemma 3's) counts as the embeddings' and stays frozen,
    so no input embedding ever trains: an encoder's embedding module, a decoder's token and position embeddings.

    With the lower blocks frozen the backward pass stops at the lowest trained block: on SmolLM2-135M (30 blocks) on a
    2-core CPU a step of 16 trains the top 2 blocks 3.9 times faster than every weight (``benchmarks/decoder_finetune.py``).

    Raises:
        ConfigError: naming ``train_blocks=``, more blocks than the model has.
    """
    from interp.hooks.architecture import architecture
    from interp.hooks.context import site_modules  # the block list of each family

    family = architecture(model)
    modules = site_modules(model)
    stack = modules[1:]
    if not 0 <= blocks <= len(stack):
        raise ConfigError(f"{named('train_blocks', blocks)}: the model has {len(stack)} blocks; give 0 to {len(stack)}")
    if family.decoder:
        # A decoder's embeddings are no site module (hidden_states[0] is block 0's input): what trains is named, the top
        # blocks and the final norm of the base model, and whatever lies outside it (the score head, an untied LM head);
        # everything else in the base model (the token and position embeddings, the lower blocks) stays frozen.
        above = [*family.block_list(model)[len(stack) - blocks :], family.final_norm_module(model)]
        kept, inside = {id(p) for m in above for p in m.parameters()}, {id(p) for p in family.base(model).parameters()}
        return [p for p in model.parameters() if id(p) in kept or id(p) not in inside]
    below = {id(p) for m in (modules[0], *stack[: len(stack) - blocks]) for p in m.parameters()}
    return [p for p in model.parameters() if id(p) not in below]
