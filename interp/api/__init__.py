"""The objects behind ``import interp``: a model and a task resolved once, bound in an :class:`IntervenableModel`, results in memory."""

from interp.api.intervenable import IntervenableModel
from interp.api.loading import Classifier, load_model, load_task
from interp.api.results import InterchangeResult, InterchangeSet, load_interventions
from interp.api.training import FineTuneSettings, fine_tune

__all__ = ["Classifier", "FineTuneSettings", "fine_tune", "InterchangeResult", "InterchangeSet", "IntervenableModel", "load_interventions", "load_model", "load_task"]
