"""Finished units of an interventions run, one file each, so that a run killed at any moment loses at most the unit in flight.

A unit is one location × one block of ``unit_size`` bases (all sources).
Its logits, float32 ``[rows, n_sources, n_labels]``, are saved with
``numpy.save``, written to ``<name>.partial`` in ``<out>.parts/`` and moved
into place with ``os.replace`` (:func:`interp.core.outputs.write_bytes_atomic`), which is atomic on POSIX file systems: a unit's file is
either absent or complete. ``request.json`` in the same folder records what
the shards belong to (model, weights, examples, locations, settings); shards
of another request are discarded, never mixed in.

Several processes (``torchrun``) share one folder: each writes only its own
units, and rank 0 prepares the folder and assembles the HDF5 file.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Callable

import numpy as np

from interp.core.errors import OutputError
from interp.core.outputs import no_link, read_json, write_bytes_atomic, write_json_atomic

TMP_MARK = ".partial"  # what write_bytes_atomic writes before the move
#: The file that says a ``.parts`` folder is interp's: a folder without it is never touched.
MARKER = "INTERP_UNITS"


def parts_dir(out: Path) -> Path:
    """Where the shards of ``out`` live: ``<out>.parts/`` (refused if it is a symbolic link: :func:`~interp.core.outputs.no_link`)."""
    return no_link(out.with_name(out.name + ".parts"))


class Shards:
    """The unit files of one request in ``directory``.

    ``shape``, when given, is each unit's logits shape (``unit -> (rows, n_sources, n_labels)``): :meth:`prepare` then
    checks every unit file already there before any unit runs, and removes one that does not read back as float32
    of that shape (a file edited, truncated or damaged on disk), so the run computes it again.
    """

    def __init__(self, directory: Path, request: dict, shape: Callable[[int], tuple[int, ...]] | None = None):
        self.directory = Path(directory)
        self.request = request
        self.shape = shape

    def prepare(self) -> list[Path]:
        """Create the folder, or keep it if it holds this request's shards; returns the damaged unit files it removed.

        Shards of another request, temporary files of a killed writer, and unit files that do not read back as
        ``shape`` says are removed (the run computes those again).

        Raises:
            OutputError: the folder cannot be created or written.
        """
        if self.directory.exists() and not (self.directory / MARKER).is_file():
            raise OutputError(
                f"`out=`: {self.directory} exists and interp did not make it (no {MARKER}); "
                "move it away: interp keeps its unit files there"
            )
        try:
            if self.directory.exists() and read_json(self.directory / "request.json") != self.request:
                for stale in [*self.directory.glob("loc*-unit*.npy*"), self.directory / "request.json"]:
                    stale.unlink(missing_ok=True)  # only files of ours, by name
            self.directory.mkdir(parents=True, exist_ok=True)
            (self.directory / MARKER).write_text("unit files of `interp intervene`; safe to delete when no run is going on\n")
            for stale in self.directory.glob(f"loc*-unit*.npy{TMP_MARK}"):
                stale.unlink(missing_ok=True)
            damaged = [p for p in sorted(self.directory.glob("loc*-unit*.npy")) if not self._sound(p)]
            for path in damaged:
                path.unlink()
        except OSError as exc:
            raise OutputError(f"`out=`: cannot prepare {self.directory} ({exc.strerror or exc})") from None
        write_json_atomic(self.directory / "request.json", self.request)
        return damaged

    def _sound(self, path: Path) -> bool:
        """Whether the unit file at ``path`` reads back (its header only, memory-mapped) as float32 of its unit's shape."""
        if self.shape is None:
            return True
        match = re.fullmatch(r"loc\d{3}-unit(\d{6})\.npy", path.name)
        if match is None:
            return False
        try:
            logits = np.load(path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError, EOFError):
            return False
        return isinstance(logits, np.ndarray) and logits.dtype == np.float32 and logits.shape == tuple(self.shape(int(match[1])))

    def path(self, location_index: int, unit: int) -> Path:
        return self.directory / f"loc{location_index:03d}-unit{unit:06d}.npy"

    def done(self, location_index: int, unit: int) -> bool:
        return self.path(location_index, unit).is_file()

    def write(self, location_index: int, unit: int, logits: np.ndarray) -> None:
        """Save one unit's logits and move the file into place atomically.

        Raises:
            OutputError: the file cannot be written (disk full, permissions).
        """
        buffer = io.BytesIO()
        np.save(buffer, np.ascontiguousarray(logits, dtype=np.float32))
        write_bytes_atomic(self.path(location_index, unit), buffer.getvalue())

    def read(self, location_index: int, unit: int) -> np.ndarray:
        return np.load(self.path(location_index, unit))

    def remove(self) -> None:
        """Remove the unit files, the request and the marker; the folder too when nothing else is in it."""
        for name in [*self.directory.glob("loc*-unit*.npy*"), self.directory / "request.json", self.directory / MARKER]:
            name.unlink(missing_ok=True)
        try:
            self.directory.rmdir()
        except OSError:
            pass  # something that is not ours is left in it
