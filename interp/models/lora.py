"""Low-rank adapters (LoRA) on a classifier's blocks through ``peft``: added before a fine-tuning, merged back after it.

Usage::

    adapters = add_adapters(model, rank=8, alpha=16, seed=0)   # every linear layer of every block gains A and B
    ...train adapters (and what lies above the blocks)...
    merge_adapters(model)                                       # W + (alpha / rank) B A, the plain layers put back

LoRA (Hu, Shen, Wallis, Allen-Zhu, Li, Wang, Wang & Chen 2022, *LoRA: Low-rank adaptation of large language models*,
§4.1) freezes each pretrained weight ``W`` ``[out, in]`` and trains ``B`` ``[out, rank]`` and ``A`` ``[rank, in]``
beside it, the layer computing ``W x + (alpha / rank) B A x``; ``B`` starts at zero, so the first step starts from the
pretrained model. The adapters are ``peft``'s (``inject_adapter_in_model``: no wrapper model, the classifier's own
forward and module names stay, so hooks and sites are unchanged while it trains). Merged, the checkpoint is a plain
model of the same architecture that loads without ``peft``.
"""

from __future__ import annotations

import torch

from interp.core.errors import ConfigError, ModelError, named


def adapted_layers(model: torch.nn.Module) -> list[str]:
    """The names (in ``model.named_modules()``) of the linear layers LoRA adapts: every ``nn.Linear`` (and GPT-2's
    ``Conv1D``) inside the block stack (:func:`interp.hooks.context.site_modules` after the embeddings), none of the
    embeddings, the final norm or the head.

    Raises:
        ModelError: a model with no linear layer in its blocks.
    """
    from interp.hooks.context import site_modules

    stack = {id(m) for block in site_modules(model)[1:] for m in block.modules()}
    kinds = (torch.nn.Linear,) + _conv1d()
    names = [name for name, m in model.named_modules() if id(m) in stack and isinstance(m, kinds)]
    if not names:
        raise ModelError(f"{type(model).__name__} has no linear layer in its blocks for LoRA's adapters (`lora_rank=`)")
    return names


def _conv1d() -> tuple[type, ...]:
    try:
        from transformers.pytorch_utils import Conv1D
    except ImportError:  # pragma: no cover - every supported transformers has it
        return ()
    return (Conv1D,)


def add_adapters(model: torch.nn.Module, rank: int, alpha: float | None = None, *, seed: int = 0) -> list[torch.nn.Parameter]:
    """Add LoRA adapters of ``rank`` to every layer of :func:`adapted_layers`, in place; ``A`` drawn from ``seed``
    (peft's Kaiming-uniform, the global random state left as it was), ``B`` zero; scale ``alpha / rank`` (``alpha``
    ``None``: twice the rank, scale 2).

    Returns:
        The adapters' parameters (``lora_A``, ``lora_B``): with :func:`interp.models.freezing.top_parameters`
        ``(model, 0)`` what a LoRA fine-tuning trains.

    Raises:
        ConfigError: naming ``lora_rank=`` or ``lora_alpha=`` out of range; naming ``lora_rank=`` when ``peft`` is not
            installed (``pip install 'interp[decoders]'``).
        ModelError: as :func:`adapted_layers`.
    """
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        raise ConfigError(f"{named('lora_rank', rank)}: give a whole number of dimensions, 1 or more")
    if alpha is None:
        alpha = 2 * rank
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha > 0:
        raise ConfigError(f"{named('lora_alpha', alpha)}: give a positive number (the adapters' scale is alpha / rank)")
    try:
        from peft import LoraConfig, inject_adapter_in_model
    except ImportError:
        raise ConfigError(f"{named('lora_rank', rank)} needs the peft package: pip install 'interp[decoders]'") from None
    layers = adapted_layers(model)
    conv = bool(_conv1d()) and any(isinstance(model.get_submodule(n), _conv1d()) for n in layers)
    config = LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=0.0, target_modules=layers, fan_in_fan_out=conv, bias="none")
    flags = [(p, p.requires_grad) for p in model.parameters()]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        inject_adapter_in_model(config, model)
    for p, flag in flags:  # peft marks every other weight frozen for good; what trains is the caller's to say
        p.requires_grad_(flag)
    adapters = [p for n, p in model.named_parameters() if "lora_A" in n or "lora_B" in n]
    device = next(p for n, p in model.named_parameters() if "lora_" not in n).device
    for p in adapters:
        p.data = p.data.to(device)
    return adapters


def merge_adapters(model: torch.nn.Module) -> int:
    """Fold each adapter into its layer's weight (``W + (alpha / rank) B A``) and put the plain layer back in its place,
    in place: the model computes what it computed with the adapters (within float rounding; tested at 1e-5) and holds
    no ``peft`` module. A model without adapters is left as it is.

    Returns:
        How many layers were merged.
    """
    try:
        from peft.tuners.tuners_utils import BaseTunerLayer
    except ImportError:
        return 0
    adapted = [(name, m) for name, m in model.named_modules() if isinstance(m, BaseTunerLayer)]
    for name, module in adapted:
        module.merge()
        model.set_submodule(name, module.get_base_layer())
    if adapted and "peft_config" in vars(model):  # what peft's injection records on the model
        del model.peft_config
    return len(adapted)


def has_adapters(model: torch.nn.Module) -> bool:
    """Whether ``model`` holds LoRA adapters not yet merged."""
    return any("lora_A" in n for n, _ in model.named_parameters())
