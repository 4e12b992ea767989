"""What an interchange intervention returns, in memory: outcome matrices, IIA with its nulls, the graph, its cliques, a pandas view.

Usage::

    res = lab.interchange(examples, examples, "blocks.2.hook_resid_post@w_h")
    res.model_pred                 # int8 [n_bases, n_sources]: the intervened model's label ids
    res.causal_pred["lexrel"]      # int8 [n_bases, n_sources]: the causal model's counterfactual label ids
    res.iia("lexrel")              # share of causal pairs where they agree (0..1)
    res.summary("lexrel")          # IIA on all and on causal pairs, each with both nulls and 95% intervals
    res.summary_frame()            # the same, one row per (variable, pair set)
    res.cliques("lexrel").cliques  # greedy disjoint cliques of the intervention graph (square results)
    res.to_frame()                 # one row per (base, source, variable)
    res.save("iv.h5"); interp.load_interventions("iv.h5")   # today's HDF5 format, and the same object back

IIA, its pair sets and its nulls are defined once, in :mod:`interp.analysis.iia`
(Geiger, Richardson & Potts 2020, §6.2); the graph and the clique search in
:mod:`interp.analysis.cliques` (their Appendix A.3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from jaxtyping import Float
from torch import Tensor

from interp.analysis.cliques.graph import InterventionGraph, build_graph
from interp.analysis.cliques.search import SearchResult, search
from interp.analysis.bootstrap import N_BOOT, SEED, Estimate
from interp.analysis.iia import estimate, resampled, summarize_matrices
from interp.api.interventions_file import FileContents
from interp.api.loading import ModelIdentity
from interp.causal.values import VariableValues
from interp.core.checks import check_int
from interp.core.errors import ConfigError, named, renamed
from interp.core.outputs import ensure_writable_dir, refuse_existing, write_file_manifest
from interp.files.examples import ExampleTable
from interp.files.interventions import open_interventions
from interp.hooks.locations import Location

PAIR_SETS = ("causal", "all")


@dataclass(eq=False)
class InterchangeResult:
    """Interchange interventions of bases × sources at one location, and the causal model's counterfactuals beside them.

    Attributes:
        location: where the vectors were replaced.
        labels: the task's label names in id order; every ``*_pred`` and ``base_label`` is an id into them.
        base_ids, source_ids: example ids, the rows and the columns.
        logits: float32 ``[n_bases, n_sources, n_model_labels]``, the intervened model's output in the model's
            own labels (:attr:`model_labels`).
        base_pred, source_pred: int8 ``[n_bases]`` / ``[n_sources]``, the model's own label on each example.
        base_label: int8 ``[n_bases]``, the bases' gold label ids.
        causal_pred: variable -> int8 ``[n_bases, n_sources]``, the counterfactual label ids.
        values, source_values: variable -> each base's / source's value of every task variable.
        meta: the file attributes of :mod:`interp.files.interventions` (task, model, ...); the weights' SHA-256 is
            added when the result is saved (or kept from the file it was read from).
        read: per model label id, the task label id it reads as (:class:`~interp.models.labels.LabelReading`);
            ``None`` (the same ids) for a file written without ``model_read``: the model's labels were the task's.
        examples: each base's record as a file keeps it (id, split, label, words, sentences, token positions by role).
        model: the model the logits came from (its weights hashed only by :meth:`save`).
        location_attrs: what the file keeps of the location besides its name (a reduced-precision run's fp32 check).
        source_groups: each source's group where the task declares groups (the bases' are in ``examples``), else
            ``None``; what :meth:`summary` resamples by default.

    A result knows what its file needs, so :meth:`save` needs nothing else: one computed by
    :meth:`IntervenableModel.interchange <interp.api.intervenable.IntervenableModel.interchange>`, one read back with
    :func:`load_interventions`, or one built by hand with ``examples`` and ``model`` given.
    """

    location: Location
    labels: tuple[str, ...]
    base_ids: tuple[str, ...]
    source_ids: tuple[str, ...]
    logits: Float[Tensor, "bases sources labels"]
    base_pred: np.ndarray
    source_pred: np.ndarray
    base_label: np.ndarray
    causal_pred: dict[str, np.ndarray]
    values: dict[str, VariableValues]
    source_values: dict[str, VariableValues]
    meta: dict = field(default_factory=dict)
    read: tuple[int, ...] | None = None
    examples: ExampleTable | None = field(default=None, repr=False)
    model: ModelIdentity | None = field(default=None, repr=False)
    location_attrs: dict = field(default_factory=dict, repr=False)
    source_groups: tuple[str, ...] | None = field(default=None, repr=False)

    @property
    def model_pred(self) -> np.ndarray:
        """int8 ``[n_bases, n_sources]``: the intervened model's label on each pair, as a task label id."""
        ids = self.logits.argmax(-1).numpy()
        return (ids if self.read is None else np.asarray(self.read)[ids]).astype(np.int8)

    @property
    def model_labels(self) -> tuple[str, ...]:
        """The model's label names in id order: what :attr:`logits`' last axis means."""
        return tuple(str(x) for x in self.meta.get("model_labels", self.labels))

    @property
    def variables(self) -> tuple[str, ...]:
        """The variables whose counterfactuals are held."""
        return tuple(self.causal_pred)

    @property
    def square(self) -> bool:
        """Whether the sources are the bases (what the graph, the cliques and the file format need)."""
        return self.base_ids == self.source_ids

    def _variable(self, variable: str | None) -> str:
        if variable is None:
            if len(self.causal_pred) != 1:
                raise ConfigError(f"`variable=`: this result holds {', '.join(self.causal_pred)}; name one")
            return next(iter(self.causal_pred))
        if variable not in self.causal_pred:
            raise ConfigError(f"{named('variable', repr(variable))}: this result holds {', '.join(self.causal_pred) or 'no variable'}")
        return variable

    def summary(self, variable: str | None = None, *, n_boot: int = N_BOOT, seed: int = SEED, unit: str | None = None) -> dict:
        """IIA on all and on causal pairs, each beside ``stays_base`` and ``copies_source``, every figure with ``_low`` and
        ``_high``, its 95% interval from a seeded bootstrap (:func:`interp.analysis.iia.summarize_matrices`) over
        ``unit``: ``"group"`` (the task's groups, MoNLI's word pairs: the claim is about new pairs), ``"example"``, or
        ``None``: groups where the task declares them, else examples. ``over`` says which, with its count.

        ``changed`` is the share of pairs whose label the interchange moved off the base's own (1 − ``stays_base``);
        ``base_accuracy`` the model's accuracy on the bases (no intervention); ``gap``: IIA minus the larger null.
        """
        name = self._variable(variable)
        check_int(n_boot, "n_boot", least=1)
        check_int(seed, "seed", least=0)
        table = self.examples
        groups = None if table is None or table.groups is None or (self.source_groups is None and not self.square) else table.groups
        grouped = resampled(groups, table.group_unit if table is not None else "", unit)
        if grouped and not self.square:
            grouped["source_groups"] = np.asarray(self.source_groups)
        return summarize_matrices(
            str(self.location), name, self.model_pred, self.causal_pred[name], self.values[name].codes, self.base_label,
            self.base_pred, self.source_values[name].codes, self.source_pred, square=self.square, n_boot=n_boot, seed=seed, **grouped,
        )  # fmt: skip

    def summaries(self) -> list[dict]:
        """:meth:`summary` for every variable held."""
        return [self.summary(v) for v in self.causal_pred]

    def summary_frame(self):
        """A ``pandas.DataFrame``, one row per (variable, pair set): ``pairs`` and each figure (``iia``, ``stays_base``,
        ``copies_source``, ``gap``) with its ``_low`` and ``_high`` bounds; ``interval`` names the method."""
        import pandas as pd

        rows = []
        for s in self.summaries():
            for pair_set, suffix, count in (("causal", "_causal", s["causal_pairs"]), ("all", "", s["pairs"])):
                row = {"location": s["location"], "variable": s["variable"], "pair_set": pair_set, "pairs": count}
                for figure in ("iia", "stays_base", "copies_source", "gap"):
                    row.update({figure + end: s[figure + suffix + end] for end in ("", "_low", "_high")})
                rows.append({**row, "interval": s["interval"]})
        return pd.DataFrame(rows)

    def logit_shift(self, variable: str | None = None, *, n_boot: int = N_BOOT, seed: int = SEED, unit: str | None = None) -> Estimate:
        """How far the interchange moved the logits toward the counterfactual, in logit units, with its 95% interval
        (:func:`interp.analysis.shift.logit_shift`): on each pair whose counterfactual differs from the base's own label,
        the change of (counterfactual's logit − own label's logit) from the base's own run (the grid's diagonal, where a
        base is its own source) to the intervened one, averaged. A continuous figure beside IIA: it moves where logits
        move though no label flips. ``unit``: as :meth:`summary`'s.

        Raises:
            ConfigError: the sources are not the bases (the base's own run is the diagonal); a variable it lacks.
        """
        from interp.analysis.shift import label_columns, logit_shift

        name = self._variable(variable)
        if not self.square:
            raise ConfigError("logit_shift reads each base's own run on the diagonal: give the bases as the sources (interchange(examples, examples, ...))")
        columns = label_columns(np.arange(self.logits.shape[-1]) if self.read is None else self.read, len(self.labels))
        table = self.examples
        grouped = resampled(None if table is None else table.groups, table.group_unit if table is not None else "", unit)
        logits = self.logits.float().numpy()
        return logit_shift(logits, logits[np.arange(len(logits)), np.arange(len(logits))], self.causal_pred[name], self.base_pred, columns,
                           groups=grouped.get("groups"), unit=grouped.get("unit", "groups"), n_boot=n_boot, seed=seed)  # fmt: skip

    def iia(self, variable: str | None = None, pairs: str = "causal") -> Estimate:
        """Interchange-intervention accuracy, 0..1, on the ``causal`` pairs (base and source differ in the variable) or ``all``.

        Returns:
            An :class:`~interp.analysis.bootstrap.Estimate`: a float that also holds ``low`` and ``high``, its 95%
            interval from a seeded bootstrap over examples.

        Raises:
            ConfigError: naming ``pairs=`` or ``variable=``.
        """
        if pairs not in PAIR_SETS:
            raise ConfigError(f"{named('pairs', repr(pairs))}: choose from {', '.join(PAIR_SETS)}")
        return estimate(self.summary(variable), "iia_causal" if pairs == "causal" else "iia")

    def graph(self, variable: str | None = None) -> InterventionGraph:
        """The intervention graph (Appendix A.3): an edge where the model agrees with the causal model both ways and on both self-interchanges.

        Raises:
            ConfigError: the sources are not the bases.
        """
        if not self.square:
            raise ConfigError("the intervention graph needs the sources to be the bases (interchange(examples, examples, ...))")
        name = self._variable(variable)
        return build_graph(self.model_pred, self.causal_pred[name], self.values[name].codes)

    def cliques(self, variable: str | None = None, alphas=range(1, 11), min_size: int | None = None) -> SearchResult:
        """The greedy disjoint cliques of :meth:`graph` for every α (:func:`interp.analysis.cliques.search.search`)."""
        return search(self.graph(variable), alphas, min_size)

    def to_frame(self):
        """A long-format ``pandas.DataFrame``: one row per (base, source, variable).

        Columns: ``base``, ``source``, ``location``, ``variable``, ``causal``
        (base and source differ in the variable), ``model_pred``,
        ``causal_pred``, ``base_pred``, ``source_pred`` (label names) and
        ``agrees`` (model_pred == causal_pred).
        """
        import pandas as pd

        n_b, n_s = len(self.base_ids), len(self.source_ids)
        names = np.array(self.labels, dtype=object)
        model_pred = self.model_pred
        frames = []
        for variable, table in self.causal_pred.items():
            frames.append(pd.DataFrame({
                "base": np.repeat(np.array(self.base_ids, dtype=object), n_s),
                "source": np.tile(np.array(self.source_ids, dtype=object), n_b),
                "location": str(self.location),
                "variable": variable,
                "causal": (self.values[variable].codes[:, None] != self.source_values[variable].codes[None, :]).reshape(-1),
                "model_pred": names[model_pred.reshape(-1)],
                "causal_pred": names[table.reshape(-1)],
                "base_pred": np.repeat(names[self.base_pred], n_s),
                "source_pred": np.tile(names[self.source_pred], n_b),
                "agrees": (model_pred == table).reshape(-1),
            }))  # fmt: skip
        return pd.concat(frames, ignore_index=True)

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the interventions file (:mod:`interp.files.interventions`, what ``interp intervene`` writes), atomically,
        and its manifest; the model's weights are hashed now, not when the result was computed.

        The manifest (``<path>.manifest.json``) is what ``interp report`` finds a run's files by. An existing ``path``
        is never replaced unless ``overwrite=True``; a missing folder is made.

        Raises:
            ConfigError: naming ``path=`` (not a path); the sources are not the bases (the format holds square
                matrices); a result built without ``examples`` and ``model``; the model's weights changed since.
            OutputError: naming ``path``: it exists (without ``overwrite``), or its folder cannot be written.
        """
        return save_results(path, [self], overwrite)

    def contents(self) -> FileContents:
        """What the file of this result holds besides its logits (:class:`~interp.api.interventions_file.FileContents`).

        Raises:
            ConfigError: the sources are not the bases, or the result was built without ``examples`` and ``model``.
        """
        if not self.square:
            raise ConfigError("save: the interventions file holds square matrices; run interchange(examples, examples, ...)")
        if self.examples is None or self.model is None:
            raise ConfigError("save: this result holds no `examples=` and `model=` (what its file records of each example and of the model); "
                              "make it with IntervenableModel.interchange or interp.load_interventions, or give both")  # fmt: skip
        meta = {k: v for k, v in self.meta.items() if k not in FILE_OWN}
        values = {name: self.values[name] for name in self.values}
        return FileContents(meta, self.model, self.examples, np.asarray(self.base_pred).astype(np.int8), values, dict(self.causal_pred))


#: File attributes a result's ``meta`` may hold that the writer makes itself.
FILE_OWN = ("model_sha256", "complete", "environment", "locations")


def save_results(path: str | Path, results: list[InterchangeResult], overwrite: bool) -> Path:
    """Write ``results`` (one location each, the same examples) into one interventions file at ``path`` and its manifest:
    never over a file unless ``overwrite``, its folder made, as ``interp intervene --out`` makes it."""
    if not isinstance(path, (str, Path)) or not str(path):
        raise ConfigError(f"{named('path', repr(path))}: give the file to write (a str or pathlib.Path)")
    contents = results[0].contents()
    for other in results[1:]:
        other.contents()
    path = Path(path)
    with renamed(out="path"):
        refuse_existing(path, overwrite)
        ensure_writable_dir(path.parent)
    contents.write(path, [r.location for r in results], lambda index, _: results[index].logits.numpy(),
                   lambda index: results[index].location_attrs)  # fmt: skip
    write_file_manifest(path, "intervene")
    return path


def load_interventions(path: str | Path, location: str | None = None) -> InterchangeResult:
    """The :class:`InterchangeResult` of one location of a finished interventions file (``None``: its only location);
    it saves back to the same datasets and attributes (that location's alone, for a file of several).

    Raises:
        ConfigError: a missing, foreign or unfinished file, or a location it lacks.
    """
    with open_interventions(Path(path)) as file:
        name = file.location(location)
        ids = tuple(file.example_ids)
        every = {v: file.values(v) for v in file.stored_values}
        logits = torch.from_numpy(file.matrix("logits", name))
        base_pred = file.column("base_pred").astype(np.int8)
        meta = dict(file.meta)
        kept = {k: v for k, v in file.group_attrs(name).items() if k not in ("location", "hidden_index", "roles")}
        return InterchangeResult(
            location=Location.parse(name), labels=tuple(str(x) for x in meta["labels"]), base_ids=ids, source_ids=ids,
            logits=logits, base_pred=base_pred, source_pred=base_pred, base_label=file.column("label").astype(np.int8),
            causal_pred={v: file.matrix("causal_pred", name, v) for v in file.variables}, values=every, source_values=every,
            meta=meta, read=tuple(int(i) for i in meta["model_read"]) if "model_read" in meta else None, examples=file.table(),
            model=ModelIdentity(str(meta["model"]), stored=str(meta["model_sha256"])), location_attrs=kept,
            source_groups=None if (groups := file.groups) is None else tuple(str(g) for g in groups),
        )  # fmt: skip


@dataclass(eq=False)
class InterchangeSet:
    """Interchange interventions of the same bases × sources at several locations, a sweep: each location interchanged
    on its own (the rest of the model as in the base run), never several together; one :class:`InterchangeResult` per
    location, one table, one file.

    Usage::

        found = lab.interchange(examples, examples, ["blocks.0.hook_resid_post@w_h", "blocks.3.hook_resid_post@w_h"])
        found["blocks.3.hook_resid_post@w_h"].iia("lexrel")    # one location's result
        found.summary_frame()                                  # every location's IIA and nulls, with intervals
        found.save("iv.h5")                                    # one interventions file holding every location

    Attributes:
        results: location (as written) -> its :class:`InterchangeResult`, in the order asked for.
    """

    results: dict[str, InterchangeResult]

    @property
    def locations(self) -> tuple[str, ...]:
        """The locations, in the order asked for."""
        return tuple(self.results)

    def __getitem__(self, location) -> InterchangeResult:
        """One location's result (a location string or :class:`~interp.hooks.locations.Location`).

        Raises:
            ConfigError: naming ``location=``, one this set does not hold.
        """
        if str(location) not in self.results:
            raise ConfigError(f"{named('location', str(location))}: this set holds {', '.join(self.results)}")
        return self.results[str(location)]

    def __iter__(self):
        return iter(self.results.values())

    def __len__(self) -> int:
        return len(self.results)

    def summary_frame(self):
        """Every location's :meth:`InterchangeResult.summary_frame`, one ``pandas.DataFrame`` (a ``location`` column)."""
        import pandas as pd

        return pd.concat([r.summary_frame() for r in self.results.values()], ignore_index=True)

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write one interventions file holding every location (:mod:`interp.files.interventions`, as ``interp intervene
        --locations a,b`` writes), atomically, and its manifest; :func:`load_interventions` reads each location back.

        Raises:
            ConfigError: as :meth:`InterchangeResult.save`, for any of its results.
            OutputError: naming ``path``: it exists (without ``overwrite``), or its folder cannot be written.
        """
        return save_results(path, list(self.results.values()), overwrite)

    def __repr__(self) -> str:
        return f"InterchangeSet(a sweep of {len(self.results)} locations, each interchanged on its own: {', '.join(self.results)})"


__all__ = ["InterchangeResult", "InterchangeSet", "load_interventions"]
