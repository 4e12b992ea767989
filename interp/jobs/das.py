"""`interp das`: distributed alignment search at one location or all, beside vanilla interchange and a localist baseline.

Usage::

    from interp.api.specs import SampleSpec
    from interp.jobs.das import DasConfig, run_das
    rows = run_das(DasConfig(model="runs/demo/model", out="runs/das", locations="all",
                             variables=("lexrel", "negated"), subspaces=("64",), kinds=("rotated", "boundless"),
                             sample=SampleSpec(splits=("pmonli", "nmonli_test"), max_per_split=200)))

For each seed the examples are split into training and held-out parts
(:func:`interp.causal.pairs.split_examples`); for each variable, balanced
counterfactual pairs are drawn within each part
(:func:`interp.causal.pairs.counterfactual_pairs`). Then at each location,
for each kind of intervention (``rotated``, ``lowrank``, ``boundless`` or one of
your own, :data:`interp.engine.interventions.REGISTRY`) and, for a kind of a
chosen size, each subspace size ``k``, one *unit*:

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
import warnings
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from interp.api import das
from interp.api.intervenable import IntervenableModel
from interp.api.featurized import trainable_kinds
from interp.api.objects import Location, intervention_kinds
from interp.api.loading import Classifier
from interp.api.specs import DataSpec, RunSpec, SampleSpec
from interp.analysis.das_verdict import DIFFERENCES, row_figures, verdict
from interp.analysis.das import FitSettings, n_steps
from interp.analysis.das_figure import das_heatmap, summarize_seeds
from interp.core.errors import ConfigError, OutputError, named, renamed, warn
from interp.core.outputs import (
    OutputSet,
    ensure_writable_dir,
    exclusive,
    no_link,
    read_json,
    require_free_space,
    require_writable,
    save_figure_atomic,
    write_csv_atomic,
    write_json_atomic,
)
from interp.files.subspaces import load_trained_intervention, save_intervention



@dataclass(frozen=True)
class DasConfig:
    """What to align, where, and how to train.

    ``kinds``: the interventions trained, each a trainable kind: ``rotated``
    (an orthogonal ``width × width`` R), ``lowrank`` (an orthonormal ``width ×
    k`` basis), ``boundless`` (a rotation whose subspace size is learned) or
    one registered by your own class; ``subspaces``: the sizes ``k``, as
    strings, of every kind of a chosen size (``boundless`` takes none; the
    older ``subspaces=("boundless",)`` still works, with a
    :class:`DeprecationWarning`, as ``kinds`` holding it). ``data`` and ``sample`` pick the
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
    kinds: tuple[str, ...] = ("rotated",)
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

    def __post_init__(self) -> None:
        if BOUNDLESS in self.subspaces:  # the older spelling: boundless was a size
            warnings.warn("`subspaces=('boundless',)` is the older spelling of `kinds=(..., 'boundless')` (boundless is a kind of "
                          "intervention, whose size is learned)", DeprecationWarning, stacklevel=3)  # fmt: skip
            object.__setattr__(self, "subspaces", tuple(k for k in self.subspaces if k != BOUNDLESS))
            object.__setattr__(self, "kinds", (*(k for k in self.kinds if k != BOUNDLESS), BOUNDLESS) if self.subspaces else (BOUNDLESS,))

    @property
    def plan(self) -> list[tuple[str, str | None]]:
        """Each unit's (kind, size) at one location, seed and variable: every size of a sized kind, one unit of another."""
        sized = set(intervention_kinds(trainable=True, sized=True))
        return [(kind, k) for kind in self.kinds for k in (self.subspaces if kind in sized else (None,))]

    def validate(self) -> "DasConfig":
        trainable, sized = trainable_kinds(), intervention_kinds(trainable=True, sized=True)
        if not self.kinds:
            raise ConfigError("`kinds=` names no kind of intervention")
        for kind in self.kinds:
            if kind not in trainable:
                raise ConfigError(f"`kinds=` must be one of {', '.join(trainable)}, got {kind!r}")
        if any(kind in sized for kind in self.kinds) and not self.subspaces:
            raise ConfigError("`subspaces=` names no size")
        for k in self.subspaces:
            if not (k.isascii() and k.isdigit() and len(k) <= 12 and int(k) >= 1):  # no 5,000-digit int() parse
                raise ConfigError(f"{named('subspaces', repr(k))}: give a size k >= 1 (boundless is a kind: `kinds=`)")
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


#: The kind whose size is learned, once spelled as a size (``subspaces=("boundless",)``).
BOUNDLESS = "boundless"


def _size(kind: str, k: str | None) -> str:
    """A unit's size as ``das.csv``'s ``size`` column and its file name give it: ``k`` for ``rotated``, the kind and
    ``k`` for another sized kind, the kind alone for one whose size is learned."""
    return (k if kind == "rotated" else f"{kind}{k}") if k is not None else kind


def _unit_name(variable: str, location: Location, size: str, seed: int) -> str:
    """A unit's file name stem: variable, location, size and seed, with any other character as ``_``."""
    return re.sub(r"[^\w.@+-]", "_", f"{variable}__{location}__k{size}__s{seed}")


def _check_sizes(config: DasConfig, locations: list[Location], widths: dict[Location, int]) -> None:
    for loc in locations:
        for _, k in config.plan:
            if k is not None and int(k) > widths[loc]:
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
    with exclusive(out):  # a second run on the same folder is refused at once, not met when the first moves its files
        return _run_das(config, out, progress)


def _run_das(config: DasConfig, out: Path, progress: bool) -> list[dict]:
    lab = IntervenableModel.from_specs(config.model, config.data, config.run, variables=config.variables, splits=config.sample.splits)
    examples = config.sample.draw(lab.task)
    task = lab.task
    locations = lab.locations(config.locations, config.variables)
    widths = {loc: lab.width(examples, loc) for loc in locations}
    _check_sizes(config, locations, widths)

    sha = lab.model.sha256
    ids = [e.id for e in examples]
    request = {
        "model_sha256": sha, "task": task.name, "examples": hashlib.sha256("\n".join(ids).encode()).hexdigest(),
        "kinds": list(config.kinds), **{k: getattr(config, k) for k in ("train_pairs", "test_pairs", "test_share", "epochs", "lr", "batch_size")},
        "wordpiece": lab.wordpiece, **({} if lab.reading.identity else {"model_labels": list(lab.reading.model_labels)}),
    }  # fmt: skip
    parts = no_link(out / "das.parts")
    saved = read_json(parts / "request.json") if parts.is_dir() else None
    if saved is not None and saved != request:
        if not config.overwrite:
            raise OutputError(f"{named('out', out)} holds a DAS run with other settings (model, examples or training); pass `overwrite=True` or choose another `out=`")
        for stale in parts.glob("*.json"):
            stale.unlink()
    units = [(loc, seed, var, kind, k) for loc in locations for seed in config.seeds for var in config.variables for kind, k in config.plan]
    todo = [u for u in units if saved != request or not _finished(parts / f"{_unit_name(u[2], u[0], _size(*u[3:]), u[1])}.json")]
    # What is left to write (each unit's matrix at most width² float32s, its sidecar and row; the tables and the figure):
    # checked first, so a full disk stops the run before it starts instead of leaving unfinished state behind.
    require_free_space(out / "das.csv", sum(4 * widths[loc] ** 2 + (16 << 10) for loc, *_ in todo) + (1 << 20))

    settings = {seed: FitSettings(epochs=config.epochs, lr=config.lr, batch_size=config.batch_size, seed=seed) for seed in config.seeds}
    meta_common = {"task": task.name, "model": lab.model.name, "model_sha256": sha, **lab.model.reading_record}
    bound = lab.bind(examples)  # every unit reuses its pairs, own predictions and each location's prefix
    drawn = {(seed, variable): das.pairs(bound, variable, seed=seed, test_share=config.test_share, n_pairs=config.train_pairs,
                                         test_pairs=config.test_pairs)[0]
             for seed in config.seeds for variable in config.variables}  # fmt: skip
    total = sum(n_steps(len(drawn[s, v][0]), settings[s]) for _, s, v, _, _ in todo)
    if saved != request:  # only now, with every check passed and the pairs drawn: a refused run leaves no folder behind
        ensure_writable_dir(parts)
        write_json_atomic(parts / "request.json", request)
    with tqdm(total=total, unit="step", disable=not progress, desc="das") as bar:
        for loc, seed, variable, kind, k in todo:
            size = _size(kind, k)
            bar.set_description(f"{variable} {loc} {kind} k={k or 'learned'} seed {seed}")
            bar.set_postfix_str("")
            found = lab.train_das(bound, loc, variable, k=None if k is None else int(k), kind=kind,
                                  n_pairs=config.train_pairs, epochs=config.epochs, lr=config.lr, batch_size=config.batch_size,
                                  seed=seed, test_share=config.test_share, test_pairs=config.test_pairs,
                                  on_step=lambda loss: bar.update(1), on_blocks=lambda done, blocks: bar.set_postfix_str(
                                      f"best block of {size}: {done}/{blocks} scored"), warn_unlearned=False)  # fmt: skip
            name = _unit_name(variable, loc, size, seed)
            row = {**_row(found, size, settings[seed]), "file": f"interventions/{name}.safetensors"}
            # this run's own unit: a run killed between the two writes redoes it
            save_intervention(found.intervention, out / "interventions" / name,
                              {**meta_common, "causal_model": found.causal_model, "variable": variable, "location": str(loc), "seed": seed,
                               "das_iia": row["das_iia"]}, overwrite=True)  # fmt: skip
            write_json_atomic(parts / f"{name}.json", row)
    own = bound.own_labels()  # predicted once for every unit and for the chance check below
    rows = [read_json(parts / f"{_unit_name(var, loc, _size(kind, k), seed)}.json") for loc, seed, var, kind, k in units]
    with OutputSet(out, "das") as outputs:
        write_csv_atomic(rows, outputs.path("das.csv"))
        write_csv_atomic(summarize_seeds(rows), outputs.path("das_summary.csv"))
        fig = das_heatmap(rows)
        save_figure_atomic(fig, outputs.path("das.png"), dpi=110, bbox_inches="tight")
    lab.split_accuracies(examples, own)  # with the results: a warning for each split the model is at chance on
    for row in rows:  # and for each unit whose DAS does not clear its untrained baseline, its larger null and chance
        judged = verdict(row_figures(row))  # a unit of an older run has no gap to judge: "not judged", named
        if judged != "learned":
            warn(f"DAS for {row['variable']} at {row['location']} (k={row['k']}, seed {row['seed']}): {judged}. Held-out IIA "
                 f"{row['das_iia']:.3f} [{row['das_iia_low']:.3f}, {row['das_iia_high']:.3f}] on {row['test_pairs']} pairs; untrained "
                 f"{row['untrained_iia']:.3f} [{row['untrained_iia_low']:.3f}, {row['untrained_iia_high']:.3f}]; stays the base "
                 f"{row['das_stays_base']:.3f}, copies the source {row['das_copies_source']:.3f}; chance {row['chance']:.3f}. Read it as a "
                 f"finding only above all three; where it lacks the gain, train on more pairs or epochs (`train_pairs=`, `epochs=`)")  # fmt: skip
    return rows


def score_saved(config: DasConfig, load: str) -> dict:
    """Score the saved intervention at ``load`` (its ``.safetensors`` or ``.json``; :mod:`interp.files.subspaces`) on the
    held-out pairs ``config`` draws for its variable.

    The location and variable come from the file's sidecar; ``config``'s
    example set, ``seeds[0]``, ``test_share`` and ``test_pairs`` give the
    pairs, so with a run's own settings this reproduces its ``das_iia``.
    Returns the scores of the saved intervention and of vanilla
    interchange, with the variable, location and k.

    Raises:
        ConfigError: naming ``load=``: the file was trained on another model, or its variable or location does not fit the task.
        DataError: naming ``load=``: the file is missing or not an intervention.
    """
    config.validate()
    lab = IntervenableModel.from_specs(config.model, config.data, config.run, splits=config.sample.splits)
    examples = config.sample.draw(lab.task)
    with renamed(path="load", variable="load"):  # both come from the file `load=` names
        intervention, meta = load_trained_intervention(load, model_sha256=lab.model.sha256)
        variable = lab.task.check_variable(str(meta.get("variable")))
    loc = lab.location(str(meta.get("location")))
    width = lab.width(examples, loc)
    if width != intervention.width:
        raise ConfigError(f"{named('load', load)}: the intervention is {intervention.width} wide, location {loc} is {width} here")
    seed = config.seeds[0]
    found = lab.score_das(examples, intervention, loc, variable, seed=seed, test_share=config.test_share, test_pairs=config.test_pairs)
    saved, vanilla = found["intervention"], found["vanilla"]
    return {"variable": variable, "location": str(loc), "k": intervention.k, "seed": seed,
            **{f"saved_{k}": v for k, v in saved.items() if k != "interval"},
            **{f"vanilla_{k}": v for k, v in vanilla.items() if k not in ("pairs", "interval")}, "interval": saved["interval"]}  # fmt: skip


def _row(found, k: str, settings: FitSettings) -> dict:
    """One unit's row of ``das.csv`` (:class:`~interp.api.das_result.DasResult`'s figures, flat)."""
    scores = found.scores
    row = {
        "size": k,
        "subspace": found.kind,
        "k": found.k,
        "width": found.intervention.width,
        "train_pairs": found.train_pairs,
        "test_pairs": scores["das"]["pairs"],
        "epochs": settings.epochs,
        "steps": n_steps(found.train_pairs, settings),
        "train_seconds": round(found.train_seconds, 2),
        "final_loss": round(found.losses[-1], 5),
        "chance": found.chance,
    }
    for name in ("das", "untrained", "vanilla", "block"):
        row.update({f"{name}_{key}{end}": scores[name][key + end] for key in ("iia", "stays_base", "copies_source") for end in ("", "_low", "_high")})
    for name in DIFFERENCES:  # what the verdict reads
        value = getattr(found, name)
        row.update({f"das_{name}": float(value), f"das_{name}_low": value.low, f"das_{name}_high": value.high})
    row.update(verdict=found.verdict, interval=scores["das"]["interval"], history=json.dumps(found.history), block=found.block)
    row.update(variable=found.variable, location=str(found.location), layer=found.location.layer, roles="+".join(found.location.roles), seed=found.seed)
    return row
