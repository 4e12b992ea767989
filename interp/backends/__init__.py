"""Runners: what runs a model, one per backend and model kind, behind one protocol (:class:`~interp.backends.base.Runner`).

``hf`` (the default) is :mod:`interp.engine` on the Hugging Face model with
PyTorch hooks, by the model's kind: :class:`~interp.backends.hf.EncoderRunner`
(the encoder's suffix strategies; ``compile``) or
:class:`~interp.backends.hf.DecoderRunner` (each base's prefix reused;
``prefix_reuse``). Their reference, :class:`~interp.backends.naive.NaiveRunner`,
runs one pass per example or pair. ``transformer-lens`` runs the same calls through a TransformerLens
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
from interp.backends.hf import DecoderRunner, EncoderRunner, HFRunner, model_kind
from interp.backends.naive import NaiveRunner
from interp.core.errors import ConfigError
from interp.hooks.architecture import architecture


def get_runner(name: str, model, tokenizer=None, compile: bool | None = None, prefix_reuse: bool | None = None) -> Runner:
    """The runner ``name`` (one of :data:`~interp.backends.base.BACKENDS`) of ``model``, a Hugging Face classifier in eval mode.

    ``hf`` runs ``model`` itself, an :class:`EncoderRunner` or a :class:`DecoderRunner` by its kind; ``transformer-lens`` wraps a copy of it in a ``TransformerBridge``
    (``model`` is left as it is; :class:`~interp.backends.tl_bridge.BridgeRunner`) and needs its ``tokenizer``. A
    batch is padded with the tokenizer's pad token (``0`` without one). ``compile``: an encoder's suffix through
    ``torch.compile`` (``None``: on for CUDA in large calls, off on a CPU; :class:`EncoderRunner`); a decoder and the
    bridge run eagerly. ``prefix_reuse``: a decoder's base prefix run once for all its sources (``None``: on;
    :class:`DecoderRunner`); an encoder has no prefix to reuse.

    Raises:
        ConfigError: as :func:`~interp.backends.base.check_backend_name`; or a model the bridge's classifier adapter does
            not cover; ``compile=True`` with the bridge or a decoder; ``prefix_reuse=False`` with an encoder.
    """
    check_backend_name(name)
    if name == "hf":
        pad = getattr(tokenizer, "pad_token_id", None) or 0
        if not architecture(model).decoder:
            if prefix_reuse is False:
                raise ConfigError(f"`prefix_reuse=False` runs every position of a decoder's pairs; the model ({model_kind(model)}) is "
                                  "an encoder, which has no prefix to reuse: leave `prefix_reuse=` unset")  # fmt: skip
            return EncoderRunner(model, pad, compile=compile)
        if compile:
            raise ConfigError(f"`compile=True` compiles an encoder's suffix; the model ({model_kind(model)}) is a decoder, whose "
                              "blocks run through their own modules, eagerly: leave `compile=` unset")  # fmt: skip
        return DecoderRunner(model, pad, prefix_reuse=prefix_reuse is not False)
    if compile:
        raise ConfigError(f"`compile=True` compiles the engine's suffix; backend {name!r} runs its own modules eagerly: leave `compile=` unset")
    from interp.backends.tl_bridge import BridgeRunner  # transformer-lens only when asked for

    return BridgeRunner(model, tokenizer)


__all__ = ["BACKENDS", "DecoderRunner", "EncoderRunner", "HFRunner", "NaiveRunner", "PairRunner", "Runner", "SiteGradients", "check_backend_name", "get_runner"]
