"""Path patching to the readout: a sender site's effect on the model's output through the residual stream alone.

Usage::

    from interp.engine.paths import path_patch_logits
    logits = path_patch_logits(model, bases, source_vectors, Location.parse("blocks.1.attn.hook_z.h2@w_h"), pad_token_id)

Path patching (Wang et al. 2022, §3.1; Goldowsky-Dill et al. 2023, §2) asks what a sender (a head, an attention or MLP
output) changes through one path only. Here the path is sender → readout: each base is run once and every component
downstream of the sender is read at every token (the attention and MLP outputs of every later block, and the sender's
own block's MLP when the sender is in its attention); then the base is run again with the sender's vector at its
location replaced by the source's and every one of those components held at its base value, so that the change reaches
the readout only through the residual stream (and the norms on it), not through any later head or MLP recomputing
from it. With nothing downstream (an MLP output in the last block) it is the plain interchange at the sender.
:func:`naive_path_patch_logits` is the reference: the same two passes, batch 1, one pair at a time.
"""

from __future__ import annotations

from typing import Sequence

import torch
from jaxtyping import Float
from torch import Tensor

from interp.core.errors import ConfigError
from interp.engine.batched import length_groups
from interp.engine.naive import naive_forward
from interp.engine.rows import in_passes
from interp.hooks.architecture import batch_inputs
from interp.hooks.context import hooked
from interp.hooks.encoding import Encoded, collate
from interp.hooks.locations import Location

#: The sender kinds: a component inside a block (a head's ``attn.hook_z``, ``hook_attn_out``, ``hook_mlp_out``).
SENDERS = ("attn.hook_z", "hook_attn_out", "hook_mlp_out")
ALL = "all"  # the role of every token


def held(sender: Location, n_layers: int) -> list[Location]:
    """The components held at their base value for ``sender`` → readout, at every token: the sender's block's MLP output
    when the sender is in its attention, and every later block's attention and MLP outputs.

    Raises:
        ConfigError: naming ``sender=``: not a component site (the residual stream is the path itself).
    """
    if sender.component not in SENDERS:
        raise ConfigError(f"`sender={sender}`: path patching sends from a component (a head's attn.hook_z, hook_attn_out or hook_mlp_out), "
                          "not the residual stream, which is the path")  # fmt: skip
    block = sender.hidden_index - 1
    out = [Location(block + 1, (ALL,), "hook_mlp_out")] if sender.component != "hook_mlp_out" else []
    for later in range(block + 1, n_layers):
        out += [Location(later + 1, (ALL,), "hook_attn_out"), Location(later + 1, (ALL,), "hook_mlp_out")]
    return out


def _positions(batch: dict, length: int, rows: int) -> dict:
    return {**batch["positions"], ALL: torch.arange(length).expand(rows, length)}


@torch.no_grad()
def path_patch_logits(model, bases: Sequence[Encoded], sources: Float[Tensor, "sources width"], sender: Location, n_layers: int,
                      pad_token_id: int = 0, batch_size: int = 64) -> Float[Tensor, "bases sources labels"]:  # fmt: skip
    """Logits float32 ``[len(bases), n_sources, n_model_labels]`` on CPU: each base with the vector at ``sender``
    replaced by each source's (``sources``, ``[n_sources, tokens × width]``) and every :func:`held` component at its
    base value. One reading pass per group of bases of one length, then passes of a base against batches of sources
    (:func:`interp.engine.rows.in_passes`).

    Raises:
        ConfigError: as :func:`held`.
    """
    frozen = held(sender, n_layers)
    device = next(model.parameters()).device
    out = torch.empty(len(bases), len(sources), model.config.num_labels)
    for rows in length_groups(bases):
        length = len(bases[rows[0]].input_ids)
        batch = collate([bases[i] for i in rows], pad_token_id)
        with hooked(model, _positions(batch, length, len(rows)), read=frozen) as trace:
            model(**batch_inputs(model, batch, device))
        for k, i in enumerate(rows):

            def run(chunk: Tensor, _size: int, k: int = k, i: int = i) -> None:
                chunk = chunk.cpu()
                repeated = collate([bases[i]] * len(chunk), pad_token_id)
                write = {loc: trace[loc][k:k + 1].expand(len(chunk), -1) for loc in frozen}
                write[sender] = sources[chunk].to(device)
                with hooked(model, _positions(repeated, length, len(chunk)), write=write):
                    out[i, chunk] = model(**batch_inputs(model, repeated, device)).logits.float().cpu()

            in_passes(len(sources), batch_size, run, device=device)  # the engine's row loop: a pass out of memory is halved
    return out


@torch.no_grad()
def naive_path_patch_logits(model, bases: Sequence[Encoded], sources: Float[Tensor, "sources width"], sender: Location, n_layers: int,
                            pad_token_id: int = 0) -> Float[Tensor, "bases sources labels"]:  # fmt: skip
    """:func:`path_patch_logits` by two batch-1 passes per pair: read the held components on the base, then run the base
    with the sender written and those components written back."""
    frozen = held(sender, n_layers)
    out = torch.empty(len(bases), len(sources), model.config.num_labels)
    for i, base in enumerate(bases):
        every = {ALL: torch.arange(len(base.input_ids))[None]}
        for j, vector in enumerate(sources):
            _, trace = naive_forward(model, base, pad_token_id, read=frozen, extra_positions=every)
            write = {loc: trace[loc] for loc in frozen}
            write[sender] = vector[None]
            out[i, j], _ = naive_forward(model, base, pad_token_id, write=write, extra_positions=every)
    return out
