"""Models: resolving names into BERT-family classifiers, fine-tuning on encoded pairs and evaluation; nothing here knows a task."""

from interp.models.evaluation import evaluate, predict_logits, predicted_labels
from interp.models.loading import (
    EMBEDDED,
    SUPPORTED_MODEL_TYPES,
    embedded_model_dir,
    load_classifier,
    resolve_model,
)
from interp.models.training import finished_run, fit, save_checkpoint

__all__ = [
    "EMBEDDED",
    "SUPPORTED_MODEL_TYPES",
    "embedded_model_dir",
    "evaluate",
    "finished_run",
    "fit",
    "load_classifier",
    "predict_logits",
    "predicted_labels",
    "resolve_model",
    "save_checkpoint",
]
