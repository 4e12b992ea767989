"""Where each encoder and decoder family keeps its sites: the one place that knows the module layouts.

Every other module asks :func:`architecture` and never names a module path
itself. An :class:`Architecture` says, for one family of Hugging Face
encoders:

* where its blocks are (``encoder.layer``, DistilBERT's ``transformer.layer``,
  ModernBERT's ``layers``) and which module's output is ``hidden_states[0]``
  (the embeddings; ELECTRA's ``embeddings_project`` where the embeddings are
  narrower than the blocks);
* which module inside a block holds each component site (table below), and
  how the rest of a block runs from its residual stream after attention
  (``hook_resid_mid``), for the engine's per-pair block rest
  (:mod:`interp.engine.components`);
* whether its forward takes ``token_type_ids``.

============  ===================  ===================  ======================  ===================  ==============
family        ``attn.hook_z``      ``hook_attn_out``    ``hook_resid_mid``      ``hook_mlp_out``     norm
============  ===================  ===================  ======================  ===================  ==============
BERT-like     input of             output of            input of                output of            post-LN
              attention.output.    attention.output.    attention.output.       output.dense
              dense                dense                LayerNorm
DeBERTa-v2    (as BERT)            (as BERT)            (as BERT)               (as BERT)            post-LN
DistilBERT    input of             output of            input of                output of            post-LN
              attention.out_lin    attention.out_lin    sa_layer_norm           ffn.lin2
ModernBERT    input of attn.Wo     output of attn.Wo    input of mlp_norm [*]   output of mlp.Wo     pre-LN
============  ===================  ===================  ======================  ===================  ==============

BERT-like is BERT, RoBERTa, XLM-R and ELECTRA. In every family
``hook_resid_mid`` is the block input plus the attention output (before a
post-LN block's first LayerNorm; ModernBERT's input to its MLP's norm).
[*] In a pre-LN block that input is a branch off the residual stream, so a
write there also adds its change to the block's output (``carried``): the
stream itself is replaced, as in a post-LN block.
The model-level sites (``hidden_states[l]``) are the embedding output and
each block's output in every family; ModernBERT's final norm and
DeBERTa-v2's relative-position embeddings are not sites. DeBERTa-v2's
optional convolution (``conv_kernel_size`` > 0) is part of block 0: its
output is ``hidden_states[1]``, as in the model's own ``hidden_states``.

Decoders (pre-norm; their ``*ForSequenceClassification`` and
``*ForCausalLM`` read through :class:`~interp.models.decoders.DecoderClassifier`),
each site as ``attn.hook_z`` / ``hook_attn_out`` / ``hook_resid_mid`` [*] / ``hook_mlp_out``:

* GPT-2: input of ``attn.c_proj`` / output of ``attn.c_proj`` / input of ``ln_2`` / output of ``mlp``;
* Llama-like: input of ``self_attn.o_proj`` / output of ``self_attn.o_proj`` / input of
  ``post_attention_layernorm`` / output of ``mlp``;
* Gemma 2 and 3: input of ``self_attn.o_proj`` / output of ``post_attention_layernorm`` (the attention's
  contribution after its post-norm) / input of ``pre_feedforward_layernorm`` / output of ``post_feedforward_layernorm``.

Llama-like is Llama, Qwen2, Qwen3 and Mistral (grouped-query attention: ``attn.hook_z``
has a slice per *query* head, ``head_dim`` wide). In a decoder ``hidden_states[0]``
is the input of block 0 (Gemma's scaled embeddings), read before the block
runs, and the final norm is not a site.
"""

from __future__ import annotations

import inspect
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Iterator

import torch
from jaxtyping import Int
from torch import Tensor

from interp.core.errors import ConfigError


def _get(root, dotted: str):
    for name in dotted.split("."):
        root = getattr(root, name, None)
    return root


def _conv(model) -> torch.nn.Module | None:
    """DeBERTa-v2's convolution after block 0, where the model has one."""
    return getattr(getattr(model.base_model, "encoder", None), "conv", None)


@dataclass(frozen=True)
class Architecture:
    """One family's module layout (see the module docstring's table).

    Attributes:
        name: the family, as errors and docs name it.
        model_types: the ``config.model_type`` values it covers.
        blocks: dotted path of the block list inside the base model.
        components: component site -> (dotted path inside a block, whether
            the site is the module's first input rather than its output).
        finish: ``(block, resid_mid) -> block output``: the rest of a block
            from its ``hook_resid_mid`` vectors (each token alone).
        finish_mlp: ``(block, resid_mid, mlp_out) -> block output``: the
            block's output from its own ``resid_mid`` and a replaced ``hook_mlp_out``.
        carried: component sites that are the input of a module off the
            residual path (ModernBERT's ``hook_resid_mid``, the input of its
            MLP's norm): a write there also adds its change to the block's
            output, so the residual stream carries it as the site means.
        empty_block: where the encoder cannot run zero blocks (DeBERTa-v2), a
            block that passes its input through, as that family's blocks
            return it; run in place of none.
        decoder: a causal decoder: ``hidden_states[0]`` is block 0's input, no
            token types are read, and the suffix from a block runs with the
            blocks before it passed through (:meth:`from_block`).
        final_norm: a decoder's final norm inside its base model (``norm``, ``ln_f``).
        z_to_attn_out: ``(block, z) -> hook_attn_out``: the attention's contribution from its heads' context, where it
            is more than the ``attn.hook_z`` module (Gemma's post-attention norm); ``None``: that module.
        fused_qkv: the query, key and value inputs (``attn.hook_q``, ``_k``, ``_v``) are one module's output, in that
            order, each d_model wide (GPT-2's ``c_attn``, ModernBERT's ``Wqkv``).
    """

    name: str
    model_types: tuple[str, ...]
    blocks: str
    components: dict[str, tuple[str, bool]] = field(repr=False)
    finish: Callable[[torch.nn.Module, Tensor], Tensor] = field(repr=False)
    finish_mlp: Callable[[torch.nn.Module, Tensor, Tensor], Tensor] = field(repr=False)
    carried: frozenset[str] = frozenset()
    empty_block: Callable[[], torch.nn.Module] | None = field(default=None, repr=False)
    decoder: bool = False
    final_norm: str = ""
    z_to_attn_out: Callable[[torch.nn.Module, Tensor], Tensor] | None = field(default=None, repr=False)
    fused_qkv: bool = False

    def block_list(self, model) -> torch.nn.ModuleList:
        """The model's blocks, in order."""
        return _get(getattr(model, "base_model", model), self.blocks)

    def base(self, model) -> torch.nn.Module:
        """The base model inside a classifier or LM (its blocks, embeddings and a decoder's final norm)."""
        return getattr(model, "base_model", model)

    def final_norm_module(self, model) -> torch.nn.Module:
        """A decoder's final norm (``norm``, ``ln_f``), after its last block.

        Raises:
            ConfigError: an encoder, which has none.
        """
        if not self.final_norm:
            raise ConfigError(f"a {self.name} model has no final norm after its blocks")
        return _get(self.base(model), self.final_norm)

    def embedding_module(self, model) -> torch.nn.Module:
        """The module whose output is ``hidden_states[0]``: ELECTRA's ``embeddings_project`` where present, else ``embeddings``."""
        base = getattr(model, "base_model", model)
        return getattr(base, "embeddings_project", None) or base.embeddings

    def hidden_sites(self, model) -> list[tuple[torch.nn.Module, bool]]:
        """Where ``hidden_states[0..n_layers]`` are read: each a module and whether it is the module's first input rather
        than its output. An encoder's embedding output then each block's (block 0 through DeBERTa-v2's convolution where
        it has one); a decoder's block 0 input, then each block's output."""
        blocks = list(self.block_list(model))
        if self.decoder:
            return [(blocks[0], True), *((b, False) for b in blocks)]
        conv = _conv(model)
        if conv is not None and blocks:
            blocks[0] = conv
        return [(m, False) for m in (self.embedding_module(model), *blocks)]

    def hidden_modules(self, model) -> list[torch.nn.Module]:
        """The modules at which ``hidden_states[0..n_layers]`` are read (:meth:`hidden_sites`)."""
        return [module for module, _ in self.hidden_sites(model)]

    @contextmanager
    def from_block(self, model, start: int, hidden: Tensor) -> Iterator[None]:
        """Within the block a forward pass of ``model`` runs the blocks from ``start`` on with ``hidden`` (float ``[batch,
        seq, d_model]``) as block ``start``'s input (``hidden_states[start]``); restored in ``finally``.

        An encoder's block list is narrowed (:meth:`narrowed`) and its embedding output replaced; a decoder's earlier
        blocks pass their input through and block ``start`` (or, after the last, the final norm) reads ``hidden``:
        each later block keeps its own index, which its cache slot, mask and rotary kind depend on.
        """
        if not self.decoder:
            handle = None
            try:
                with self.narrowed(model, start, len(self.block_list(model))):
                    handle = self.embedding_module(model).register_forward_hook(lambda module, args, output: hidden)
                    yield
            finally:
                if handle is not None:
                    handle.remove()
            return
        blocks = self.block_list(model)
        kept = list(blocks[:start])
        target = blocks[start] if start < len(blocks) else _get(getattr(model, "base_model", model), self.final_norm)
        handle = target.register_forward_pre_hook(lambda module, args: (hidden, *args[1:]))
        try:
            for i in range(start):
                blocks[i] = _DecoderPass()
            yield
        finally:
            handle.remove()
            for i, block in enumerate(kept):
                blocks[i] = block

    def mixes_tokens_after(self, model, location) -> bool:
        """Whether something after ``location``'s component site mixes tokens inside its block: DeBERTa-v2's
        convolution after block 0. Then a replaced component changes block 0's output beyond the intervened tokens."""
        return bool(location.component) and location.layer == 0 and _conv(model) is not None

    @contextmanager
    def narrowed(self, model, start: int, stop: int) -> Iterator[None]:
        """Within the block the model runs only blocks ``start .. stop - 1`` (its block list is narrowed; restored in ``finally``).

        DeBERTa-v2's convolution belongs to block 0, so it is switched off while block 0 is not run.
        """
        base = model.base_model
        parent_path, _, attribute = self.blocks.rpartition(".")
        parent = _get(base, parent_path) if parent_path else base
        blocks = getattr(parent, attribute)
        conv = _conv(model)
        try:
            kept = blocks[start:stop]
            setattr(parent, attribute, kept if len(kept) or self.empty_block is None else torch.nn.ModuleList([self.empty_block()]))
            if conv is not None and start > 0:
                base.encoder.conv = None
            yield
        finally:
            setattr(parent, attribute, blocks)
            if conv is not None:
                base.encoder.conv = conv


class _PassThrough(torch.nn.Module):
    """A block that returns its input, as DeBERTa-v2's blocks return their output: ``(hidden, None)``."""

    def forward(self, hidden_states, *args, **kwargs):
        return hidden_states, None


class _DecoderPass(torch.nn.Module):
    """A decoder block that returns its input, as the decoders' blocks return their output: the hidden states alone."""

    def forward(self, hidden_states, *args, **kwargs):
        return hidden_states


def takes_token_types(model) -> bool:
    """Whether ``model``'s forward takes ``token_type_ids`` as segments (DistilBERT's and ModernBERT's do not; a decoder's
    are not segments: GPT-2 adds them as token embeddings, so none are passed)."""
    if getattr(getattr(model, "config", None), "model_type", None) in DECODER_TYPES:
        return False
    return _class_takes_token_types(type(model))  # the class's forward: an instance's may be wrapped


@lru_cache(maxsize=None)
def _class_takes_token_types(cls: type) -> bool:
    return "token_type_ids" in inspect.signature(cls.forward).parameters  # once per class: model_inputs is on the engine's path


def model_inputs(
    model,
    input_ids: Int[Tensor, "batch seq"],
    token_type_ids: Int[Tensor, "batch seq"] | None = None,
    attention_mask: Int[Tensor, "batch seq"] | None = None,
) -> dict[str, Tensor]:
    """The keyword arguments of a forward pass of ``model`` (or its base model): ``token_type_ids`` only where it takes them.

    Each value is int64 ``[batch, seq]``, as given.

    ``token_type_ids`` is dropped for a family without segment embeddings,
    which is what its own tokenizer would give.
    """
    inputs = {"input_ids": input_ids}
    if token_type_ids is not None and takes_token_types(model):
        inputs["token_type_ids"] = token_type_ids
    if attention_mask is not None:
        inputs["attention_mask"] = attention_mask
    return inputs


def batch_inputs(model, batch: dict[str, Tensor], device) -> dict[str, Tensor]:
    """:func:`model_inputs` of a collated batch (:func:`interp.hooks.encoding.collate`), moved to ``device``: int64 ``[batch, seq]`` each."""
    return model_inputs(model, *(batch[k].to(device) for k in ("input_ids", "token_type_ids", "attention_mask")))


def _post_ln(norm_1: str, ffn: Callable, norm_2: str):
    """``finish`` and ``finish_mlp`` of a post-LN block: a = norm_1(resid_mid); out = norm_2(a + ffn(a))."""

    def finish(block, resid_mid):
        a = _get(block, norm_1)(resid_mid)
        return _get(block, norm_2)(a + ffn(block, a))

    def finish_mlp(block, resid_mid, mlp_out):
        return _get(block, norm_2)(mlp_out + _get(block, norm_1)(resid_mid))

    return finish, finish_mlp


def _inputs(q: str, k: str | None = None, v: str | None = None) -> dict[str, tuple[str, bool]]:
    """A head's query, key and value inputs: each its projection's output (one fused module where only ``q`` is named)."""
    return {"attn.hook_q": (q, False), "attn.hook_k": (k or q, False), "attn.hook_v": (v or q, False)}


_BERT_COMPONENTS = {
    **_inputs("attention.self.query", "attention.self.key", "attention.self.value"),
    "attn.hook_z": ("attention.output.dense", True),
    "hook_attn_out": ("attention.output.dense", False),
    "hook_resid_mid": ("attention.output.LayerNorm", True),
    "hook_mlp_out": ("output.dense", False),
}
_bert_finish = _post_ln("attention.output.LayerNorm", lambda block, a: block.output.dense(block.intermediate(a)), "output.LayerNorm")
_distil_finish = _post_ln("sa_layer_norm", lambda block, a: block.ffn(a), "output_layer_norm")

ARCHITECTURES: tuple[Architecture, ...] = (
    Architecture("BERT-like", ("bert", "roberta", "xlm-roberta", "electra"), "encoder.layer", _BERT_COMPONENTS, *_bert_finish),
    Architecture("DeBERTa-v2", ("deberta-v2",), "encoder.layer",
                 {**_BERT_COMPONENTS, **_inputs("attention.self.query_proj", "attention.self.key_proj", "attention.self.value_proj")},
                 *_bert_finish, empty_block=_PassThrough),  # fmt: skip
    Architecture(
        "DistilBERT",
        ("distilbert",),
        "transformer.layer",
        {**_inputs("attention.q_lin", "attention.k_lin", "attention.v_lin"),
         "attn.hook_z": ("attention.out_lin", True), "hook_attn_out": ("attention.out_lin", False),
         "hook_resid_mid": ("sa_layer_norm", True), "hook_mlp_out": ("ffn.lin2", False)},
        *_distil_finish,
    ),  # fmt: skip
    Architecture(
        "ModernBERT",
        ("modernbert",),
        "layers",
        {**_inputs("attn.Wqkv"), "attn.hook_z": ("attn.Wo", True), "hook_attn_out": ("attn.Wo", False), "hook_resid_mid": ("mlp_norm", True),
         "hook_mlp_out": ("mlp.Wo", False)},
        lambda block, resid_mid: resid_mid + block.mlp(block.mlp_norm(resid_mid)),
        lambda block, resid_mid, mlp_out: resid_mid + mlp_out,
        carried=frozenset({"hook_resid_mid"}), fused_qkv=True,
    ),
)

def _pre_norm(norm: str, mlp: str = "mlp", post: str = ""):
    """``finish`` and ``finish_mlp`` of a pre-norm decoder block: out = r + mlp(norm(r)) (Gemma: post(mlp(norm(r))))."""

    def finish(block, resid_mid):
        out = _get(block, mlp)(_get(block, norm)(resid_mid))
        return resid_mid + (_get(block, post)(out) if post else out)

    return finish, lambda block, resid_mid, mlp_out: resid_mid + mlp_out


_LLAMA_COMPONENTS = {
    **_inputs("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"),
    "attn.hook_z": ("self_attn.o_proj", True),
    "hook_attn_out": ("self_attn.o_proj", False),
    "hook_resid_mid": ("post_attention_layernorm", True),
    "hook_mlp_out": ("mlp", False),
}
_GEMMA_COMPONENTS = {
    **_inputs("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"),
    "attn.hook_z": ("self_attn.o_proj", True),
    "hook_attn_out": ("post_attention_layernorm", False),
    "hook_resid_mid": ("pre_feedforward_layernorm", True),
    "hook_mlp_out": ("post_feedforward_layernorm", False),
}
_CARRIED = frozenset({"hook_resid_mid"})

DECODERS: tuple[Architecture, ...] = (
    Architecture(
        "GPT-2", ("gpt2",), "h",
        {**_inputs("attn.c_attn"), "attn.hook_z": ("attn.c_proj", True), "hook_attn_out": ("attn.c_proj", False), "hook_resid_mid": ("ln_2", True),
         "hook_mlp_out": ("mlp", False)},
        *_pre_norm("ln_2"), carried=_CARRIED, decoder=True, final_norm="ln_f", fused_qkv=True,
    ),
    Architecture("Llama-like", ("llama", "qwen2", "qwen3", "mistral"), "layers", _LLAMA_COMPONENTS, *_pre_norm("post_attention_layernorm"),
                 carried=_CARRIED, decoder=True, final_norm="norm"),
    Architecture(
        "Gemma", ("gemma2", "gemma3_text"), "layers", _GEMMA_COMPONENTS,
        *_pre_norm("pre_feedforward_layernorm", post="post_feedforward_layernorm"), carried=_CARRIED, decoder=True, final_norm="norm",
        z_to_attn_out=lambda block, z: block.post_attention_layernorm(block.self_attn.o_proj(z)),
    ),
)  # fmt: skip

#: Every ``config.model_type`` of a decoder interp runs.
DECODER_TYPES: tuple[str, ...] = tuple(t for a in DECODERS for t in a.model_types)
#: Every ``config.model_type`` interp runs, in the order errors list them (encoders first).
MODEL_TYPES: tuple[str, ...] = tuple(t for a in (*ARCHITECTURES, *DECODERS) for t in a.model_types)


def architecture(model) -> Architecture:
    """The :class:`Architecture` of ``model`` (a classifier, a :class:`~interp.models.decoders.DecoderClassifier`, or its
    base model), by ``config.model_type``.

    Raises:
        ConfigError: a family interp does not cover (naming the ones it does),
            or a model without the family's block list.
    """
    model_type = getattr(getattr(model, "config", None), "model_type", None)
    for arch in (*ARCHITECTURES, *DECODERS):
        if model_type in arch.model_types:
            if not isinstance(arch.block_list(model), torch.nn.ModuleList):
                raise ConfigError(f"{type(model).__name__} has no {arch.blocks} block list: not a {arch.name} encoder")
            return arch
    raise ConfigError(f"{type(model).__name__} is a {model_type!r} model; interp supports {', '.join(MODEL_TYPES)}")
