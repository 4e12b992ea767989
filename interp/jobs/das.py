"""`interp das`: distributed alignment search at one location or all, beside vanilla interchange and a localist baseline.

Usage::

    from interp.api.specs import SampleSpec
    from interp.jobs.das import DasConfig, run_das
    rows = run_das(DasConfig(model="runs/demo/model", out="runs/das", locations="all",
                             variables=("lexrel", "negated"), subspaces=("64",),
                             sample=SampleSpec(splits=("pmonli", "nmonli_test"), max_per_split=200)))

For each seed the examples are split into training and held-out parts
(:func:`interp.causal.pairs.split_examples`); for each variable, balanced
counterfactual pairs are drawn within each part
(:func:`interp.causal.pairs.counterfactual_pairs`). Then at each location,
for each subspace size ``k`` (or ``boundless``), one *unit*:

* DAS (Geiger, Wu, Potts, Icard & Goodman 2024, §3): a rotation trained on
  the training pairs with the model frozen (:mod:`interp.analysis.das`),
  scored on the held-out pairs;
* vanilla interchange (the whole vector) on the same held-out pairs;
* the localist baseline: the block of ``k`` coordinates with the best IIA on
  the training pairs, scored on the held-out pairs;
* beside each IIA its nulls (``stays_base``, ``copies_source``) and the chance rate.

Every unit is a JSON file in ``<out>/das.parts/`` (written atomically), and
its trained intervention is saved in ``<out>/interventions/``
(:mod:`interp.files.subspaces`): a run interrupted at any moment and started
again skips the finished units. A later run with more locations, seeds or
sizes but the same settings reuses the units it shares. When all units are
done, ``das.csv`` (one row per unit), ``das_summary.csv`` (mean and 95%
interval over seeds) and ``das.png`` (location × variable heatmaps) are
written together with a manifest (:class:`interp.core.outputs.OutputSet`).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from interp.api.intervenable import IntervenableModel
from interp.api.loading import Classifier
from interp.api.specs import DataSpec, RunSpec, SampleSpec
from interp.analysis.das import (
    FitSettings,
    best_block,
    n_steps,
    score_intervention,
    train_and_score,
)
from interp.analysis.das_figure import das_heatmap, summarize_seeds
from interp.causal.pairs import das_pairs
from interp.core.errors import ConfigError, OutputError, named, warn
from interp.core.outputs import (
    OutputSet,
    ensure_writable_dir,
    no_link,
    read_json,
    require_free_space,
    require_writable,
    save_figure_atomic,
    write_csv_atomic,
    write_json_atomic,
)
from interp.engine.interventions import SUBSPACE_KINDS, Interchange, make_intervention
from interp.engine.pair_suffix import PairSuffix
from interp.files.subspaces import load_trained_intervention, save_intervention
from interp.hooks.locations import Location, parse_locations
from interp.models.evaluation import predict_logits
from interp.models.labels import LabelReading
from interp.tasks import Task
from interp.hooks.encoding import location_tokens

BOUNDLESS = "boundless"
#: Training pairs the localist baseline's block is chosen on (a seeded share of the training pairs).
BLOCK_CHOICE_PAIRS = 256


@dataclass(frozen=True)
class DasConfig:
    """What to align, where, and how to train.

    ``subspaces``: sizes ``k`` as strings, or ``boundless`` (the size learned);
    ``kind``: ``rotated`` (an orthogonal ``width × width`` R) or ``lowrank``
    (an orthonormal ``width × k`` basis). ``data`` and ``sample`` pick the
    task and its example set as ``interp intervene`` does (``run``: device,
    pairs per training step, WordPiece rule); ``model`` is a checkpoint or a
    :class:`~interp.api.loading.Classifier`. Each of ``seeds`` gives its own
    example split, pairs, initial rotation and batch order.
    """

    model: str | Classifier
    out: str
    locations: str = "aligned"
    variables: tuple[str, ...] = ("lexrel",)
    subspaces: tuple[str, ...] = ("64",)
    kind: str = "rotated"
    data: DataSpec = DataSpec()
    sample: SampleSpec = SampleSpec()
    run: RunSpec = RunSpec()  # batch_size None: 64 pairs per training step
    seeds: tuple[int, ...] = (0,)
    train_pairs: int = 2000
    test_pairs: int = 1000
    test_share: float = 0.2
    epochs: int = 2
    lr: float = 1e-3
    overwrite: bool = False

    @property
    def batch_size(self) -> int:
        """Pairs per training step: ``run.batch_size``, else 64."""
        return self.run.batch(64)

    def validate(self) -> "DasConfig":
        if self.kind not in SUBSPACE_KINDS:
            raise ConfigError(f"`kind=` must be one of {', '.join(SUBSPACE_KINDS)}, got {self.kind!r}")
        if not self.subspaces:
            raise ConfigError("`subspaces=` names no size")
        for k in self.subspaces:
            if k != BOUNDLESS and not (k.isascii() and k.isdigit() and len(k) <= 12 and int(k) >= 1):  # no 5,000-digit int() parse
                raise ConfigError(f"{named('subspaces', repr(k))}: give a size k >= 1 or 'boundless'")
        if BOUNDLESS in self.subspaces and self.kind != "rotated":
            raise ConfigError("`subspaces=boundless` learns a full rotation: use it with `kind=rotated`")
        if not self.seeds:
            raise ConfigError("`seeds=` names no seed")
        if not self.variables:
            raise ConfigError("`variables=` names no variable")
        for name, value, low in (("`train_pairs=`", self.train_pairs, 2), ("`test_pairs=`", self.test_pairs, 2),
                                 ("`epochs=`", self.epochs, 1)):  # fmt: skip
            if value < low:
                raise ConfigError(f"{name} must be at least {low}, got {value}")
        if not 0 < self.test_share < 1:
            raise ConfigError(f"`test_share=` must lie in (0, 1), got {self.test_share}")
        if not self.lr > 0:
            raise ConfigError(f"`lr=` must be positive, got {self.lr}")
        return self


def _unit_name(variable: str, location: Location, k: str, seed: int) -> str:
    """A unit's file name stem: variable, location, size and seed, with any other character as ``_``."""
    return re.sub(r"[^\w.@+-]", "_", f"{variable}__{location}__k{k}__s{seed}")


def _check_sizes(config: DasConfig, locations: list[Location], widths: dict[Location, int]) -> None:
    for loc in locations:
        for k in config.subspaces:
            if k != BOUNDLESS and int(k) > widths[loc]:
                raise ConfigError(f"{named('subspaces', k)}: k must be at most the width of location {loc}, {widths[loc]} (tokens × d_model)")


def _finished(unit: Path) -> bool:
    """Whether a unit's row reads back whole (a damaged or edited one is run again, not met as a traceback at the end)."""
    row = read_json(unit)
    return isinstance(row, dict) and {"das_iia", "untrained_iia", "vanilla_iia", "file"} <= set(row)


def run_das(config: DasConfig, *, progress: bool = True) -> list[dict]:
    """Run (or resume) every unit of ``config``; returns the rows of ``das.csv``.

    Raises:
        ConfigError: bad settings; ``k`` wider than a location; a variable
            the task lacks or that no pair of the examples can change; a role
            an example lacks (naming it).
        DataError, ModelError: bad data or model.
        OutputError: ``out`` holds a DAS run with other settings (without
            ``overwrite``), or cannot be written.
    """
    config.validate()
    out = Path(config.out)
    if out.exists() and not out.is_dir():
        raise OutputError(f"{named('out', out)} is a file; give a directory")
    require_writable(out)  # before the model loads: a read-only folder named, not met halfway
    lab = IntervenableModel.from_specs(config.model, config.data, config.run, variables=config.variables, splits=config.sample.splits)
    examples = config.sample.draw(lab.task)
    task, model, tokenizer = lab.task, lab.model.module, lab.model.tokenizer
    causal = task.build_causal_model(examples)
    locations = lab.locations(config.locations, config.variables)
    encoded = lab.encode(examples)
    widths = {loc: len(location_tokens(encoded, loc.roles, f"location {loc}")[0]) * lab.model.d_model for loc in locations}
    _check_sizes(config, locations, widths)

    sha = lab.model.sha256
    ids = [e.id for e in examples]
    request = {
        "model_sha256": sha, "task": task.name, "examples": hashlib.sha256("\n".join(ids).encode()).hexdigest(),
        **{k: getattr(config, k) for k in ("kind", "train_pairs", "test_pairs", "test_share", "epochs", "lr", "batch_size")},
        "wordpiece": lab.wordpiece, **({} if lab.reading.identity else {"model_labels": list(lab.reading.model_labels)}),
    }  # fmt: skip
    parts = no_link(out / "das.parts")
    saved = read_json(parts / "request.json") if parts.is_dir() else None
    if saved is not None and saved != request:
        if not config.overwrite:
            raise OutputError(f"{named('out', out)} holds a DAS run with other settings (model, examples or training); pass `overwrite=True` or choose another `out=`")
        for stale in parts.glob("*.json"):
            stale.unlink()
    units = [(loc, seed, var, k) for loc in locations for seed in config.seeds for var in config.variables for k in config.subspaces]
    todo = [u for u in units if saved != request or not _finished(parts / f"{_unit_name(u[2], u[0], u[3], u[1])}.json")]
    # What is left to write (each unit's matrix at most width² float32s, its sidecar and row; the tables and the figure):
    # checked first, so a full disk stops the run before it starts instead of leaving unfinished state behind.
    require_free_space(out / "das.csv", sum(4 * widths[loc] ** 2 + (16 << 10) for loc, *_ in todo) + (1 << 20))
    if saved != request:
        ensure_writable_dir(parts)
        write_json_atomic(parts / "request.json", request)

    inputs = [task.inputs(e) for e in examples]
    own_pred = lab.reading.predict(predict_logits(model, encoded, tokenizer.pad_token_id))  # the task's label ids, as the targets
    read = lab.reading.read
    pair_sets = {}
    for seed in config.seeds:
        for variable in config.variables:
            drawn = das_pairs(causal, inputs, variable, config.test_share, seed, config.train_pairs, config.test_pairs)
            pair_sets[seed, variable] = tuple(_as_tensors(pairs, task) for pairs in drawn)
    settings = {seed: FitSettings(epochs=config.epochs, lr=config.lr, batch_size=config.batch_size, seed=seed) for seed in config.seeds}
    total = sum(n_steps(len(pair_sets[s, v][0][0]), settings[s]) for _, s, v, _ in todo)
    bar = tqdm(total=total, unit="step", disable=not progress, desc="das")
    meta_common = {"task": task.name, "model": lab.model.name, "model_sha256": sha, "causal_model": causal.name}
    try:
        runner, runner_loc, vanilla = None, None, {}
        for loc, seed, variable, k in todo:
            if runner_loc != loc:
                runner, runner_loc = PairSuffix(model, encoded, loc), loc
            bar.set_description(f"{variable} {loc} k={k} seed {seed}")
            key = (loc, seed, variable)
            if key not in vanilla:  # the whole vector's score is the same for every size k: once per (location, seed, variable)
                test_b, test_s, test_t = pair_sets[seed, variable][1]
                vanilla[key] = score_intervention(runner, Interchange(runner.width), test_b, test_s, test_t, own_pred, read)
            row = _run_unit(config, runner, pair_sets[seed, variable], own_pred, vanilla[key], k, seed, settings[seed], bar, lab.reading)
            row.update(variable=variable, location=str(loc), layer=loc.layer, roles="+".join(loc.roles), seed=seed)
            name = _unit_name(variable, loc, k, seed)
            intervention = row.pop("_intervention")
            row["file"] = f"interventions/{name}.safetensors"
            # this run's own unit: a run killed between the two writes redoes it
            save_intervention(intervention, out / "interventions" / name,
                              {**meta_common, "variable": variable, "location": str(loc), "seed": seed, "das_iia": row["das_iia"]}, overwrite=True)  # fmt: skip
            write_json_atomic(parts / f"{name}.json", row)
    finally:
        bar.close()
    rows = [read_json(parts / f"{_unit_name(var, loc, k, seed)}.json") for loc, seed, var, k in units]
    with OutputSet(out, "das") as outputs:
        write_csv_atomic(rows, outputs.path("das.csv"))
        write_csv_atomic(summarize_seeds(rows), outputs.path("das_summary.csv"))
        fig = das_heatmap(rows)
        save_figure_atomic(fig, outputs.path("das.png"), dpi=110, bbox_inches="tight")
    lab.split_accuracies(examples, own_pred)  # with the results: a warning for each split the model is at chance on
    for row in rows:  # and for each unit whose DAS does not clear its untrained baseline
        if not row["das_gain_low"] > 0:
            warn(f"DAS for {row['variable']} at {row['location']} (k={row['k']}, seed {row['seed']}): held-out IIA {row['das_iia']:.3f} "
                 f"[{row['das_iia_low']:.3f}, {row['das_iia_high']:.3f}] does not clear the untrained intervention's "
                 f"{row['untrained_iia']:.3f} [{row['untrained_iia_low']:.3f}, {row['untrained_iia_high']:.3f}] on the same "
                 f"{row['test_pairs']} pairs; train on more pairs or epochs (`train_pairs=`, `epochs=`) before reading it")  # fmt: skip
    return rows


def score_saved(config: DasConfig, path: str) -> dict:
    """Score a saved intervention (:mod:`interp.files.subspaces`) on the held-out pairs ``config`` draws for its variable.

    The location and variable come from the file's sidecar; ``config``'s
    example set, ``seeds[0]``, ``test_share`` and ``test_pairs`` give the
    pairs, so with a run's own settings this reproduces its ``das_iia``.
    Returns the scores of the saved intervention and of vanilla
    interchange, with the variable, location and k.

    Raises:
        ConfigError: the file was trained on another model, or its variable or location does not fit the task.
        DataError: the file is missing or not an intervention.
    """
    config.validate()
    lab = IntervenableModel.from_specs(config.model, config.data, config.run, splits=config.sample.splits)
    examples = config.sample.draw(lab.task)
    task = lab.task
    intervention, meta = load_trained_intervention(path, model_sha256=lab.model.sha256, argument="load")
    variable = task.check_variable(str(meta.get("variable")), "load")
    causal = task.build_causal_model(examples)
    model, tokenizer = lab.model.module, lab.model.tokenizer
    (loc,) = parse_locations(str(meta.get("location")), lab.model.n_layers, task.roles)
    encoded = lab.encode(examples)
    runner = PairSuffix(model, encoded, loc)
    intervention.to(runner.vectors.device)
    if runner.width != intervention.width:
        raise ConfigError(f"{named('load', path)}: the intervention is {intervention.width} wide, location {loc} is {runner.width} here")
    own_pred = lab.reading.predict(predict_logits(model, encoded, tokenizer.pad_token_id))
    read = lab.reading.read
    seed = config.seeds[0]
    _, held_out = das_pairs(causal, [task.inputs(e) for e in examples], variable, config.test_share, seed, None, config.test_pairs)
    pairs = _as_tensors(held_out, task)
    saved = score_intervention(runner, intervention, *pairs, own_pred, read)
    vanilla = score_intervention(runner, Interchange(runner.width), *pairs, own_pred, read)
    return {"variable": variable, "location": str(loc), "k": intervention.k, "seed": seed,
            **{f"saved_{k}": v for k, v in saved.items() if k not in ("hits", "interval")},
            **{f"vanilla_{k}": v for k, v in vanilla.items() if k not in ("pairs", "hits", "interval")}, "interval": saved["interval"]}  # fmt: skip


def _as_tensors(pairs, task: Task) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    targets = [task.labels.index(v) for v in pairs.counterfactual]
    return torch.from_numpy(pairs.base), torch.from_numpy(pairs.source), torch.tensor(targets, dtype=torch.long)


def _run_unit(config: DasConfig, runner: PairSuffix, pairs, own_pred: np.ndarray, vanilla: dict, k: str, seed: int, settings: FitSettings,
              bar, reading: LabelReading) -> dict:  # fmt: skip
    """Train and score one (location, seed, variable, k); the row of ``das.csv`` (its intervention under ``_intervention``).

    ``vanilla``: the whole vector's scores on the same held-out pairs (:func:`score_intervention`). The pairs' targets
    are the task's label ids; training aims at the model's id for each (``reading``), scoring reads the model's as the task's.
    """
    read = reading.read
    (train_b, train_s, train_t), (test_b, test_s, test_t) = pairs
    torch.manual_seed(seed)
    intervention = make_intervention(config.kind, runner.width, int(k), seed) if k != BOUNDLESS else make_intervention(BOUNDLESS, runner.width, seed=seed)
    started = time.perf_counter()
    found = train_and_score(runner, intervention, pairs[0], pairs[1], own_pred, reading, settings, on_step=lambda loss: bar.update(1))
    seconds = time.perf_counter() - started  # the history's scoring included
    das, untrained, gain, losses = found.trained, found.untrained, found.gain, found.losses
    choose = torch.randperm(len(train_b), generator=torch.Generator().manual_seed(seed))[:BLOCK_CHOICE_PAIRS]
    block = best_block(runner, intervention.k, train_b[choose], train_s[choose], train_t[choose], read)
    localist = score_intervention(runner, block, test_b, test_s, test_t, own_pred, read)
    row = {
        "size": k,
        "subspace": config.kind if k != BOUNDLESS else BOUNDLESS,
        "k": intervention.k,
        "width": runner.width,
        "train_pairs": len(train_b),
        "test_pairs": das["pairs"],
        "epochs": settings.epochs,
        "steps": n_steps(len(train_b), settings),
        "train_seconds": round(seconds, 2),
        "final_loss": round(losses[-1], 5),
        "chance": das["chance"],
    }
    for name, score in (("das", das), ("untrained", untrained), ("vanilla", vanilla), ("block", localist)):
        row.update({f"{name}_{key}{end}": score[key + end] for key in ("iia", "stays_base", "copies_source") for end in ("", "_low", "_high")})
    row.update(das_gain=float(gain), das_gain_low=gain.low, das_gain_high=gain.high, history=json.dumps(found.history))
    row["block"] = f"{getattr(block, 'start', 0)}:{getattr(block, 'stop', runner.width)}"
    row["_intervention"] = intervention
    return row
