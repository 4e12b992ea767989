"""One seeded subset, the same in every command: the same ``--seed`` and ``--max-examples`` pick the same examples.

Also fixed splits by example (:func:`hashed_split`): a held-out part that
depends only on each example's id.
"""

from __future__ import annotations

import hashlib
import random
from typing import Callable, Sequence, TypeVar

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


def hashed_share(key: str, salt: str) -> float:
    """A fixed number in [0, 1) for ``key``: the first 8 bytes of SHA-256(``salt``:``key``), scaled.

    Splitting by it keeps an example on the same side whatever else is in
    the set, in any order, on any machine (no seed, no list to store).

    >>> hashed_share("pmonli:1", "x") == hashed_share("pmonli:1", "x") != hashed_share("pmonli:1", "y")  # the salt picks the split
    True
    >>> 0.0 <= hashed_share("a", "b") < 1.0
    True
    """
    digest = hashlib.sha256(f"{salt}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def hashed_split(items: Sequence[T], key: Callable[[T], str], share: float, salt: str) -> tuple[list[T], list[T]]:
    """``items`` split by example into (the share ``share`` whose :func:`hashed_share` is below it, the rest), order kept.

    >>> low, high = hashed_split(list(range(1000)), str, 0.2, "demo")
    >>> 150 < len(low) < 250 and len(low) + len(high) == 1000
    True
    """
    below = [hashed_share(key(item), salt) < share for item in items]
    return [i for i, b in zip(items, below) if b], [i for i, b in zip(items, below) if not b]
