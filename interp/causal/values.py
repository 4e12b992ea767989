"""A causal variable's values over a list of examples, as small integer codes with their names (what files and tables keep)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np


@dataclass(frozen=True)
class VariableValues:
    """Each example's value of one causal variable, as ``codes`` (int8 ``[n]``) into ``names``."""

    variable: str
    codes: np.ndarray
    names: tuple[str, ...]


def value_name(value: Any) -> str:
    """How a variable's value is written in files and tables: a relation's symbol, an enum's value, else ``str``."""
    symbol = getattr(value, "symbol", None)
    if isinstance(symbol, str):
        return symbol
    if isinstance(value, Enum):
        return str(value.value)
    return str(value)
