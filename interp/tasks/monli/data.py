"""The MoNLI loader: checksummed files in, validated typed examples out.

MoNLI (Geiger, Richardson & Potts 2020, §3) pairs an SNLI premise with a
hypothesis in which one word w_p is replaced by a hypernym or hyponym w_h.
PMoNLI has no negation over the substitution site; in NMoNLI `not` scopes over
it and reverses the entailment.

Usage::

    from interp.tasks.monli import load_monli
    examples = load_monli("path/to/monli", splits=("nmonli_test",))
    examples[0].id, examples[0].lexrel, examples[0].label

The directory comes from the argument, else the environment variable
``INTERP_MONLI_DIR``. Each file's SHA-256 is checked against the released
files (``datasets/monli/SHA256SUMS`` in the repository lists the same sums).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping

from interp.core.checksums import dataset_dir, sha256_of
from interp.core.errors import ConfigError, DataError, named
from interp.core.jsonlines import json_record, read_lines
from interp.core.subsets import hashed_split
from interp.hooks.encoding import word_spans

ENV_VAR = "INTERP_MONLI_DIR"

#: The gold labels of MoNLI, in the order of a classifier's label ids.
LABELS: tuple[str, ...] = ("entailment", "neutral")


@dataclass(frozen=True)
class SplitInfo:
    """One released MoNLI file: its name, SHA-256, size and whether it is negated."""

    name: str
    sha256: str
    n_examples: int
    negated: bool

    @property
    def filename(self) -> str:
        return f"{self.name}.jsonl"


#: The released files (github.com/atticusg/MoNLI, commit 5bf388ad).
SPLITS: dict[str, SplitInfo] = {
    s.name: s
    for s in (
        SplitInfo("pmonli", "a5b5d8e1c683c874ed3d68c0fffb74ba37010db4f2bcf0983f0d1a60e2faf72f", 1476, False),
        SplitInfo("nmonli_train", "c6fd6766fd21d6fb89337ddd821bd39f0c7a6004b141f89aca4f8c2bf9d27fe5", 1002, True),
        SplitInfo("nmonli_test", "f7bdb98d2e16b19aaa436b4d2165afab2420a776ed6f19f6ed12f14448be8ff3", 200, True),
    )
}

#: Splits carved from a released file by example id (:func:`interp.core.subsets.hashed_split`, salt
#: ``pmonli-heldout``): ``pmonli_heldout`` is a fixed 20% of PMoNLI (about 295 examples) that a model trained on
#: ``pmonli_train``, the other 80%, never sees: the original task's held-out score in MoNLI inoculation
#: (Geiger et al. 2020, Appendix A.2, where SNLI plays that part). Not among :data:`SPLITS`, so "all of MoNLI"
#: still means the three released files.
DERIVED_SPLITS: dict[str, tuple[str, bool]] = {"pmonli_train": ("pmonli", False), "pmonli_heldout": ("pmonli", True)}
HELD_OUT_SHARE = 0.2

_HOW_TO_GET = (
    "MoNLI is published at github.com/atticusg/MoNLI (commit 5bf388ad); put "
    "pmonli.jsonl, nmonli_train.jsonl and nmonli_test.jsonl in one directory and pass it "
    f"with `data_dir=` or the environment variable {ENV_VAR}"
)


class Lexrel(str, Enum):
    """The lexical relation of w_p to w_h: the variable *lexrel* of INFER (paper §4).

    ``FORWARD`` is w_p ⊏ w_h (w_p the more specific word, MoNLI depth > 0);
    ``REVERSE`` is w_p ⊐ w_h (depth < 0).
    """

    FORWARD = "forward"
    REVERSE = "reverse"

    @property
    def symbol(self) -> str:
        return "⊏" if self is Lexrel.FORWARD else "⊐"


@dataclass(frozen=True)
class Example:
    """One MoNLI example.

    ``id`` is ``<file stem>:<line number>`` (1-based), stable across runs; the
    sentence text is not a key (twelve pairs occur twice). ``depth`` is the
    signed WordNet distance from the file; ``lexrel`` its sign. An example of
    one's own (:func:`from_own`) has ``split`` ``own``, ``depth`` ±1 and the
    ``spans`` or ``tokens`` its roles were given by.
    """

    id: str
    premise: str
    hypothesis: str
    label: str
    w_p: str
    w_h: str
    depth: int
    lexrel: Lexrel
    negated: bool
    split: str
    source: str
    spans: Mapping[str, tuple[int, int]] | None = field(default=None, compare=False)
    tokens: Mapping[str, int] | None = field(default=None, compare=False)

    @property
    def label_id(self) -> int:
        return LABELS.index(self.label)

    @property
    def words(self) -> dict[str, str]:
        """The word at each token role (a :class:`~interp.tasks.base.Task` example's ``words``)."""
        return {"w_p": self.w_p, "w_h": self.w_h}


_FIELDS: dict[str, type] = {
    "sentence1": str,
    "sentence2": str,
    "gold_label": str,
    "sentence1_lex": str,
    "sentence2_lex": str,
    "depth": int,
}


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The MoNLI directory: ``data_dir`` if given, else ``$INTERP_MONLI_DIR``.

    Raises:
        DataError: neither is set, or the directory does not exist.
    """
    return dataset_dir(data_dir, ENV_VAR, "MoNLI", _HOW_TO_GET)


def _check_split_names(splits: Iterable[str]) -> tuple[str, ...]:
    splits = tuple(splits)
    if not splits:
        raise DataError("no MoNLI split named; choose from " + ", ".join(SPLITS))
    for name in splits:
        if name not in SPLITS and name not in DERIVED_SPLITS:
            raise DataError(f"unknown MoNLI split {name!r}; choose from " + ", ".join([*SPLITS, *DERIVED_SPLITS]))
    return splits


def _parse_line(text: str, path: Path, lineno: int, info: SplitInfo) -> Example:
    where = f"{path}:{lineno}"
    record = json_record(text, where)
    for field, kind in _FIELDS.items():
        if field not in record:
            raise DataError(f"{where}: missing field {field!r}")
        value = record[field]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise DataError(f"{where}: field {field!r} must be {kind.__name__}, got {value!r}")
    label, depth = record["gold_label"], record["depth"]
    if label not in LABELS:
        raise DataError(f"{where}: unknown gold_label {label!r}; MoNLI labels are {', '.join(LABELS)}")
    if depth == 0:
        raise DataError(f"{where}: depth is 0, so the lexical relation is undefined (its sign gives lexrel)")
    for field, sentence_field in (("sentence1_lex", "sentence1"), ("sentence2_lex", "sentence2")):
        word, sentence = record[field], record[sentence_field]
        count = len(word_spans(word, sentence))
        if count != 1:
            what = "does not occur" if count == 0 else f"occurs {count} times"
            raise DataError(f"{where}: {field} {word!r} {what} as a whole word in {sentence_field} {sentence!r}")
    lexrel = Lexrel.FORWARD if depth > 0 else Lexrel.REVERSE
    expected = "entailment" if (lexrel is Lexrel.FORWARD) != info.negated else "neutral"
    if label != expected:
        raise DataError(
            f"{where}: gold_label {label!r} contradicts depth {depth} in a "
            f"{'negated' if info.negated else 'positive'} file (expected {expected!r})"
        )
    return Example(
        id=f"{info.name}:{lineno}",
        premise=record["sentence1"],
        hypothesis=record["sentence2"],
        label=label,
        w_p=record["sentence1_lex"],
        w_h=record["sentence2_lex"],
        depth=depth,
        lexrel=lexrel,
        negated=info.negated,
        split=info.name,
        source=str(path),
    )


#: The lines the released files repeat word for word (first line, repeat): kept, as the paper's data has them.
#: Any other repeated line (a copy edited by hand, read with checksums skipped) is refused.
RELEASED_REPEATS: dict[str, frozenset[tuple[int, int]]] = {"nmonli_train": frozenset({(633, 881), (634, 882), (637, 893), (638, 894)})}


def read_split(path: str | os.PathLike, split: str) -> list[Example]:
    """Parse and validate one MoNLI file, without checking its checksum. The same text at the same path read again in
    one process gives the examples parsed the first time (they are frozen); other text is parsed anew.

    Raises:
        DataError: the file is missing or empty, or a line is malformed JSON,
            lacks a field, has a wrong type, an unknown label, a zero depth, a
            substituted word absent from (or repeated in) its sentence, or a
            label that contradicts depth and negation, or a line that repeats an earlier one word for
            word (but for :data:`RELEASED_REPEATS`). The message names ``file:line``.
    """
    info = SPLITS[_check_split_names([split])[0]]
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"{path}: file not found. {_HOW_TO_GET}") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None
    return list(_parsed(text, path, info))


@lru_cache(maxsize=32)
def _parsed(text: str, path: Path, info: SplitInfo) -> tuple[Example, ...]:
    """The examples of a file's ``text``, checked and parsed once per process for the same text, path and split (a
    notebook or a test run loads the same files many times, and the examples are frozen); a file that fails raises
    each time (:func:`read_split`'s errors)."""
    lines = text.splitlines()
    if not lines:
        raise DataError(f"{path}: empty file, no examples")
    first: dict[str, int] = {}
    for i, line in enumerate(lines, start=1):
        earlier = first.setdefault(line, i)
        if earlier != i and (earlier, i) not in RELEASED_REPEATS.get(info.name, ()):
            raise DataError(f"{path}:{i}: repeats line {earlier} word for word; an example counted twice weighs twice in every score")
    return tuple(_parse_line(line, path, i, info) for i, line in enumerate(lines, start=1))


#: The splits of a generated MoNLI-format file (``interp monli-generate``): its positive and its negated lines.
GENERATED_SPLITS: tuple[str, ...] = ("pmonli", "nmonli")


def is_monli_file(path: str | os.PathLike) -> bool:
    """Whether ``path``'s first line is a MoNLI-format record (``sentence1`` ...), not an MQNLI one."""
    try:
        with open(path, encoding="utf-8") as handle:
            first = handle.readline()
    except (OSError, UnicodeDecodeError):
        return False
    return '"sentence1"' in first and '"premise_words"' not in first


def read_generated(path: str | os.PathLike, splits: Iterable[str] = GENERATED_SPLITS) -> list[Example]:
    """The lines of a generated MoNLI-format file (each with a boolean ``negated``), as splits ``pmonli`` / ``nmonli``.

    No checksum is checked (the file is the user's). Ids are ``<file stem>:<line>``.

    Raises:
        DataError: an unknown split, a missing or empty file, or a malformed line (as :func:`read_split`,
            and a missing or non-boolean ``negated``), naming ``file:line``.
    """
    splits = tuple(splits)
    unknown = [s for s in splits if s not in GENERATED_SPLITS]
    if unknown or not splits:
        raise DataError(f"unknown split {(unknown or [''])[0]!r} of a generated MoNLI file; choose from {', '.join(GENERATED_SPLITS)}")
    path = Path(path)
    lines = read_lines(path, "interp monli-generate")
    out: list[Example] = []
    for lineno, line in enumerate(lines, start=1):
        negated = json_record(line, f"{path}:{lineno}").get("negated")
        if not isinstance(negated, bool):
            raise DataError(f"{path}:{lineno}: field 'negated' must be true or false, got {negated!r}")
        name = GENERATED_SPLITS[negated]
        example = _parse_line(line, path, lineno, SplitInfo(name, "", 0, negated))
        out.append(replace(example, id=f"{path.stem}:{lineno}"))
    return [e for s in splits for e in out if e.split == s]


def load_monli(
    data_dir: str | os.PathLike | None = None,
    splits: Iterable[str] = tuple(SPLITS),
    *,
    verify_checksums: bool = True,
) -> list[Example]:
    """Load MoNLI examples from the released files, in file and line order.

    Args:
        data_dir: directory holding the ``<split>.jsonl`` files; ``None``
            reads ``$INTERP_MONLI_DIR``.
        splits: any of ``pmonli``, ``nmonli_train``, ``nmonli_test``, or of
            :data:`DERIVED_SPLITS` (``pmonli_train``, ``pmonli_heldout``).
        verify_checksums: compare each file's SHA-256 with the released one
            before parsing (turn off only for a deliberately edited copy).

    Returns:
        The examples of the named splits, concatenated in the order given.

    Raises:
        DataError: directory or file missing, checksum mismatch, unknown
            split, or any malformed line (see :func:`read_split`).
    """
    splits = _check_split_names(splits)
    directory = resolve_data_dir(data_dir)
    examples: list[Example] = []
    for name in splits:
        if name in DERIVED_SPLITS:
            parent, held_out = DERIVED_SPLITS[name]
            sides = hashed_split(load_monli(directory, (parent,), verify_checksums=verify_checksums), lambda e: e.id, HELD_OUT_SHARE, "pmonli-heldout")
            examples.extend(replace(e, split=name) for e in sides[0 if held_out else 1])
            continue
        info = SPLITS[name]
        path = directory / info.filename
        if not path.is_file():
            raise DataError(f"{path}: file not found. {_HOW_TO_GET}")
        if verify_checksums:
            actual = sha256_of(path)
            if actual != info.sha256:
                raise DataError(
                    f"{path}: SHA-256 {actual} does not match the released file's {info.sha256}; "
                    "this is not the published MoNLI (pass `verify_checksums=False` to load an edited copy)"
                )
        examples.extend(read_split(path, name))
    return examples


#: What an example of one's own gives for INFER to apply to it (:attr:`interp.tasks.base.Task.own_values`).
OWN_VALUES: tuple[str, ...] = ("lexrel", "negated")

_LEXRELS = {"forward": Lexrel.FORWARD, "⊏": Lexrel.FORWARD, "reverse": Lexrel.REVERSE, "⊐": Lexrel.REVERSE}


def from_own(own: Any) -> Example:
    """An example of one's own (:class:`interp.tasks.own.Example`, with ``w_p`` and ``w_h`` and :data:`OWN_VALUES`
    given) as a MoNLI :class:`Example`: its label INFER's (entailment exactly where ⊏ and no negation, or ⊐ under
    negation: Geiger, Richardson & Potts 2020, Figure 1), ``depth`` +1 for ⊏ and -1 for ⊐.

    Raises:
        ConfigError: naming ``examples=`` and the example: a role or value missing, ``lexrel`` not one of forward,
            reverse, ⊏, ⊐, ``negated`` not a bool, or a given label that is not INFER's.
    """
    where = f"{named('examples')}: example {own.id!r}"
    missing = [r for r in ("w_p", "w_h") if r not in own.words]
    if missing:
        raise ConfigError(f"{where} gives MoNLI's values but no word for {missing[0]} (roles={{'w_p': ..., 'w_h': ...}})")
    lexrel, negated = _LEXRELS.get(str(own.values["lexrel"]).lower()), own.values["negated"]
    if lexrel is None:
        raise ConfigError(f"{where}: lexrel {own.values['lexrel']!r} is not one of {', '.join(_LEXRELS)}")
    if not isinstance(negated, bool):
        raise ConfigError(f"{where}: negated must be true or false, got {negated!r}")
    label = "entailment" if (lexrel is Lexrel.FORWARD) != negated else "neutral"
    if own.label is not None and own.label != label:
        raise ConfigError(f"{where} is labelled {own.label!r}, but INFER gives {label!r} for lexrel {lexrel.symbol}"
                          f"{' under negation' if negated else ' without negation'}")  # fmt: skip
    return Example(id=own.id, premise=own.premise, hypothesis=own.hypothesis, label=label, w_p=own.words["w_p"], w_h=own.words["w_h"],
                   depth=1 if lexrel is Lexrel.FORWARD else -1, lexrel=lexrel, negated=negated, split=own.split, source="your own examples",
                   spans=dict(own.spans) or None, tokens=dict(own.tokens) or None)  # fmt: skip
