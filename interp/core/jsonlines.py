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
        lines = path.read_text(encoding="utf-8-sig").splitlines()  # a byte-order mark (some editors write one) is no text
    except FileNotFoundError:
        raise DataError(f"{path}: file not found (write one with `{how_to_make}`)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read ({exc})") from None
    if not any(line.strip() for line in lines):
        raise DataError(f"{path}: empty file, no examples")
    return lines


def json_record(
    text: str, where: str, required: tuple[str, ...] = (), written_by: str = "", *, strings: tuple[str, ...] = (),
    objects: tuple[str, ...] = (),
) -> dict:
    """``text`` parsed as a JSON object.

    Args:
        where: ``file:line``, what every message starts with.
        required: fields the object must have; ``written_by``: the command that writes such files (for the message).
        strings: fields that, where present, must be strings; ``objects``: fields that, where present, must be
            objects whose values are strings (a sentence's words by position).

    Raises:
        DataError: an empty line, malformed JSON (with the column), JSON that is not an object, a required field
            missing, or a field of another JSON type than ``strings`` or ``objects`` say.
    """
    if not text.strip():
        raise DataError(f"{where}: empty line")
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{where}: malformed JSON ({exc.msg} at column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:  # an integer past Python's digit limit, nesting past the stack
        raise DataError(f"{where}: unreadable JSON ({type(exc).__name__}: {str(exc)[:120]})") from None
    if not isinstance(record, dict):
        raise DataError(f"{where}: expected a JSON object, got {type(record).__name__}")
    missing = [f for f in required if f not in record]
    if missing:
        hint = f"; is this a file of {written_by}?" if written_by else ""
        raise DataError(f"{where}: missing field {missing[0]!r}{hint}")
    for name in strings:
        if name in record and not isinstance(record[name], str):
            raise DataError(f"{where}: field {name!r} is {_json_type(record[name])}, not a string")
    for name in objects:
        if name in record and not (isinstance(record[name], dict) and all(isinstance(v, str) for v in record[name].values())):
            raise DataError(f"{where}: field {name!r} is {_json_type(record[name])}, not an object of strings")
    for name, value in record.items():
        bad = _unstorable(value)
        if bad:
            raise DataError(f"{where}: field {name!r} holds {bad}, which the files interp writes (HDF5, UTF-8) cannot store; remove it")
    return record


def _unstorable(value) -> str | None:
    """What in ``value`` (a JSON value, searched through its arrays and objects) no HDF5 string or UTF-8 file can hold:
    a NUL character or a lone surrogate (JSON's ``\\u0000``, ``\\ud800``); ``None`` if nothing."""
    if isinstance(value, str):
        if "\x00" in value:
            return "a NUL character (\\u0000)"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "a lone surrogate (\\ud800-\\udfff)"
        return None
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, list):
        return next((found for found in map(_unstorable, value) if found), None)
    return None


def read_records(path: str | os.PathLike, how_to_make: str, required: tuple[str, ...] = (), labels: tuple[str, ...] = ()) -> list[dict]:
    """Every line of a generated JSON-lines file as an object (:func:`read_lines`, :func:`json_record`), each with
    the ``required`` fields, and a ``label`` among ``labels`` where they are given.

    Raises:
        DataError: as :func:`read_lines` and :func:`json_record` (naming ``file:line``), or a label the file's kind lacks.
    """
    records = []
    for i, line in enumerate(read_lines(path, how_to_make), start=1):
        record = json_record(line, f"{path}:{i}", required, how_to_make)
        if labels and record.get("label") not in labels:
            raise DataError(f"{path}:{i}: label {record.get('label')!r} is not one of {', '.join(labels)}")
        records.append(record)
    return records


def _json_type(value) -> str:
    """How JSON calls ``value``'s type (``a number``, ``an array``, ...)."""
    for kind, name in ((bool, "a boolean"), (int, "a number"), (float, "a number"), (str, "a string"), (list, "an array"), (dict, "an object")):
        if isinstance(value, kind):
            return name
    return "null"
