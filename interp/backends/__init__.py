"""Backends: what runs the model when a command reads vectors or intervenes.

``hf`` (the default) is :mod:`interp.engine` on the Hugging Face model with
PyTorch hooks. ``transformer-lens`` runs the same commands through a
TransformerLens ``TransformerBridge`` and its own hook points
(:mod:`interp.backends.tl_bridge`); transformer-lens is an optional extra
(``pip install 'interp[tl]'``) imported only when that backend is asked for,
so nothing on the engine's import path needs it.

Usage::

    backend = get_backend("transformer-lens", model, tokenizer)   # ConfigError if transformer-lens is missing
    vectors = backend.source_vectors(encoded, loc)                 # float32 [n, tokens × width]
    logits = backend.interchange_logits(bases, vectors, loc)       # float32 [n_bases, n_sources, n_labels]
"""

from __future__ import annotations

from interp.backends.base import BACKENDS, Backend, HFBackend, check_backend_name, get_backend

__all__ = ["BACKENDS", "Backend", "HFBackend", "check_backend_name", "get_backend"]
