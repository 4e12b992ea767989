"""Check a generated logic fragment file: every record's label against what its logical forms give in finite models.

The null that could fail: a record whose label was flipped is *refuted*
(``tests/test_logic_fragments.py`` flips labels and checks that each one
is caught).

Usage::

    >>> from interp.tasks.fragments.logic.generate import LogicConfig, generate_records
    >>> records = generate_records(LogicConfig(fragment="conditional", n_train=3, n_dev=0, n_test=0))
    >>> check_logic_records(records)["counts"]
    {'conditional/train': {'confirmed': 3, 'unconfirmed': 0, 'refuted': 0}}
    >>> records[0]["label"] = "neutral" if records[0]["label"] != "neutral" else "entailment"
    >>> check_logic_records(records)["refuted"]
    ['conditional/train:1']
"""

from __future__ import annotations

from collections import defaultdict

from interp.core.errors import DataError
from interp.tasks.fragments.logic.generate import check_record


def check_logic_records(records: list[dict], source: str = "records") -> dict:
    """Counts of confirmed and refuted labels by ``fragment/split``, and the refuted records' ids.

    Every model of the pair's universe is searched, so a label is confirmed or
    refuted, never left unconfirmed (the key is kept for the monotonicity check's layout).

    Raises:
        DataError: a record without usable logical forms, naming ``source:line``.
    """
    counts: dict[str, dict[str, int]] = defaultdict(lambda: {"confirmed": 0, "unconfirmed": 0, "refuted": 0})
    refuted = []
    for line, record in enumerate(records, start=1):
        try:
            checked = check_record(record)
        except DataError as exc:
            raise DataError(f"{source}:{line}: {exc}") from None
        key = f"{record.get('fragment')}/{record.get('split')}"
        if checked == record.get("label"):
            counts[key]["confirmed"] += 1
        else:
            counts[key]["refuted"] += 1
            refuted.append(str(record.get("id")))
    return {"counts": dict(counts), "unconfirmed": [], "refuted": refuted}
