"""Atomic writers: the final path holds a complete file or is left as it was, never a partial one."""

from __future__ import annotations

import json

import pytest

from interp.core.errors import OutputError
from interp.core.outputs import (
    atomic_text,
    partial_path,
    write_csv_atomic,
    write_json_atomic,
    write_jsonl_atomic,
)


def test_writers_produce_complete_files_and_leave_no_partial(tmp_path):
    write_json_atomic(tmp_path / "a.json", {"x": [1, 2], "ε": "≡"})
    assert json.loads((tmp_path / "a.json").read_text(encoding="utf-8")) == {"x": [1, 2], "ε": "≡"}
    write_jsonl_atomic(tmp_path / "b.jsonl", ({"i": i} for i in range(3)))
    assert [json.loads(line) for line in (tmp_path / "b.jsonl").read_text().splitlines()] == [{"i": 0}, {"i": 1}, {"i": 2}]
    write_csv_atomic([{"name": "a", "v": 0.123456}, {"name": "b", "v": 2}], tmp_path / "c.csv")
    assert (tmp_path / "c.csv").read_text().splitlines() == ["name,v", "a,0.1235", "b,2"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.jsonl", "c.csv"]


def test_a_failure_midway_keeps_the_old_file_and_removes_the_partial(tmp_path):
    target = tmp_path / "out.jsonl"
    target.write_text("old\n")

    def records():
        yield {"i": 0}
        raise KeyboardInterrupt  # interrupted while writing

    with pytest.raises(KeyboardInterrupt):
        write_jsonl_atomic(target, records())
    assert target.read_text() == "old\n" and not partial_path(target).exists()

    with pytest.raises(OutputError, match="missing"):
        with atomic_text(tmp_path / "missing" / "x.json") as handle:
            handle.write("never")
    assert not (tmp_path / "missing").exists()
