"""Run a Hugging Face classifier (an encoder, or a decoder read at its last token) in two pieces: up to a hidden state, and on from it.

Usage::

    hidden = run_prefix(model, input_ids, token_type_ids, hidden_index=3)   # [batch, seq, d_model]
    hidden[:, pos] = other_vectors                                          # an interchange
    logits = run_suffix(model, hidden, 3, input_ids, token_type_ids)        # [batch, n_labels]

``hidden_index`` counts as Hugging Face's ``hidden_states`` does (0 the
embedding output, l + 1 block l's output; see :mod:`interp.hooks.locations`).
Both pieces run the model's own modules (its attention implementation,
pooler and classification head): the prefix is read, and the forward pass
stopped, where the hidden state is (a module's output, or a decoder's block 0
input); for the suffix the model runs from the block whose input ``hidden`` is
(:meth:`~interp.hooks.architecture.Architecture.from_block`: an encoder's block
list narrowed and its embedding output replaced, a decoder's earlier blocks
passing their input through). Hooks and blocks are
restored in ``finally``. Inputs must be unpadded (every row as long as the sequence),
which is how the engine batches: no attention mask is passed.

The suffix skips work the output does not need: a sequence classifier of
the heads in :data:`READS_FIRST_TOKEN` reads only the first token ([CLS]) of
the last block's output, so that block computes its query, attention
output, residual and feed-forward for the [CLS] row alone (through the
model's own modules, keys and values still for every row). This is exact
up to float rounding; the tests compare it with the full pass. The whole
suffix, the [CLS]-only last block included, can also run through
:class:`~interp.engine.blocks.FastBlocks` (:func:`fast_suffix`), the
same function with fused projections and reused buffers, whose last block
forms no keys or values at all.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import torch
from torch import Tensor

from interp.engine.blocks import FastBlocks, supports
from interp.hooks.architecture import architecture, model_inputs


@contextmanager
def _only_blocks(model, start: int, stop: int, embedding_output: Tensor | None = None) -> Iterator[None]:
    arch = architecture(model)  # raises ConfigError for a family interp does not cover
    handle = None
    try:
        with arch.narrowed(model, start, stop):
            if embedding_output is not None:
                handle = arch.embedding_module(model).register_forward_hook(lambda module, args, output: embedding_output)
            yield
    finally:
        if handle is not None:
            handle.remove()


class _Reached(Exception):
    """Raised by :func:`run_prefix`'s hook once the hidden state is read: the blocks after it never run."""


def run_prefix(model, input_ids: Tensor, token_type_ids: Tensor, hidden_index: int) -> Tensor:
    """``hidden_states[hidden_index]``: float ``[batch, seq, d_model]``, running only the blocks before it.

    Read at the module whose output it is (:func:`~interp.hooks.site_modules`),
    where the forward pass is stopped: no later block, and no final norm
    (ModernBERT's), runs.

    Args:
        input_ids, token_type_ids: int64 ``[batch, seq]``, unpadded.
        hidden_index: 0 (embedding output) .. number of blocks.
    """
    kept = []

    def hook(module, args, output=None):
        found = args[0] if output is None else output  # a decoder's hidden_states[0] is block 0's input
        kept.append(found[0] if isinstance(found, tuple) else found)
        raise _Reached

    module, is_input = architecture(model).hidden_sites(model)[hidden_index]
    handle = module.register_forward_pre_hook(hook) if is_input else module.register_forward_hook(hook)
    try:
        model.base_model(**model_inputs(model.base_model, input_ids, token_type_ids))
    except _Reached:
        return kept[0]
    finally:
        handle.remove()
    raise AssertionError(f"{type(model).__name__} never ran the module of hidden_states[{hidden_index}]")


# Sequence classifiers whose head (pooler + classifier) reads only the first token of the last hidden state.
READS_FIRST_TOKEN = frozenset(
    {
        "BertForSequenceClassification",
        "RobertaForSequenceClassification",
        "XLMRobertaForSequenceClassification",
        "CamembertForSequenceClassification",
    }
)


def first_token_block(model, block) -> bool:
    """Whether ``block``'s output is needed only at the first token and it has BERT's layer layout."""
    attention = getattr(block, "attention", None)
    self_attention = getattr(attention, "self", None)
    return (
        type(model).__name__ in READS_FIRST_TOKEN
        and not model.training
        and not getattr(block, "add_cross_attention", False)
        and all(hasattr(self_attention, name) for name in ("query", "key", "value", "attention_head_size", "scaling"))
        and hasattr(attention, "output")
        and hasattr(block, "feed_forward_chunk")
    )


def block_first_token(block, hidden: Tensor, attention_mask: Tensor | None = None) -> Tensor:
    """One BERT block's output at the first token only: float ``[batch, 1, d_model]`` from ``hidden`` ``[batch, seq, d_model]``.

    The same modules and order as the block's own forward pass (self-attention
    with scaling 1/sqrt(d_head), no mask for unpadded rows, else
    ``attention_mask`` (int ``[batch, seq]``, 1 on real tokens); attention
    output with residual and LayerNorm; feed-forward with residual and
    LayerNorm), with the query, and everything after attention, for row 0.
    """
    sa = block.attention.self
    batch, seq, _ = hidden.shape
    head = sa.attention_head_size

    def heads(x: Tensor, length: int) -> Tensor:
        return x.view(batch, length, -1, head).transpose(1, 2)

    first = hidden[:, :1]
    mask = None
    if attention_mask is not None:  # padded keys get no weight
        mask = torch.zeros(batch, 1, 1, seq, dtype=hidden.dtype, device=hidden.device)
        mask.masked_fill_(attention_mask[:, None, None, :] == 0, torch.finfo(hidden.dtype).min)
    context = torch.nn.functional.scaled_dot_product_attention(
        heads(sa.query(first), 1), heads(sa.key(hidden), seq), heads(sa.value(hidden), seq), attn_mask=mask, scale=sa.scaling
    )
    attended = block.attention.output(context.transpose(1, 2).reshape(batch, 1, -1), first)
    return block.feed_forward_chunk(attended)


def run_suffix(
    model,
    hidden: Tensor,
    hidden_index: int,
    input_ids: Tensor,
    token_type_ids: Tensor,
    fast: FastBlocks | None = None,
    context: Tensor | None = None,
) -> Tensor:
    """Classifier logits, float ``[batch, n_labels]``, with ``hidden`` in place of ``hidden_states[hidden_index]``.

    Runs the blocks from ``hidden_index`` on, then the model's pooler and
    head. ``input_ids`` / ``token_type_ids`` (int64 ``[batch, seq]``) give
    the shapes and anything the head reads from the input; ``hidden`` is
    float ``[batch, seq, d_model]``. Where :func:`first_token_block` allows,
    the last block runs for the first token only: through ``fast`` when
    given (:func:`fast_suffix`; then ``context``, float ``[batch, seq, d_model]``,
    may give the first block's attention context, see
    :mod:`interp.engine.reuse`), else through the model's own
    modules and :func:`block_first_token`.
    """
    blocks = architecture(model).block_list(model)
    n_blocks = len(blocks)
    if hidden_index < n_blocks and first_token_block(model, blocks[-1]):
        if fast is not None:
            last = fast(hidden, context)
        else:
            with _only_blocks(model, hidden_index, n_blocks - 1, embedding_output=hidden):
                hidden = model.base_model(**model_inputs(model, input_ids, token_type_ids)).last_hidden_state
            last = block_first_token(blocks[-1], hidden)
        with _only_blocks(model, n_blocks, n_blocks, embedding_output=last):
            return model(**model_inputs(model, input_ids[:, :1], token_type_ids[:, :1])).logits
    with architecture(model).from_block(model, hidden_index, hidden):
        return model(**model_inputs(model, input_ids, token_type_ids)).logits


def run_suffix_masked(model, hidden: Tensor, hidden_index: int, input_ids: Tensor, token_type_ids: Tensor, attention_mask: Tensor) -> Tensor:
    """Classifier logits, float ``[batch, n_labels]``, from padded rows: ``hidden`` in place of ``hidden_states[hidden_index]``.

    The model's own modules with its attention mask (int ``[batch, seq]``, 1
    on real tokens), the last block for the first token only where
    :func:`first_token_block` allows; differentiable in ``hidden``. What
    training an intervention runs (:mod:`interp.engine.pair_suffix`), where
    batches mix lengths; equal to :func:`run_suffix` on each unpadded row up
    to float rounding (masked keys get zero weight).
    """
    blocks = architecture(model).block_list(model)
    n_blocks = len(blocks)
    if hidden_index < n_blocks and first_token_block(model, blocks[-1]):
        with _only_blocks(model, hidden_index, n_blocks - 1, embedding_output=hidden):
            hidden = model.base_model(**model_inputs(model, input_ids, token_type_ids, attention_mask)).last_hidden_state
        last = block_first_token(blocks[-1], hidden, attention_mask)
        with _only_blocks(model, n_blocks, n_blocks, embedding_output=last):
            return model(**model_inputs(model, input_ids[:, :1], token_type_ids[:, :1])).logits
    with architecture(model).from_block(model, hidden_index, hidden):
        return model(**model_inputs(model, input_ids, token_type_ids, attention_mask)).logits


def fast_suffix(model, hidden_index: int) -> FastBlocks | None:
    """The blocks :func:`run_suffix` runs, as :class:`FastBlocks` with the last for [CLS] only, or ``None`` where it cannot.

    ``None`` when the model's blocks lack BERT's layout (:func:`~interp.engine.blocks.supports`)
    or its last block runs in full (then :func:`run_suffix` uses the model's own modules throughout).
    """
    blocks = architecture(model).block_list(model)
    if hidden_index >= len(blocks) or not first_token_block(model, blocks[-1]) or not supports(model):
        return None
    return FastBlocks(model, hidden_index, len(blocks), first_token_last=True)
