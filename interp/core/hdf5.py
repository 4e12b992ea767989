"""HDF5 helpers shared by the activation cache and the intervention files.

Both are written at ``<out>.partial``, resumed from there if an earlier run
of the same request was interrupted, and moved into place only complete.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from interp.core.errors import ConfigError, OutputError, named


def h5py():
    """The ``h5py`` module (imported on first use: it is slow to import)."""
    import h5py as module

    return module


def attr(handle, key: str):
    """An attribute as plain Python: str lists for string arrays, int for integers, else as stored."""
    value = handle.attrs.get(key)
    if isinstance(value, np.ndarray):
        return [v.decode() if isinstance(v, bytes) else str(v) for v in value]
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def strings(handle, name: str) -> list[str]:
    """A string dataset as a list of str."""
    return list(handle[name].asstr()[:])


#: Attributes kept for the reader's information but not part of what a file is reused for: a path
#: (the model's ``--model``) names no content, so a moved run folder is still the same request.
INFORMATIONAL = frozenset({"model"})


def same_request(handle, meta: dict, ids) -> bool:
    """Whether ``handle`` carries the attributes ``meta`` (but :data:`INFORMATIONAL` ones) and the example ids ``ids``."""
    return all(attr(handle, k) == v for k, v in meta.items() if k not in INFORMATIONAL) and (
        "example_ids" in handle and strings(handle, "example_ids") == list(ids)
    )


def finished(path: Path, meta: dict, ids) -> bool:
    """Whether ``path`` is a complete file of exactly this request."""
    try:
        with h5py().File(path, "r") as handle:
            return bool(attr(handle, "complete")) and same_request(handle, meta, ids)
    except (OSError, KeyError, ValueError):
        return False


def open_partial(work: Path, meta: dict, ids):
    """Open ``work`` to resume it if it is an intact file of the same request; else start it afresh.

    Raises:
        OutputError: ``work`` cannot be created.
    """
    module = h5py()
    if work.exists():
        try:
            handle = module.File(work, "a")
            if same_request(handle, meta, ids):
                return handle
            handle.close()
        except (OSError, KeyError, ValueError):
            pass
        work.unlink()
    try:
        return module.File(work, "w")
    except OSError as exc:
        raise OutputError(f"{named('out', work)}: cannot create ({exc})") from None


def open_finished(path: Path, fmt: str, what: str, make_with: str, check: Callable[[dict], None] | None = None):
    """Open a complete file of format ``fmt`` for reading; returns ``(handle, attributes)``.

    Raises:
        ConfigError: missing, unreadable (truncated or foreign), of another
            format, or unfinished; or ``check(attributes)`` raised.
    """
    if not path.is_file():
        raise ConfigError(f"{what} {path} does not exist (make it with `{make_with}`)")
    try:
        handle = h5py().File(path, "r")
    except OSError as exc:
        raise ConfigError(f"{path}: not a readable HDF5 file, truncated or foreign ({exc})") from None
    try:
        found = attr(handle, "format")
        if isinstance(found, str) and found != fmt and found.split("/")[0] == fmt.split("/")[0]:
            raise ConfigError(f"{path}: an {what} of format {found!r}, not {fmt!r}; make it again with `{make_with}`")
        if found != fmt:
            raise ConfigError(f"{path}: not an interp {what} (no format attribute {fmt!r})")
        if not attr(handle, "complete"):
            raise ConfigError(f"{path}: the {what} is unfinished; run `{make_with}` again to complete it")
        meta = {k: attr(handle, k) for k in handle.attrs}
        if check is not None:
            check(meta)
    except BaseException:
        handle.close()
        raise
    return handle, meta


@dataclass
class ExampleFile:
    """A read-only view of a finished per-example HDF5 file (activation cache, interventions)."""

    path: Path
    handle: object
    meta: dict

    @property
    def example_ids(self) -> list[str]:
        return strings(self.handle, "example_ids")

    def column(self, name: str) -> np.ndarray:
        """A per-example dataset: strings (``split``, ``w_p``, ``w_h``) as str, the rest (``label``, ``lexrel``, ``positions``, ...) as stored."""
        data = self.handle[name]
        return np.array(data.asstr()[:]) if data.dtype.kind == "O" else data[:]


def check_replaceable(path: Path, fmt: str) -> None:
    """Refuse to write over ``path`` unless it is absent or an interp file of ``fmt``'s kind (any version).

    Raises:
        OutputError: ``path`` is a directory, or a file interp did not write (naming ``out=``).
    """
    if not path.exists():
        return
    if path.is_dir():
        raise OutputError(f"{named('out', path)} is a directory; give a file path")
    kind = fmt.split("/")[0]
    try:
        with h5py().File(path, "r") as handle:
            found = attr(handle, "format")
    except (OSError, ValueError):
        found = None
    if not (isinstance(found, str) and found.split("/")[0] == kind):
        raise OutputError(f"{named('out', path)} exists and is not an interp file of this kind ({kind}); interp will not replace it")
