"""Models: resolving names into encoder classifiers, fine-tuning on encoded pairs and evaluation; nothing here knows a task."""

from interp.models.evaluation import evaluate, predict_logits
from interp.models.labels import LabelReading, canonical_label, parse_label_map, read_labels
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
    "LabelReading",
    "SUPPORTED_MODEL_TYPES",
    "canonical_label",
    "embedded_model_dir",
    "evaluate",
    "finished_run",
    "fit",
    "load_classifier",
    "parse_label_map",
    "predict_logits",
    "read_labels",
    "resolve_model",
    "save_checkpoint",
]
