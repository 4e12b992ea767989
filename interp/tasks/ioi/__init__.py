"""Indirect-object identification (Wang et al. 2023; MIB's IOI task): prompts written here, a causal model with MIB's
``output_position`` and ``output_token``, read by a causal LM through the names."""

from interp.tasks.ioi.data import NAMES, TEMPLATES, IOIExample, ioi_examples
from interp.tasks.ioi.task import TEMPLATE, ioi_causal_model, ioi_task, label_words, logit_difference, one_token_names

__all__ = ["NAMES", "TEMPLATE", "TEMPLATES", "IOIExample", "ioi_causal_model", "ioi_examples", "ioi_task", "label_words",
           "logit_difference", "one_token_names"]
