"""Tokenizers trained from scratch on a task's own text: a byte-level BPE (GPT-2's kind, pieces marked ``Ġ``) and a
SentencePiece-style BPE (Llama's kind, pieces marked ``▁``, a ``<s>`` begins each input), with the ``tokenizers`` library.

Usage::

    from scratch_tokenizers import byte_level_bpe, sentencepiece_bpe
    gpt2_tokenizer = byte_level_bpe(sentences, vocab_size=2000)        # a transformers PreTrainedTokenizerFast
    llama_tokenizer = sentencepiece_bpe(sentences, vocab_size=2000)

No pretrained decoder can be downloaded here, so the decoders of ``examples/decoders/`` and the suite's tiny decoders
read MoNLI through these. GPT-2's kind has no pad token (interp pads with its end-of-text token and says so); the
SentencePiece kind has one.
"""

from __future__ import annotations

from typing import Iterable


def byte_level_bpe(sentences: Iterable[str], vocab_size: int = 2000):
    """A GPT-2-style tokenizer: byte-level pre-tokenization (a leading space is part of a piece, ``Ġdog``), BPE merges
    learned on ``sentences``, ``<|endoftext|>`` its one special token and no pad token."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=True)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(sentences, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|endoftext|>", bos_token="<|endoftext|>", unk_token="<|endoftext|>")


def sentencepiece_bpe(sentences: Iterable[str], vocab_size: int = 2000):
    """A Llama-style tokenizer: SentencePiece's metaspace (a word's piece begins with ``▁``), BPE merges learned on
    ``sentences``, ``<s>`` added before each input, ``</s>``, ``<unk>`` and a ``<pad>`` token."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<unk>", "<s>", "</s>", "<pad>"]
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials)
    tokenizer.train_from_iterator(sentences, trainer)
    tokenizer.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A $B", special_tokens=[("<s>", 1)])
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<pad>")
