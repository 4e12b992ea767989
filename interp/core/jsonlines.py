"""One line of a released JSON-lines dataset as a JSON object, or a :class:`~interp.core.errors.DataError` naming ``file:line``."""

from __future__ import annotations

import json

from interp.core.errors import DataError


def json_record(text: str, where: str) -> dict:
    """``text`` parsed as a JSON object.

    Args:
        where: ``file:line``, what every message starts with.

    Raises:
        DataError: an empty line, malformed JSON (with the column), or JSON that is not an object.
    """
    if not text.strip():
        raise DataError(f"{where}: empty line")
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{where}: malformed JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(record, dict):
        raise DataError(f"{where}: expected a JSON object, got {type(record).__name__}")
    return record
