"""Writing results so that nothing half-written is ever left at the final path.

Every output is first written beside its destination (``<name>.partial``)
and moved into place with one ``os.replace`` when it is complete. A command
that writes several files into one directory builds them in an
:class:`OutputSet`: all of them in a ``.partial`` sibling of the directory,
moved into place together when every one is written, then a manifest
(``<command>.manifest.json``) last. A failure (a full disk included) leaves
the previous state or nothing, and never an empty ``--out`` directory.

Every refusal names the output as ``out=``, the name every job gives it; a
caller whose own parameter has another name (``save(path)``) wraps the call
in :func:`interp.core.errors.renamed`.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, TextIO

from interp.core.errors import OutputError, named


def no_link(path: Path) -> Path:
    """``path``, a name interp keeps unfinished work under (``.partial``, ``.parts``), refused if it is a symbolic link.

    Such names are interp's own: a link there would make a run write into,
    and later delete from, whatever it points to, so none is followed.

    Raises:
        OutputError: naming ``path``.
    """
    if path.is_symlink():
        raise OutputError(f"{path} is a symbolic link; interp keeps unfinished work under that name and follows no link there (remove it)")
    return path


def partial_path(path: Path) -> Path:
    """The work path beside ``path`` where an unfinished output lives (never a symbolic link: :func:`no_link`)."""
    return no_link(path.with_name(path.name + ".partial"))


def _nearest_folder(path: Path) -> Path:
    """``path`` if it is a folder, else the nearest folder above it that exists (where writing ``path`` starts)."""
    folder = path if str(path) else Path(".")
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    return folder


def require_writable(path: Path) -> None:
    """Refuse ``path`` (a file or folder to be written) when the nearest existing folder on its way cannot be written.

    Checked before any work, so a read-only file system or a folder without
    write permission is named as the cause, not met as a traceback halfway
    or read as too little free space. Creates nothing.

    Raises:
        OutputError: naming ``out=`` and the folder: on a read-only file system, or not writable.
    """
    folder = _nearest_folder(Path(path))
    if os.access(folder, os.W_OK | os.X_OK):
        return
    read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    why = "it is on a read-only file system" if read_only else "no permission to write there"
    raise OutputError(f"{named('out', path)}: cannot write in {folder} ({why})")


def ensure_writable_dir(path: Path) -> Path:
    """Create ``path`` (and parents) or raise :class:`OutputError` naming ``out=`` (and a read-only file system)."""
    require_writable(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{named('out', path)}: cannot create directory ({exc.strerror or exc})") from None
    require_writable(path)
    return path


def new_output(out: str | os.PathLike, overwrite: bool) -> Path:
    """``out`` as a path a generator may write: refused if it exists (unless ``overwrite``), its folder created.

    Raises:
        OutputError: naming ``out=``: it exists, or its folder cannot be made or written.
    """
    out = Path(out)
    refuse_existing(out, overwrite)
    ensure_writable_dir(out.parent)
    return out


def refuse_existing(path: Path, overwrite: bool) -> None:
    """Refuse ``path`` when something is there already (a file, a folder or a link), unless ``overwrite``.

    Raises:
        OutputError: naming ``out=`` and the path; a folder is refused even with ``overwrite`` (only files are replaced).
    """
    path = Path(path)
    if path.is_dir() and not path.is_symlink():
        raise OutputError(f"{named('out', path)} is a folder; give a file path")
    if (path.exists() or path.is_symlink()) and not overwrite:
        raise OutputError(f"{named('out', path)} already exists; choose another path or pass `overwrite=True`")


def generate_into(out: str | os.PathLike, overwrite: bool, records_of: Callable[[], list], stats_of: Callable[[list], dict]) -> dict:
    """A generator's whole run: ``out`` refused if it exists (unless ``overwrite``, :func:`new_output`), the records
    ``records_of()`` makes written as JSON lines with ``stats_of(records)`` beside them (:func:`write_generated`); the stats.

    Raises:
        OutputError: naming ``out=``: it exists, or cannot be written.
    """
    out = new_output(out, overwrite)
    records = records_of()
    stats = stats_of(records)
    write_generated(out, records, stats)
    return stats


def write_generated(out: Path, records: Iterable[Any], stats: dict) -> Path:
    """A generated file: ``records`` as JSON lines at ``out`` and ``stats`` at ``<out stem>.stats.json``, each atomic; returns the stats path."""
    write_jsonl_atomic(out, records)
    stats_path = out.with_name(out.stem + ".stats.json")
    write_json_atomic(stats_path, stats)
    return stats_path


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


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a sibling ``.partial`` file, synced, then moved into place.

    Raises:
        OutputError: the file cannot be written (a full disk included), naming ``path``;
            ``path`` is left as it was.
    """
    tmp = partial_path(path)
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutputError(f"{path}: cannot write ({exc.strerror or exc})") from None


def require_free_space(path: Path, needed: int) -> None:
    """Refuse to start writing ``needed`` bytes at ``path`` when its disk has less free.

    HDF5 files are written in place as a run proceeds, and h5py can crash
    the interpreter when a write fails on a full disk; checking first turns
    that into one line.

    Raises:
        OutputError: naming ``out=``: the folder cannot be written (:func:`require_writable`), or the bytes
            needed and those free.
    """
    require_writable(path)
    free = shutil.disk_usage(_nearest_folder(Path(path).parent)).free
    if free < needed:
        raise OutputError(
            f"{named('out', path)}: needs about {needed / 1e6:.1f} MB, but only {free / 1e6:.1f} MB are free on that disk"
        )


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
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutputError(f"{path}: cannot write ({exc.strerror or exc})") from None
    finally:
        plt.close(fig)
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


MANIFEST = "{command}.manifest.json"


class OutputSet:
    """The files one command writes into ``directory``, built in a sibling ``.partial`` folder and moved in together.

    Usage::

        with OutputSet(Path("runs/demo"), "cliques") as outputs:
            write_json_atomic(outputs.path("cliques.json"), report)
            save_figure_atomic(fig, outputs.path("clique.png"))
        # runs/demo/cliques.json, clique.png, cliques.manifest.json: all there, or none new

    On leaving the block without an error every staged file is moved into
    ``directory`` (created then, not before) and ``<command>.manifest.json``
    is written last, listing each file's name, size and SHA-256: its
    presence says the set is complete. On an error the staging folder is
    removed and ``directory`` is as it was. Only files this set staged are
    ever moved or removed.

    Raises:
        OutputError: a file cannot be staged or moved (naming ``out=`` and the
            path), including a full disk.
    """

    def __init__(self, directory: Path, command: str):
        self.directory = Path(directory)
        self.command = command
        self.staging = self.directory.with_name(f"{self.directory.name}.{command}.partial")
        self.names: list[str] = []

    def path(self, name: str) -> Path:
        """Where to write ``name`` now; it reaches ``directory / name`` when the set is committed."""
        if name not in self.names:
            self.names.append(name)
        return self.staging / name

    def __enter__(self) -> "OutputSet":
        if self.directory.exists() and not self.directory.is_dir():
            raise OutputError(f"{named('out', self.directory)} is a file; give a directory")
        shutil.rmtree(no_link(self.staging), ignore_errors=True)  # a killed run's leftovers: ours by name
        ensure_writable_dir(self.staging)
        return self

    def __exit__(self, kind, error, traceback) -> None:
        if kind is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
            return
        try:
            self._commit()
        finally:
            shutil.rmtree(self.staging, ignore_errors=True)

    def _commit(self) -> None:
        missing = [n for n in self.names if not (self.staging / n).is_file()]
        if missing:
            raise OutputError(f"{named('out', self.directory)}: {missing[0]} was never written")
        record = manifest_record(self.command, [self.staging / n for n in self.names])
        ensure_writable_dir(self.directory)
        refuse_foreign(self.directory, self.names)
        try:
            for name in self.names:  # a name may hold a subfolder (interventions/x.safetensors)
                (self.directory / name).parent.mkdir(parents=True, exist_ok=True)
                os.replace(self.staging / name, self.directory / name)
        except OSError as exc:
            raise OutputError(f"{named('out', self.directory)}: cannot move the outputs into place ({exc.strerror or exc})") from None
        write_json_atomic(self.directory / MANIFEST.format(command=self.command), record)


@contextmanager
def exclusive(out: Path) -> Iterator[None]:
    """Within the block this process alone writes ``out``: a lock file beside it (``.NAME.lock``), taken without
    waiting, released and removed in ``finally``. A second run on the same ``out`` is refused at once, naming it, instead of
    failing halfway when the first moves its files into place.

    Raises:
        OutputError: naming ``out=``: another run holds it.
    """
    from filelock import FileLock, Timeout

    out = Path(out)
    ensure_writable_dir(out.parent)
    lock = FileLock(str(out.with_name(f".{out.name}.lock")))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise OutputError(f"{named('out', out)}: another run is writing into it now; wait for it to finish, or choose another folder") from None
    try:
        yield
    finally:
        lock.release()
        Path(lock.lock_file).unlink(missing_ok=True)  # no file left beside the user's folder (a run that waited would
        # have been refused at once, so none holds the old one open)


def written_here(directory: Path) -> set[str]:
    """The names of the files in ``directory`` that a manifest there lists: the files interp wrote into it."""
    names: set[str] = set()
    for manifest in directory.glob(MANIFEST.format(command="*")):
        record = read_json(manifest)
        files = record.get("files") if isinstance(record, dict) else None
        if isinstance(files, dict):
            names.update(str(n) for n in files)
    return names


def refuse_foreign(directory: Path, names: Iterable[str]) -> None:
    """Refuse to replace a file of ``directory`` that no manifest there lists (a file interp did not write).

    Raises:
        OutputError: naming ``out=`` and the first such file.
    """
    present = [n for n in names if (directory / n).exists() or (directory / n).is_symlink()]
    if not present:
        return
    ours = written_here(directory)
    foreign = [n for n in present if n not in ours]
    if foreign:
        raise OutputError(f"{named('out', directory)}: {directory / foreign[0]} exists and interp did not write it "
                          "(no manifest there lists it); move it away or choose another folder")


def manifest_record(command: str, paths: Iterable[Path]) -> dict:
    """What a manifest holds: the command, each file's name (relative to the manifest), size in bytes and SHA-256,
    and the environment that can move its figures (:func:`interp.core.environment.environment`: versions, threads, BLAS, device)."""
    from interp.core.checksums import sha256_of
    from interp.core.environment import environment

    return {"command": command, "files": {p.name: {"bytes": p.stat().st_size, "sha256": sha256_of(p)} for p in paths},
            "environment": environment()}


def write_file_manifest(path: Path, command: str, *, if_missing: bool = False) -> Path:
    """Write ``<path>.manifest.json`` for a command whose output is the one finished file ``path`` (a cache, an interventions file).

    Its presence says ``path`` is complete; a report finds the run's outputs
    through these manifests. Written atomically, after ``path``; with
    ``if_missing``, only where there is none yet (a reused file made before
    manifests were written).

    Raises:
        OutputError: the manifest cannot be written.
    """
    manifest = path.with_name(path.name + ".manifest.json")
    if if_missing and manifest.is_file():
        return manifest
    write_json_atomic(manifest, manifest_record(command, [path]))
    return manifest
