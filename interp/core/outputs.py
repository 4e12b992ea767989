"""Writing results so that nothing half-written is ever left at the final path.

Every output is first written beside its destination (``<name>.partial``)
and moved into place with one ``os.replace`` when it is complete.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, TextIO

from interp.core.errors import OutputError


def partial_path(path: Path) -> Path:
    """The work path beside ``path`` where an unfinished output lives."""
    return path.with_name(path.name + ".partial")


def ensure_writable_dir(path: Path, argument: str = "--out") -> Path:
    """Create ``path`` (and parents) or raise :class:`OutputError` naming ``argument``."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{argument} {path}: cannot create directory ({exc.strerror or exc})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise OutputError(f"{argument} {path}: directory is not writable")
    return path


@contextmanager
def atomic_text(path: Path, newline: str | None = None) -> Iterator[TextIO]:
    """Open a UTF-8 text handle on ``<path>.partial``; on success move it to ``path``.

    Raises:
        OutputError: the file cannot be written, naming ``path``; the
            partial file is removed and ``path`` is left as it was.
    """
    tmp = partial_path(path)
    try:
        with open(tmp, "w", encoding="utf-8", newline=newline) as handle:
            yield handle
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutputError(f"{path}: cannot write ({exc.strerror or exc})") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, obj: Any) -> None:
    """Write ``obj`` as indented UTF-8 JSON to ``path`` via a sibling temporary file."""
    with atomic_text(path) as handle:
        json.dump(obj, handle, indent=2, ensure_ascii=False)
        handle.write("\n")


def write_jsonl_atomic(path: Path, records: Iterable[Any]) -> None:
    """Write ``records`` as JSON Lines (one compact UTF-8 object per line) via a sibling temporary file."""
    with atomic_text(path) as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def write_csv_atomic(rows: list[dict], path: Path) -> Path:
    """Write ``rows`` (columns in the first row's key order; floats to 4 decimals) as CSV via a sibling ``.partial`` file."""
    with atomic_text(path, newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: f"{v:.4f}" if isinstance(v, float) else v for k, v in row.items()})
    return path


def save_figure_atomic(fig, path: Path, **savefig) -> Path:
    """Save a matplotlib figure as PNG via a sibling ``.partial`` file, then close it."""
    import matplotlib.pyplot as plt

    tmp = partial_path(path)
    try:
        fig.savefig(tmp, format="png", **savefig)
    finally:
        plt.close(fig)
    tmp.replace(path)
    return path


def read_json(path: Path) -> Any | None:
    """The JSON object at ``path``, or ``None`` if it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def replace_dir(src: Path, dst: Path) -> None:
    """Move the finished directory ``src`` to ``dst``, replacing any old ``dst``."""
    if dst.exists():
        shutil.rmtree(dst)
    os.replace(src, dst)
