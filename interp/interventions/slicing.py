"""Run a Hugging Face BERT-family classifier in two pieces: up to a hidden state, and on from it.

Usage::

    hidden = run_prefix(model, input_ids, token_type_ids, hidden_index=3)   # [batch, seq, d_model]
    hidden[:, pos] = other_vectors                                          # an interchange
    logits = run_suffix(model, hidden, 3, input_ids, token_type_ids)        # [batch, n_labels]

``hidden_index`` counts as Hugging Face's ``hidden_states`` does (0 the
embedding output, l + 1 block l's output; see :mod:`interp.locations`).
Both pieces run the model's own modules (its attention implementation,
pooler and classification head): for the duration of the call the encoder's
block list is narrowed to the blocks of the piece, and for the suffix a
forward hook makes the embedding module return ``hidden``. Both are undone
in ``finally``. Inputs must be unpadded (every row as long as the sequence),
which is how the engine batches: no attention mask is passed.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from torch import Tensor

from interp.hooks import site_modules


@contextmanager
def _only_blocks(model, start: int, stop: int, embedding_output: Tensor | None = None) -> Iterator[None]:
    site_modules(model)  # raises ConfigError for a model without BERT's layout
    base = model.base_model
    blocks = base.encoder.layer
    handle = None
    try:
        base.encoder.layer = blocks[start:stop]
        if embedding_output is not None:
            handle = base.embeddings.register_forward_hook(lambda module, args, output: embedding_output)
        yield
    finally:
        base.encoder.layer = blocks
        if handle is not None:
            handle.remove()


def run_prefix(model, input_ids: Tensor, token_type_ids: Tensor, hidden_index: int) -> Tensor:
    """``hidden_states[hidden_index]``: float ``[batch, seq, d_model]``, running only the blocks before it.

    Args:
        input_ids, token_type_ids: int64 ``[batch, seq]``, unpadded.
        hidden_index: 0 (embedding output) .. number of blocks.
    """
    with _only_blocks(model, 0, hidden_index):
        return model.base_model(input_ids=input_ids, token_type_ids=token_type_ids).last_hidden_state


def run_suffix(model, hidden: Tensor, hidden_index: int, input_ids: Tensor, token_type_ids: Tensor) -> Tensor:
    """Classifier logits, float ``[batch, n_labels]``, with ``hidden`` in place of ``hidden_states[hidden_index]``.

    Runs the blocks from ``hidden_index`` on, then the model's pooler and
    head. ``input_ids`` / ``token_type_ids`` (int64 ``[batch, seq]``) give
    the shapes and anything the head reads from the input; ``hidden`` is
    float ``[batch, seq, d_model]``.
    """
    n_blocks = len(model.base_model.encoder.layer)
    with _only_blocks(model, hidden_index, n_blocks, embedding_output=hidden):
        return model(input_ids=input_ids, token_type_ids=token_type_ids).logits

