"""Probes: scikit-learn-shaped estimators, control tasks, selectivity and the sweep over locations."""

from interp.probes.controls import ShuffleControl, TypeControl
from interp.probes.estimators import Probe
from interp.probes.sweep import ProbeSweepConfig, run_probe_sweep

__all__ = ["Probe", "ProbeSweepConfig", "ShuffleControl", "TypeControl", "run_probe_sweep"]
