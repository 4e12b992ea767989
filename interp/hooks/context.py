"""Read or replace the vector at Locations of a Hugging Face encoder (BERT, RoBERTa, XLM-R, ELECTRA, DistilBERT, DeBERTa-v2, ModernBERT).

Usage::

    positions = batch["positions"]                      # {role: int64 [batch]}, each example's token index
    with hooked(model, positions, read=[loc]) as trace:
        model(**inputs)
    trace[loc]                                          # float [batch, tokens × d_model]

    with hooked(model, positions, write={loc: vectors}): # vectors: [batch, tokens × d_model]
        logits = model(**inputs).logits                 # the interchange intervention

Hooks are PyTorch forward hooks on the module whose output is
``hidden_states[0]`` (the embeddings) and on each block (block l's output is
``hidden_states[l + 1]``); a component site (:mod:`interp.hooks.locations`)
is the input or output of a module inside block l, inputs through forward
pre-hooks. Which modules those are is each family's own
(:mod:`interp.hooks.architecture` has the table). They are removed in ``finally`` whatever
happens inside the block, as TransformerLens ``hooks()`` and baukit
``TraceDict`` do. A write replaces the vectors at the location's tokens (each
of its roles, at that example's position; one token per role, or every
piece of a word with ``--wordpiece all``) and leaves every other token
alone, so a later read at the same site sees the replaced vectors. A
location's vector is its tokens' vectors concatenated in role order:
``tokens × d_model`` floats (``d_model`` for one token).
"""

from __future__ import annotations

from collections import defaultdict
from contextlib import contextmanager
from typing import Callable, Iterator, Mapping, Sequence

import torch
from torch import Tensor

from interp.core.errors import ConfigError
from interp.hooks.architecture import architecture
from interp.hooks.locations import INPUTS, K, V, Location, head_dim, kv_heads


def site_modules(model) -> list[torch.nn.Module]:
    """The modules whose outputs are ``hidden_states[0..n_layers]``: the embedding output, then each block.

    Where they are depends on the family (:mod:`interp.hooks.architecture`).

    Raises:
        ConfigError: a family interp does not cover, or a model without its block list.
    """
    return architecture(model).hidden_modules(model)


def n_layers(model) -> int:
    """Number of transformer blocks."""
    return len(site_modules(model)) - 1


def token_columns(positions: Mapping[str, Tensor], location: Location) -> Tensor:
    """int64 ``[batch, tokens]``: each example's token indices at ``location``, its roles' in order.

    ``positions[role]`` is ``[batch]`` (one token) or ``[batch, k]`` (k pieces).

    Raises:
        ConfigError: a role ``positions`` lacks.
    """
    missing = [r for r in location.roles if r not in positions]
    if missing:
        raise ConfigError(f"token role {missing[0]!r} has no positions here (roles: {', '.join(positions) or 'none'})")
    return torch.cat([positions[r].reshape(len(positions[r]), -1) for r in location.roles], dim=1)


def site_module(model, location: Location) -> tuple[torch.nn.Module, bool]:
    """The module whose output (or, when the flag is true, first input) holds ``location``'s site.

    Raises:
        ConfigError: a location out of range for the model, a head out of
            range, or a component site the model's blocks lack.
    """
    arch = architecture(model)
    sites = arch.hidden_sites(model)
    if location.hidden_index >= len(sites):
        raise ConfigError(f"location {location} is out of range for a model with {len(sites) - 1} blocks")
    if location.is_residual:
        return sites[location.hidden_index]
    heads = kv_heads(model.config) if location.component in (K, V) else model.config.num_attention_heads
    if location.head >= heads:
        raise ConfigError(f"location {location}: head {location.head} is out of range for a model with {heads} heads (0..{heads - 1})")
    path, is_input = arch.components[location.component]
    module = arch.block_list(model)[location.layer]
    for name in path.split("."):
        module = getattr(module, name, None)
    if not isinstance(module, torch.nn.Module):
        raise ConfigError(
            f"location {location}: {type(model).__name__}'s blocks have no {path} (not {arch.name}'s layout), so it lacks site {location.site}"
        )
    return module, is_input


def feature_slice(model, location: Location) -> slice:
    """The columns of the hooked tensor's last dimension that ``location`` reads: one head's for ``attn.hook_z.h{H}``
    (or a head's query, key or value input), the query's, key's or value's third of a fused projection, else all."""
    start = 0
    if location.component in INPUTS and architecture(model).fused_qkv:
        start = INPUTS.index(location.component) * model.config.hidden_size
        if location.head < 0:
            return slice(start, start + model.config.hidden_size)
    if location.head < 0:
        return slice(None)
    d_head = head_dim(model.config)
    return slice(start + location.head * d_head, start + (location.head + 1) * d_head)


@contextmanager
def hooked(
    model,
    positions: Mapping[str, Tensor],
    read: Sequence[Location] = (),
    write: Mapping[Location, Tensor | Callable[[Tensor], Tensor]] | None = None,
    keep_grad: bool = False,
) -> Iterator[dict[Location, Tensor]]:
    """Hook ``model`` to read and/or replace vectors at locations during the forward passes inside the block.

    Args:
        model: a Hugging Face model of a family :mod:`interp.hooks.architecture` covers: an encoder
            (``BertForSequenceClassification``, ``DebertaV2Model``, ...) or a decoder (``GPT2ForSequenceClassification``,
            ``LlamaForCausalLM``, Qwen, Mistral, Gemma), whose ``hidden_states[0]`` is block 0's input and whose
            read token is the last (the role ``last``, a decoder's ``cls``).
        positions: role -> int64 ``[batch]``, each example's token index of that role (a task's
            roles: MoNLI's cls, w_p, w_h; any other task's own), or ``[batch, k]`` for a role
            covering k tokens (:func:`interp.hooks.encoding.collate` gives both).
        read: locations whose vectors to record; the yielded dict maps each to
            float ``[batch, tokens × d_model]`` (from the last forward pass;
            detached unless ``keep_grad``).
        write: location -> float ``[batch, tokens × d_model]`` vectors to put in place
            of the model's own (an interchange intervention when they come from
            a source input), or a function from the model's own vectors there
            to the new ones (an intervention module's ``lambda base: module(base, source)``).
        keep_grad: recorded vectors stay in the autograd graph (interchange
            intervention training reads a source's vectors with gradients).

    Raises:
        ConfigError: a location out of range for the model (a block, a head),
            a component site the model lacks, a location whose role
            ``positions`` lacks, or a write whose shape is not ``[batch, tokens × width]``.
    """
    write = dict(write or {})
    where = {loc: site_module(model, loc) for loc in [*read, *write]}
    columns = {loc: token_columns(positions, loc) for loc in [*read, *write]}
    features = {loc: feature_slice(model, loc) for loc in [*read, *write]}
    batch = len(next(iter(positions.values()))) if positions else 0
    rows = torch.arange(batch)[:, None]
    trace: dict[Location, Tensor] = {}
    arch = architecture(model)
    carried = [loc for loc in write if loc.component in arch.carried]  # their change also reaches the block's output
    blocks = {loc: arch.block_list(model)[loc.layer] for loc in carried}
    changes: dict[Location, Tensor] = {}
    by_site: dict[tuple[int, bool], dict] = defaultdict(lambda: {"read": [], "write": []})
    for loc in read:
        module, is_input = where[loc]
        by_site[id(module), is_input].update(module=module)
        by_site[id(module), is_input]["read"].append(loc)
    for loc, vectors in write.items():
        width = columns[loc].shape[1] * loc.token_width(model.config)
        module, is_input = where[loc]
        by_site[id(module), is_input].update(module=module)
        if not callable(vectors) and (vectors.dim() != 2 or vectors.shape[0] != batch or vectors.shape[1] != width):
            raise ConfigError(f"write at {loc}: vectors must be [batch={batch}, tokens × width={width}], got {tuple(vectors.shape)}")
        by_site[id(module), is_input]["write"].append(loc)

    def visit(todo, hidden: Tensor) -> Tensor | None:
        """Write then read ``todo``'s locations in ``hidden`` ``[batch, seq, width]``; the new tensor if anything was written."""
        at = rows.to(hidden.device)
        if todo["write"]:
            hidden = hidden.clone()
            for loc in todo["write"]:
                cols, f = columns[loc].to(hidden.device), features[loc]
                old = hidden[at, cols, f]
                new = write[loc](old.reshape(batch, -1)) if callable(write[loc]) else write[loc]
                hidden[at, cols, f] = new.to(hidden.device, hidden.dtype).view(batch, cols.shape[1], -1)
                if loc in blocks:
                    changes[loc] = hidden[at, cols, f] - old
        for loc in todo["read"]:
            cols = columns[loc].to(hidden.device)
            vectors = hidden[at, cols, features[loc]].reshape(batch, -1)
            trace[loc] = vectors if keep_grad else vectors.detach()
        return hidden if todo["write"] else None

    def output_hook(todo):
        def hook(module, args, output):
            new = visit(todo, output[0] if isinstance(output, tuple) else output)
            if new is None:
                return None
            return (new, *output[1:]) if isinstance(output, tuple) else new

        return hook

    def input_hook(todo):
        def hook(module, args):
            new = visit(todo, args[0])
            return None if new is None else (new, *args[1:])

        return hook

    def carry_hook(loc):
        def hook(module, args, output):
            hidden = (output[0] if isinstance(output, tuple) else output).clone()
            hidden[rows.to(hidden.device), columns[loc].to(hidden.device), features[loc]] += changes.pop(loc)
            return (hidden, *output[1:]) if isinstance(output, tuple) else hidden

        return hook

    handles = []
    try:
        for loc, block in blocks.items():
            handles.append(block.register_forward_hook(carry_hook(loc)))
        for (_, is_input), todo in by_site.items():
            if is_input:
                handles.append(todo["module"].register_forward_pre_hook(input_hook(todo)))
            else:
                handles.append(todo["module"].register_forward_hook(output_hook(todo)))
        yield trace
    finally:
        for handle in handles:
            handle.remove()
