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


def test_unit_files_that_do_not_read_back_as_their_shape_are_removed_before_any_unit_runs(tmp_path):
    """A truncated file, another shape, another dtype, random bytes: each removed (and so computed again); a sound one kept."""
    import numpy as np

    from interp.jobs.shards import Shards

    shards = Shards(tmp_path / "x.h5.parts", {"r": 1}, shape=lambda u: (16 if u < 1 else 8, 24, 2))
    shards.prepare()
    shards.write(0, 0, np.zeros((16, 24, 2), np.float32))
    shards.write(0, 1, np.zeros((8, 24, 2), np.float32))
    shards.write(1, 0, np.zeros((16, 24, 3), np.float32))  # another shape
    shards.write(1, 1, np.zeros((8, 24, 2), np.float64).astype(np.float32))
    np.save(shards.path(1, 1), np.zeros((8, 24, 2), np.float64))  # another dtype
    shards.path(2, 0).write_bytes(shards.path(0, 0).read_bytes()[:150])  # truncated
    shards.path(2, 1).write_bytes(b"\x93NUMPY garbage")
    assert Shards(shards.directory, {"r": 1}).prepare() == []  # the null: without shapes nothing is judged
    removed = Shards(shards.directory, {"r": 1}, shape=shards.shape).prepare()
    assert sorted(p.name for p in removed) == ["loc001-unit000000.npy", "loc001-unit000001.npy", "loc002-unit000000.npy", "loc002-unit000001.npy"]
    assert shards.done(0, 0) and shards.done(0, 1) and not shards.done(1, 0) and not shards.done(2, 1)
