"""A figure with its interval: :class:`Estimate`, a float that carries its bounds, and the Wilson interval of a share.

Every figure a user sees comes with its uncertainty; this is the one type that
holds both, so a table cell, a return value and a warning print them alike.

>>> e = wilson(199, 200)
>>> round(float(e), 3), round(e.low, 3), round(e.high, 3)
(0.995, 0.972, 0.999)
>>> repr(Estimate(0.5, 0.4, 0.6))
'0.500 [0.400, 0.600]'
"""

from __future__ import annotations

import math

#: The level of every interval unless told otherwise.
CONFIDENCE = 0.95


class Estimate(float):
    """A share (0..1) with its interval: a ``float`` that also carries ``low``, ``high`` and how they were found.

    Arithmetic and comparisons see the point estimate; ``repr`` shows the interval, e.g. ``0.547 [0.531, 0.568]``.
    """

    low: float
    high: float
    method: str

    def __new__(cls, value: float, low: float, high: float, method: str = "") -> "Estimate":
        self = super().__new__(cls, value)
        self.low, self.high, self.method = float(low), float(high), method
        return self

    @property
    def collapsed(self) -> bool:
        """Whether every replicate gave the same figure (the percentile interval is a point): :func:`is_point`."""
        return is_point(self.low, self.high)

    def __repr__(self) -> str:
        return f"{float(self):.3f} [{self.low:.3f}, {self.high:.3f}]"

    __str__ = __repr__


def is_point(low: float, high: float) -> bool:
    """Whether an interval is a point: finite bounds that are equal (NaN bounds, where nothing was resampled, are not)."""
    return bool(math.isfinite(low) and low == high)


def wilson(hits: int, n: int, confidence: float = CONFIDENCE) -> Estimate:
    """The share ``hits / n`` with its Wilson score interval (Wilson 1927; scipy's ``binomtest(...).proportion_ci``).

    For a behavioural accuracy: the examples are independent draws, so the binomial interval holds; it stays inside
    [0, 1] and does not collapse at 0 or 1 as the normal approximation does. ``n = 0`` gives NaN bounds.
    """
    from scipy.stats import binomtest

    if n == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), "no example")
    ci = binomtest(int(hits), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return Estimate(hits / n, ci.low, ci.high, f"{confidence:.0%} Wilson score interval over {n} examples")


__all__ = ["CONFIDENCE", "Estimate", "is_point", "wilson"]
