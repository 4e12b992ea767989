"""Runners: what runs a model, one per model family, behind one protocol (:class:`~interp.backends.base.Runner`).

``hf`` (the default) is :mod:`interp.engine` on the Hugging Face model with
PyTorch hooks (:class:`~interp.backends.hf.HFRunner`; its reference,
:class:`~interp.backends.naive.NaiveRunner`, runs one pass per example or
pair). ``transformer-lens`` runs the same calls through a TransformerLens
``TransformerBridge`` and its own hook points
(:class:`~interp.backends.tl_bridge.BridgeRunner`); transformer-lens is an
optional extra (``pip install 'interp[tl]'``) imported only when that
backend is asked for, so nothing on the engine's import path needs it.

Usage::

    runner = get_runner("transformer-lens", model, tokenizer)   # ConfigError if transformer-lens is missing
    vectors = runner.vectors(encoded, loc)                       # float32 [n, tokens × width]
    logits = runner.interchange_logits(encoded, vectors, loc)    # float32 [n_bases, n_sources, n_labels]
    runner.pairs(encoded, loc).logits(bases, sources, rotated)   # any intervention, with gradients
"""

from __future__ import annotations

from interp.backends.base import BACKENDS, PairRunner, Runner, SiteGradients, check_backend_name
from interp.backends.hf import HFRunner
from interp.backends.naive import NaiveRunner
from interp.core.errors import ConfigError


def get_runner(name: str, model, tokenizer=None, compile: bool | None = None, prefix_reuse: bool | None = None) -> Runner:
    """The runner ``name`` (one of :data:`~interp.backends.base.BACKENDS`) of ``model``, a Hugging Face classifier in eval mode.

    ``hf`` runs ``model`` itself (:class:`HFRunner`); ``transformer-lens`` wraps a copy of it in a ``TransformerBridge``
    (``model`` is left as it is; :class:`~interp.backends.tl_bridge.BridgeRunner`) and needs its ``tokenizer``. A
    batch is padded with the tokenizer's pad token (``0`` without one). ``compile``: the engine's suffix through
    ``torch.compile`` (``None``: on for CUDA in large calls, off on a CPU; :class:`HFRunner`); the bridge runs eagerly.
    ``prefix_reuse``: a decoder's base prefix run once for all its sources (``None``: on; :class:`HFRunner`).

    Raises:
        ConfigError: as :func:`~interp.backends.base.check_backend_name`; or a model the bridge's classifier adapter does
            not cover; or ``compile=True`` with the bridge.
    """
    check_backend_name(name)
    if name == "hf":
        return HFRunner(model, getattr(tokenizer, "pad_token_id", None) or 0, compile=compile, prefix_reuse=prefix_reuse is not False)
    if compile:
        raise ConfigError(f"`compile=True` compiles the engine's suffix; backend {name!r} runs its own modules eagerly: leave `compile=` unset")
    from interp.backends.tl_bridge import BridgeRunner  # transformer-lens only when asked for

    return BridgeRunner(model, tokenizer)


__all__ = ["BACKENDS", "HFRunner", "NaiveRunner", "PairRunner", "Runner", "SiteGradients", "check_backend_name", "get_runner"]
