"""Mean and 95% interval over runs: how the papers report a figure trained several times.

Geiger et al. (2019, Table 3) give "mean accuracy of 5 runs ... with
standard 95% confidence intervals"; with a handful of runs the interval is
Student's t on the runs' standard error, ``mean ± t(0.975, n − 1) · s / √n``,
which :func:`mean_interval` computes (scipy's ``t``). :func:`runs_table`
does it per group of a results table (pandas), e.g. per split kind over
seeds.

Example:

>>> mean, low, high = mean_interval([0.50, 0.52, 0.54])
>>> round(mean, 3), round(high - mean, 3)
(0.52, 0.05)
>>> mean_interval([0.7])
(0.7, 0.7, 0.7)
>>> mean_interval([0.995, 0.96, 0.965], bounds=(0, 1))[2]   # an accuracy's interval stops at 1
1.0
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from interp.core.errors import ConfigError, named


def mean_interval(values: Sequence[float], confidence: float = 0.95, bounds: tuple[float, float] | None = None) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean of ``values`` and its t interval at ``confidence`` (one value: the mean thrice).

    Units are the values' own (accuracy in [0, 1], say). ``bounds``: the range the figure cannot leave (``(0, 1)``
    for an accuracy or an IIA, ``(0, inf)`` for a count); the interval is clipped to it. The t interval assumes the
    runs' figures are roughly normal; a few runs near a bound (96.0, 96.5, 99.5) give a wide, clipped interval that
    says the seeds disagree more than it locates the mean.

    Raises:
        ConfigError: naming ``values`` when there are none, or ``confidence`` outside (0, 1).
    """
    from scipy.stats import t

    if not 0 < confidence < 1:
        raise ConfigError(f"{named('confidence', confidence)}: a probability between 0 and 1")
    values = np.asarray(list(values), dtype=float)
    if values.size == 0:
        raise ConfigError(f"{named('values')}: no value to average")
    mean = float(values.mean())
    if values.size < 2:
        return mean, mean, mean
    half = float(t.ppf((1 + confidence) / 2, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size))
    low, high = mean - half, mean + half
    if bounds is not None:
        low, high = float(max(low, bounds[0])), float(min(high, bounds[1]))
    return mean, low, high


def runs_table(rows, by: str | Sequence[str], values: Sequence[str], confidence: float = 0.95, bounds: tuple[float, float] | None = None):
    """A pandas DataFrame, one row per group of ``by``: ``runs`` and, per column of ``values``, its mean, ``_low`` and ``_high``.

    ``rows``: a DataFrame or a list of dicts, one per run; ``bounds`` as :func:`mean_interval` (``(0, 1)`` for accuracies).

    Raises:
        ConfigError: naming ``by`` or ``values`` for a column the rows lack.
    """
    import pandas as pd

    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    keys = [by] if isinstance(by, str) else list(by)
    for param, columns in (("by", keys), ("values", list(values))):
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise ConfigError(f"{named(param, ','.join(missing))}: no such column (the rows have {', '.join(map(str, frame.columns))})")
    out = []
    for group, members in frame.groupby(keys, sort=False):
        row = dict(zip(keys, group if isinstance(group, tuple) else (group,)))
        row["runs"] = len(members)
        for column in values:
            row[column], row[f"{column}_low"], row[f"{column}_high"] = mean_interval(members[column].tolist(), confidence, bounds)
        out.append(row)
    return pd.DataFrame(out)
