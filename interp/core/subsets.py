"""One seeded subset, the same in every command: the same ``--seed`` and ``--max-examples`` pick the same examples."""

from __future__ import annotations

import random
from typing import Sequence, TypeVar

T = TypeVar("T")


def seeded_subset(items: Sequence[T], k: int | None, seed: int) -> list[T]:
    """``k`` items drawn without replacement with ``random.Random(seed)``, kept in their original order.

    All of ``items`` when ``k`` is ``None`` or at least ``len(items)``.

    >>> seeded_subset(list("abcdef"), 3, seed=0)
    ['a', 'd', 'f']
    >>> seeded_subset(list("abc"), None, seed=0)
    ['a', 'b', 'c']
    """
    if k is None or k >= len(items):
        return list(items)
    keep = sorted(random.Random(seed).sample(range(len(items)), k))
    return [items[i] for i in keep]
