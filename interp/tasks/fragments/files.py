"""A generated fragment file as a whole: check every label in finite models, or set it beside the released fragment.

Usage::

    result = check_fragment_file("runs/mono.jsonl")              # counts by setting/split and label, refuted ids
    text = compare_with_released("runs/mono.jsonl", splits=("train", "test"))

Both read either kind of file ``interp fragments generate`` writes: the
monotonicity grammar's (Richardson et al. 2020, Figure 8) or a logic
fragment's (§3's templates); which one is read off its first line.
"""

from __future__ import annotations

import os
from typing import Sequence

from interp.core.errors import ConfigError, named
from interp.core.jsonlines import read_records

LABELS = ("entailment", "neutral", "contradiction")


def check_fragment_file(data_file: str | os.PathLike, per_size: int = 1000, seed: int = 0) -> dict:
    """Every label of a generated file checked in finite models: ``{"counts": {key: {confirmed, unconfirmed, refuted}},
    "unconfirmed": [ids], "refuted": [ids]}`` (a logic fragment's models are all searched; monotonicity samples
    ``per_size`` models per universe size 1 to 10, seeded, beside the exhaustive ones).

    Raises:
        ConfigError: naming ``per_size=`` below 1.
        DataError: no such file, or a line that is not a generated pair (naming ``file:line``).
    """
    from interp.tasks.fragments.logic.check import check_logic_records
    from interp.tasks.fragments.logic.task import is_logic_file
    from interp.tasks.fragments.monotonicity.semantics import check_records

    if per_size < 1:
        raise ConfigError(f"{named('per_size', per_size)} must be at least 1")
    logic = is_logic_file(data_file)
    required = ("premise_lf", "hypothesis_lf", "label") if logic else ("premise_tree", "hypothesis_tree", "label")
    records = read_records(data_file, "interp fragments generate", required, LABELS)
    return check_logic_records(records, str(data_file)) if logic else check_records(records, per_size=per_size, seed=seed)


def compare_with_released(data_file: str | os.PathLike, fragment: str | None = None, splits: Sequence[str] = ("train", "dev", "test"), *,
                          data_dir: str | None = None, verify_checksums: bool = True) -> str:  # fmt: skip
    """A generated file beside the released ``fragment`` (default: the file's own: its logic fragment, or
    ``monotonicity_SETTING``), as text: label balance, determiners, sentence length, vocabulary overlap
    (:func:`interp.tasks.fragments.monotonicity.compare.compare`).

    Raises:
        DataError: the file, or the released fragment, is missing or malformed.
    """
    from interp.tasks.fragments.data import load_fragment
    from interp.tasks.fragments.generated import read_generated
    from interp.tasks.fragments.logic.task import file_fragment, is_logic_file, read_logic
    from interp.tasks.fragments.monotonicity.compare import compare, format_comparison

    if is_logic_file(data_file):
        generated = read_logic(data_file, splits)
        fragment = fragment or file_fragment(data_file)
    else:
        generated = read_generated(data_file, splits)
        fragment = fragment or f"monotonicity_{generated[0].setting}"
    released = load_fragment(fragment, splits, data_dir=data_dir, verify_checksums=verify_checksums)
    rows = lambda pairs: [{"premise": p.premise, "hypothesis": p.hypothesis, "label": p.label} for p in pairs]  # noqa: E731
    return format_comparison(compare(rows(generated), rows(released)), ("generated", fragment))
