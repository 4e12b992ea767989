"""Path patching: a sender site's effect on the readout, or on a later head's query, key or value input, through the
residual stream alone.

Usage::

    from interp.engine.paths import path_patch_logits
    sender = Location.parse("blocks.1.attn.hook_z.h2@w_h")
    logits = path_patch_logits(runner.plan_logits, bases, source_vectors, sender, n_layers)
    logits = path_patch_logits(runner.plan_logits, bases, source_vectors, sender, n_layers,
                               receiver=Location.parse("blocks.3.attn.hook_k.h0@w_h"))   # sender -> head 0's key -> out

Path patching (Wang et al. 2022, §3.1; Goldowsky-Dill et al. 2023, §2) asks what a sender (a head, an attention or MLP
output) changes through one path only. Here the path is sender → readout: each base is run once and every component
downstream of the sender is read at every token (the attention and MLP outputs of every later block, and the sender's
own block's MLP when the sender is in its attention); then the base is run again with the sender's vector at its
location replaced by the source's and every one of those components held at its base value, so that the change reaches
the readout only through the residual stream (and the norms on it), not through any later head or MLP recomputing
from it. With nothing downstream (an MLP output in the last block) it is the plain interchange at the sender.

With a ``receiver`` (a later head's query, key or value input, ``attn.hook_q``/``_k``/``_v``, at some tokens), the
path is sender → receiver: the components between them (the sender's own block's MLP, and every block's attention and
MLP outputs after the sender's and before the receiver's) are held at their base values, the receiver's input is read
off that run, and a third run of the base writes only the receiver's input so, everything else computed afresh: the
effect on the output of what the sender changes in that one head's query, key or value (Wang et al. 2022, §3.1).
:func:`naive_path_patch_logits` is the reference: the same passes, batch 1, one pair at a time.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch
from jaxtyping import Float
from torch import Tensor

from interp.core.errors import ConfigError
from interp.engine.naive import naive_forward
from interp.engine.plan import ALL, HELD, Sources, WritePlan, plan_logits
from interp.hooks.encoding import Encoded
from interp.hooks.locations import INPUTS, Location

#: The sender kinds: a component inside a block (a head's ``attn.hook_z``, ``hook_attn_out``, ``hook_mlp_out``).
SENDERS = ("attn.hook_z", "hook_attn_out", "hook_mlp_out")
#: What runs a write plan over rows: ``run(encoded, base_rows, plan, batch_size=, read=)`` -> (logits, reads), a runner's
#: :meth:`~interp.backends.base.Runner.plan_logits`.
PlanRun = Callable[..., tuple[Tensor, dict]]


def held(sender: Location, n_layers: int, receiver: Location | None = None) -> list[Location]:
    """The components held at their base value for ``sender`` → readout (or → ``receiver``), at every token: the
    sender's block's MLP output when the sender is in its attention, and every later block's attention and MLP outputs
    (before the receiver's block).

    Raises:
        ConfigError: naming ``sender=``: not a component site (the residual stream is the path itself); naming
            ``receiver=``: not a head's query, key or value input, or not in a block after the sender's.
    """
    if sender.component not in SENDERS:
        raise ConfigError(f"`sender={sender}`: path patching sends from a component (a head's attn.hook_z, hook_attn_out or hook_mlp_out), "
                          "not the residual stream, which is the path")  # fmt: skip
    block = sender.hidden_index - 1
    if receiver is not None and receiver.component not in INPUTS:
        raise ConfigError(f"`receiver={receiver}`: a receiver is a head's query, key or value input ({', '.join(INPUTS)}, "
                          "e.g. blocks.3.attn.hook_q.h1@cls), or none for the readout")  # fmt: skip
    if receiver is not None and receiver.layer <= block:
        raise ConfigError(f"`receiver={receiver}` comes before its sender {sender} (block {receiver.layer} ≤ {block}): "
                          "a receiver reads the residual stream after the sender's block")  # fmt: skip
    stop = n_layers if receiver is None else receiver.layer
    out = [Location(block + 1, (ALL,), "hook_mlp_out")] if sender.component != "hook_mlp_out" else []
    for later in range(block + 1, stop):
        out += [Location(later + 1, (ALL,), "hook_attn_out"), Location(later + 1, (ALL,), "hook_mlp_out")]
    return out


@torch.no_grad()
def path_patch_logits(run: PlanRun, bases: Sequence[Encoded], sources: Float[Tensor, "sources width"], sender: Location, n_layers: int,
                      batch_size: int = 64, receiver: Location | None = None) -> Float[Tensor, "bases sources labels"]:  # fmt: skip
    """Logits float32 ``[len(bases), n_sources, n_model_labels]`` on CPU: each base with the vector at ``sender``
    replaced by each source's (``sources``, ``[n_sources, tokens × width]``) and every :func:`held` component at its
    base value; with a ``receiver``, the base run again with only the receiver's input (read off that run) written.

    ``run`` runs a write plan over (base, source) rows: a runner's
    :meth:`~interp.backends.base.Runner.plan_logits` (the Hugging Face runners' is
    :func:`interp.engine.plan.plan_logits`: one reading pass per group of bases of one length for the held values and
    the input to the sender's block, then passes of up to ``batch_size`` pairs, each from the sender's block, or the
    receiver's, on; a TransformerLens bridge's, its hook points).

    Raises:
        ConfigError: as :func:`held`.
    """
    frozen = held(sender, n_layers, receiver)
    pairs = torch.cartesian_prod(torch.arange(len(bases)), torch.arange(len(sources))).reshape(-1, 2)  # (base, source)
    ks, js = pairs.unbind(1)
    plan = WritePlan({sender: Sources(sources, js), **{loc: HELD for loc in frozen}})
    logits, path = run(bases, ks, plan, batch_size=batch_size, read=[receiver] if receiver else [])
    if receiver is not None:
        logits, _ = run(bases, ks, WritePlan({receiver: Sources(path[receiver])}), batch_size=batch_size)
    return logits.view(len(bases), len(sources), -1)


@torch.no_grad()
def naive_path_patch_logits(model, bases: Sequence[Encoded], sources: Float[Tensor, "sources width"], sender: Location, n_layers: int,
                            pad_token_id: int = 0, receiver: Location | None = None) -> Float[Tensor, "bases sources labels"]:  # fmt: skip
    """:func:`path_patch_logits` by two batch-1 passes per pair: read the held components on the base, then run the base
    with the sender written and those components written back; with a ``receiver``, read its input on that run and
    run the base a third time with only that written."""
    frozen = held(sender, n_layers, receiver)
    out = torch.empty(len(bases), len(sources), model.config.num_labels)
    for i, base in enumerate(bases):
        every = {ALL: torch.arange(len(base.input_ids))[None]}
        for j, vector in enumerate(sources):
            _, trace = naive_forward(model, base, pad_token_id, read=frozen, extra_positions=every)
            write = {loc: trace[loc] for loc in frozen}
            write[sender] = vector[None]
            out[i, j], path = naive_forward(model, base, pad_token_id, write=write, read=[receiver] if receiver else [], extra_positions=every)
            if receiver is not None:
                out[i, j], _ = naive_forward(model, base, pad_token_id, write={receiver: path[receiver]})
    return out
