"""Datasets: the MoNLI loader, token alignment, the MQNLI generator (:mod:`interp.data.mqnli`) and its files (:mod:`interp.data.mqnli_files`)."""

from interp.data.align import (
    ROLES,
    WORDPIECE_RULES,
    Encoded,
    collate,
    encode_example,
    encode_examples,
    encode_for_classifier,
    encode_pair,
)
from interp.data.monli import LABELS, SPLITS, Example, Lexrel, load_monli, read_split, resolve_data_dir

__all__ = [
    "LABELS",
    "ROLES",
    "SPLITS",
    "WORDPIECE_RULES",
    "Encoded",
    "Example",
    "Lexrel",
    "collate",
    "encode_example",
    "encode_examples",
    "encode_for_classifier",
    "encode_pair",
    "load_monli",
    "read_split",
    "resolve_data_dir",
]
