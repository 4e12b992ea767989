"""Tiny random sequence classifiers of every encoder family interp covers, for tests that run on each.

Each has 3 blocks of width 32 with 2 heads and the uncased WordPiece
vocabulary of the embedded model (so MoNLI encodes with its tokenizer), and
what sets the family apart switched on: ELECTRA's embedding projection
(embeddings 16 wide), DeBERTa-v2's relative attention (v3's settings: both
position-attention types, log buckets, no token types) with and without its
block-0 convolution, ModernBERT's alternating local (4-token window) and
global attention.
"""

from __future__ import annotations

from pathlib import Path

FAMILIES = ("bert", "roberta", "electra", "distilbert", "deberta-v2", "deberta-v2-conv", "modernbert")

_COMMON = dict(vocab_size=30522, num_labels=2, id2label={0: "entailment", 1: "neutral"}, label2id={"entailment": 0, "neutral": 1})


def family_config(family: str, init: float = 0.2, shape: tuple[int, int, int, int] = (3, 32, 2, 37)):
    """The config of ``family`` (one of :data:`FAMILIES`), its weights initialized with standard deviation ``init``
    (0.2, wide: outputs move with every site; 0.02, the families' own default: what trains best).

    ``shape`` is (blocks, width, heads, feed-forward width): tiny by default; ELECTRA's embeddings are half as wide.
    """
    import transformers as t

    layers, width, heads, ff = shape
    size = dict(hidden_size=width, num_hidden_layers=layers, num_attention_heads=heads, intermediate_size=ff, initializer_range=init,
                **_COMMON)  # fmt: skip
    if family == "bert":
        return t.BertConfig(max_position_embeddings=128, **size)
    if family == "roberta":
        return t.RobertaConfig(max_position_embeddings=130, pad_token_id=0, **size)
    if family == "electra":
        return t.ElectraConfig(embedding_size=width // 2, max_position_embeddings=128, **size)
    if family == "distilbert":
        return t.DistilBertConfig(dim=width, n_layers=layers, n_heads=heads, hidden_dim=ff, max_position_embeddings=128, initializer_range=init,
                                  **_COMMON)  # fmt: skip
    if family.startswith("deberta-v2"):
        conv = dict(conv_kernel_size=3, conv_act="gelu") if family.endswith("conv") else {}
        return t.DebertaV2Config(max_position_embeddings=128, relative_attention=True, pos_att_type=["p2c", "c2p"], position_buckets=16,
                                 max_relative_positions=-1, norm_rel_ebd="layer_norm", share_att_key=True, type_vocab_size=0,
                                 position_biased_input=False, pad_token_id=0, **conv, **size)  # fmt: skip
    if family == "modernbert":
        return t.ModernBertConfig(max_position_embeddings=128, global_attn_every_n_layers=2, local_attention=4, pad_token_id=0, bos_token_id=101,
                                  eos_token_id=102, cls_token_id=101, sep_token_id=102,
                                  **size)  # fmt: skip
    raise ValueError(family)


def family_model(family: str, seed: int = 0, init: float = 0.2):
    """A random ``*ForSequenceClassification`` of ``family`` in eval mode (``init``: :func:`family_config`)."""
    import torch
    from transformers import AutoModelForSequenceClassification

    torch.manual_seed(seed)
    return AutoModelForSequenceClassification.from_config(family_config(family, init)).eval()


def save_family_model(family: str, path: Path, tokenizer, seed: int = 0, init: float = 0.2) -> Path:
    """:func:`family_model` saved as safetensors with ``tokenizer`` at ``path``."""
    family_model(family, seed, init).save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path
