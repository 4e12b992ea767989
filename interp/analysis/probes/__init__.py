"""Probes: scikit-learn-shaped estimators, the batched trainer and control tasks."""

from interp.analysis.probes.controls import ShuffleControl, TypeControl
from interp.analysis.probes.estimators import Probe

__all__ = ["Probe", "ShuffleControl", "TypeControl"]
