"""Causal models: variables and mechanisms as pure functions; INFER for MoNLI (§4, Figure 1); MQNLI's tree (:mod:`interp.causal_models.mqnli`)."""

from interp.causal_models.base import CausalModel, Mechanism, interchange_table, run_forward, run_interchange
from interp.causal_models.infer import LABEL_OF, check_fit, infer, infer_for, monli_inputs, monli_lexicon, reverse

#: Causal models the CLI knows by name, each built for (and checked against) a list of MoNLI examples.
CAUSAL_MODELS = {"infer": infer_for}

__all__ = [
    "CAUSAL_MODELS",
    "LABEL_OF",
    "CausalModel",
    "Mechanism",
    "check_fit",
    "infer",
    "infer_for",
    "interchange_table",
    "monli_inputs",
    "monli_lexicon",
    "reverse",
    "run_forward",
    "run_interchange",
]
