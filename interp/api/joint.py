"""Joint interchange interventions: each of several variables set from its own source, at its own location, in one run.

Usage::

    lab = interp.IntervenableModel("runs/demo/model", "monli")
    res = lab.interchange_jointly(bases, {"lexrel": sources_a, "negated": sources_b},
                                  alignment={"lexrel": "blocks.1.hook_resid_post@w_h", "negated": "blocks.3.hook_resid_post@cls"})
    res.iia, res.summary(), res.to_frame(), res.save("runs/joint.json")

An alignment of a causal model with several variables is tested by setting each variable from its own source input
in one run of both models (Geiger et al. 2021, §3: the interchange intervention on a set of variables; Wu et al. 2024,
pyvene, patches a list of representations together): the causal model gives the counterfactual label with every
variable's value taken from its source (:func:`interp.causal.run_interchange`), the network is run with every
location's vector taken from its source (the runner's write plan: :meth:`~interp.backends.base.Runner.plan_logits`), and IIA is the share of runs where
they agree. The full product of bases and one source list per variable is too large, so each base gets ``per_base``
tuples of sources drawn at random (seeded; the draw is recorded in the result and its file). Each variable alone is
:meth:`IntervenableModel.interchange <interp.api.intervenable.IntervenableModel.interchange>` at its location.

The nulls: ``stays_base`` (the network ignores every write and keeps the base's own label) and ``copies_source`` per
variable (it returns that source's own label); IIA is read against the larger. The interval resamples the bases (by
the task's groups: MoNLI's word pairs), the sources being random draws around each base; it does not cover a new draw
of the source lists themselves.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import torch
from torch import Tensor

from interp.analysis.bootstrap import ExampleBootstrap
from interp.causal import run_interchange
from interp.core.errors import ConfigError, OutputError, named, renamed
from interp.core.estimates import Estimate
from interp.backends.base import Sources, WritePlan


@dataclass
class JointResult:
    """A joint interchange intervention's rows: one per (base, tuple of sources).

    Attributes:
        alignment: variable -> location (as written), in the order the sources were given.
        base_ids: ``[rows]`` each row's base; ``source_ids``: variable -> ``[rows]`` its source.
        logits: float32 ``[rows, n_model_labels]``.
        model_pred, base_pred, counterfactual: int ``[rows]`` task label ids: the intervened network's, the base's own
            (unintervened), the causal model's with every variable from its source.
        source_pred: variable -> int ``[rows]``, each source's own label.
        base_label: int ``[rows]``, the base's gold label; ``groups``: ``[rows]`` the base's group (``unit`` names them).
        labels: the task's labels; ``seed``, ``per_base``: the draw.
    """

    alignment: dict[str, str]
    base_ids: list[str]
    source_ids: dict[str, list[str]]
    logits: Tensor
    model_pred: np.ndarray
    base_pred: np.ndarray
    source_pred: dict[str, np.ndarray]
    counterfactual: np.ndarray
    base_label: np.ndarray
    groups: list[str]
    unit: str
    labels: tuple[str, ...]
    seed: int
    per_base: int
    meta: dict = field(default_factory=dict)

    @cached_property
    def _bootstrap(self) -> tuple[ExampleBootstrap, np.ndarray]:
        """The bases' bootstrap (one per result: every figure of it shares the replicates) and each row's base."""
        keys, index = np.unique(np.asarray(self.base_ids), return_inverse=True)
        group_of = dict(zip(self.base_ids, self.groups))
        boot = ExampleBootstrap(len(keys), 1, square=False, base_groups=[group_of[k] for k in keys], source_groups=["all"], unit=self.unit)
        return boot, index

    def _estimate(self, hits: np.ndarray, rows: np.ndarray) -> Estimate:
        boot, index = self._bootstrap
        hits = np.asarray(hits, dtype=bool)[rows]
        value = float(hits.mean()) if len(hits) else float("nan")
        return boot.interval(value, boot.pair_share(index[rows], np.zeros(len(hits), dtype=np.int64), hits))

    @property
    def causal(self) -> np.ndarray:
        """bool ``[rows]``: where the counterfactual label differs from the base's gold label (the writes must change it)."""
        return self.counterfactual != self.base_label

    @property
    def iia(self) -> Estimate:
        """The share of rows where the network's label is the counterfactual one, with its 95% interval."""
        return self._estimate(self.model_pred == self.counterfactual, np.ones(len(self.model_pred), dtype=bool))

    def summary(self) -> dict:
        """``iia``, ``stays_base`` and ``copies_<variable>`` on every row, and with ``_causal`` on the rows whose
        counterfactual differs from the base's gold label, each an :class:`~interp.core.estimates.Estimate` (95%
        interval over the bases' groups); ``rows``, ``causal_rows``, ``chance`` (the most common counterfactual's share)."""
        out: dict = {"alignment": dict(self.alignment), "rows": len(self.model_pred), "causal_rows": int(self.causal.sum())}
        everything = np.ones(len(self.model_pred), dtype=bool)
        for suffix, rows in (("", everything), ("_causal", self.causal)):
            out[f"iia{suffix}"] = self._estimate(self.model_pred == self.counterfactual, rows)
            out[f"stays_base{suffix}"] = self._estimate(self.model_pred == self.base_pred, rows)
            for variable, pred in self.source_pred.items():
                out[f"copies_{variable}{suffix}"] = self._estimate(self.model_pred == pred, rows)
        out["chance"] = float(np.bincount(self.counterfactual).max() / len(self.counterfactual)) if len(self.counterfactual) else float("nan")
        out["interval"] = out["iia"].method
        return out

    def to_frame(self):
        """One row per run: ``base``, ``source_<variable>`` ids, ``model_pred``, ``counterfactual``, ``base_pred``,
        ``agrees``, ``causal`` (labels as names)."""
        import pandas as pd

        names = np.asarray(self.labels)
        frame = {"base": self.base_ids, **{f"source_{v}": ids for v, ids in self.source_ids.items()}}
        frame.update(model_pred=names[self.model_pred], counterfactual=names[self.counterfactual], base_pred=names[self.base_pred],
                     agrees=self.model_pred == self.counterfactual, causal=self.causal)  # fmt: skip
        return pd.DataFrame(frame)

    def save(self, path: str | Path, *, overwrite: bool = False, alone: Mapping[str, "JointResult"] | None = None) -> Path:
        """Write the result as JSON (alignment, draw, every row's base and sources, the labels and the summary; with
        ``alone``, each variable's own run's summary under ``"alone"``), staged and moved into place.

        Raises:
            OutputError: the file exists (unless ``overwrite``), or cannot be written.
        """
        path = Path(path)
        if path.exists() and not overwrite:
            raise OutputError(f"{path} exists; pass overwrite=True to replace it")
        record = {"format": "interp.joint/1", "alignment": self.alignment, "seed": self.seed, "per_base": self.per_base, "labels": list(self.labels),
                  "meta": self.meta, "summary": _plain(self.summary()), "rows": self.to_frame().to_dict(orient="records")}  # fmt: skip
        if alone:
            record["alone"] = {v: _plain(r.summary()) for v, r in alone.items()}
        staged = path.with_name(path.name + ".partial")
        try:
            staged.write_text(json.dumps(record, indent=1, default=lambda x: x.item() if hasattr(x, "item") else str(x)), encoding="utf-8")
            staged.replace(path)
        except OSError as exc:
            staged.unlink(missing_ok=True)
            raise OutputError(f"{path}: cannot write ({exc})") from None
        return path

    def __repr__(self) -> str:
        s = self.summary()
        sites = ", ".join(f"{v}@{loc}" for v, loc in self.alignment.items())
        copies = ", ".join(f"copies {v} {s[f'copies_{v}']!r}" for v in self.alignment)
        return (f"JointResult({sites}: {s['rows']} runs ({self.per_base} source tuples a base), IIA {s['iia']!r}; stays the base "
                f"{s['stays_base']!r}, {copies}; {s['interval']})")


def _plain(summary: dict) -> dict:
    """A summary as JSON holds it: each estimate as ``[value, low, high]``."""
    return {k: ([float(v), v.low, v.high] if isinstance(v, Estimate) else v) for k, v in summary.items()}


def interchange_jointly(lab, bases: Sequence, sources: Mapping[str, Sequence], alignment: Mapping[str, object], *, per_base: int | None = 16,
                        seed: int = 0, naive: bool = False) -> JointResult:  # fmt: skip
    """Every base run ``per_base`` times, each time with every variable's location written from a source drawn (seeded)
    from that variable's list: a :class:`JointResult` (Geiger et al. 2021, §3). With ``per_base=None`` the sources are
    named, not drawn: each variable's list is as long as ``bases``, and base ``i`` runs once with source ``i`` of each.

    Args:
        bases: the task's examples (or one's own with the causal model's values: :func:`interp.examples`).
        sources: variable -> the examples its sources are drawn from.
        alignment: variable -> location (a string or :class:`~interp.hooks.locations.Location`), the same variables as ``sources``.
        per_base: source tuples drawn for each base (``None``: the sources named one per base, in order). ``seed``: the draw's.
        naive: one hooked batch-1 pass per run (the reference) instead of batches.

    Raises:
        ConfigError: naming the parameter: ``sources`` and ``alignment`` naming other variables, or none; a variable the
            task lacks; two variables at one location; ``per_base`` below 1; with ``per_base=None``, a variable's sources
            not one per base; examples that are not the task's.
    """
    if not isinstance(sources, Mapping) or not isinstance(alignment, Mapping) or not alignment or set(sources) != set(alignment):
        raise ConfigError(f"{named('sources')} and {named('alignment')} must map the same variables (each to its source examples, and to "
                          f"its location), e.g. sources={{'lexrel': a, 'negated': b}}, alignment={{'lexrel': LOC, 'negated': LOC}}")  # fmt: skip
    if per_base is not None and (isinstance(per_base, bool) or not isinstance(per_base, int) or per_base < 1):
        raise ConfigError(f"{named('per_base', repr(per_base))} must be a whole number of source tuples of at least 1, or None (sources named)")
    task = lab.task
    locations = joint_alignment(lab, alignment)
    variables = list(locations)
    with renamed(examples="bases"):
        bases = task.check_examples(bases)
    pools = {}
    for v in variables:
        with renamed(examples=f"sources[{v!r}]"):
            pools[v] = task.check_examples(sources[v])
    every = lab.bind(list({e.id: e for e in [*bases, *(e for pool in pools.values() for e in pool)]}.values()))
    if per_base is None:  # named: base i with source i of every variable
        short = next((v for v, pool in pools.items() if len(pool) != len(bases)), None)
        if short is not None:
            raise ConfigError(f"{named(f'sources[{short!r}]')} holds {len(pools[short])} examples for {len(bases)} bases; with per_base=None "
                              "give one source per base, in the bases' order")  # fmt: skip
        base_rows = np.asarray(every.rows(bases))
        drawn = {v: np.asarray(every.rows(pool)) for v, pool in pools.items()}
    else:
        rng = np.random.default_rng(seed)
        base_rows = np.repeat(np.asarray(every.rows(bases)), per_base)
        drawn = {v: np.asarray(every.rows(pool))[rng.integers(0, len(pool), size=len(base_rows))] for v, pool in pools.items()}
    writes = {locations[v]: every.vectors(locations[v])[torch.from_numpy(rows)].cpu() for v, rows in drawn.items()}
    runner = every.binding.runner.reference() if naive else every.binding.runner
    logits, _ = runner.plan_logits(every.encoded, torch.from_numpy(base_rows), WritePlan({loc: Sources(v) for loc, v in writes.items()}))
    return joint_result(lab, every, locations, base_rows, drawn, logits, seed=seed, per_base=per_base or 1)


def joint_alignment(lab, alignment: Mapping[str, object]) -> dict:
    """``alignment`` (variable -> location string or :class:`~interp.hooks.locations.Location`) as the task's variables
    and the model's locations, in the given order.

    Raises:
        ConfigError: naming ``alignment=``: not a mapping, empty, a variable the task lacks, a location as
            :meth:`IntervenableModel.location` refuses it, one location for two variables.
    """
    if not isinstance(alignment, Mapping) or not alignment:
        raise ConfigError(f"{named('alignment')} must map each variable to its location, e.g. {{'lexrel': LOC, 'negated': LOC}}")
    with renamed(variable="alignment"):
        variables = [lab.task.check_variable(v) for v in alignment]
    locations = {v: lab.location(alignment[v], (v,)) for v in variables}
    if len(set(locations.values())) < len(locations):
        raise ConfigError(f"{named('alignment')} names one location for two variables; a joint intervention writes each at its own")
    return locations


def counterfactuals(lab, every, base_rows: np.ndarray, drawn: Mapping[str, np.ndarray]) -> np.ndarray:
    """int64 ``[rows]``: the causal model's output (a task label id) for base ``base_rows[r]`` (rows of the example set
    ``every``) with each variable's value from its source ``drawn[variable][r]`` (Geiger et al. 2021, §3)."""
    task, causal, examples = lab.task, every.causal_model(), every.examples
    return np.array([task.labels.index(run_interchange(causal, task.inputs(examples[b]), {v: task.inputs(examples[rows[r]])
                                                                                            for v, rows in drawn.items()})[causal.output])
                     for r, b in enumerate(base_rows)], dtype=np.int64)  # fmt: skip


def joint_result(lab, every, locations: Mapping[str, object], base_rows: np.ndarray, drawn: Mapping[str, np.ndarray], logits: Tensor, *,
                 seed: int, per_base: int) -> JointResult:  # fmt: skip
    """The :class:`JointResult` of runs already made on the example set ``every``: row r is base ``base_rows[r]`` with
    each variable's location (``locations``) written from its source ``drawn[variable][r]`` (rows of ``every``), which
    gave ``logits`` (``[rows, n_model_labels]``); the causal model's counterfactual with each variable from its source."""
    task = lab.task
    variables = list(locations)
    own, reading, examples = every.own_labels(), every.binding.reading, every.examples
    counterfactual = counterfactuals(lab, every, base_rows, drawn)
    table = every.table()
    groups = [str(g) for g in table.groups] if table.groups is not None else list(every.ids)
    return JointResult(
        alignment={v: str(locations[v]) for v in variables}, base_ids=[every.ids[b] for b in base_rows],
        source_ids={v: [every.ids[s] for s in rows] for v, rows in drawn.items()}, logits=logits, model_pred=reading.predict(logits),
        base_pred=own[base_rows], source_pred={v: own[rows] for v, rows in drawn.items()}, counterfactual=counterfactual,
        base_label=np.array([task.labels.index(examples[b].label) for b in base_rows], dtype=np.int64),
        groups=[groups[b] for b in base_rows], unit=table.group_unit if table.groups is not None else "examples",
        labels=tuple(task.labels), seed=seed, per_base=per_base, meta={"model": lab.model.name, "task": task.name, **lab.model.reading_record},
    )  # fmt: skip
