"""The probe sweep: every location × target × probe kind, against both control tasks (paper §6.1, Figure 2).

Usage::

    from interp.jobs.probe_sweep import ProbeSweepConfig, run_probe_sweep
    rows = run_probe_sweep(ProbeSweepConfig(cache="runs/demo/activations.h5", out="runs/demo"))

For each location and target, all probes of the sweep ({task, type control,
shuffle control} × seeds × folds) are fitted at once by
:func:`interp.analysis.probes.batched.fit_probes`. Accuracy is always on the held-out
fold (stratified k-fold on the target, the same folds for task and
controls); selectivity = task accuracy − control accuracy on the same
examples. Each seed redraws the folds, the control labels and the initial
weights; rows report the mean and standard deviation over seeds of the
fold-averaged figures, and beside the task accuracy and each selectivity
(``_low``, ``_high``) its 95% interval from a bootstrap over examples
(scipy's ``bootstrap``, percentile, 1,000 resamples, seed 0) of each
example's held-out correctness averaged over seeds: how sure the figure is
on this many examples, where the standard deviation says how the seeds
spread.

Targets: any causal variable whose values the cache keeps (MoNLI:
``lexrel``, forward ⊏ vs reverse ⊐; ``negated``; ``output``), and ``label``
(also called ``infer``: INFER's output, which on MoNLI is the gold label).
By default the task's own targets, as its cache records them (MoNLI:
``lexrel`` and ``infer``), else every variable and ``label``. ``locations="aligned"`` probes each variable only at its
own aligned roles (as the task aligned them, concatenated) at every layer.
A target of C values gets C-way probes (MQNLI's relations:
up to 7; a row's ``chance`` is the majority class's share). A location at
several roles (``blocks.2.hook_resid_post@n_s.p+n_s.h``) probes their
vectors concatenated, and its type control keys on the words at its roles.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from sklearn.model_selection import StratifiedKFold
from tqdm.auto import tqdm

from interp.api.loading import Classifier
from interp.analysis.probes.batched import ProbeSettings, fit_probes, predict_probes
from interp.analysis.probes.controls import ShuffleControl, TypeControl
from interp.core.errors import ConfigError, named
from interp.core.outputs import (
    OutputSet,
    read_json,
    write_csv_atomic,
    write_json_atomic,
)
from interp.files.activations import open_cache
from interp.api.objects import Location, parse_locations

LABEL_TARGETS = ("label", "infer")  # the gold label (on MoNLI, INFER's output)
PROBE_KINDS = {"mlp": 4, "linear": 0}  # probe kind -> hidden units
LABEL_SETS = ("task", "type_control", "shuffle_control")


@dataclass(frozen=True)
class ProbeSweepConfig:
    """A sweep over a cache: which locations, targets, probe kinds, how many folds and seeds."""

    cache: str
    out: str
    model: str | Classifier | None = None  # check the cache was made with these weights (a loaded model is not hashed again)
    locations: str = "all"
    targets: tuple[str, ...] = ()  # (): the task's probe_targets (MoNLI: lexrel, infer), else every variable and label
    probes: tuple[str, ...] = tuple(PROBE_KINDS)
    folds: int = 5
    seeds: int = 3
    max_iter: int = 100
    lr: float = 0.05
    alpha: float = 1e-4

    def validate(self) -> "ProbeSweepConfig":
        for name in self.probes:
            if name not in PROBE_KINDS:
                raise ConfigError(f"unknown probe kind {name!r}; choose from {', '.join(PROBE_KINDS)}")
        for flag, value, least in (("`folds=`", self.folds, 2), ("`seeds=`", self.seeds, 1), ("`max_iter=`", self.max_iter, 1)):
            if value < least:
                raise ConfigError(f"{flag} must be at least {least}, got {value}")
        return self


def control_units(roles: str | tuple[str, ...], words: dict[str, np.ndarray]) -> np.ndarray:
    """The word type a location's type control keys on (Hewitt & Liang 2019).

    The word at the location's role (MoNLI: w_p's at w_p, w_h's at w_h), or
    the tuple of the words at its roles (``n_s.p+n_s.h``); where a role has no
    word of its own ([CLS]) the tuple of all the example's words (MoNLI: the
    (w_p, w_h) pair). Lower-cased.
    """
    roles = (roles,) if isinstance(roles, str) else tuple(roles)
    lowered = {r: np.char.lower(w.astype(str)) for r, w in sorted(words.items())}
    keyed = [lowered[r] for r in roles] if all(r in lowered for r in roles) else list(lowered.values())
    joined = None
    for w in keyed:
        joined = w if joined is None else np.char.add(np.char.add(joined, "|"), w)
    return joined


def default_targets(cache) -> tuple[str, ...]:
    """The targets the cache's task names (:attr:`Task.probe_targets <interp.tasks.base.Task.probe_targets>`:
    MoNLI's lexrel and infer, the paper's two), else every stored variable and the label."""
    named_by_task = cache.meta.get("probe_targets")
    return tuple(str(t) for t in named_by_task) if named_by_task is not None else (*cache.stored_values, "label")


def _labels(cache, targets) -> dict[str, np.ndarray]:
    """Each target's int64 ``[n]`` classes, numbered 0..C-1 (C the values it takes here).

    Raises:
        ConfigError: a target the cache has no values of.
    """
    out = {}
    for t in targets:
        if t in LABEL_TARGETS:
            y = cache.column("label").astype(np.int64)
        elif t in cache.stored_values:
            y = cache.values(t).codes.astype(np.int64)
        else:
            raise ConfigError(
                f"{named('targets', repr(t))}: the cache keeps values of {', '.join(cache.stored_values) or 'no variable'} "
                f"(and the label: {', '.join(LABEL_TARGETS)})"
            )
        out[t] = np.unique(y, return_inverse=True)[1].astype(np.int64)  # classes 0..C-1 in code order
    return out


def sweep_location(
    X: np.ndarray, loc: Location, targets: dict[str, np.ndarray], ids: np.ndarray, words: dict[str, np.ndarray], config: ProbeSweepConfig
) -> list[dict]:
    """All probes at one location; one row per (target, probe kind) with held-out accuracies and selectivities.

    ``X`` is float ``[n, tokens × d_model]`` (a location at several roles
    concatenates its vectors). A target of C values gets C-way probes (one
    logit when C = 2); ``chance`` in a row is its majority class's share.
    """
    n = len(ids)
    units = control_units(loc.roles, words)
    X_t = torch.from_numpy(np.ascontiguousarray(X, dtype=np.float32))
    rows = []
    offset = 0  # probe seeds run on across targets
    for target, y in targets.items():
        specs, Y, masks = [], [], []
        for seed in range(config.seeds):
            label_sets = {
                "task": y,
                "type_control": TypeControl(random_state=seed).fit_transform(units, y),
                "shuffle_control": ShuffleControl(random_state=seed).fit_transform(ids, y),
            }
            folds = StratifiedKFold(config.folds, shuffle=True, random_state=seed).split(np.zeros(n), y)
            for fold, (train, _) in enumerate(folds):
                mask = np.zeros(n, dtype=bool)
                mask[train] = True
                for label_set in LABEL_SETS:
                    specs.append((seed, fold, label_set))
                    Y.append(label_sets[label_set])
                    masks.append(mask)
        Y_t = torch.from_numpy(np.stack(Y))
        mask_t = torch.from_numpy(np.stack(masks))
        n_classes = max(2, int(y.max()) + 1)
        for kind in config.probes:
            settings = ProbeSettings(PROBE_KINDS[kind], config.max_iter, config.lr, config.alpha)
            seeds = [1_000_003 * spec[0] + offset + i for i, spec in enumerate(specs)]  # reproducible, distinct per probe
            params = fit_probes(X_t, Y_t, mask_t, n_classes, settings, seeds)
            correct = (predict_probes(X_t, params).argmax(-1) == Y_t).float()
            held_out = ((correct * ~mask_t).sum(1) / (~mask_t).sum(1)).numpy()
            acc: dict[tuple, list[float]] = {}
            for (seed, _, label_set), a in zip(specs, held_out):
                acc.setdefault((label_set, seed), []).append(float(a))
            # Each example is held out once per seed: its held-out correctness, averaged over seeds, for the intervals.
            per_example = {ls: np.zeros(n) for ls in LABEL_SETS}
            for (seed, _, label_set), hit, train in zip(specs, correct.numpy(), masks):
                per_example[label_set][~train] += hit[~train] / config.seeds
            per_seed = {ls: np.array([np.mean(acc[(ls, s)]) for s in range(config.seeds)]) for ls in LABEL_SETS}
            row = {"location": str(loc), "hidden_index": loc.hidden_index, "role": "+".join(loc.roles), "site": _site_kind(loc),
                   "target": target, "probe": kind}  # fmt: skip
            for ls in LABEL_SETS:
                row[f"{ls}_acc_mean"], row[f"{ls}_acc_std"] = per_seed[ls].mean(), per_seed[ls].std()
            row["task_acc_low"], row["task_acc_high"] = example_interval(per_example["task"])
            for control in ("type", "shuffle"):
                sel = per_seed["task"] - per_seed[f"{control}_control"]
                row[f"selectivity_{control}_mean"], row[f"selectivity_{control}_std"] = sel.mean(), sel.std()
                row[f"selectivity_{control}_low"], row[f"selectivity_{control}_high"] = example_interval(
                    per_example["task"] - per_example[f"{control}_control"])
            row.update(seeds=config.seeds, folds=config.folds, n_examples=n, classes=n_classes, chance=float(np.bincount(y).max() / n))
            rows.append(row)
        offset += len(specs)
    return rows


def example_interval(values: np.ndarray, n_resamples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """The 95% percentile interval of the mean of per-example ``values`` (a probe's held-out correctness, or task minus
    control correctness for selectivity), from scipy's bootstrap over examples, seeded."""
    from scipy.stats import bootstrap

    if np.ptp(values) == 0:  # every example alike: the interval is the value itself (it says nothing beyond these examples)
        return float(values[0]), float(values[0])
    found = bootstrap((values,), np.mean, n_resamples=n_resamples, method="percentile", random_state=seed, vectorized=True)
    return float(found.confidence_interval.low), float(found.confidence_interval.high)


def _site_kind(loc: Location) -> str:
    """``resid`` for the residual stream, else the component's hook name (``hook_mlp_out``, ``attn.hook_z.h3``): a probe figure's panel."""
    return "resid" if loc.is_residual else loc.hook


def _plan(config: ProbeSweepConfig, cache, targets: tuple[str, ...]) -> list[tuple[Location, tuple[str, ...]]]:
    """(location, targets probed there): every target at every location, or with ``aligned`` each at its own roles.

    Raises:
        ConfigError: ``aligned`` with a target the cache has no alignment for (the label: probe it at named locations).
    """
    n_layers = cache.meta["n_layers"]
    if config.locations.strip() != "aligned":
        heads = cache.meta.get("n_heads")
        return [(loc, targets) for loc in parse_locations(config.locations, n_layers, cache.roles, cache.roles, heads and int(heads))]
    alignment = cache.alignment
    missing = [t for t in targets if t not in alignment]
    if missing:
        raise ConfigError(f"`locations=aligned`: target {missing[0]!r} has no aligned roles in {config.cache}; name its `locations=`")
    plan: dict[Location, list[str]] = {}
    for target in targets:
        for loc in parse_locations("aligned", n_layers, cache.roles, [alignment[target]]):
            plan.setdefault(loc, []).append(target)
    return [(loc, tuple(names)) for loc, names in plan.items()]


def run_probe_sweep(config: ProbeSweepConfig, *, progress: bool = True) -> list[dict]:
    """Run the sweep; write ``probes.csv`` and ``probes.png`` into ``out``.

    Raises:
        ConfigError: bad settings, or a cache that is missing, foreign,
            unfinished, made with another model, or lacks a location.
        DataError: a location's vectors hold NaN or infinity (the rows named), before any probe trains.
        OutputError: ``out`` cannot be written.
    """
    config.validate()
    out = Path(config.out)
    started = time.perf_counter()
    rows: list[dict] = []
    with open_cache(config.cache, model=config.model) as cache:
        ids = np.array(cache.example_ids)
        aligned = config.locations.strip() == "aligned"
        defaults = tuple(v for v in cache.stored_values if v in cache.alignment) if aligned else default_targets(cache)
        targets = _labels(cache, config.targets or defaults)
        plan = _plan(config, cache, tuple(targets))
        for name, y in targets.items():
            smallest = int(np.bincount(y).min()) if len(y) else 0
            if smallest < config.folds:
                raise ConfigError(f"{named('folds', config.folds)}: target {name!r} has only {smallest} examples of one class")
        key = _request_key(config, cache.meta, ids, tuple(targets))
        done = read_json(out / "probes.json")
        if done and done.get("request") == key and (out / "probes.csv").is_file() and (out / "probes.png").is_file():
            if progress:
                tqdm.write(f"{out}/probes.csv: already swept with these settings, reusing it")
            return done["rows"]
        words = {role: cache.words(role) for role in cache.word_roles}
        for loc, _ in plan:  # a NaN or infinite row is named before any probe trains (it once scored every probe 0.5)
            cache.vectors(loc)
        for loc, names in tqdm(plan, desc="probes", unit="location", disable=not progress):
            rows.extend(sweep_location(cache.vectors(loc), loc, {t: targets[t] for t in names}, ids, words, config))
    from interp.analysis.probes.figure import plot_probes

    with OutputSet(out, "probe") as outputs:
        write_csv_atomic(rows, outputs.path("probes.csv"))
        plot_probes(rows, outputs.path("probes.png"))
        write_json_atomic(outputs.path("probes.json"), {"request": key, "rows": rows})
    if progress:
        tqdm.write(f"probe sweep: {len(rows)} rows in {time.perf_counter() - started:.1f} s")
    return rows


def _request_key(config: ProbeSweepConfig, meta: dict, ids: np.ndarray, targets: tuple[str, ...]) -> dict:
    """What decides a sweep's result: its settings and the cache's model, rule, dtype and examples."""
    settings = {k: v for k, v in config.__dict__.items() if k not in ("cache", "out", "model")}
    settings["targets"] = list(targets)
    settings.update({k: meta[k] for k in ("model_sha256", "wordpiece", "dtype")})
    settings["examples"] = hashlib.sha256("\n".join(ids.tolist()).encode()).hexdigest()
    return json.loads(json.dumps(settings))
