"""The interventions file: outcome matrices of interchange interventions, one HDF5 group per location.

Layout (readable with plain h5py)::

    /example_ids, /split, /w_p, /w_h   str [n]
    /label, /lexrel, /base_pred        int8 [n]   (label ids in attrs["labels"] order; lexrel 0 ⊏, 1 ⊐;
                                                   base_pred: the model's own prediction)
    /positions                          int32 [n, 3]  token index of cls, w_p, w_h
    /<location>/model_pred              int8 [n, n]   row = base, column = source; -1 not run
    /<location>/causal_pred             int8 [n, n]   the causal model's counterfactual; -1 not run
    /<location>/logits                  float32 [n, n, n_labels]; NaN not run
    /<location>/units_done              bool [n_units] (which blocks of bases are finished)

File attributes: ``format``, ``model``, ``model_sha256``, ``wordpiece``,
``causal_model``, ``variable``, ``labels``, ``locations``, ``unit_size``,
``precision``, ``complete``; each group has ``location``, ``hidden_index``,
``role``, and after a run in TF32 or bf16 ``fp32_check_pairs``,
``fp32_label_agreement`` (0..1) and ``fp32_max_abs_logit_diff``: a seeded
sample of its pairs run again in fp32 (:mod:`interp.jobs.fp32_check`).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from interp.core.errors import ConfigError
from interp.core.hdf5 import ExampleFile, h5py, open_finished, strings
from interp.hooks.locations import Location
from interp.tasks.monli import ROLES, Encoded, Example, Lexrel

FORMAT = "interp.interventions/1"


def initialise(handle, meta: dict, examples: Sequence[Example], encoded: Sequence[Encoded], base_pred: np.ndarray, locations: Sequence[Location], n_units: int) -> None:
    """Create every dataset of a new interventions file, outcome matrices filled with -1 (not run)."""
    n = len(examples)
    text = h5py().string_dtype()
    handle.create_dataset("example_ids", data=[e.id for e in examples], dtype=text)
    handle.create_dataset("split", data=[e.split for e in examples], dtype=text)
    handle.create_dataset("w_p", data=[e.w_p for e in examples], dtype=text)
    handle.create_dataset("w_h", data=[e.w_h for e in examples], dtype=text)
    handle.create_dataset("label", data=np.array([meta["labels"].index(e.label) for e in examples], dtype=np.int8))
    handle.create_dataset("lexrel", data=np.array([0 if e.lexrel is Lexrel.FORWARD else 1 for e in examples], dtype=np.int8))
    handle.create_dataset("base_pred", data=base_pred.astype(np.int8))
    handle.create_dataset("positions", data=np.array([[enc.positions[r] for r in ROLES] for enc in encoded], dtype=np.int32))
    n_labels = len(meta["labels"])
    rows = max(1, min(n, meta["unit_size"]))
    for loc in locations:
        group = handle.create_group(str(loc))
        group.create_dataset("model_pred", shape=(n, n), dtype=np.int8, fillvalue=-1, chunks=(rows, n))
        group.create_dataset("causal_pred", shape=(n, n), dtype=np.int8, fillvalue=-1, chunks=(rows, n))
        group.create_dataset("logits", shape=(n, n, n_labels), dtype=np.float32, fillvalue=np.nan, chunks=(rows, n, n_labels))
        group.create_dataset("units_done", data=np.zeros(n_units, dtype=bool))
        group.attrs.update({"location": str(loc), "hidden_index": loc.hidden_index, "role": loc.role})
    handle.attrs.update(meta)
    handle.attrs["complete"] = False
    handle.flush()


class Interventions(ExampleFile):
    """A read-only view of a finished interventions file (``example_ids``, ``column`` from :class:`ExampleFile`)."""

    @property
    def locations(self) -> list[str]:
        return list(self.meta["locations"])

    def location(self, location: str | None = None) -> str:
        """The canonical name of ``location``; ``None`` picks the file's only location.

        Raises:
            ConfigError: the location is not in the file, or ``None`` and the file has several.
        """
        if location is None:
            if len(self.locations) != 1:
                raise ConfigError(f"{self.path} holds {len(self.locations)} locations ({', '.join(self.locations)}): name one with --location")
            return self.locations[0]
        name = str(Location.parse(location))
        if name not in self.locations:
            raise ConfigError(f"location {name} is not in {self.path} (it has {', '.join(self.locations)})")
        return name

    def matrix(self, name: str, location: str | None = None) -> np.ndarray:
        """``model_pred``, ``causal_pred`` (int8 ``[n, n]``) or ``logits`` at a location."""
        return self.handle[self.location(location)][name][:]


@contextmanager
def open_interventions(path: str | Path, model_sha256: str | None = None, example_ids: Sequence[str] | None = None) -> Iterator[Interventions]:
    """Open a finished interventions file, optionally checking the model's weights and the example set.

    Raises:
        ConfigError: a missing, truncated, foreign or unfinished file; one made
            with other weights than ``model_sha256``; one over other examples
            than ``example_ids``.
    """
    path = Path(path)
    handle, meta = open_finished(path, FORMAT, "interventions file", "interp intervene")
    try:
        if model_sha256 is not None and meta["model_sha256"] != model_sha256:
            raise ConfigError(f"{path} was made with model {meta['model']!r}, whose weights differ from the model given")
        if example_ids is not None and strings(handle, "example_ids") != list(example_ids):
            raise ConfigError(f"{path} holds interventions over another example set than the one given")
        yield Interventions(path, handle, meta)
    finally:
        handle.close()


@dataclass(frozen=True)
class Fp32Check:
    """Agreement of a reduced-precision run with fp32 at one location."""

    pairs: int  # sampled (base, source) pairs
    agreement: float  # share of them whose predicted label equals fp32's, 0..1
    max_abs_logit_diff: float  # largest |logit − fp32 logit| over them

    def attrs(self) -> dict:
        """The HDF5 group attributes that hold this check."""
        return {"fp32_check_pairs": self.pairs, "fp32_label_agreement": self.agreement, "fp32_max_abs_logit_diff": self.max_abs_logit_diff}

    @classmethod
    def from_attrs(cls, attrs) -> "Fp32Check | None":
        """The check stored in ``attrs``, or ``None`` (an fp32 run has none)."""
        if "fp32_check_pairs" not in attrs:
            return None
        return cls(int(attrs["fp32_check_pairs"]), float(attrs["fp32_label_agreement"]), float(attrs["fp32_max_abs_logit_diff"]))
