"""MoNLI (Geiger, Richardson & Potts 2020): the loader, token alignment, and the causal model INFER (§4, Figure 1)."""

from interp.tasks.monli.align import (
    ROLES,
    WORDPIECE_RULES,
    Encoded,
    collate,
    encode_example,
    encode_examples,
    encode_for_classifier,
    encode_pair,
)
from interp.tasks.monli.data import (
    DERIVED_SPLITS,
    LABELS,
    SPLITS,
    Example,
    Lexrel,
    load_monli,
    read_split,
    resolve_data_dir,
)
from interp.tasks.monli.infer import (
    LABEL_OF,
    check_fit,
    infer,
    infer_for,
    monli_inputs,
    monli_lexicon,
    reverse,
)

#: Causal models the CLI knows by name, each built for (and checked against) a list of MoNLI examples.
CAUSAL_MODELS = {"infer": infer_for}

__all__ = [
    "CAUSAL_MODELS",
    "DERIVED_SPLITS",
    "LABELS",
    "LABEL_OF",
    "ROLES",
    "SPLITS",
    "WORDPIECE_RULES",
    "Encoded",
    "Example",
    "Lexrel",
    "check_fit",
    "collate",
    "encode_example",
    "encode_examples",
    "encode_for_classifier",
    "encode_pair",
    "infer",
    "infer_for",
    "load_monli",
    "monli_inputs",
    "monli_lexicon",
    "read_split",
    "resolve_data_dir",
    "reverse",
]
