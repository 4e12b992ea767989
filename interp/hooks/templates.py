"""How a decoder reads a pair: one text with the premise and the hypothesis in their slots, tokenized with offsets;
and, for a causal LM read as a classifier, the word that stands for each label (:func:`parse_label_words`).

Usage::

    template = Template("Premise: {premise}\\nHypothesis: {hypothesis}\\nAnswer:")
    text, premise_span, hypothesis_span = template.render("a man sleeps", "a person sleeps")
    pairs = tokenize_pairs(tokenizer, examples, template)        # what encoding aligns the roles on
    pairs.input_ids[0], pairs.sequence_ids(0), pairs.offsets[0]  # offsets relative to each token's sentence

An encoder reads a pair as two segments (``[CLS] premise [SEP] hypothesis [SEP]``); a decoder reads one text, and a
fine-tuned decoder classifier or a causal LM asked for a label word reads it at its last token. Each token of the
rendered text is given the sentence its characters fall in (0 the premise, 1 the hypothesis, ``None`` the template's
own words and special tokens), and its offsets in that sentence's characters, so that a role's word is found among
the tokens of its sentence exactly as in a pair (:mod:`interp.hooks.encoding`): on byte-level BPE (GPT-2's ``Ġ``) and
SentencePiece-style (``▁``) pieces alike, a piece that carries a space from the template belongs to the sentence
whose characters it covers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import ClassVar, Sequence

from interp.core.errors import ConfigError, named

#: The two slots of a template.
SLOTS = ("{premise}", "{hypothesis}")
#: How a pair is joined where neither the checkpoint nor the caller names a template.
DEFAULT_TEMPLATE = "Premise: {premise}\nHypothesis: {hypothesis}\nAnswer:"
#: The role of a decoder's last token, the one its classifier reads (what an encoder calls ``cls``, its [CLS]).
LAST = "last"


def reading_roles(roles: Sequence[str], decoder: bool) -> tuple[str, ...]:
    """A task's ``roles`` as a model names them: an encoder's unchanged; a ``decoder``'s with ``cls`` written
    :data:`LAST` (the token it reads). Both names reach the same token on a decoder.

    >>> reading_roles(("cls", "w_p", "w_h"), decoder=False), reading_roles(("cls", "w_h"), decoder=True)
    (('cls', 'w_p', 'w_h'), ('last', 'w_h'))
    """
    return tuple(reading_aliases(decoder).get(r, r) for r in roles)


def reading_aliases(decoder: bool) -> dict[str, str]:
    """The roles a model names otherwise than its task (``{"cls": "last"}`` on a ``decoder``; none on an encoder): what
    :func:`~interp.hooks.locations.parse_locations` renames, so a decoder's read token is ``last`` however it was written."""
    return {"cls": LAST} if decoder else {}


@dataclass(frozen=True)
class Template:
    """A text with the slots ``{premise}`` and ``{hypothesis}``, each once, separated by some of the template's own text.

    Raises:
        ConfigError: naming ``template=``: not a text, a slot missing or repeated, or the slots side by side.
    """

    text: str = DEFAULT_TEMPLATE

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise ConfigError(f"{named('template')} must be a text with {SLOTS[0]} and {SLOTS[1]}, got {type(self.text).__name__}")
        for slot in SLOTS:
            count = self.text.count(slot)
            if count != 1:
                raise ConfigError(f"{named('template', repr(self.text))} has {slot} {'twice' if count > 1 else 'nowhere'}; "
                                  f"a template names each of {SLOTS[0]} and {SLOTS[1]} once")  # fmt: skip
        if SLOTS[0] + SLOTS[1] in self.text or SLOTS[1] + SLOTS[0] in self.text:
            raise ConfigError(f"{named('template', repr(self.text))}: put some text between {SLOTS[0]} and {SLOTS[1]}, "
                              "so that no token spans both sentences")  # fmt: skip

    def render(self, premise: str, hypothesis: str) -> tuple[str, tuple[int, int], tuple[int, int]]:
        """The joined text and the character spans ``(start, end)`` of the premise and of the hypothesis in it."""
        first, second = sorted(SLOTS, key=self.text.index)
        head, rest = self.text.split(first)
        middle, tail = rest.split(second)
        fill = {SLOTS[0]: premise, SLOTS[1]: hypothesis}
        a = len(head)
        b = a + len(fill[first]) + len(middle)
        spans = {first: (a, a + len(fill[first])), second: (b, b + len(fill[second]))}
        return head + fill[first] + middle + fill[second] + tail, spans[SLOTS[0]], spans[SLOTS[1]]

    # -- the decoder's input format (:class:`interp.hooks.inputs.InputFormat`; an encoder's is :class:`~interp.hooks.inputs.Segments`)

    #: A template is how a decoder reads a pair.
    decoder: ClassVar[bool] = True
    #: The role of the token the classifier reads: the last.
    read_role: ClassVar[str] = LAST

    def reading_positions(self, length: int) -> dict[str, int]:
        """The read token of an input of ``length`` tokens: its last, named both :data:`LAST` and ``cls`` (the task's name)."""
        return {"cls": length - 1, LAST: length - 1}

    def tokenize(self, tokenizer, examples: Sequence) -> "TokenizedPairs":
        """The examples joined by the template and tokenized whole (:func:`tokenize_pairs`, never truncated).

        Raises:
            ConfigError: naming ``template=``: joined by it, an example is longer than the model's context
                (:meth:`check_context`); a tokenizer without character offsets.
        """
        pairs = tokenize_pairs(tokenizer, examples, self, truncation=False)
        self.check_context(tokenizer, examples, pairs)
        return pairs

    def untruncated_ids(self, tokenizer, example) -> list[int]:
        """The example's token ids in full (what an alignment error compares with)."""
        return tokenize_pairs(tokenizer, [example], self, truncation=False).input_ids[0]

    def check_start(self, tokenizer, input_ids: Sequence[int]) -> None:
        """Nothing to check: a decoder's input starts with whatever its tokenizer puts first."""

    def check_context(self, tokenizer, examples: Sequence, pairs: "TokenizedPairs") -> None:
        """A decoder reads its last token: an input cut to the context would be read at a token inside the template or
        a sentence, the rest never reaching the model. Every example joined by the template must fit the context whole.

        Raises:
            ConfigError: naming ``template=``, the longest example, its length, the context and the template's own length.
        """
        context = getattr(tokenizer, "model_max_length", None)
        if not isinstance(context, int) or context <= 0:
            return
        lengths = [len(ids) for ids in pairs.input_ids]
        longest = max(range(len(lengths)), key=lengths.__getitem__)
        if lengths[longest] <= context:
            return
        alone = len(tokenize_pairs(tokenizer, [SimpleNamespace(premise="", hypothesis="")], self, truncation=False).input_ids[0])
        # the remedy is the larger part's: the sentences where the template alone fits many times over
        remedy = "shorten the template" if alone > context // 2 else "shorten the example's sentences (or leave that example out)"
        raise ConfigError(f"{named('template', repr(self.text[:40] + ('…' if len(self.text) > 40 else '')))}: joined by it, example "
                          f"{getattr(examples[longest], 'id', longest)} is {lengths[longest]} tokens, past the model's context of {context} "
                          f"(the template alone is {alone}); a decoder reads its last token, so nothing may be cut: {remedy}")  # fmt: skip

    @property
    def aliases(self) -> dict[str, str]:
        """The task's roles a decoder names otherwise (:func:`reading_aliases`): ``cls`` is ``last``."""
        return reading_aliases(True)

    def roles(self, roles: Sequence[str]) -> tuple[str, ...]:
        """A task's ``roles`` as a decoder names them (:func:`reading_roles`)."""
        return reading_roles(roles, True)


@dataclass(frozen=True)
class TokenizedPairs:
    """Pairs joined by a template and tokenized: per example its ``input_ids``, its ``offsets`` (each token's
    ``(start, end)`` in the characters of its sentence) and which sentence each token is in (:meth:`sequence_ids`)."""

    input_ids: list[list[int]]
    offsets: list[list[tuple[int, int]]]
    segments: list[list[int | None]]
    #: Each token's segment id as the model takes it (an encoder's pair: 0 then 1); empty: 0 for every token.
    token_type_ids: list[list[int]] = field(default_factory=list)

    def types(self, i: int) -> list[int]:
        """Example ``i``'s ``token_type_ids``: the tokenizer's where it gave them, else 0 for every token."""
        return self.token_type_ids[i] if self.token_type_ids else [0] * len(self.input_ids[i])

    def sequence_ids(self, i: int) -> list[int | None]:
        """Example ``i``'s token -> 0 (premise), 1 (hypothesis) or ``None`` (the template, special tokens)."""
        return self.segments[i]


def tokenize_pairs(tokenizer, examples: Sequence, template: Template, truncation: bool = True) -> TokenizedPairs:
    """Each example's ``premise`` and ``hypothesis`` joined by ``template``, tokenized in one call (the tokenizer's own
    special tokens, a BOS where it adds one), with each token's sentence and offsets in it.

    Raises:
        ConfigError: a tokenizer without character offsets (a "slow" Python tokenizer).
    """
    if not getattr(tokenizer, "is_fast", False):
        raise ConfigError(f"tokenizer {type(tokenizer).__name__} gives no character offsets; alignment needs a fast (Rust) tokenizer")
    rendered = [template.render(str(e.premise), str(e.hypothesis)) for e in examples]
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # its "longer than the maximum" warning: check_context says it in one line, or it fits
    try:
        batch = tokenizer([text for text, _, _ in rendered], return_offsets_mapping=True, truncation=truncation)
    finally:
        hf_logging.set_verbosity(level)
    offsets, segments = [], []
    for (text, *spans), found in zip(rendered, batch["offset_mapping"]):
        mine, where = [], []
        for a, b in found:
            inside = [k for k, (s, e) in enumerate(spans) if b > a and a < e and b > s]
            where.append(inside[0] if inside else None)
            mine.append((a - spans[inside[0]][0], b - spans[inside[0]][0]) if inside else (a, b))
        offsets.append(mine)
        segments.append(where)
    return TokenizedPairs([list(ids) for ids in batch["input_ids"]], offsets, segments)


def parse_label_words(value) -> dict[str, str] | None:
    """Label words as written: ``"entailment= yes,neutral= no"`` (label ``=`` word, the word kept as written, its space
    included), a dict, or ``(label, word)`` pairs; ``None`` stays ``None``.

    Raises:
        ConfigError: naming ``label_words=``: an item without ``=``, an empty label or word, a label named twice, fewer than two.
    """
    if value is None:
        return None
    if not isinstance(value, (str, dict, list, tuple)):
        raise ConfigError(f"{named('label_words', repr(value))} must be 'LABEL=WORD,...', a dict or (label, word) pairs")
    if isinstance(value, dict) and not all(isinstance(w, str) for w in value.values()):
        bad = next(w for w in value.values() if not isinstance(w, str))
        raise ConfigError(f"{named('label_words', repr(value))}: each word must be a string, got {bad!r}")
    items = [tuple(item.split("=", 1)) if "=" in item else (item,) for item in value.split(",")] if isinstance(value, str) else \
        list(value.items() if isinstance(value, dict) else value)  # fmt: skip
    found: dict[str, str] = {}
    for item in items:
        if len(item) != 2 or not str(item[0]).strip() or not str(item[1]):
            raise ConfigError(f"{named('label_words', repr(value))}: write each as LABEL=WORD, e.g. 'entailment= yes,neutral= no'")
        label = str(item[0]).strip()
        if label in found:
            raise ConfigError(f"{named('label_words', repr(value))}: label {label!r} is named twice")
        found[label] = str(item[1])
    if len(found) < 2:
        raise ConfigError(f"{named('label_words', repr(value))}: give a word for each of at least two labels")
    return found
