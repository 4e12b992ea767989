"""Tokenize any task's examples and find the token position of each role ([CLS], and each word the task names).

Usage::

    from interp.hooks.encoding import encode_examples, collate
    encoded = encode_examples(examples, tokenizer, wordpiece="first", labels=task.labels)
    batch = collate(encoded[:32], pad_token_id=tokenizer.pad_token_id)
    batch["positions"]["w_h"]                 # int64 [32]: each example's token index of w_h

The rule (Geiger, Richardson & Potts 2020 leave it open): find the role's
word in its sentence as a whole word, ignoring case and attached
punctuation (:func:`word_spans`), or, where the example gives ``spans``
(role -> character span in its sentence; MQNLI, whose sentences repeat
words such as ε), take that span; take the WordPiece tokens whose character
offsets overlap it; if there are several, the ``wordpiece`` rule picks the
``first`` or the ``last`` of them, or ``all`` keeps them all (a location's
vector is then every piece's, concatenated: :func:`location_tokens`). Premise is segment 0,
hypothesis segment 1, as BERT's NLI fine-tuning expects. Nothing here knows
MoNLI: its roles are in :mod:`interp.tasks.monli.align`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping, Sequence

import torch

from interp.core.errors import ConfigError, DataError
from interp.hooks.inputs import InputFormat, input_format
from interp.hooks.templates import Template

#: How a word split into several WordPiece tokens is read: its first piece, its last, or all of them.
WORDPIECE_RULES: tuple[str, ...] = ("first", "last", "all")


@dataclass(frozen=True)
class Encoded:
    """One tokenized example.

    ``positions`` maps each role to one token index (the piece the
    ``wordpiece`` rule picks; under ``all`` the first); ``pieces`` maps each
    word role to all the WordPiece indices of its word. :meth:`tokens` gives
    the token indices a role covers under the rule.
    """

    example_id: str
    input_ids: tuple[int, ...]
    token_type_ids: tuple[int, ...]
    positions: dict[str, int]
    pieces: dict[str, tuple[int, ...]]
    label_id: int
    wordpiece: str = "first"

    def tokens(self, role: str) -> tuple[int, ...]:
        """The token indices ``role`` covers: one, or under ``wordpiece="all"`` every piece of its word.

        Raises:
            KeyError: the example has no such role.
        """
        if self.wordpiece == "all" and role in self.pieces:
            return self.pieces[role]
        return (self.positions[role],)


def location_tokens(encoded: Sequence[Encoded], roles: Sequence[str], where: str = "location") -> list[tuple[int, ...]]:
    """Each example's token indices at a location with ``roles`` (the roles' tokens in order).

    Every example must cover the same number of tokens at each role, so that
    any source's vectors fit any base (an interchange needs it).

    Raises:
        ConfigError: naming ``where`` and the example: a role the example
            lacks, a token covered twice, or a role whose token count differs
            between examples (a multi-piece word under ``--wordpiece all``).
    """
    out = []
    counts: dict[str, tuple[int, str]] = {}
    for e in encoded:
        tokens: list[int] = []
        for role in roles:
            if role not in e.positions:
                raise ConfigError(f"{where}: example {e.example_id} has no token role {role!r}")
            covered = e.tokens(role)
            first = counts.setdefault(role, (len(covered), e.example_id))
            if first[0] != len(covered):
                raise ConfigError(
                    f"{where}: role {role!r} covers {first[0]} WordPiece token(s) in example {first[1]} but "
                    f"{len(covered)} in example {e.example_id}; an interchange needs the same count in every "
                    "example (use `wordpiece=` first or last)"
                )
            tokens += covered
        if len(set(tokens)) != len(tokens):
            raise ConfigError(f"{where}: roles {'+'.join(roles)} share a token in example {e.example_id}")
        out.append(tuple(tokens))
    return out


def check_wordpiece_rule(wordpiece: str) -> str:
    """``wordpiece`` itself if it names a rule of :data:`WORDPIECE_RULES` (which piece of a split word stands for it).

    Raises:
        ConfigError: any other name, naming ``--wordpiece``.
    """
    if wordpiece not in WORDPIECE_RULES:
        raise ConfigError(f"`wordpiece=` must be one of {', '.join(WORDPIECE_RULES)}, got {wordpiece!r}")
    return wordpiece


def _word_pieces(word: str, sentence: str, offsets, sequence_ids, segment: int) -> tuple[int, ...]:
    spans = word_spans(word, sentence)
    if len(spans) != 1:
        return ()
    return _span_pieces(spans[0], offsets, sequence_ids, segment)


def _span_pieces(span: tuple[int, int], offsets, sequence_ids, segment: int) -> tuple[int, ...]:
    start, end = span
    return tuple(
        i
        for i, ((a, b), seg) in enumerate(zip(offsets, sequence_ids))
        if seg == segment and b > a and a < end and b > start
    )


def word_spans(word: str, sentence: str) -> list[tuple[int, int]]:
    """Character spans where ``word`` occurs in ``sentence`` as a whole word.

    The match ignores case and attached punctuation ("Man", "plants."): the
    word must not touch a letter, digit or underscore on either side.
    """
    return [m.span() for m in _whole_word(word).finditer(sentence)]


@lru_cache(maxsize=65536)
def _whole_word(word: str) -> re.Pattern:
    """``word`` as a whole-word, case-blind pattern, compiled once per word: MoNLI alone has more distinct words than
    :mod:`re`'s own cache of 512 patterns holds, so without this every call compiled its pattern anew."""
    return re.compile(r"(?<!\w)" + re.escape(word) + r"(?!\w)", re.IGNORECASE)


def role_segment(role: str) -> int:
    """Which sentence a role's word is in: 0 (premise) for ``*_p`` / ``*.p``, 1 (hypothesis) for ``*_h`` / ``*.h``.

    Raises:
        ConfigError: a role name that says neither.
    """
    if role.endswith(("_p", ".p")):
        return 0
    if role.endswith(("_h", ".h")):
        return 1
    raise ConfigError(f"token role {role!r} does not say its sentence: end it in _p or .p (premise), _h or .h (hypothesis)")


def _where(example) -> str:
    source = getattr(example, "source", None)
    return f"{source}:{example.id.rsplit(':', 1)[1]}" if source and ":" in example.id else f"example {example.id}"


def encode_example(example, tokenizer, wordpiece: str = "first", labels: Sequence[str] | None = None, template: Template | None = None) -> Encoded:
    """Tokenize one example as (premise, hypothesis), or for a decoder joined by ``template``, and align its roles.

    ``example`` is any task's example: ``id``, ``premise``, ``hypothesis``,
    ``label`` (one of ``labels``; without ``labels``, the example's own
    ``label_id``) and ``words`` (role -> word; a role ending in ``_p`` is
    found in the premise, ``_h`` in the hypothesis). [CLS] is ``cls``; with a ``template`` (a decoder,
    :mod:`interp.hooks.templates`) ``cls`` is the last token, the one the classifier reads.

    Raises:
        ConfigError: unknown ``wordpiece`` rule, or a tokenizer without
            character offsets (a "slow" Python tokenizer).
        DataError: a role's word maps to no token (the message names the
            example id and, for MoNLI, its file line), e.g. because
            truncation cut it off.
    """
    return encode_examples([example], tokenizer, wordpiece, labels, template)[0]


def encode_examples(examples: Sequence, tokenizer, wordpiece: str = "first", labels: Sequence[str] | None = None,
                    template: Template | None = None) -> list[Encoded]:  # fmt: skip
    """:func:`encode_example` over a sequence, in one call of the tokenizer, failing on the first example that cannot
    be aligned. Raises as :func:`encode_example` does."""
    check_wordpiece_rule(wordpiece)
    if not getattr(tokenizer, "is_fast", False):
        raise ConfigError(
            f"tokenizer {type(tokenizer).__name__} gives no character offsets; "
            "alignment needs a fast (Rust) tokenizer"
        )
    examples = list(examples)
    if not examples:
        return []
    form = input_format(template)
    pairs = form.tokenize(tokenizer, examples)
    return [_align(e, tokenizer, pairs.input_ids[i], pairs.types(i), pairs.offsets[i], pairs.sequence_ids(i), wordpiece, labels, form)
            for i, e in enumerate(examples)]  # fmt: skip


def _align(example, tokenizer, input_ids, token_type_ids, offsets, sequence_ids, wordpiece: str, labels: Sequence[str] | None,
           form: InputFormat) -> Encoded:  # fmt: skip
    """One tokenized example with its roles aligned (:func:`encode_example`): ``offsets`` relative to each token's
    sentence, ``sequence_ids`` its sentence (0, 1, or ``None``), ``form`` how the model reads it."""
    sentences = (example.premise, example.hypothesis)
    given, indices = getattr(example, "spans", None) or {}, getattr(example, "tokens", None) or {}
    pieces = {}
    for role, word in example.words.items():
        if role in indices:  # a token index into the whole input, negative from its end
            index = indices[role] + (len(input_ids) if indices[role] < 0 else 0)
            if not 0 <= index < len(input_ids):
                raise DataError(f"{_where(example)}: {role} is token {indices[role]}, outside example {example.id}'s {len(input_ids)} tokens")
            pieces[role] = (index,)
            continue
        segment = role_segment(role)
        span = given.get(role)
        pieces[role] = (
            _span_pieces(span, offsets, sequence_ids, segment)
            if span is not None
            else _word_pieces(word, sentences[segment], offsets, sequence_ids, segment)
        )
    for role, word in example.words.items():
        if not pieces[role]:  # only then is the input tokenized again, untruncated, to say whether truncation cut it off
            again = form.untruncated_ids(tokenizer, example)
            truncated = len(input_ids) < len(again)
            raise DataError(
                f"{_where(example)}: cannot align {role} {word!r} to any token of example {example.id}"
                + (f" (the input was truncated to {len(input_ids)} tokens)" if truncated else "")
            )
    pick = 0 if wordpiece == "first" else -1
    form.check_start(tokenizer, input_ids)
    if labels is None:  # an example that knows its own label id (a MoNLI Example)
        label_id = example.label_id
    elif example.label is None:  # one of one's own, unlabelled (interp.tasks.own): read, never scored
        label_id = -1
    elif example.label in labels:
        label_id = list(labels).index(example.label)
    else:
        raise DataError(f"{_where(example)}: label {example.label!r} is not one of {', '.join(labels)}")
    return Encoded(
        example_id=example.id,
        input_ids=tuple(input_ids),
        token_type_ids=tuple(token_type_ids),
        positions={**form.reading_positions(len(input_ids)), **{role: p[pick] for role, p in pieces.items()}},
        pieces=pieces,
        label_id=label_id,
        wordpiece=wordpiece,
    )


#: What a classifier reads of an example: the pair, or the hypothesis alone (:func:`input_view`).
INPUTS: tuple[str, ...] = ("pair", "hypothesis")


class HypothesisOnly:
    """An example seen without its premise: ``premise`` is empty, every other attribute is the example's.

    The hypothesis-only baseline (Poliak et al. 2018; Richardson et al. 2020,
    Table 1, "Additional Baselines"): a classifier that reaches high accuracy
    without the premise learned the dataset's artifacts, which Geiger et al.
    2020, §5.2, name (after Gururangan et al. 2018) to read BERT's
    above-chance score without pretraining.
    Tokenized as a pair with an empty premise (``[CLS] [SEP] hypothesis [SEP]``),
    so the hypothesis keeps its segment and positions.
    """

    premise = ""

    def __init__(self, example):
        self.example = example

    def __getattr__(self, name: str):
        return getattr(self.example, name)

    def __repr__(self) -> str:
        return f"HypothesisOnly({self.example!r})"


def input_view(examples: Sequence, input: str = "pair") -> list:
    """``examples`` as a classifier with ``input`` reads them: as they are (``pair``) or :class:`HypothesisOnly`.

    Raises:
        ConfigError: naming ``input=``: not one of :data:`INPUTS`.
    """
    if input not in INPUTS:
        raise ConfigError(f"`input=` must be {' or '.join(INPUTS)}, got {input!r}")
    return list(examples) if input == "pair" else [HypothesisOnly(e) for e in examples]


def encode_pair(example, tokenizer, labels: Sequence[str] | Mapping[str, int] | None = None, template: Template | None = None) -> Encoded:
    """Tokenize any NLI pair (``id``, ``premise``, ``hypothesis``, and ``label`` in ``labels`` or its own ``label_id``),
    as two segments, or for a decoder joined by ``template``.

    ``labels`` in id order, or as ``{label: the classifier's id}`` (a reading's
    :attr:`~interp.models.labels.LabelReading.label_ids`, for a classifier whose labels are ordered otherwise).

    Only [CLS] is aligned (``positions == {"cls": 0}``; a decoder's last token): what training and
    evaluation need, for datasets without a substituted word (MQNLI) or
    whatever a task's words are.

    Raises:
        DataError: a label not among ``labels``.
        ConfigError: naming ``template=``: joined by it, the pair is longer than the model's context.
    """
    if labels is not None and example.label not in labels:
        raise DataError(f"{_where(example)}: label {example.label!r} is not one of {', '.join(labels)}")
    form = input_format(template)
    pairs = form.tokenize(tokenizer, [example])
    ids = pairs.input_ids[0]
    return Encoded(
        example_id=example.id,
        input_ids=tuple(ids),
        token_type_ids=tuple(pairs.types(0)),
        positions=form.reading_positions(len(ids)),
        pieces={},
        label_id=example.label_id if labels is None else labels[example.label] if isinstance(labels, Mapping) else list(labels).index(example.label),
    )


def collate(encoded: Sequence[Encoded], pad_token_id: int) -> dict[str, torch.Tensor]:
    """Pad a batch to its longest member.

    Returns:
        ``input_ids``, ``token_type_ids``, ``attention_mask``: int64
        ``[batch, seq]``; ``positions``: role -> int64 ``[batch]`` (one
        token each) or ``[batch, k]`` (``k`` pieces each, ``--wordpiece all``)
        for every role all the examples have with the same token count (what
        :func:`interp.hooks.hooked` takes); ``labels``: int64 ``[batch]``.
    """
    if not encoded:
        raise ConfigError("collate needs at least one example")
    length = max(len(e.input_ids) for e in encoded)
    n = len(encoded)
    input_ids = torch.full((n, length), pad_token_id, dtype=torch.long)
    token_type_ids = torch.zeros((n, length), dtype=torch.long)
    attention_mask = torch.zeros((n, length), dtype=torch.long)
    for row, e in enumerate(encoded):
        k = len(e.input_ids)
        input_ids[row, :k] = torch.tensor(e.input_ids)
        token_type_ids[row, :k] = torch.tensor(e.token_type_ids)
        attention_mask[row, :k] = 1
    batch = {
        "input_ids": input_ids,
        "token_type_ids": token_type_ids,
        "attention_mask": attention_mask,
        "labels": torch.tensor([e.label_id for e in encoded], dtype=torch.long),
    }
    shared = [r for r in encoded[0].positions if all(r in e.positions for e in encoded)]
    positions = {}
    for r in shared:
        tokens = [e.tokens(r) for e in encoded]
        if len({len(t) for t in tokens}) == 1:
            covered = torch.tensor(tokens, dtype=torch.long)  # [n, k]
            positions[r] = covered[:, 0] if covered.shape[1] == 1 else covered
    batch["positions"] = positions
    return batch
