"""The semantic fragments loader (Richardson, Hu, Moss & Sabharwal 2020): checksummed SNLI-style JSON lines in, validated pairs out.

Usage::

    from interp.tasks.fragments.data import load_fragment
    examples = load_fragment("negation", ("test",), data_dir="path/to/semantic_fragments")
    examples[0].id, examples[0].label          # 'negation/test:1', 'contradiction'

The directory comes from the argument, else ``$INTERP_FRAGMENTS_DIR``; it
holds ``NAME/{train,dev,test}.json`` for each fragment. Each file's SHA-256
is checked against the released files (``datasets/semantic_fragments/SHA256SUMS``
in the repository lists the same sums).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from interp.core.checksums import dataset_dir, sha256_of
from interp.core.errors import DataError
from interp.core.jsonlines import json_record

ENV_VAR = "INTERP_FRAGMENTS_DIR"
LABELS: tuple[str, ...] = ("entailment", "contradiction", "neutral")
SPLITS: tuple[str, ...] = ("train", "dev", "test")
LOGIC = ("boolean", "comparative", "conditional", "counting", "negation", "quantifier")
MONOTONICITY = ("monotonicity_simple", "monotonicity_hard")
FRAGMENTS: tuple[str, ...] = LOGIC + MONOTONICITY

#: SHA-256 of the released files (github.com/yakazimir/semantic_fragments, commit ee6b8ddf), by ``NAME/SPLIT``.
SHA256 = {
    "boolean/dev": "75f3db20406ec3965e2b0f1d5dbfad91f90178125d1a3461e1c565f0879bd3e5",
    "boolean/test": "f98f0f0ff3f2aa055a97b55c6cad96a9d2d340536c105b2608058a9bac3ad210",
    "boolean/train": "fa7e1955b5a93c5872e2d4764d7e67eb98920e74f30bb9cd52b2d04cb84e1e79",
    "comparative/dev": "a2c89a989e4980f54e7941f5e6f9c7ed1351a2039dec737cfc8276c0a6632593",
    "comparative/test": "90eb8fa5b07b590c19e2dddd27214e187e6267edd0848c8f4563b867fee58d71",
    "comparative/train": "6aae0e2eb9547154c7ca82242f0724b9fd78c9459a107dbe938d8d6c719dadd2",
    "conditional/dev": "78a84492ea16d96d0c890d7a941ea5749639fb93924882b9b0864380a144c732",
    "conditional/test": "d1e7f9b35c940532f4c8cef9284ffaf5c269fc2e563528f63f9e4a73436378b5",
    "conditional/train": "a16dbd9ee026a76603fc0fd0809f9f4639a3587b5bd59f99274d9835b5116225",
    "counting/dev": "0571b0aa8e87c05af0bae63a0f12ed5cc79c350f61b4fa186c452391362d28fe",
    "counting/test": "88845ed7aaf7c7ef549152b0c8dcb082c2e85e46de77f665d904fa4f1c5908d8",
    "counting/train": "24b702cfd3a1627c0caaca70ae160d00f3f64d82765a9246dec5398dc6978186",
    "monotonicity_hard/dev": "15f68f1ccf169486639d69f4a97870dc52076c912c9c7ceee8583564b8c02474",
    "monotonicity_hard/test": "d057c253854809d4cb6327af661e6c9d647f9c6986c612c2adfa414db89c500a",
    "monotonicity_hard/train": "3edce502dfb375cded7fb5a953c1ca3996b1728695bb5d8d430985e98496dc5c",
    "monotonicity_simple/dev": "bc3dee9317f083ce6ea78ef1ca7f2b875b1823c1f759f6c9edfbdc5d4bbd971a",
    "monotonicity_simple/test": "d46ad71cccde0d87193d0929d5877891bf0486cb7f4fb4d95c42ba63ffef09f7",
    "monotonicity_simple/train": "33148202b36c8b96d2e33b040b36950643c2a332cb790f3f11dad34c76b82f03",
    "negation/dev": "ef8a0616cb9cb98dbfdebc778f1296138f00dfb6cac9831a088ddb5282f5e35d",
    "negation/test": "3387a5bb90fed7ea6418307999cf06ded2ba2bffa4c25f09473223bbd4eb8417",
    "negation/train": "7ef097098431748ee6db4d0d2d5a67ca571d0a6f1a7a370dd7086f151174024c",
    "quantifier/dev": "8f29bde605fc719f8b2dc7fdfd5877c2b57c71757d12874e172661075ddea32e",
    "quantifier/test": "a4fcc9eba69366359555c10e9de9af9d74c703e14f5a0edd448334f31389a895",
    "quantifier/train": "18ebfba5c540d764a53199b1a4a0742fbac33f82f07e41e4768cd942fd3fb0d5",
}

_HOW_TO_GET = (
    "the semantic fragments are published at github.com/yakazimir/semantic_fragments (commit ee6b8ddf, folder data/); "
    "see datasets/semantic_fragments/README.md for the layout, and pass the directory with `data_dir=` "
    f"or the environment variable {ENV_VAR}"
)


@dataclass(frozen=True)
class FragmentPair:
    """One fragment pair: ``id`` is ``NAME/SPLIT:LINE`` (1-based); ``split`` the file's split; no token roles beyond [CLS]."""

    id: str
    premise: str
    hypothesis: str
    label: str
    split: str
    fragment: str
    words: dict = field(default_factory=dict)


def fragments_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The fragments' directory: ``data_dir`` if given, else ``$INTERP_FRAGMENTS_DIR``.

    Raises:
        DataError: neither is set, or it is not a directory.
    """
    return dataset_dir(data_dir, ENV_VAR, "semantic fragments", _HOW_TO_GET)


def _parse(text: str, where: str, fragment: str, split: str, lineno: int) -> FragmentPair:
    record = json_record(text, where)
    for name in ("sentence1", "sentence2", "gold_label"):
        if not isinstance(record.get(name), str) or not record[name].strip():
            raise DataError(f"{where}: field {name!r} must be a non-empty string, got {record.get(name)!r}")
    if record["gold_label"] not in LABELS:
        raise DataError(f"{where}: unknown gold_label {record['gold_label']!r}; the fragments' labels are {', '.join(LABELS)}")
    return FragmentPair(f"{fragment}/{split}:{lineno}", record["sentence1"], record["sentence2"], record["gold_label"], split, fragment)


def load_fragment(
    fragment: str, splits: Iterable[str] = SPLITS, *, data_dir: str | os.PathLike | None = None, verify_checksums: bool = True
) -> list[FragmentPair]:
    """The pairs of one fragment's splits, in split and line order.

    Raises:
        DataError: an unknown fragment or split, a missing directory or file,
            a checksum mismatch, or a malformed line (naming ``file:line``).
    """
    if fragment not in FRAGMENTS:
        raise DataError(f"unknown semantic fragment {fragment!r}; choose from {', '.join(FRAGMENTS)}")
    splits = tuple(splits)
    unknown = [s for s in splits if s not in SPLITS]
    if unknown or not splits:
        raise DataError(f"unknown fragment split {(unknown or [''])[0]!r}; choose from {', '.join(SPLITS)}")
    root = fragments_dir(data_dir)
    pairs: list[FragmentPair] = []
    for split in splits:
        path = root / fragment / f"{split}.json"
        if not path.is_file():
            raise DataError(f"{path}: file not found; {_HOW_TO_GET}")
        if verify_checksums and sha256_of(path) != SHA256[f"{fragment}/{split}"]:
            raise DataError(
                f"{path}: SHA-256 does not match the released file's {SHA256[f'{fragment}/{split}']}; "
                "this is not the published fragment (pass `verify_checksums=False` to load an edited copy)"
            )
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise DataError(f"{path}: cannot read ({exc})") from None
        for lineno, text in enumerate(lines, start=1):
            pairs.append(_parse(text, f"{path}:{lineno}", fragment, split, lineno))
        if not lines:
            raise DataError(f"{path}: empty file, no examples")
    return pairs
