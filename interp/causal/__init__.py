"""Causal models in general: variables, mechanisms, ``run_forward``, ``run_interchange``. No torch, no dataset."""

from interp.causal.base import (
    CausalModel,
    Mechanism,
    interchange_codes,
    interchange_table,
    run_forward,
    run_interchange,
)

__all__ = ["CausalModel", "Mechanism", "interchange_codes", "interchange_table", "run_forward", "run_interchange"]
