"""A trained intervention on disk: its weights as safetensors and a JSON sidecar saying what it aligns.

Usage::

    save_intervention(rotated, "runs/das/lexrel__blocks.3.hook_resid_post@w_h__k64__s0",
                      {"task": "monli", "variable": "lexrel", "location": "blocks.3.hook_resid_post@w_h",
                       "model": "runs/demo/model", "model_sha256": "…"})
    intervention, meta = load_trained_intervention("runs/das/lexrel__….safetensors", model_sha256="…")

Two files per intervention, each written to a temporary name and moved into
place (:func:`interp.core.outputs.write_bytes_atomic`), the sidecar last:
``STEM.safetensors`` (the learned matrices themselves, ``R`` or ``W``, and a
boundless mask's boundary and temperature; not the parametrization's
internals, so a file does not depend on how orthogonality is kept) and
``STEM.json``: ``format`` (:data:`FORMAT`), the settings that rebuild the
module (``kind``, ``width``, ``k``; ``start``/``stop`` for a coordinate
block) and the caller's metadata (task, variable, location, model and the
SHA-256 of its weights, scores). The two are bound: the sidecar records the
weights file's SHA-256 (``weights_sha256``), and the weights file's header
metadata keeps the sidecar as saved (key :data:`BOUND`), so a swapped weights
file or an edited setting is refused on load. No code is loaded from either file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from safetensors import SafetensorError, safe_open
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors

from interp.core.errors import ConfigError, DataError, named, renamed
from interp.core.outputs import ensure_writable_dir, refuse_existing, write_bytes_atomic
from interp.engine.interventions import Intervention, intervention_class

FORMAT = "interp.intervention/1"
#: The key of the safetensors header metadata that holds the sidecar as saved (compared on load).
BOUND = "interp.sidecar"


def _stem(path: str | Path) -> Path:
    path = Path(path)
    for suffix in (".safetensors", ".json"):
        if path.name.endswith(suffix):
            return path.with_name(path.name[: -len(suffix)])
    return path


def _with(stem: Path, suffix: str) -> Path:
    """``stem`` + ``suffix`` (a stem may hold dots: locations do)."""
    return stem.with_name(stem.name + suffix)


def save_intervention(intervention: Intervention, path: str | Path, meta: dict, *, overwrite: bool = False) -> Path:
    """Write ``STEM.safetensors`` and ``STEM.json``; returns the ``.safetensors`` path.

    ``path`` is either file's name or the stem. Neither file is replaced unless ``overwrite=True``.

    Raises:
        ConfigError: ``intervention`` is not an :class:`Intervention`; ``meta`` is not a dict, or uses a key the
            settings own (``kind``, ``width``, ``k``, ``format``).
        OutputError: naming ``path``: either file exists (without ``overwrite``), or a file cannot be written.
    """
    if not isinstance(intervention, Intervention):
        raise ConfigError(f"{named('intervention')} must be an interp Intervention (RotatedSubspace, ...), got {type(intervention).__name__}")
    if not isinstance(meta, dict):
        raise ConfigError(f"{named('meta')} must be a dict of what the file records (variable, location, ...), got {type(meta).__name__}")
    settings = intervention.settings()
    clash = sorted(set(meta) & {*settings, "format"})
    if clash:
        raise ConfigError(f"{named('meta')} may not set {', '.join(clash)}: the intervention's own settings")
    stem = _stem(path)
    with renamed(out="path"):
        for suffix in (".safetensors", ".json"):
            refuse_existing(_with(stem, suffix), overwrite)
        ensure_writable_dir(stem.parent)
    tensors = {name: t.detach().cpu().contiguous() for name, t in intervention.tensors().items()}
    weights = _with(stem, ".safetensors")
    sidecar = {"format": FORMAT, **settings, **meta}
    blob = save_tensors(tensors, metadata={BOUND: json.dumps(sidecar, sort_keys=True)})  # the sidecar as saved, inside the weights file
    write_bytes_atomic(weights, blob)
    sidecar["weights_sha256"] = hashlib.sha256(blob).hexdigest()
    write_bytes_atomic(_with(stem, ".json"), (json.dumps(sidecar, indent=2, sort_keys=True) + "\n").encode())
    return weights


def _check_bound(stem: Path, blob: bytes, meta: dict) -> None:
    """The sidecar and the weights file belong together: the file's SHA-256 is the one the sidecar records, and every
    setting the weights file keeps of its sidecar (written by :func:`save_intervention`) is the sidecar's.

    Raises:
        DataError: naming the file, and the first setting that differs (a location edited in the sidecar).
    """
    if "weights_sha256" in meta and hashlib.sha256(blob).hexdigest() != meta["weights_sha256"]:
        raise DataError(f"{named('path', _with(stem, '.safetensors'))}: not the weights file its sidecar was saved with (SHA-256 differs)")
    try:
        with safe_open(_with(stem, ".safetensors"), "pt") as handle:
            kept = (handle.metadata() or {}).get(BOUND)
        kept = json.loads(kept) if kept is not None else {}
    except (OSError, ValueError, SafetensorError) as exc:
        raise DataError(f"{named('path', _with(stem, '.safetensors'))}: not a safetensors file ({exc})") from None
    for key, value in (kept.items() if isinstance(kept, dict) else ()):
        if meta.get(key) != value:
            raise DataError(f"{named('path', _with(stem, '.json'))}: the sidecar was edited: {key} is {meta.get(key)!r}, "
                            f"but the weights were saved for {value!r}")


def load_trained_intervention(path: str | Path, model_sha256: str | None = None) -> tuple[Intervention, dict]:
    """The intervention saved at ``path`` (either file's name, or the stem) and its sidecar (not to be confused with
    :func:`interp.api.results.load_interventions`, which reads an interventions file as a result).

    Args:
        model_sha256: when given, the SHA-256 of the weights it must have
            been trained on (:func:`interp.models.loading.model_sha256`).

    Raises:
        DataError: naming ``path=``: a file is missing, unreadable, of another format, or its tensors do not fit its settings;
            the weights file is not the one the sidecar was saved with (SHA-256), or a setting in the sidecar
            was edited since (the copy kept in the weights file's header differs).
        ConfigError: naming ``path=``: it was trained on another model's weights.
    """
    stem = _stem(path)
    try:
        meta = json.loads(_with(stem, ".json").read_text(encoding="utf-8"))
        blob = _with(stem, ".safetensors").read_bytes()
    except OSError as exc:
        raise DataError(f"{named('path', stem)}: cannot read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise DataError(f"{named('path', _with(stem, '.json'))}: not JSON ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise DataError(f"{named('path', _with(stem, '.json'))}: not an interp intervention (format {FORMAT} expected)")
    _check_bound(stem, blob, meta)
    if model_sha256 is not None and meta.get("model_sha256") != model_sha256:
        raise ConfigError(
            f"{named('path', stem)}: trained on another model's weights (sha256 {str(meta.get('model_sha256'))[:12]}…, "
            f"this model's is {model_sha256[:12]}…)"
        )
    try:
        intervention = intervention_class(meta["kind"]).from_settings(meta)  # any registered kind, by its name
        intervention.load_tensors(load_tensors(blob))
    except (KeyError, TypeError, ValueError, RuntimeError, SafetensorError) as exc:
        raise DataError(f"{named('path', stem)}: the weights do not fit the settings in its sidecar ({exc})") from None
    return intervention.eval(), meta


def load_intervention(path: str | Path, model_sha256: str | None = None) -> tuple[Intervention, dict]:
    """Deprecated name of :func:`load_trained_intervention` (one letter from ``load_interventions``); it warns and calls it."""
    import warnings

    warnings.warn("interp.load_intervention is renamed load_trained_intervention (load_interventions reads an interventions file)",
                  DeprecationWarning, stacklevel=2)  # fmt: skip
    return load_trained_intervention(path, model_sha256)
