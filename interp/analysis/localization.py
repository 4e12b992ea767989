"""Scoring featurizers as MIB's localization track scores them, with the intervals and controls it does not report.

Usage::

    pairs = HeldOut(bases, sources, groups, "name pairs")        # one variable's held-out pairs, as every unit scored them
    judged = verdict(row, control, pairs)                       # "localizes", or what the unit does not clear
    table = mib_table(rows, {"output_token": pairs})            # per featurizer and variable: mean over layers, best layer
    table = mib_table(rows, read_pairs("runs/ioi/pairs.json"))  # the same from a run's files (localize.csv's rows)

A *unit* is one featurizer trained and scored for one variable at one site (a block's residual stream at one token
position): its row holds the held-out IIA with its interval and ``hits``, a string of ``0``/``1``, one per held-out
pair, in the pairs' order. Every unit of a variable is scored on the same pairs (the pairs depend only on the
examples, the causal model and the seed), so one bootstrap of those pairs (:class:`HeldOut`, over the task's groups:
name pairs, cities) serves every unit, and a difference between two units is paired: each replicate's IIA of one
minus the same replicate's IIA of the other.

MIB's aggregation (Mueller et al. 2025, §4.2, "Metrics"): for each layer the best position's IIA, then the mean over
layers and the best layer. Here the mean has the interval of the mean of the same replicates; the best layer's
interval is its own (it was chosen as the best, so read it as optimistic).

The verdict (:func:`verdict`) says a featurizer *localizes* a variable at a unit only where three differences each
have their interval above 0: the IIA minus the untrained featurizer's (DAS's own null, Geiger et al. 2024, §3), minus
the stays-the-base null (the intervention that does nothing), and minus the same featurizer trained and scored the same
way on the model with re-initialised weights (Sutter et al. 2025, "The Non-Linear Representation Dilemma": learned maps
reach high IIA on random models); and where the IIA's interval lies above chance, the commonest counterfactual's
share (a full vector that swaps every answer can clear the three nulls with an IIA of 0.2). The copies-the-source null is reported, not required: for a variable that is the
output (IOI's ``output_token``) it coincides with the variable. Not covered: seeds of the featurizer's training (one
seed), other prompt distributions, and positions or layers not run.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from interp.analysis.bootstrap import ExampleBootstrap, N_BOOT, SEED
from interp.core.errors import ConfigError, DataError
from interp.core.estimates import Estimate
from interp.core.outputs import read_json

#: The kinds MIB compares, as the sweep names them, and the intervention each trains (``full``: none, the whole vector).
FEATURIZERS = {"full": None, "das": "rotated", "dbm": "dbm", "dbm-pca": "dbm-pca", "dbm-sae": "dbm-sae"}
PRETRAINED, CONTROL = "pretrained", "re-initialised"


def hits_string(hits) -> str:
    """A bool vector as ``"0110..."`` (how a row keeps its per-pair hits)."""
    return "".join("1" if h else "0" for h in np.asarray(hits, dtype=bool).tolist())


def hits_array(text: str) -> np.ndarray:
    """:func:`hits_string` read back."""
    return np.frombuffer(str(text).encode(), dtype=np.uint8) == ord("1")


@dataclass
class HeldOut:
    """One variable's held-out pairs and their bootstrap: ``bases``, ``sources`` (indices into the examples),
    ``groups`` (each example's group, or ``None``: examples) named ``unit``, each pair's base ``breakdown`` values
    (name -> per pair), and ``examples``, the ids the indices point to where known (a run's ``pairs.json``)."""

    bases: np.ndarray
    sources: np.ndarray
    groups: np.ndarray | None = None
    unit: str = "examples"
    breakdown: Mapping[str, np.ndarray] | None = None
    n_boot: int = N_BOOT
    seed: int = SEED
    examples: Sequence[str] | None = None

    def __post_init__(self) -> None:
        bases, b = np.unique(np.asarray(self.bases), return_inverse=True)
        sources, s = np.unique(np.asarray(self.sources), return_inverse=True)
        grouped = {} if self.groups is None else {"base_groups": np.asarray(self.groups)[bases], "source_groups": np.asarray(self.groups)[sources],
                                                   "unit": self.unit}  # fmt: skip
        self.boot = ExampleBootstrap(len(bases), len(sources), square=False, n_boot=self.n_boot, seed=self.seed, **grouped)
        self.b, self.s = b, s

    def __len__(self) -> int:
        return len(self.b)

    def replicates(self, hits: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Each replicate's share of ``hits`` (bool ``[pairs]``) among the pairs of ``mask`` (all by default)."""
        hits = np.asarray(hits, dtype=bool)
        if len(hits) != len(self):
            raise ConfigError(f"{len(hits)} hits for {len(self)} held-out pairs: a row scored on other pairs")
        if mask is None:
            return self.boot.pair_share(self.b, self.s, hits)
        return self.boot.pair_share(self.b[mask], self.s[mask], hits[mask])

    def estimate(self, value: float, replicates: np.ndarray) -> Estimate:
        return self.boot.interval(value, replicates)

    def difference(self, first: np.ndarray, second: np.ndarray) -> Estimate:
        """Share of ``first`` minus share of ``second`` (hits on these pairs), paired over the same replicates."""
        first, second = np.asarray(first, dtype=bool), np.asarray(second, dtype=bool)
        return self.estimate(float(first.mean() - second.mean()), self.replicates(first) - self.replicates(second))


def _figure(row: Mapping, name: str) -> Estimate:
    return Estimate(float(row[name]), float(row[f"{name}_low"]), float(row[f"{name}_high"]))


def verdict(row: Mapping, control: Mapping | None, pairs: HeldOut | None = None) -> str:
    """``localizes`` where the unit's IIA stands above its untrained featurizer (a trained one), the stays-the-base
    null and the re-initialised model's IIA at the same unit, each difference's 95% interval above 0 (paired over the
    held-out pairs where ``pairs`` and both rows' hits are given, else the intervals compared), and its interval's
    lower end above chance (the commonest counterfactual's share, where the row gives it); otherwise ``not shown:``
    and what it does not clear."""
    missing = []
    paired = pairs is not None and "hits" in row and "stays_hits" in row
    if row.get("untrained_iia") not in (None, ""):
        gain = _figure(row, "gain") if "gain" in row else None
        if gain is None or gain.low <= 0:
            missing.append("its untrained featurizer")
    if paired:
        over_base = pairs.difference(hits_array(row["hits"]), hits_array(row["stays_hits"]))
        if over_base.low <= 0:
            missing.append("stays the base")
    elif float(row["iia_low"]) <= float(row["stays_base_high"]):
        missing.append("stays the base")
    if row.get("chance") not in (None, "") and float(row["iia_low"]) <= float(row["chance"]):
        missing.append("chance")  # below the commonest counterfactual's share, an IIA is no alignment whatever its nulls
    if control is None:
        missing.append("no re-initialised run")
    else:
        if paired and "hits" in control:
            low = pairs.difference(hits_array(row["hits"]), hits_array(control["hits"])).low
        else:
            low = float(row["iia_low"]) - float(control["iia_high"])
        if low <= 0:
            missing.append("the re-initialised model")
    return "localizes" if not missing else "not shown: " + ", ".join(missing)


def ravel(row: Mapping, variable: str, pairs: HeldOut, name: str = "attribute") -> dict[str, Estimate] | None:
    """RAVEL's scores of a unit (Huang et al. 2024, §3.2): ``cause``, its IIA on the pairs whose base asks the
    variable's own attribute (the variable's name in lower case), ``isolate``, on the pairs whose base asks another,
    and ``ravel``, their mean, each with its interval; ``None`` where the pairs have no breakdown ``name``."""
    asked = (pairs.breakdown or {}).get(name)
    if asked is None:
        return None
    hits = hits_array(row["hits"])
    cause = np.asarray(asked) == variable.lower()
    if not cause.any() or cause.all():
        return None
    reps = {"cause": pairs.replicates(hits, cause), "isolate": pairs.replicates(hits, ~cause)}
    values = {"cause": float(hits[cause].mean()), "isolate": float(hits[~cause].mean())}
    out = {k: pairs.estimate(values[k], reps[k]) for k in reps}
    out["ravel"] = pairs.estimate((values["cause"] + values["isolate"]) / 2, (reps["cause"] + reps["isolate"]) / 2)
    return out


def read_pairs(path: str | Path) -> dict[str, HeldOut]:
    """Each variable's held-out pairs as a localization's ``pairs.json`` keeps them (``interp localize`` writes it
    beside ``localize.csv``), with their bootstrap: what :func:`mib_table` and :func:`verdict` need to recompute any
    interval from the rows' ``hits``.

    Raises:
        DataError: naming the file, where it is missing, not JSON, or lacks a variable's ``bases`` or ``sources``.
    """
    path = Path(path)
    record = read_json(path)
    if not isinstance(record, dict) or not record:
        raise DataError(f"{path}: not a localization's pairs.json (missing, unreadable or empty)")
    out = {}
    for variable, held in record.items():
        if not isinstance(held, dict) or not {"bases", "sources"} <= held.keys():
            raise DataError(f"{path}: variable {variable!r} has no held-out 'bases' and 'sources'")
        groups = held.get("groups")
        breakdown = {k: np.asarray(v) for k, v in (held.get("breakdown") or {}).items()}
        out[variable] = HeldOut(np.asarray(held["bases"]), np.asarray(held["sources"]), None if groups is None else np.asarray(groups),
                                held.get("unit", "examples"), breakdown or None, examples=held.get("examples"))  # fmt: skip
    return out


def same_pairs(first: Mapping[str, HeldOut], second: Mapping[str, HeldOut]) -> bool:
    """Whether two localizations scored their shared variables on the same held-out pairs of the same examples (their
    ids, where both know them) and groups (two runs of one model, task, examples and seed over different blocks or
    positions), so that their units can be aggregated together."""
    shared = first.keys() & second.keys()
    return bool(shared) and all(
        first[v].examples is None or second[v].examples is None or list(first[v].examples) == list(second[v].examples) for v in shared) and all(
        np.array_equal(first[v].bases, second[v].bases) and np.array_equal(first[v].sources, second[v].sources)
        and (first[v].groups is None) == (second[v].groups is None)
        and (first[v].groups is None or np.array_equal(first[v].groups, second[v].groups)) for v in shared)  # fmt: skip


def site_kind(row: Mapping) -> str:
    """What a unit's ``location`` intervenes on: ``residual`` (the stream), ``head`` (one head's output) or ``attn``
    (all heads' outputs together); a row without a location, the stream."""
    location = str(row.get("location", ""))  # a row without one is the stream's
    if "attn.hook_z.h" in location:
        return "head"
    return "attn" if "attn.hook_z" in location else "residual"


def best_positions(rows: Sequence[Mapping]) -> dict[tuple, Mapping]:
    """Per (model, featurizer, variable, block, site kind), the row of the position (and head, for heads) with the best
    IIA (MIB's first step; over heads as well, a choice among more units, so read it as optimistic)."""
    best: dict[tuple, Mapping] = {}
    for r in rows:
        key = (r["model"], r["featurizer"], r["variable"], int(r["block"]), site_kind(r))
        if key not in best or float(r["iia"]) > float(best[key]["iia"]):
            best[key] = r
    return best


def mib_table(rows: Sequence[Mapping], pairs: Mapping[str, HeldOut]) -> list[dict]:
    """MIB's aggregation per (model, featurizer, variable): ``mean`` (the mean over layers of each layer's best
    position's IIA, with the interval of the same mean over the replicates) and ``best_block`` with its IIA and
    position (its own interval); ``blocks``, how many layers went into the mean."""
    by: dict[tuple, list] = defaultdict(list)
    for (model, featurizer, variable, _, kind), r in sorted(best_positions(rows).items(), key=lambda kv: kv[0]):
        by[(model, featurizer, variable, kind)].append(r)
    out = []
    for (model, featurizer, variable, kind), units in by.items():
        held = pairs[variable]
        reps = np.mean([held.replicates(hits_array(u["hits"])) for u in units], axis=0)
        mean = held.estimate(float(np.mean([float(u["iia"]) for u in units])), reps)
        best = max(units, key=lambda u: float(u["iia"]))
        where = best["position"] if kind != "head" else f"{best['position']}, {str(best['location']).split('@')[0].rsplit('.', 1)[-1]}"
        out.append({"model": model, "featurizer": featurizer, "variable": variable, "site": kind, "blocks": len(units), "mean": mean,
                    "best_block": int(best["block"]), "position": where, "best": _figure(best, "iia")})  # fmt: skip
    return out


def format_mib_table(table: Sequence[Mapping]) -> str:
    """:func:`mib_table` as Markdown, each figure with its 95% interval."""
    sites = any(t.get("site", "residual") != "residual" for t in table)  # the column only where a unit is not the stream
    lines = [f"| model | featurizer | variable |{' site |' if sites else ''} mean IIA over layers | best layer (position) | its IIA |",
             f"| --- | --- | --- |{' --- |' if sites else ''} --- | --- | --- |"]  # fmt: skip
    for t in table:
        m, b = t["mean"], t["best"]
        site = f" {t.get('site', 'residual')} |" if sites else ""
        lines.append(f"| {t['model']} | {t['featurizer']} | {t['variable']} |{site} {float(m):.3f} [{m.low:.3f}, {m.high:.3f}] ({t['blocks']} layers) | "
                     f"{t['best_block']} ({t['position']}) | {float(b):.3f} [{b.low:.3f}, {b.high:.3f}] |")  # fmt: skip
    return "\n".join(lines)


def readouts_string(values) -> str:
    """Per-pair readouts as ``"1.234 -0.5 ..."`` (how a row keeps them; NaN written ``nan``)."""
    return " ".join(f"{float(v):.4f}" for v in np.asarray(values, dtype=np.float64).tolist())


def readouts_array(text: str) -> np.ndarray:
    """:func:`readouts_string` read back: float64 ``[pairs]``."""
    return np.array([float(x) for x in str(text).split()], dtype=np.float64)


def linear_fit(both: np.ndarray, readouts: np.ndarray) -> dict:
    """MIB's linear model of a continuous readout (Mueller et al. 2025, §4.1, IOI's ``ioi_linear_params``): least squares
    (scikit-learn's ``LinearRegression``) of each pair's readout under a full interchange on the signals of that pair
    when every variable comes from the source.

    Args:
        both: float ``[pairs, signals]`` of ±1, NaN rows where the linear model has no term (left out).
        readouts: float ``[pairs]``, the readout under the full interchange.

    Returns:
        ``{"bias", "coefficients" (one per signal), "r2", "pairs"}``; ``None`` values where fewer than 3 pairs have
        signals or the signals do not vary.
    """
    from sklearn.linear_model import LinearRegression

    both, readouts = np.asarray(both, dtype=np.float64), np.asarray(readouts, dtype=np.float64)
    keep = ~np.isnan(both).any(axis=1) & ~np.isnan(readouts)
    if keep.sum() < 3 or np.all(both[keep] == both[keep][0]):
        return {"bias": None, "coefficients": None, "r2": None, "pairs": int(keep.sum())}
    model = LinearRegression().fit(both[keep], readouts[keep])
    return {"bias": float(model.intercept_), "coefficients": [float(c) for c in model.coef_], "r2": float(model.score(both[keep], readouts[keep])),
            "pairs": int(keep.sum())}  # fmt: skip


def linear_error(readouts: np.ndarray, signals: np.ndarray, fit: Mapping, pairs: HeldOut) -> Estimate | None:
    """MIB's IOI score of a unit: the mean squared difference between each held-out pair's intervened readout and the
    linear model's value for the signals of the variable interchanged (lower is better: 0 where the unit moves the
    readout exactly as the variable alone would), with its interval over the same replicates as IIA's.

    Args:
        readouts: float ``[pairs]``, the unit's intervened readout on ``pairs``.
        signals: float ``[pairs, signals]``, the variable's signals (NaN rows: pairs the linear model has no term for).
        fit: :func:`linear_fit`'s parameters.

    Returns:
        An :class:`~interp.core.estimates.Estimate` in squared readout units; ``None`` without a fit or a pair to score.
    """
    if fit.get("bias") is None:
        return None
    signals, readouts = np.asarray(signals, dtype=np.float64), np.asarray(readouts, dtype=np.float64)
    keep = ~np.isnan(signals).any(axis=1) & ~np.isnan(readouts)
    if not keep.any():
        return None
    predicted = fit["bias"] + signals[keep] @ np.asarray(fit["coefficients"])
    errors = (readouts[keep] - predicted) ** 2
    b, s = pairs.b[keep], pairs.s[keep]
    with np.errstate(invalid="ignore", divide="ignore"):
        replicates = pairs.boot.pair_totals(b, s, errors) / pairs.boot.pair_totals(b, s, np.ones(len(errors)))
    return pairs.estimate(float(errors.mean()), replicates)


def flat(name: str, value: Estimate) -> dict:
    """``{name, name_low, name_high}`` of an estimate, rounded to 4 places: how a row keeps a figure and its interval."""
    return {name: round(float(value), 4), f"{name}_low": round(value.low, 4), f"{name}_high": round(value.high, 4)}


def mib_pairs(kept: Sequence, held: Mapping[str, HeldOut], linear, grouped: Mapping) -> HeldOut | None:
    """MIB's counterfactual pairs for its linear score: every ordered pair of distinct held-out examples (those any
    variable's held-out pairs use, never seen in training) that share their names (IOI: the first clause flipped, the
    subject swapped, both: the task's ``linear.both`` defined, :class:`~interp.tasks.base.LinearReadout`), with their
    bootstrap over ``grouped``'s ``groups`` (named ``unit``); ``None`` where fewer than 3 pairs share their names."""
    used = sorted({int(i) for h in held.values() for i in (*h.bases.tolist(), *h.sources.tolist())})
    pairs = [(b, s) for b in used for s in used if b != s and linear.both(kept[b], kept[s]) is not None]
    if len(pairs) < 3:
        return None
    b, s = np.array(pairs).T
    return HeldOut(b, s, grouped.get("groups"), grouped.get("unit", "examples"))


def score_linear(rows: list[dict], pairs: HeldOut | None, examples: Sequence, linear) -> None:
    """MIB's linear score of every unit (in place): per model, variable and location, the linear model fitted on the
    full vector's readouts there on MIB's pairs (:func:`mib_pairs`, :func:`linear_fit`), each unit's squared error from it
    (``mib_linear``), the same error of each base's own run (``mib_linear_stays``: the intervention that does nothing)
    and the fit's R²; blank where no full vector ran at the location."""
    full = {(r["model"], r["variable"], r["location"]): r for r in rows if r["featurizer"] == "full" and r.get("readouts")}
    for v in ([] if pairs is None else dict.fromkeys(r["variable"] for r in rows)):
        bases, sources = [examples[i] for i in pairs.bases.tolist()], [examples[i] for i in pairs.sources.tolist()]
        both = np.array([linear.both(b, s) or (np.nan,) * len(linear.names) for b, s in zip(bases, sources)], dtype=np.float64)
        signals = np.array([linear.signals(b, s, v) or (np.nan,) * len(linear.names) for b, s in zip(bases, sources)], dtype=np.float64)
        fits = {}
        for r in rows:
            if r["variable"] != v or not r.get("readouts"):
                continue
            anchor = full.get((r["model"], v, r["location"]))
            if anchor is None:
                continue
            key = (r["model"], r["location"])
            if key not in fits:
                fits[key] = linear_fit(both, readouts_array(anchor["readouts"]))
            fit = fits[key]
            if len(readouts_array(r["readouts"])) != len(pairs):
                continue  # a unit kept from a run before MIB's pairs were these
            found = linear_error(readouts_array(r["readouts"]), signals, fit, pairs)
            stays = linear_error(readouts_array(anchor["base_readouts"]), signals, fit, pairs)
            if found is None or stays is None:
                continue
            r.update({**flat("mib_linear", found), **flat("mib_linear_stays", stays), "mib_linear_r2": round(fit["r2"], 4),
                      "mib_linear_pairs": int((~np.isnan(signals).any(axis=1)).sum())})  # fmt: skip
