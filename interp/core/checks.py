"""Checks of a public call's settings: each failure an :class:`~interp.core.errors.ConfigError` naming the parameter.

What the Python face (``interp.fine_tune``, ``IntervenableModel``'s calls,
``Task.examples``) checks before any work, so that ``epochs=0``, ``lr=nan``
or ``batch_size="8"`` is named in one line and never met as a deep
``TypeError`` or ``ValueError``; the CLI turns the names into its flags.

>>> check_int(3, "epochs", least=1)
3
>>> check_int(0, "epochs", least=1)
Traceback (most recent call last):
...
interp.core.errors.ConfigError: epochs= must be an integer of at least 1, got 0
>>> check_number(float("nan"), "lr", positive=True)
Traceback (most recent call last):
...
interp.core.errors.ConfigError: lr= must be a finite number above 0, got nan
"""

from __future__ import annotations

import math
import numbers

from interp.core.errors import ConfigError, named


def check_int(value, name: str, *, least: int | None = None, most: int | None = None, optional: bool = False) -> int | None:
    """``value`` as an ``int`` in ``[least, most]`` (``None`` allowed when ``optional``); bools are refused.

    Raises:
        ConfigError: naming ``name``: not an integer, or out of range.
    """
    if value is None and optional:
        return None
    bounds = " and ".join(filter(None, [f"of at least {least}" if least is not None else "", f"at most {most}" if most is not None else ""]))
    wanted = f"an integer {bounds}".rstrip()
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigError(f"{named(name)} must be {wanted}, got {value!r}")
    if (least is not None and value < least) or (most is not None and value > most):
        raise ConfigError(f"{named(name)} must be {wanted}, got {value}")
    return int(value)


def check_bool(value, name: str, *, optional: bool = False) -> bool | None:
    """``value`` as a ``bool`` (``None`` allowed when ``optional``): ``True`` or ``False`` only, never a string or a number
    that Python would read as one (``"no"`` is true to Python).

    Raises:
        ConfigError: naming ``name``: anything but a bool (or ``None`` where optional).
    """
    if value is None and optional:
        return None
    if not isinstance(value, bool):
        wanted = "True, False or None" if optional else "True or False"
        raise ConfigError(f"{named(name)} must be {wanted}, got {value!r}")
    return value


def check_number(value, name: str, *, positive: bool = False, least: float | None = None, most: float | None = None) -> float:
    """``value`` as a finite ``float`` (above 0 with ``positive``; in ``[least, most]``); bools are refused.

    Raises:
        ConfigError: naming ``name``: not a number, not finite, or out of range.
    """
    parts = ["above 0" if positive else "", f"of at least {least}" if least is not None else "", f"at most {most}" if most is not None else ""]
    wanted = " ".join(["a finite number", " and ".join(filter(None, parts))]).rstrip()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ConfigError(f"{named(name)} must be {wanted}, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or (positive and value <= 0) or (least is not None and value < least) or (most is not None and value > most):
        raise ConfigError(f"{named(name)} must be {wanted}, got {value}")
    return value
