"""Decoder classifiers: a decoder read at its last real token, through its classification head or through label words.

Usage::

    template = Template("Premise: {premise}\\nHypothesis: {hypothesis}\\nAnswer:")
    model = DecoderClassifier(llama_for_sequence_classification, template)               # the head's logits
    model = DecoderClassifier(llama_for_causal_lm, template, {"entailment": " yes", "neutral": " no"}, {"entailment": 3869, "neutral": 1939})
    model(input_ids, attention_mask).logits                                              # float [batch, labels]

Two kinds of decoder read NLI pairs. A ``*ForSequenceClassification`` (GPT-2, Llama, Qwen2, Qwen3, Mistral, Gemma 2,
Gemma 3's text model) scores the last token of the joined pair with its head. A ``*ForCausalLM`` asked for a label
word after a prompt (zero-shot or instruction-tuned NLI) is read the same way: its next-token logits of one word per
label, at the last token, are the classifier's logits (Gemma's final logit softcapping applied as its own head applies
it). Either way the pair is joined by a :class:`Template` and the readout position comes from the attention mask (the
last real token), never from the token ids: where the pad token is the end-of-text token (GPT-2's usual fix) an input
that ends in that token is still read at its end. :class:`DecoderClassifier` wraps either model so that every part of
``interp`` calls it as it calls an encoder classifier (``model(input_ids, attention_mask).logits``,
``model.base_model``, ``model.config`` with the labels), and records its template and label words in the config it
saves (``interp_template``, ``interp_label_words``, ``interp_pad_token``), so a checkpoint says how it reads a pair.
"""

from __future__ import annotations

import copy
import inspect
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from interp.core.errors import ConfigError, ModelError, named
from interp.hooks.templates import DEFAULT_TEMPLATE, Template

def label_word_ids(tokenizer, label_words: dict[str, str]) -> dict[str, int]:
    """Each label's word as its one token id (the word as it follows the template: ``" yes"`` with its space).

    Raises:
        ConfigError: naming ``label_words=``: a word that is not one token, or two labels with one token.
    """
    ids = {}
    for label, word in label_words.items():
        found = tokenizer(word, add_special_tokens=False)["input_ids"]
        if len(found) != 1:
            raise ConfigError(f"{named('label_words', repr(word))} (for {label}) is {len(found)} tokens to this tokenizer "
                              f"({tokenizer.convert_ids_to_tokens(found)}); each label word must be one token")  # fmt: skip
        ids[label] = int(found[0])
    if len(set(ids.values())) != len(ids):
        raise ConfigError(f"{named('label_words')}: two labels have the same token ({label_words})")
    return ids


@dataclass(frozen=True)
class Readout:
    """What a :class:`DecoderClassifier` returns, as a sequence classifier's output: ``logits`` float ``[batch, labels]``,
    ``loss`` (mean cross-entropy, nats) where labels were given."""

    logits: Tensor
    loss: Tensor | None = None


def cache_argument(module) -> str:
    """The name a model's forward takes its key/value cache by: ``cache`` (transformers 5) or ``past_key_values``."""
    return "cache" if "cache" in inspect.signature(type(module).forward).parameters else "past_key_values"


def template_of(model) -> Template | None:
    """The template a model joins pairs with: a :class:`DecoderClassifier`'s; ``None`` for an encoder (a pair of segments)."""
    return getattr(model, "template", None) if isinstance(model, DecoderClassifier) else None


def last_positions(input_ids: Tensor, attention_mask: Tensor | None) -> Tensor:
    """int64 ``[batch]``: each row's last real token, from the attention mask (right or left padding); the last position without one."""
    if attention_mask is None:
        return torch.full((input_ids.shape[0],), input_ids.shape[1] - 1, dtype=torch.long, device=input_ids.device)
    index = torch.arange(attention_mask.shape[1], device=attention_mask.device)
    return (index * (attention_mask != 0)).argmax(-1)


class DecoderClassifier(nn.Module):
    """A decoder read at its last real token (see the module docstring).

    Args:
        inner: a ``*ForSequenceClassification`` (its ``score`` head) or, with ``label_words``, a ``*ForCausalLM``.
        template: how a pair is joined (:class:`~interp.hooks.templates.Template`).
        label_words: label name -> its word, in the classifier's label order (a causal LM only); ``word_ids``: each
            word's token id (:func:`label_word_ids`).
        pad_token: how the pad token was chosen, where the tokenizer had none (recorded in the config).

    Attributes:
        config: the inner model's config; for a causal LM a copy whose ``num_labels``, ``id2label`` and
            ``label2id`` are the label words' labels. It holds ``interp_template`` (and ``interp_label_words``).
    """

    def __init__(self, inner: nn.Module, template: Template, label_words: dict[str, str] | None = None,
                 word_ids: dict[str, int] | None = None, pad_token: str | None = None) -> None:  # fmt: skip
        super().__init__()
        self.inner = inner
        self.template = template
        self.label_words = dict(label_words) if label_words else None
        config = inner.config
        if self.label_words is not None:
            config = copy.deepcopy(config)
            names = list(self.label_words)
            config.num_labels = len(names)
            config.id2label = dict(enumerate(names))
            config.label2id = {x: i for i, x in enumerate(names)}
            config.interp_label_words = self.label_words
            if word_ids is None or list(word_ids) != names:
                raise ConfigError(f"{named('label_words')}: give each label's token id (label_word_ids) beside its word")
            self.register_buffer("word_ids", torch.tensor([word_ids[x] for x in names], dtype=torch.long), persistent=False)
        elif not hasattr(inner, "score"):
            raise ModelError(f"a {type(inner).__name__} has no classification head (score); give label words to read it as a causal LM")
        config.interp_template = template.text
        if pad_token is not None:
            config.interp_pad_token = pad_token
        self.config = config

    @property
    def base_model(self) -> nn.Module:
        """The decoder's blocks and final norm (``GPT2Model``, ``LlamaModel``, ...): what the hooks and the engine run."""
        return self.inner.base_model

    def head(self, hidden: Tensor) -> Tensor:
        """The logits, float ``[..., labels]``, of final-norm hidden states ``[..., d_model]``."""
        if self.label_words is None:
            return self.inner.score(hidden)
        out = self.inner.get_output_embeddings()
        if isinstance(out, nn.Linear):  # only the label words' rows: Gemma's vocabulary is 262,144 words, 2 are read
            bias = None if out.bias is None else out.bias[self.word_ids]
            logits = nn.functional.linear(hidden, out.weight[self.word_ids], bias)
        else:
            logits = out(hidden)[..., self.word_ids]
        cap = getattr(self.inner.config, "final_logit_softcapping", None)
        return torch.tanh(logits / cap) * cap if cap else logits

    def forward(self, input_ids: Tensor, attention_mask: Tensor | None = None, cache=None, labels: Tensor | None = None,
                **kwargs) -> Readout:  # fmt: skip
        """The logits at each row's last real token: float ``[batch, labels]``, and with ``labels`` (int64 ``[batch]``)
        their mean cross-entropy (nats) as ``loss``. ``cache``: the key/value cache of the positions before
        ``input_ids`` (a prefix run once, :mod:`interp.engine.decoder`)."""
        past = {cache_argument(self.base_model): cache, "use_cache": True} if cache is not None else {"use_cache": False}
        hidden = self.base_model(input_ids=input_ids, attention_mask=attention_mask, **past).last_hidden_state
        last = last_positions(input_ids, attention_mask)
        logits = self.head(hidden[torch.arange(len(last), device=hidden.device), last])
        loss = None if labels is None else torch.nn.functional.cross_entropy(logits.float(), labels.to(logits.device))
        return Readout(logits, loss)

    def save_pretrained(self, path, **kwargs) -> None:
        """Save the inner model, its config carrying the template, label words and pad token choice."""
        for key in ("interp_template", "interp_label_words", "interp_pad_token"):
            if hasattr(self.config, key):
                setattr(self.inner.config, key, getattr(self.config, key))
        self.inner.save_pretrained(path, **kwargs)
