"""Interchange interventions: the batched engine, the naive reference, the `interp intervene` run and its file."""

from interp.interventions.engine import interchange_logits, source_vectors
from interp.interventions.naive import naive_interchange
from interp.interventions.run import InterventionConfig, format_summaries, run_interventions, summarize, summarize_all
from interp.interventions.store import Interventions, open_interventions

__all__ = [
    "InterventionConfig",
    "Interventions",
    "format_summaries",
    "interchange_logits",
    "naive_interchange",
    "open_interventions",
    "run_interventions",
    "source_vectors",
    "summarize",
    "summarize_all",
]
