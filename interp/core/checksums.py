"""File checksums: what identifies a data file or a model's weights by content, not by path."""

from __future__ import annotations

import hashlib
from pathlib import Path


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def dataset_dir(given, env_var: str, what: str, how_to_get: str) -> Path:
    """A released dataset's directory: ``given`` if set, else ``$env_var``.

    Args:
        what: the dataset's name in messages (``MoNLI``).
        how_to_get: appended to every message: where the files are published and how to pass them.

    Raises:
        DataError: neither is set, or the path is not a directory.
    """
    import os

    from interp.core.errors import DataError

    if given is None or str(given) == "":
        given = os.environ.get(env_var)
        if not given:
            raise DataError(f"no {what} directory given. {how_to_get}")
    path = Path(given).expanduser()
    if not path.is_dir():
        raise DataError(f"{what} directory {path} does not exist or is not a directory. {how_to_get}")
    return path
