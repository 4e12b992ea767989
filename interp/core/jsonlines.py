"""JSON-lines files: a file's lines, and one line as a JSON object, or a :class:`~interp.core.errors.DataError` naming ``file:line``."""

from __future__ import annotations

import json
import os
from pathlib import Path

from interp.core.errors import DataError


def read_lines(path: str | os.PathLike, how_to_make: str) -> list[str]:
    """The lines of a generated JSON-lines file.

    Args:
        how_to_make: the command that writes such a file, for the message when it is missing.

    Raises:
        DataError: the file is missing (naming ``how_to_make``), unreadable, not UTF-8, or empty.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DataError(f"{path}: file not found (write one with `{how_to_make}`)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read ({exc})") from None
    if not lines:
        raise DataError(f"{path}: empty file, no examples")
    return lines


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
