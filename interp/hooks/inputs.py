"""How a classifier reads a pair, by model kind: an encoder's two segments read at [CLS], a decoder's template read at
its last token. One object per kind answers every question that differs between them, so shared code asks it rather
than testing for a template.

Usage::

    form = input_format(model.template)        # Segments() for an encoder, the Template itself for a decoder
    pairs = form.tokenize(tokenizer, examples) # TokenizedPairs: ids, token types, offsets in each sentence, sentence ids
    form.reading_positions(len(ids))           # {"cls": 0} (encoder) or {"cls": n - 1, "last": n - 1} (decoder)
    form.roles(task.roles)                     # a task's roles as the model names them: cls is "last" on a decoder
    form.decoder, form.read_role               # False, "cls" / True, "last"
    parse_model_locations("all", 6, task.roles, decoder=True)  # the locations grammar, the read token named "last"

An encoder (BERT's NLI fine-tuning; Geiger, Richardson & Potts 2020, §4) reads ``[CLS] premise [SEP] hypothesis
[SEP]``, premise in segment 0 and hypothesis in segment 1, and classifies from [CLS]; the pair is truncated to the
model's length as its tokenizer does. A decoder reads one text joined by a :class:`~interp.hooks.templates.Template`
and classifies from its last token, so nothing may be cut (:meth:`~interp.hooks.templates.Template.check_context`).
"""

from __future__ import annotations

from typing import ClassVar, Protocol, Sequence

from interp.core.errors import ConfigError
from interp.hooks.locations import Location, parse_locations
from interp.hooks.templates import Template, TokenizedPairs, reading_aliases, reading_roles


class InputFormat(Protocol):
    """What differs between an encoder's input and a decoder's (:class:`Segments`, :class:`~interp.hooks.templates.Template`)."""

    #: Whether the model is a decoder (reads its last token).
    decoder: bool
    #: The role of the token the classifier reads: ``cls`` or ``last``.
    read_role: str

    def reading_positions(self, length: int) -> dict[str, int]:
        """The read token's index in an input of ``length`` tokens, under each name it goes by."""
        ...

    def tokenize(self, tokenizer, examples: Sequence) -> TokenizedPairs:
        """The examples tokenized as the model reads them, in one call of the tokenizer."""
        ...

    def untruncated_ids(self, tokenizer, example) -> list[int]:
        """One example's token ids, never truncated (to say whether truncation cut a role's word off)."""
        ...

    def check_start(self, tokenizer, input_ids: Sequence[int]) -> None:
        """Raise :class:`~interp.core.errors.ConfigError` where the input does not start as the model needs."""
        ...

    @property
    def aliases(self) -> dict[str, str]:
        """The task's roles the model names otherwise (:func:`~interp.hooks.templates.reading_aliases`)."""
        ...

    def roles(self, roles: Sequence[str]) -> tuple[str, ...]:
        """A task's ``roles`` as the model names them (:func:`~interp.hooks.templates.reading_roles`)."""
        ...


class Segments:
    """An encoder's input: the premise and the hypothesis as the tokenizer's two segments, [CLS] first and read.

    >>> Segments().reading_positions(9), Segments().roles(("cls", "w_h")), Segments().decoder
    ({'cls': 0}, ('cls', 'w_h'), False)
    """

    decoder: ClassVar[bool] = False
    read_role: ClassVar[str] = "cls"

    def __repr__(self) -> str:
        return "Segments()"

    def __eq__(self, other) -> bool:
        return isinstance(other, Segments)

    def __hash__(self) -> int:
        return hash(Segments)

    def reading_positions(self, length: int) -> dict[str, int]:
        """[CLS], token 0."""
        return {"cls": 0}

    def tokenize(self, tokenizer, examples: Sequence) -> TokenizedPairs:
        """``tokenizer(premises, hypotheses)`` with token types, and each token's offsets and sentence where the tokenizer
        gives them (a fast one; a slow one serves training and scoring, which align no word: empty lists), truncated to
        the model's length as the tokenizer does (an alignment that loses a role's word says so: :meth:`untruncated_ids`).
        An example with no hypothesis (a lone string) is one segment, ``tokenizer(premise)``, as the tokenizer alone
        encodes it (``[CLS] s [SEP]``, every token type 0), not a pair with an empty second segment."""
        fast = bool(getattr(tokenizer, "is_fast", False))
        found: list = [None] * len(examples)
        lone = [i for i, e in enumerate(examples) if not e.hypothesis]
        paired = [i for i, e in enumerate(examples) if e.hypothesis]
        for rows, texts in ((paired, ([examples[i].premise for i in paired], [examples[i].hypothesis for i in paired])),
                            (lone, ([examples[i].premise for i in lone],))):  # fmt: skip
            if not rows:
                continue
            batch = tokenizer(*texts, return_offsets_mapping=fast, return_token_type_ids=True, truncation=True)
            for k, i in enumerate(rows):
                found[i] = (list(batch["input_ids"][k]), list(batch["offset_mapping"][k]) if fast else [],
                            batch.sequence_ids(k) if fast else [], list(batch["token_type_ids"][k]))  # fmt: skip
        ids, offsets, sequences, types = (list(column) for column in zip(*found)) if found else ([], [], [], [])
        return TokenizedPairs(ids, offsets, sequences, types)

    def untruncated_ids(self, tokenizer, example) -> list[int]:
        texts = (example.premise, example.hypothesis) if example.hypothesis else (example.premise,)
        return list(tokenizer(*texts)["input_ids"])

    def check_start(self, tokenizer, input_ids: Sequence[int]) -> None:
        """Raises ConfigError: the tokenizer does not put [CLS] first (the encoder's head reads token 0)."""
        if not input_ids or input_ids[0] != tokenizer.cls_token_id:
            raise ConfigError(f"tokenizer {type(tokenizer).__name__} does not start the input with a [CLS] token")

    @property
    def aliases(self) -> dict[str, str]:
        return reading_aliases(False)

    def roles(self, roles: Sequence[str]) -> tuple[str, ...]:
        return reading_roles(roles, False)


#: The encoder's input format (it holds nothing: one serves every encoder).
SEGMENTS = Segments()


def input_format(template: Template | None) -> InputFormat:
    """How a model with ``template`` reads a pair: the :class:`~interp.hooks.templates.Template` itself (a decoder), or
    :data:`SEGMENTS` where it has none (an encoder, as :attr:`~interp.api.loading.Classifier.template` says).

    >>> input_format(None).read_role, input_format(Template()).read_role
    ('cls', 'last')
    """
    return SEGMENTS if template is None else template


def parse_model_locations(texts: str | Sequence[str], n_layers: int, roles: Sequence[str], default_roles: Sequence = (),
                          n_heads: int | None = None, *, decoder: bool, inputs: bool = False) -> list[Location]:  # fmt: skip
    """:func:`~interp.hooks.locations.parse_locations` with a task's ``roles`` and ``default_roles`` as a model of this
    kind names them: on a ``decoder`` the read token is ``last`` (``all`` and the aligned roles name it so) and ``cls``
    is renamed to it (:func:`~interp.hooks.templates.reading_roles`, :func:`~interp.hooks.templates.reading_aliases`).

    >>> [str(loc) for loc in parse_model_locations("blocks.1.hook_resid_post@cls", 2, ("cls", "w_h"), decoder=True)]
    ['blocks.1.hook_resid_post@last']

    Raises:
        ConfigError: as :func:`~interp.hooks.locations.parse_locations`.
    """
    named_roles = [reading_roles((r,) if isinstance(r, str) else r, decoder) for r in default_roles]
    return parse_locations(texts, n_layers, reading_roles(roles, decoder), named_roles, n_heads, reading_aliases(decoder), inputs=inputs)
