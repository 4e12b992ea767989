"""The per-example part that the activation cache and the interventions file share, written and read one way.

Layout (readable with plain h5py)::

    /example_ids, /split         str [n]
    /text/premise, /text/hypothesis  str [n]  the sentences (files made before they were kept lack them)
    /label                       int8 [n]   gold label ids, in attrs["labels"] order of the file
    /words/<role>                str [n]    the task's word at each role (MoNLI: w_p, w_h); "" where absent
    /values/<variable>           int8 [n]   each example's value of every causal variable; attrs["names"]
    /positions                   int32 [n, n_roles]  token index of each role; attrs["roles"]
    /input_ids                   int32 [n, longest]: the token ids each example was run with, -1 after its last
                                 (files made before they were kept lack them): a reader recomputes without the template
    /groups                      str [n]    each example's group where the task declares groups (MoNLI: its word
                                 pair); attrs["unit"] names them ("word pairs"); the intervals resample them

Usage::

    table = ExampleTable.of(examples, encoded, roles, labels)   # what a file keeps of each example, in memory
    write_examples(handle, table, values)
    file.values("negated").codes, file.words("w_h"), file.roles, file.table()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from interp.core.errors import ConfigError, named
from interp.core.hdf5 import ExampleFile, h5py
from interp.causal.values import VariableValues

#: The example's two sentences, kept per example so a report can show them.
TEXTS = ("premise", "hypothesis")


def role_positions(encoded: Sequence, roles: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """The roles every encoded example has (in ``roles`` order) and int32 ``[n, len(those)]`` token indices."""
    kept = [r for r in roles if all(r in e.positions for e in encoded)]
    return kept, np.array([[e.positions[r] for r in kept] for e in encoded], dtype=np.int32).reshape(len(encoded), len(kept))


@dataclass(frozen=True, eq=False)
class ExampleTable:
    """What a file keeps of each example (see the module docstring), in memory: built from the task's examples and
    their encodings (:meth:`of`), or read back from a file (:meth:`PerExampleFile.table`); :func:`write_examples` writes it.

    Attributes:
        ids, splits: str, one per example.
        labels: int8 ``[n]``, gold label ids.
        texts: ``premise`` / ``hypothesis`` -> str per example (empty for a file made before they were kept).
        words: role -> the task's word there per example ("" where absent).
        roles: the columns of ``positions``: the task's roles every example has.
        positions: int32 ``[n, len(roles)]``, each role's token index.
        input_ids: each example's token ids as it was run (``None`` for a file made before they were kept).
        groups: each example's group key where the task declares groups (:class:`~interp.tasks.base.Groups`), else
            ``None``; ``group_unit`` names them (``"word pairs"``).
    """

    ids: tuple[str, ...]
    splits: tuple[str, ...]
    labels: np.ndarray
    texts: dict[str, tuple[str, ...]]
    words: dict[str, tuple[str, ...]]
    roles: tuple[str, ...]
    positions: np.ndarray
    input_ids: tuple[tuple[int, ...], ...] | None = None
    groups: tuple[str, ...] | None = None
    group_unit: str = ""

    @classmethod
    def of(cls, examples: Sequence, encoded: Sequence, roles: Sequence[str], labels: Sequence[str], groups=None) -> "ExampleTable":
        """The table of the task's ``examples`` (``id``, ``split``, ``label``, ``words``, the two sentences) and their
        encodings; ``positions`` keeps the ``roles`` every encoded example has, in that order; ``groups``: the task's
        :class:`~interp.tasks.base.Groups`, or ``None``."""
        kept, positions = role_positions(encoded, roles)
        return cls(
            ids=tuple(e.id for e in examples), splits=tuple(e.split for e in examples),
            labels=np.array([list(labels).index(e.label) for e in examples], dtype=np.int8),
            texts={side: tuple(str(getattr(e, side)) for e in examples) for side in TEXTS},
            words={role: tuple(str(e.words.get(role, "")) for e in examples) for role in sorted({r for e in examples for r in e.words})},
            roles=tuple(kept), positions=positions, input_ids=tuple(tuple(int(i) for i in e.input_ids) for e in encoded),
            groups=None if groups is None else groups.of(examples), group_unit="" if groups is None else groups.unit,
        )  # fmt: skip

    def __len__(self) -> int:
        return len(self.ids)

    def rows(self, indices: Sequence[int]) -> "ExampleTable":
        """The table of the examples at ``indices``, in that order."""
        pick = list(indices)
        return ExampleTable(tuple(self.ids[i] for i in pick), tuple(self.splits[i] for i in pick), self.labels[pick],
                            {k: tuple(v[i] for i in pick) for k, v in self.texts.items()},
                            {k: tuple(v[i] for i in pick) for k, v in self.words.items()}, self.roles, self.positions[pick],
                            None if self.input_ids is None else tuple(self.input_ids[i] for i in pick),
                            None if self.groups is None else tuple(self.groups[i] for i in pick), self.group_unit)  # fmt: skip


def write_examples(handle, table: ExampleTable, values: Sequence[VariableValues]) -> None:
    """Create the per-example datasets of ``table`` and each variable's ``values`` in an open HDF5 ``handle`` (see the
    module docstring)."""
    text = h5py().string_dtype()
    handle.create_dataset("example_ids", data=list(table.ids), dtype=text)
    handle.create_dataset("split", data=list(table.splits), dtype=text)
    for side, column in table.texts.items():
        handle.create_dataset(f"text/{side}", data=list(column), dtype=text)
    handle.create_dataset("label", data=np.asarray(table.labels, dtype=np.int8))
    for role, column in sorted(table.words.items()):
        handle.create_dataset(f"words/{role}", data=list(column), dtype=text)
    for v in values:
        handle.create_dataset(f"values/{v.variable}", data=v.codes.astype(np.int8))
        handle[f"values/{v.variable}"].attrs["names"] = list(v.names)
    handle.create_dataset("positions", data=np.asarray(table.positions, dtype=np.int32))
    handle["positions"].attrs["roles"] = list(table.roles)
    if table.input_ids is not None:
        ids = np.full((len(table.input_ids), max((len(row) for row in table.input_ids), default=0)), -1, dtype=np.int32)
        for i, row in enumerate(table.input_ids):
            ids[i, : len(row)] = row
        handle.create_dataset("input_ids", data=ids)
    if table.groups is not None:
        handle.create_dataset("groups", data=list(table.groups), dtype=text)
        handle["groups"].attrs["unit"] = table.group_unit


class PerExampleFile(ExampleFile):
    """Reading what :func:`write_examples` wrote (``example_ids`` and ``column`` come from :class:`ExampleFile`)."""

    def check_layout(self, shapes: Callable[[int], dict[str, tuple[int, ...]]] | None = None) -> None:
        """Check every per-example dataset, and the datasets ``shapes(n)`` names, before anything reads them.

        ``shapes(n)`` maps a dataset to its shape for ``n`` examples, -1
        standing for any size. A file whose datasets were
        edited (one deleted, shortened or reshaped) is refused here, in one
        line, instead of failing later inside an analysis.

        Raises:
            ConfigError: naming the file and the first dataset that is missing or of another shape.
        """
        if "example_ids" not in self.handle:
            raise ConfigError(f"{self.path}: dataset example_ids is missing; the file was edited or is not interp's")
        n = self.handle["example_ids"].shape[0] if self.handle["example_ids"].ndim == 1 else -2
        rows = {self.handle[name].shape[0] for name in ("split", "label", "positions") if name in self.handle and self.handle[name].ndim}
        if len(rows) == 1 and n not in rows:  # the others agree: example_ids is the one edited
            raise ConfigError(f"{self.path}: dataset example_ids has shape {self.handle['example_ids'].shape}, expected ({rows.pop()},) "
                              "as split, label and positions have; the file was edited (make it again)")
        expected = {"split": (n,), "label": (n,), "positions": (n, -1), **({"input_ids": (n, -1)} if "input_ids" in self.handle else {}),
                    **({"groups": (n,)} if "groups" in self.handle else {})}  # fmt: skip
        for group in ("words", "values", "text"):
            if group in self.handle:
                expected.update({f"{group}/{name}": (n,) for name in self.handle[group]})
        expected.update(shapes(n) if shapes is not None else {})
        for name, shape in expected.items():
            if name not in self.handle:
                raise ConfigError(f"{self.path}: dataset {name} is missing; the file was edited (make it again)")
            found = self.handle[name].shape
            if len(found) != len(shape) or any(want not in (-1, got) for want, got in zip(shape, found)):
                raise ConfigError(
                    f"{self.path}: dataset {name} has shape {found}, expected {tuple('any' if w == -1 else w for w in shape)} "
                    "for its examples; the file was edited (make it again)"
                )

    @property
    def stored_values(self) -> list[str]:
        """Every variable whose per-example values the file keeps."""
        return sorted(self.handle["values"]) if "values" in self.handle else []

    def values(self, variable: str) -> VariableValues:
        """Each example's value of ``variable``.

        Raises:
            ConfigError: the file keeps no values of it (naming those it keeps).
        """
        if variable not in self.stored_values:
            raise ConfigError(
                f"{self.path} keeps no values of variable {variable!r} (it has {', '.join(self.stored_values) or 'none'})"
            )
        data = self.handle[f"values/{variable}"]
        return VariableValues(variable, data[:], tuple(str(x) for x in data.attrs["names"]))

    def texts(self, side: str) -> np.ndarray | None:
        """str ``[n]``: each example's ``premise`` or ``hypothesis``; ``None`` in a file made before they were kept."""
        if side not in TEXTS:
            raise ConfigError(f"{named('side', repr(side))}: give one of {TEXTS}")
        name = f"text/{side}"
        return np.array(self.handle[name].asstr()[:]) if name in self.handle else None

    @property
    def word_roles(self) -> list[str]:
        return sorted(self.handle["words"]) if "words" in self.handle else []

    def words(self, role: str) -> np.ndarray:
        """str ``[n]``: each example's word at ``role`` ("" where it has none, or the task has no word there)."""
        if role not in self.word_roles:
            return np.array([""] * len(self.example_ids))
        return np.array(self.handle[f"words/{role}"].asstr()[:])

    @property
    def roles(self) -> list[str]:
        """The column order of ``positions``."""
        return [str(r) for r in self.handle["positions"].attrs["roles"]]

    def table(self) -> ExampleTable:
        """The per-example datasets as an :class:`ExampleTable`, as :func:`write_examples` was given it."""
        texts = {side: tuple(str(x) for x in found) for side in TEXTS if (found := self.texts(side)) is not None}
        return ExampleTable(
            ids=tuple(self.example_ids), splits=tuple(str(x) for x in self.handle["split"].asstr()[:]),
            labels=self.handle["label"][:].astype(np.int8), texts=texts,
            words={role: tuple(str(x) for x in self.words(role)) for role in self.word_roles}, roles=tuple(self.roles),
            positions=self.handle["positions"][:].astype(np.int32), input_ids=self.input_ids,
            groups=None if (found := self.groups) is None else tuple(str(x) for x in found), group_unit=self.group_unit,
        )  # fmt: skip

    @property
    def groups(self) -> np.ndarray | None:
        """str ``[n]``: each example's group (:attr:`ExampleTable.groups`); ``None`` where the task declares none, or
        in a file made before groups were kept."""
        return np.array(self.handle["groups"].asstr()[:]) if "groups" in self.handle else None

    @property
    def group_unit(self) -> str:
        """What a group is (``"word pairs"``); ``""`` without groups."""
        return str(self.handle["groups"].attrs.get("unit", "groups")) if "groups" in self.handle else ""

    @property
    def input_ids(self) -> tuple[tuple[int, ...], ...] | None:
        """Each example's token ids as it was run; ``None`` in a file made before they were kept."""
        if "input_ids" not in self.handle:
            return None
        return tuple(tuple(int(i) for i in row[row >= 0]) for row in self.handle["input_ids"][:])
