"""Models: resolving names into encoder classifiers, fine-tuning on encoded pairs and evaluation; nothing here knows a task.

The names below are imported on first use (:mod:`interp.core.lazy`): importing a light module of this package
(:mod:`interp.models.settings`) does not import torch.
"""

from interp.core.lazy import lazy_exports

_EXPORTS = {
    "evaluate": "interp.models.evaluation",
    "predict_logits": "interp.models.evaluation",
    "LabelReading": "interp.models.labels",
    "canonical_label": "interp.models.labels",
    "parse_label_map": "interp.models.labels",
    "read_labels": "interp.models.labels",
    "EMBEDDED": "interp.models.loading",
    "SUPPORTED_MODEL_TYPES": "interp.models.loading",
    "embedded_model_dir": "interp.models.loading",
    "load_classifier": "interp.models.loading",
    "resolve_model": "interp.models.loading",
    "finished_run": "interp.models.training",
    "fit": "interp.models.training",
    "save_checkpoint": "interp.models.training",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
