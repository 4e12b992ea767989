"""Polarity composition in the monotonicity calculus (van Benthem 1986; Icard & Moss 2014), shared by every monotonicity task.

A position's polarity is ``up`` (↑), ``down`` (↓) or ``none`` (=). Inside a
context of polarity p, an argument of monotonicity m has polarity p∘m:
↑∘m = m, ↓∘↑ = ↓, ↓∘↓ = ↑, and anything with = is =. Replacing a word by a
more general one (direction ↑) at an ↑ position, or a more specific one
(↓) at a ↓ position, gives an entailment; the other way, not.

Usage::

    >>> compose("down", "down"), compose("down", "up"), compose("up", "none")
    ('up', 'down', 'none')
    >>> entailment_label("down", "down"), entailment_label("up", "down")
    ('entailment', 'neutral')
"""

from __future__ import annotations

from functools import reduce
from typing import Iterable


def compose(outer: str, inner: str) -> str:
    """The polarity of a position of monotonicity ``inner`` inside a context of polarity ``outer``."""
    if "none" in (outer, inner):
        return "none"
    return "up" if outer == inner else "down"


def flip(polarity: str) -> str:
    """Polarity under negation."""
    return {"up": "down", "down": "up", "none": "none"}[polarity]


def compose_all(monotonicities: Iterable[str]) -> str:
    """The polarity under a chain of functions of these monotonicities, outermost first (``up`` for none)."""
    return reduce(compose, monotonicities, "up")


def entailment_label(polarity: str, direction: str) -> str:
    """Entailment when the replacement's direction is the position's polarity, else neutral (not entailed)."""
    return "entailment" if polarity == direction else "neutral"
