"""The Hugging Face runner: the model itself, through PyTorch hooks (:func:`interp.hooks.hooked`) and the batched engine.

Usage::

    runner = HFRunner(model, pad_token_id=0)
    vectors = runner.vectors(encoded, loc)                    # float32 [n, tokens × width]
    logits = runner.interchange_logits(encoded, vectors, loc) # float32 [n, n, labels]
    pairs = runner.pairs(encoded, loc)                        # PairSuffix: any intervention, with gradients
    runner.reference()                                        # NaiveRunner: one batch-1 pass per example or pair

Every path is the engine's (:mod:`interp.engine`): the prefix up to a location once per example, the suffix batched
per pair; its reference is :class:`~interp.backends.naive.NaiveRunner`, and the tests hold the two equal.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch import Tensor

from interp.backends.base import SiteGradients
from interp.backends.naive import NaiveRunner
from interp.engine.batched import interchange_logits, precision, source_vectors, vectors_and_logits
from interp.core.checks import check_bool
from interp.engine.compiled import CompileStats, use_compile
from interp.engine.gradients import site_gradients
from interp.engine.pair_suffix import PairSuffix
from interp.hooks import hooked
from interp.hooks.architecture import batch_inputs
from interp.hooks.encoding import Encoded, collate
from interp.hooks.locations import Location
from interp.models.evaluation import predict_logits


class HFRunner:
    """A Hugging Face classifier run by :mod:`interp.engine` (the :class:`~interp.backends.base.Runner` protocol).

    Args:
        model: a ``...ForSequenceClassification`` of a family :mod:`interp.hooks.architecture` covers (a decoder
            wrapped as :class:`~interp.models.decoders.DecoderClassifier`), in eval mode.
        pad_token_id: what pads a batch of examples of different lengths (:meth:`predict`, :meth:`read`).
        prefix_reuse: in a decoder, each base's positions before the intervened ones run once, their keys and values
            serving every source (:mod:`interp.engine.decoder`); ``False`` runs every position per pair.
        compile: run the interchange's suffix through ``torch.compile`` (:mod:`interp.engine.compiled`); ``None``: on
            for CUDA in calls of at least :data:`~interp.engine.compiled.AUTO_COMPILE_PAIRS` pairs, off on a CPU. What
            compiling did over the runner's calls is :attr:`compile_stats`.

    Raises:
        ConfigError: ``compile=True`` where the model's device cannot compile (checked here, and at each call, as the model may move).
    """

    name = "hf"
    atp_star = True

    def __init__(self, model, pad_token_id: int = 0, prefix_reuse: bool = True, compile: bool | None = None) -> None:
        self.model, self.pad_token_id = model, pad_token_id
        self.prefix_reuse = check_bool(prefix_reuse, "prefix_reuse")
        self.compile = check_bool(compile, "compile", optional=True)
        self.compile_stats = CompileStats()
        use_compile(compile, next(model.parameters()).device)

    def predict(self, encoded: Sequence[Encoded]) -> Tensor:
        return predict_logits(self.model, encoded, self.pad_token_id)

    @torch.no_grad()
    def read(self, encoded: Sequence[Encoded], locations: Sequence[Location]) -> dict[Location, Tensor]:
        batch = collate(encoded, self.pad_token_id)
        with hooked(self.model, batch["positions"], read=list(locations)) as trace:
            self.model(**batch_inputs(self.model, batch, next(self.model.parameters()).device))
        return {loc: trace[loc].float().cpu() for loc in locations}

    def vectors(self, encoded: Sequence[Encoded], location: Location) -> Tensor:
        return source_vectors(self.model, encoded, location)

    def vectors_and_logits(self, encoded: Sequence[Encoded], location: Location) -> tuple[Tensor, Tensor]:
        return vectors_and_logits(self.model, encoded, location)

    def interchange_logits(self, bases: Sequence[Encoded], sources: Tensor, location: Location, *, batch_size: int | None = None,
                           on_rows: Callable[[int], None] | None = None) -> Tensor:  # fmt: skip
        compiled = use_compile(self.compile, next(self.model.parameters()).device, len(bases) * len(sources))
        return interchange_logits(self.model, bases, sources, location, batch_size=batch_size, on_rows=on_rows, prefix_reuse=self.prefix_reuse,
                                  compile=compiled, stats=self.compile_stats)  # fmt: skip

    def pairs(self, encoded: Sequence[Encoded], location: Location) -> PairSuffix:
        return PairSuffix(self.model, encoded, location)

    def gradients(self, encoded: Sequence[Encoded], locations: Sequence[Location], *, qk_fix: bool = False,
                  graddrop: bool = False, on_rows: Callable[[int], None] | None = None) -> dict[Location, SiteGradients]:  # fmt: skip
        return site_gradients(self.model, encoded, locations, qk_fix=qk_fix, graddrop=graddrop, on_rows=on_rows)

    def precision(self, name: str):
        return precision(self.model, name)

    def reference(self) -> NaiveRunner:
        return NaiveRunner(self.model, self.pad_token_id)
