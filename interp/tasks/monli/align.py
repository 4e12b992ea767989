"""MoNLI's token roles, and encoding for training: generic alignment lives in :mod:`interp.hooks.encoding`.

The roles are ``cls`` ([CLS]), ``w_p`` (the substituted word in the
premise) and ``w_h`` (its replacement in the hypothesis).
"""

from __future__ import annotations

from typing import Sequence

from interp.hooks.encoding import (
    WORDPIECE_RULES,
    Encoded,
    check_wordpiece_rule,
    collate,
    encode_example,
    encode_examples,
    encode_pair,
)
from interp.tasks.monli.data import Example

#: MoNLI's token roles, in the order files list them.
ROLES: tuple[str, ...] = ("cls", "w_p", "w_h")

__all__ = [
    "ROLES",
    "WORDPIECE_RULES",
    "Encoded",
    "check_wordpiece_rule",
    "collate",
    "encode_example",
    "encode_examples",
    "encode_for_classifier",
    "encode_pair",
]


def encode_for_classifier(examples: Sequence, tokenizer, labels: Sequence[str] | None = None) -> list[Encoded]:
    """MoNLI examples with their roles aligned (:func:`encode_example`), any other task's pairs with [CLS] only.

    ``labels``: the classifier's labels in id order (a task's); ``None``: each example's own ``label_id``.
    """
    return [encode_example(e, tokenizer) if isinstance(e, Example) else encode_pair(e, tokenizer, labels) for e in examples]
