"""A sentence tree as JSON (tagged dicts) and back, so a generated file can be re-checked without the generator's state.

Usage::

    >>> from interp.tasks.fragments.monotonicity.grammar import NP, SRC, VP, Sentence
    >>> s = Sentence(NP("no", "old", "cat", SRC(VP("predicate", "happy", neg=True))), VP("intransitive", "ran"))
    >>> from_json(to_json(s)) == s
    True
"""

from __future__ import annotations

from dataclasses import fields

from interp.core.errors import DataError
from interp.tasks.fragments.monotonicity.grammar import NP, ORC, PP, SRC, VP, Sentence

_TYPES = {cls.__name__: cls for cls in (Sentence, NP, VP, SRC, ORC, PP)}


def to_json(node):
    """A tree as nested dicts, each with its node type under ``"type"``."""
    if node is None or isinstance(node, (str, bool)):
        return node
    return {"type": type(node).__name__, **{f.name: to_json(getattr(node, f.name)) for f in fields(node)}}


def from_json(value, where: str = "tree"):
    """The tree :func:`to_json` wrote.

    Raises:
        DataError: naming ``where``: an unknown node type or field.
    """
    if value is None or isinstance(value, (str, bool)):
        return value
    if not isinstance(value, dict) or value.get("type") not in _TYPES:
        raise DataError(f"{where}: not a sentence tree node ({str(value)[:60]})")
    cls = _TYPES[value["type"]]
    try:
        return cls(**{k: from_json(v, where) for k, v in value.items() if k != "type"})
    except TypeError as exc:
        raise DataError(f"{where}: bad {cls.__name__} node ({exc})") from None
