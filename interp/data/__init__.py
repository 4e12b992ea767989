"""Datasets: the MoNLI loader and token alignment."""

from interp.data.align import ROLES, WORDPIECE_RULES, Encoded, collate, encode_example, encode_examples
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
    "load_monli",
    "read_split",
    "resolve_data_dir",
]
