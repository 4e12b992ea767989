"""The per-example part that the activation cache and the interventions file share, written and read one way.

Layout (readable with plain h5py)::

    /example_ids, /split         str [n]
    /text/premise, /text/hypothesis  str [n]  the sentences (files made before they were kept lack them)
    /label                       int8 [n]   gold label ids, in attrs["labels"] order of the file
    /words/<role>                str [n]    the task's word at each role (MoNLI: w_p, w_h); "" where absent
    /values/<variable>           int8 [n]   each example's value of every causal variable; attrs["names"]
    /positions                   int32 [n, n_roles]  token index of each role; attrs["roles"]

Usage::

    write_examples(handle, examples, encoded, roles, labels, values)
    file.values("negated").codes, file.words("w_h"), file.roles
"""

from __future__ import annotations

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


def write_examples(
    handle, examples: Sequence, encoded: Sequence, roles: Sequence[str], labels: Sequence[str], values: Sequence[VariableValues]
) -> None:
    """Create the per-example datasets in an open HDF5 ``handle`` (see the module docstring).

    ``positions`` keeps the task's ``roles`` that every encoded example has, in that order.
    """
    roles, positions = role_positions(encoded, roles)
    text = h5py().string_dtype()
    handle.create_dataset("example_ids", data=[e.id for e in examples], dtype=text)
    handle.create_dataset("split", data=[e.split for e in examples], dtype=text)
    for side in TEXTS:
        handle.create_dataset(f"text/{side}", data=[str(getattr(e, side)) for e in examples], dtype=text)
    handle.create_dataset("label", data=np.array([list(labels).index(e.label) for e in examples], dtype=np.int8))
    for role in sorted({r for e in examples for r in e.words}):
        handle.create_dataset(f"words/{role}", data=[str(e.words.get(role, "")) for e in examples], dtype=text)
    for v in values:
        handle.create_dataset(f"values/{v.variable}", data=v.codes.astype(np.int8))
        handle[f"values/{v.variable}"].attrs["names"] = list(v.names)
    handle.create_dataset("positions", data=np.asarray(positions, dtype=np.int32))
    handle["positions"].attrs["roles"] = list(roles)


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
        expected = {"split": (n,), "label": (n,), "positions": (n, -1)}
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
