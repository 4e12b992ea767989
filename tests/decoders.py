"""Tiny random decoder classifiers of every decoder family interp covers, with tokenizers of their own kind.

Each has 3 blocks of width 32 and what sets the family apart switched on: grouped-query attention (4 query heads, 2
key/value heads) in the Llama-like families, a 6-token sliding window where the family has one (Mistral; Gemma 2 and
3 alternate local and global layers), Gemma 2's attention and final logit softcapping, the query/key norms of Qwen3 and
Gemma 3, and heads wider than width / heads (Gemma, Qwen3). GPT-2 and Qwen read a byte-level BPE tokenizer with no
pad token (interp pads with its end-of-text token), Llama, Mistral and Gemma a SentencePiece-style one with ``<s>`` and
``<pad>``; both are trained on MoNLI's own sentences (``examples/decoders/scratch_tokenizers.py``).
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DECODER_FAMILIES = ("gpt2", "llama", "qwen2", "qwen3", "mistral", "gemma2", "gemma3")
#: What the suite's templates add to the sentences a tokenizer is trained on.
TEMPLATE_TEXT = "Premise: Hypothesis: Answer: Does it follow? yes no"


def scratch_tokenizers():
    """The module ``examples/decoders/scratch_tokenizers.py``."""
    spec = importlib.util.spec_from_file_location("scratch_tokenizers", REPO / "examples" / "decoders" / "scratch_tokenizers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scratch_example():
    """The module ``examples/decoders/monli_decoders.py`` (the from-scratch decoders on MoNLI)."""
    import sys

    sys.path.insert(0, str(REPO / "examples" / "decoders"))
    spec = importlib.util.spec_from_file_location("monli_decoders", REPO / "examples" / "decoders" / "monli_decoders.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@lru_cache(maxsize=None)
def tokenizer(kind: str, monli_dir: str):
    """A ``byte-level`` or ``sentencepiece`` tokenizer trained on MoNLI's sentences (cached per test process)."""
    from interp.tasks.monli.data import SPLITS, load_monli

    examples = load_monli(Path(monli_dir), tuple(SPLITS))
    sentences = [TEMPLATE_TEXT] * 50 + [s for e in examples for s in (e.premise, e.hypothesis)]
    build = scratch_tokenizers()
    return build.byte_level_bpe(sentences, 2000) if kind == "byte-level" else build.sentencepiece_bpe(sentences, 2000)


def tokenizer_kind(family: str) -> str:
    """Each family's own kind of tokenizer: byte-level BPE for GPT-2 and Qwen, SentencePiece-style for Llama, Mistral, Gemma."""
    return "byte-level" if family in ("gpt2", "qwen2", "qwen3") else "sentencepiece"


def decoder_config(family: str, tok, labels=("entailment", "neutral"), init: float = 0.2):
    """The config of a tiny ``family`` decoder (one of :data:`DECODER_FAMILIES`) for ``tok``'s vocabulary."""
    import transformers as t

    names = dict(enumerate(labels))
    common = dict(vocab_size=len(tok), num_labels=len(labels), id2label=names, label2id={v: k for k, v in names.items()},
                  initializer_range=init, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)  # fmt: skip
    llama = dict(hidden_size=32, intermediate_size=37, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
                 max_position_embeddings=256, **common)  # fmt: skip
    if family == "gpt2":
        return t.GPT2Config(n_embd=32, n_layer=3, n_head=2, n_inner=37, n_positions=256, **common)
    if family == "llama":
        return t.LlamaConfig(**llama)
    if family == "qwen2":
        return t.Qwen2Config(**llama)
    if family == "qwen3":
        return t.Qwen3Config(**{**llama, "head_dim": 12})
    if family == "mistral":
        return t.MistralConfig(**llama, sliding_window=6)
    if family == "gemma2":
        return t.Gemma2Config(**{**llama, "head_dim": 12}, sliding_window=6, attn_logit_softcapping=5.0, final_logit_softcapping=3.0,
                              layer_types=["sliding_attention", "full_attention", "sliding_attention"])  # fmt: skip
    if family == "gemma3":
        return t.Gemma3TextConfig(**{**llama, "head_dim": 12}, sliding_window=6,
                                  layer_types=["sliding_attention", "full_attention", "sliding_attention"])  # fmt: skip
    raise ValueError(family)


def decoder_model(family: str, tok, seed: int = 0, init: float = 0.2, causal_lm: bool = False):
    """A random ``*ForSequenceClassification`` of ``family`` (or its ``*ForCausalLM``) in eval mode."""
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification

    torch.manual_seed(seed)
    config = decoder_config(family, tok, init=init)
    auto = AutoModelForCausalLM if causal_lm else AutoModelForSequenceClassification
    return auto.from_config(config).eval()


def save_decoder(family: str, path: Path, tok, seed: int = 0, init: float = 0.2, causal_lm: bool = False) -> Path:
    """:func:`decoder_model` saved as safetensors with ``tok`` at ``path``."""
    decoder_model(family, tok, seed, init, causal_lm).save_pretrained(path, safe_serialization=True)
    tok.save_pretrained(path)
    return path


@lru_cache(maxsize=None)
def ioi_tokenizer(kind: str):
    """A ``byte-level`` or ``sentencepiece`` tokenizer trained on the IOI task's prompts: every name one token."""
    from interp.tasks.ioi.data import ioi_examples

    sentences = [f"{e.premise} {e.hypothesis} {e.label}" for e in ioi_examples(("train", "test"))]
    build = scratch_tokenizers()
    return build.byte_level_bpe(sentences, 1000) if kind == "byte-level" else build.sentencepiece_bpe(sentences, 1000)


def save_bare_ioi_lm(path: Path) -> Path:
    """A tiny random GPT-2 causal LM saved at ``path`` with a tokenizer that reads every IOI name as one token: a bare
    causal LM, read through the task's names."""
    tok = ioi_tokenizer("byte-level")
    decoder_model("gpt2", tok, causal_lm=True).save_pretrained(path, safe_serialization=True)
    tok.save_pretrained(path)
    return path

