"""The Hugging Face runners, one per model kind: the model itself, through PyTorch hooks (:func:`interp.hooks.hooked`)
and the batched engine.

Usage::

    runner = EncoderRunner(model, pad_token_id=0)            # a BERT-like encoder; compile= is its own
    runner = DecoderRunner(model, pad_token_id=0)            # a decoder read at its last token; prefix_reuse= is its own
    vectors = runner.vectors(encoded, loc)                    # float32 [n, tokens × width]
    logits = runner.interchange_logits(encoded, vectors, loc) # float32 [n, n, labels]
    pairs = runner.pairs(encoded, loc)                        # PairSuffix: any intervention, with gradients
    runner.reference()                                        # NaiveRunner: one batch-1 pass per example or pair

:func:`interp.backends.get_runner` picks the kind from the model. Both share :class:`HFRunner`'s calls (predictions,
vectors, gradients, the gradient path); they differ in the interchange: the encoder's suffix strategies (fused BERT
blocks, the compiled suffix, component sites; :func:`interp.engine.batched.interchange_logits`) and the decoder's
(each base's prefix reused or not; :func:`interp.engine.decoder.decoder_interchange_logits`), each with the knob only
it has. Their reference is :class:`~interp.backends.naive.NaiveRunner`, and the tests hold them equal.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable, Sequence

import torch
from torch import Tensor

from interp.backends.base import PlanCalls, SiteGradients
from interp.backends.naive import NaiveRunner
from interp.engine.batched import interchange_logits, precision, source_vectors, vectors_and_logits
from interp.core.checks import check_bool
from interp.core.errors import ConfigError
from interp.engine.compiled import CompileStats, use_compile
from interp.engine.decoder import decoder_interchange_logits
from interp.engine.gradients import site_gradients
from interp.engine.pair_suffix import PairSuffix
from interp.engine.plan import WritePlan, plan_logits
from interp.hooks import hooked
from interp.hooks.architecture import architecture, batch_inputs
from interp.hooks.encoding import Encoded, collate
from interp.hooks.locations import Location
from interp.models.freezing import frozen_weights
from interp.models.evaluation import predict_logits


def model_kind(model) -> str:
    """What an error names a model by: its ``config.model_type`` (``llama``, ``bert``), else its class."""
    return getattr(getattr(model, "config", None), "model_type", None) or type(model).__name__


class HFRunner(PlanCalls, ABC):
    """What both Hugging Face runners share (the :class:`~interp.backends.base.Runner` protocol but the interchange):
    make one with :func:`interp.backends.get_runner`, or :class:`EncoderRunner` / :class:`DecoderRunner`.

    Args:
        model: a ``...ForSequenceClassification`` of a family :mod:`interp.hooks.architecture` covers (a decoder
            wrapped as :class:`~interp.models.decoders.DecoderClassifier`), in eval mode.
        pad_token_id: what pads a batch of examples of different lengths (:meth:`predict`, :meth:`read`).

    Raises:
        ConfigError: the model is not of the runner's kind (an encoder given to :class:`DecoderRunner`, or the reverse).
    """

    name = "hf"
    atp_star = True
    decoder: bool  # the kind of model the runner runs

    def __init__(self, model, pad_token_id: int = 0) -> None:
        if architecture(model).decoder != self.decoder:
            kind, other = ("a decoder", "an encoder") if self.decoder else ("an encoder", "a decoder")
            raise ConfigError(f"{type(self).__name__} runs {kind}; the model ({model_kind(model)}) is {other}: use "
                              f"{'EncoderRunner' if self.decoder else 'DecoderRunner'}, or get_runner, which picks")  # fmt: skip
        self.model, self.pad_token_id = model, pad_token_id

    @abstractmethod
    def interchange_logits(self, bases: Sequence[Encoded], sources: Tensor, location: Location, *, batch_size: int | None = None,
                           on_rows: Callable[[int], None] | None = None) -> Tensor:  # fmt: skip
        """float32 ``[len(bases), n_sources, labels]``: each base with each source's vectors written at ``location``."""

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

    def frozen(self):
        """The weights get no gradient within the block (restored after)."""
        return frozen_weights(self.model)

    def pairs(self, encoded: Sequence[Encoded], location: Location) -> PairSuffix:
        return PairSuffix(self.model, encoded, location)

    def plan_logits(self, encoded: Sequence[Encoded], base_rows: Tensor, plan: WritePlan, *, batch_size: int | None = None,
                    on_rows: Callable[[int], None] | None = None, read: Sequence[Location] = ()) -> tuple[Tensor, dict[Location, Tensor]]:  # fmt: skip
        """The write plan's one hooked pass (:func:`interp.engine.plan.plan_logits`), each row from the earliest location's block."""
        return plan_logits(self.model, encoded, base_rows, plan, self.pad_token_id, batch_size or 64, on_rows, read)

    def gradients(self, encoded: Sequence[Encoded], locations: Sequence[Location], *, qk_fix: bool = False,
                  graddrop: bool = False, on_rows: Callable[[int], None] | None = None) -> dict[Location, SiteGradients]:  # fmt: skip
        return site_gradients(self.model, encoded, locations, qk_fix=qk_fix, graddrop=graddrop, on_rows=on_rows)

    def precision(self, name: str):
        return precision(self.model, name)

    def reference(self) -> NaiveRunner:
        return NaiveRunner(self.model, self.pad_token_id)


class EncoderRunner(HFRunner):
    """The runner of an encoder (BERT, RoBERTa, DeBERTa-v2, ELECTRA, DistilBERT, ModernBERT, ...), read at [CLS].

    Args:
        model, pad_token_id: as :class:`HFRunner`.
        compile: run the interchange's suffix through ``torch.compile`` (:mod:`interp.engine.compiled`; BERT-layout
            blocks); ``None``: on for CUDA in calls of at least :data:`~interp.engine.compiled.AUTO_COMPILE_PAIRS`
            pairs, off on a CPU. What compiling did over the runner's calls is :attr:`compile_stats`.

    Raises:
        ConfigError: a decoder; ``compile=True`` where the model's device cannot compile (checked here, and at each
            call, as the model may move).
    """

    decoder = False

    def __init__(self, model, pad_token_id: int = 0, compile: bool | None = None) -> None:
        super().__init__(model, pad_token_id)
        self.compile = check_bool(compile, "compile", optional=True)
        self.compile_stats = CompileStats()
        use_compile(compile, next(model.parameters()).device)

    def interchange_logits(self, bases: Sequence[Encoded], sources: Tensor, location: Location, *, batch_size: int | None = None,
                           on_rows: Callable[[int], None] | None = None) -> Tensor:  # fmt: skip
        compiled = use_compile(self.compile, next(self.model.parameters()).device, len(bases) * len(sources))
        return interchange_logits(self.model, bases, sources, location, batch_size=batch_size, on_rows=on_rows, compile=compiled,
                                  stats=self.compile_stats)  # fmt: skip


class DecoderRunner(HFRunner):
    """The runner of a decoder (GPT-2, Llama, Qwen, Mistral, Gemma, ...), read at its last token after the template
    the inputs were joined by (:mod:`interp.hooks.templates`).

    Args:
        model, pad_token_id: as :class:`HFRunner`.
        prefix_reuse: each base's positions before the intervened ones run once, their keys and values serving every
            source (:mod:`interp.engine.decoder`); ``False`` runs every position per pair (the same logits, within
            float rounding).

    Raises:
        ConfigError: an encoder.
    """

    decoder = True
    compile_stats = None  # a decoder's blocks run through their own modules: it never compiles

    def __init__(self, model, pad_token_id: int = 0, prefix_reuse: bool = True) -> None:
        super().__init__(model, pad_token_id)
        self.prefix_reuse = check_bool(prefix_reuse, "prefix_reuse")

    def interchange_logits(self, bases: Sequence[Encoded], sources: Tensor, location: Location, *, batch_size: int | None = None,
                           on_rows: Callable[[int], None] | None = None) -> Tensor:  # fmt: skip
        return decoder_interchange_logits(self.model, bases, sources, location, batch_size=batch_size, on_rows=on_rows,
                                          reuse=self.prefix_reuse)  # fmt: skip
