"""`interp localize`: MIB's featurizers trained and scored at every site, on the model and on its re-initialised twin.

Usage::

    from interp.jobs.localize import LocalizeConfig, run_localize
    found = run_localize(LocalizeConfig(model="smollm2-135m", out="runs/ioi", blocks="14,20,26",
                                        featurizers=("full", "das", "dbm"), data=DataSpec(task="ioi")))
    found.to_frame()                # one row per (model, featurizer, variable, block, position)
    print(found.format())           # MIB's table with intervals, then every unit's verdict

MIB's causal variable localization track (Mueller et al. 2025, §4): for each variable of the task's causal model, each
featurizer (:data:`~interp.analysis.localization.FEATURIZERS`: ``full``, the whole vector; ``das``, a rotation's
``k`` dimensions; ``dbm``, a learned mask over the neurons; ``dbm-pca`` and ``dbm-sae``, over a PCA basis or an SAE
fitted on the training examples) is trained and scored at every *unit*: the residual stream after each block of
``blocks`` at each token position of ``positions`` (the task's roles by default: IOI's indirect object, subject
mentions and last token; the cities' city and last token).

The examples are MIB's filter: the prompts of ``splits`` the model answers right (every output says how many of how
many), at most ``max_examples`` of them, seeded. Each unit is DAS's one trainer on them (:func:`interp.api.das.train`,
without the localist block, which MIB's comparison of featurizers does not need: ``benchmarks/localize.py``):
``train_pairs`` balanced counterfactual pairs among a training share of the examples, the featurizer
trained with the model frozen, scored on ``test_pairs`` held-out pairs, beside its untrained self and the nulls. The
same featurizers are trained and scored the same way, on the same pairs, on the model with re-initialised weights
(:func:`~interp.api.loading.reinitialised`) at ``control_blocks``; the verdict and MIB's table are
:mod:`interp.analysis.localization`'s. Intervals resample the task's groups (name pairs, cities).

Every finished unit is a JSON file in ``<out>/localize.parts/`` (written atomically): a run killed at any moment and
started again with the same settings skips them. At the end ``localize.csv`` (every unit, its verdict, RAVEL's
scores where the task asks attributes, its per-pair hits), ``mib.csv`` (MIB's table), ``pairs.json`` (each variable's
held-out pairs as indices into the examples it lists, their groups and breakdown: with the hits, every interval can be
recomputed, :class:`~interp.analysis.localization.HeldOut`) and ``localize.png`` (IIA by layer per featurizer, the
re-initialised model beneath) are written together with a manifest.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from tqdm.auto import tqdm

from interp.analysis.localization import (
    CONTROL, FEATURIZERS, PRETRAINED, HeldOut, flat, format_mib_table, hits_string, mib_pairs, mib_table, ravel, readouts_string,
    score_linear, site_kind, verdict,
)  # fmt: skip
from interp.analysis.localization_figure import localization_figure
from interp.api import das
from interp.api.intervenable import IntervenableModel
from interp.api.loading import Classifier, reinitialised
from interp.api.objects import Interchange
from interp.api.specs import DataSpec, RunSpec
from interp.core.errors import ConfigError, OutputError, named
from interp.core.outputs import (
    OutputSet, ensure_writable_dir, exclusive, no_link, read_json, require_writable, save_figure_atomic, write_csv_atomic, write_json_atomic,
)  # fmt: skip
from interp.core.subsets import seeded_subset
from interp.files.mib import mib_unit_name, write_mib_unit
from interp.files.subspaces import load_trained_intervention, save_intervention

TEST_SHARE = 0.2
#: What a unit intervenes on at a block: the residual stream after it, each head's output, or all heads' together.
SITES = ("residual", "heads", "attn")


@dataclass(frozen=True)
class LocalizeConfig:
    """What to localize, where, and how to train (module docstring).

    ``blocks``, ``control_blocks``: ``all``, ``none`` (controls only), or comma-separated block numbers and ranges
    (``0-29``, ``0-29:2`` every other); ``control_blocks="same"`` runs the control at every block of ``blocks``.
    ``positions``: token roles of the task (``cls`` is a decoder's last token); empty: every role the task has.
    ``sites``: at each block, ``residual`` (the stream after it), ``heads`` (each attention head's output,
    ``attn.hook_z.h{H}``, one unit per head) and/or ``attn`` (all heads' outputs together, ``attn.hook_z``).
    ``variables``: empty, every variable the task aligns. ``k``: DAS's dimensions (MIB: 16 for a pointer-like
    variable, half the width for a token-like one). ``lr``: the trainer's (MIB's DBM baselines 1.0, causalab's 1e-2).
    ``export``: a new folder to write the pretrained model's units into in MIB's submission layout (:func:`export_mib`).
    ``run``: device, pairs per training step and WordPiece rule; ``last`` by default, as MIB's positions are a word's
    last token (a city of several tokens is read at its last).
    """

    model: str | Classifier
    out: str
    data: DataSpec = DataSpec()
    featurizers: tuple[str, ...] = ("full", "das", "dbm")
    variables: tuple[str, ...] = ()
    blocks: str = "all"
    positions: tuple[str, ...] = ()
    control_blocks: str = "same"
    sites: tuple[str, ...] = ("residual",)
    splits: tuple[str, ...] = ()
    max_examples: int = 400
    train_pairs: int = 256
    test_pairs: int = 200
    epochs: int = 2
    lr: float = 1e-2
    k: int = 16
    seed: int = 0
    run: RunSpec = field(default_factory=lambda: RunSpec(wordpiece="last"))
    overwrite: bool = False
    export: str | None = None

    def validate(self) -> "LocalizeConfig":
        unknown = [f for f in self.featurizers if f not in FEATURIZERS]
        if unknown or not self.featurizers:
            raise ConfigError(f"{named('featurizers', repr(unknown[0] if unknown else ''))}: choose among {', '.join(FEATURIZERS)}")
        for name, low in (("max_examples", 4), ("train_pairs", 2), ("test_pairs", 2), ("epochs", 1), ("k", 1)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ConfigError(f"{named(name, value)}: give a whole number of at least {low}")
        bad = [x for x in self.sites if x not in SITES]
        if bad or not self.sites:
            raise ConfigError(f"{named('sites', repr(bad[0] if bad else ''))}: choose among {', '.join(SITES)}")
        if not self.lr > 0:
            raise ConfigError(f"{named('lr', self.lr)}: give a positive learning rate")
        return self


def parse_blocks(text: str, n_layers: int, option: str = "blocks") -> list[int]:
    """``all``, ``none``, or comma-separated blocks and ranges (``3``, ``0-29``, ``0-29:2``) as block numbers.

    Raises:
        ConfigError: naming ``option``: a malformed item, or a block the model lacks (it has ``n_layers``).
    """
    text = str(text).strip()
    if text == "all":
        return list(range(n_layers))
    if text == "none":
        return []
    found: list[int] = []
    for item in text.split(","):
        head, _, step = item.strip().partition(":")
        first, _, last = head.partition("-")
        try:
            a, b, s = int(first), int(last or first), int(step or 1)
        except ValueError:
            raise ConfigError(f"{named(option, repr(text))}: {item.strip()!r} is not a block, a range a-b or a-b:step") from None
        if not (0 <= a <= b < n_layers) or s < 1:
            raise ConfigError(f"{named(option, repr(text))}: {item.strip()!r} is outside the model's blocks 0-{n_layers - 1}")
        found += [x for x in range(a, b + 1, s) if x not in found]
    return found


@dataclass
class Localization:
    """What :func:`run_localize` found: every unit's ``rows`` (model, featurizer, variable, block, position, IIA and
    its controls, verdict), MIB's ``table`` (:func:`~interp.analysis.localization.mib_table`), the examples' count
    after the filter (``kept`` of ``of``), the folder written, the ``examples`` scored (MIB's filter applied) and,
    with an export, ``exported`` (:func:`export_mib`)."""

    rows: list[dict]
    table: list[dict]
    kept: int
    of: int
    out: Path
    dropped: tuple[str, ...] = ()
    examples: list = field(default_factory=list, repr=False)
    exported: dict = field(default_factory=dict)
    task: str = ""
    architecture: str = ""

    def to_frame(self):
        """The units as a pandas DataFrame (without the per-pair hits)."""
        import pandas as pd

        return pd.DataFrame([{k: v for k, v in r.items() if not k.endswith("hits")} for r in self.rows])

    def format(self) -> str:
        """MIB's table, then every unit of the pretrained model with its IIA, the re-initialised model's and the verdict."""
        lines = [f"MIB's filter: {self.kept} of {self.of} prompts answered right. Held-out IIA; intervals: {self.rows[0]['over'] if self.rows else ''}",
                 *([f"dropped, as the model's tokenizer cannot read them as the task needs (one token, or a first token of their own): "
                    f"{len(self.dropped)} ({', '.join(self.dropped)})"] if self.dropped else []),
                 format_mib_table(self.table), ""]  # fmt: skip
        linear = any(r.get("mib_linear") not in (None, "") for r in self.rows)
        lines += [f"| variable | block | site | featurizer | IIA | re-initialised |{' MIB linear (stays) |' if linear else ''} verdict |",
                  f"| --- | --- | --- | --- | --- | --- |{' --- |' if linear else ''} --- |"]  # fmt: skip
        for r in self.rows:
            if r["model"] == PRETRAINED:
                control = "—" if r.get("control_iia") in (None, "") else f"{r['control_iia']:.3f}"
                score = ""
                if linear:
                    score = " — |" if r.get("mib_linear") in (None, "") else (
                        f" {r['mib_linear']:.3f} [{r['mib_linear_low']:.3f}, {r['mib_linear_high']:.3f}] ({r['mib_linear_stays']:.3f}) |")
                lines.append(f"| {r['variable']} | {r['block']} | {str(r['location']).split('.', 2)[-1]} | {r['featurizer']} | {r['iia']:.3f} "
                             f"[{r['iia_low']:.3f}, {r['iia_high']:.3f}] | {control} |{score} {r['verdict']} |")  # fmt: skip
        if linear:
            lines.append("MIB linear: MIB's IOI score, the mean squared difference between the intervened logit difference and a linear "
                         "model of it fitted on the full vector's interchanges at the same unit (lower is better; in brackets, the base's "
                         "own run against the same model: what an intervention that does nothing scores)")  # fmt: skip
        lines += [f"exported {name}: {said}" for name, said in self.exported.items()]
        return "\n".join(lines)


def run_localize(config: LocalizeConfig, *, progress: bool = True) -> Localization:
    """Run (or resume) every unit of ``config``.

    Raises:
        ConfigError: bad settings; a featurizer, variable, position or block the task or model lacks; fewer than 4
            prompts answered right.
        DataError, ModelError: bad data or model.
        OutputError: ``out`` holds a run with other settings (without ``overwrite``), or cannot be written.
    """
    config.validate()
    out = Path(config.out)
    if out.exists() and not out.is_dir():
        raise OutputError(f"{named('out', out)} is a file; give a directory")
    if config.export is not None and Path(config.export).exists():  # before any work: a run is not spent to be refused at its end
        raise OutputError(f"{named('export', config.export)} exists; an export is written into a new folder")
    require_writable(out)
    with exclusive(out):
        found = _run(config, out, progress)
    if config.export is not None:
        found.exported = export_mib(found, Path(config.export))
    return found


def _units(config: LocalizeConfig, lab: IntervenableModel) -> tuple[list, list[str], list[str]]:
    task = lab.task
    variables = list(config.variables) or list(task.alignment)
    for v in variables:
        task.check_variable(v)
    positions = list(config.positions) or list(task.roles)
    blocks = parse_blocks(config.blocks, lab.model.n_layers)
    control = blocks if config.control_blocks == "same" else parse_blocks(config.control_blocks, lab.model.n_layers, "control_blocks")
    kinds = [("resid",)] if "residual" in config.sites else []
    kinds += [(f"h{h}",) for h in range(lab.model.module.config.num_attention_heads)] if "heads" in config.sites else []
    kinds += [("attn",)] if "attn" in config.sites else []
    units = [(model, f, v, b, p, *k) for model, chosen in ((PRETRAINED, blocks), (CONTROL, control)) for b in chosen for p in positions
             for k in kinds for v in variables for f in config.featurizers]  # fmt: skip
    for p in positions:  # a role the task lacks is named before any work
        lab.location(f"blocks.0.hook_resid_post@{p}")
    if not units:
        raise ConfigError(f"{named('blocks', repr(config.blocks))} and {named('control_blocks', repr(config.control_blocks))} name no block")
    return units, variables, positions


def _name(unit) -> str:
    model, f, v, b, p, site = unit
    tail = "" if site == "resid" else f"__{site}"  # a residual unit keeps the name it had before sites other than it
    return f"{'control' if model == CONTROL else 'model'}__{f}__{v}__b{b}__{p}{tail}".replace("/", "_")


def _location(block: int, position: str, site: str) -> str:
    """A unit's location: the stream after ``block`` (``resid``), one head's output (``h{H}``) or all heads' (``attn``)."""
    if site == "resid":
        return f"blocks.{block}.hook_resid_post@{position}"
    return f"blocks.{block}.attn.hook_z{'' if site == 'attn' else '.' + site}@{position}"


def _run(config: LocalizeConfig, out: Path, progress: bool) -> Localization:
    lab = IntervenableModel.from_specs(config.model, config.data, config.run, variables=config.variables, splits=config.splits)
    units, variables, positions = _units(config, lab)
    task = lab.task
    examples = task.examples(config.splits or task.splits)
    own = lab.bind(examples).own_labels()
    right = [e for e, p in zip(examples, own.tolist()) if task.labels[p] == e.label]
    if len(right) < 4:
        raise ConfigError(f"the model answers {len(right)} of {len(examples)} prompts of {task.name!r} right; MIB's filter keeps "
                          "only those, and a localization needs at least 4")  # fmt: skip
    kept = seeded_subset(right, config.max_examples, config.seed)
    request = {"model_sha256": lab.model.sha256, "task": task.name, "labels": list(task.labels),
               "examples": hashlib.sha256("\n".join(e.id for e in kept).encode()).hexdigest(),
               **{k: getattr(config, k) for k in ("train_pairs", "test_pairs", "epochs", "lr", "k", "seed")}, "wordpiece": lab.wordpiece}  # fmt: skip
    parts = no_link(out / "localize.parts")
    saved = read_json(parts / "request.json") if parts.is_dir() else None
    if saved is not None and saved != request:
        if not config.overwrite:
            raise OutputError(f"{named('out', out)} holds a localization with other settings (model, examples or training); pass "
                              "`overwrite=True` or choose another `out=`")  # fmt: skip
        for stale in parts.glob("*.json"):
            stale.unlink()
    bound = lab.bind(kept)
    held = _held_out(bound, variables, config)
    linear_pairs = mib_pairs(kept, held, task.linear, das.groups_of(bound)) if task.linear is not None else None
    if saved != request:
        ensure_writable_dir(parts)
        write_json_atomic(parts / "request.json", request)
    done = {u for u in units if saved == request and isinstance(read_json(parts / f"{_name(u)}.json"), dict)}
    control = None  # the re-initialised model and its example set, made at its first unit
    counts = {"examples": len(kept), "kept": len(right), "of": len(examples)}
    with tqdm(total=len(units), initial=len(done), unit="unit", disable=not progress, desc="localize") as bar:
        for unit in units:
            if unit in done:
                continue
            model, featurizer, variable, block, position, site = unit
            bar.set_description(f"{model} {featurizer} {variable} block {block}{'' if site == 'resid' else ' ' + site} @{position}")
            if model == CONTROL and control is None:
                twin = IntervenableModel(reinitialised(lab.model, config.seed), task, wordpiece=lab.wordpiece, batch_size=lab.batch_size)
                control = (twin, twin.bind(kept))
            row, trained = _unit(*((lab, bound) if model == PRETRAINED else control), unit, config, linear_pairs)
            if trained is not None:  # kept for an export; its row, written last, says the unit is done
                save_intervention(trained, parts / "interventions" / _name(unit), {"variable": unit[2], "location": row["location"]}, overwrite=True)
            write_json_atomic(parts / f"{_name(unit)}.json", {**row, **counts})
            bar.update(1)
    rows = [read_json(parts / f"{_name(u)}.json") for u in units]
    _judge(rows, held)
    if task.linear is not None:
        score_linear(rows, linear_pairs, kept, task.linear)
    columns = list(dict.fromkeys(k for r in rows for k in r))  # a full vector's row has no untrained figures: blank there
    rows = [{c: r.get(c, "") for c in columns} for r in rows]
    table = mib_table([r for r in rows if r["model"] == PRETRAINED] + [r for r in rows if r["model"] == CONTROL], held)
    with OutputSet(out, "localize") as outputs:
        write_csv_atomic(rows, outputs.path("localize.csv"))
        write_csv_atomic([{**{k: v for k, v in t.items() if k not in ("mean", "best")}, **flat("mean", t["mean"]), **flat("best_iia", t["best"])}
                          for t in table], outputs.path("mib.csv"))  # fmt: skip
        save_figure_atomic(localization_figure(rows, task.name), outputs.path("localize.png"), dpi=110, bbox_inches="tight")
        write_json_atomic(outputs.path("pairs.json"), {v: {"bases": h.bases.tolist(), "sources": h.sources.tolist(), "unit": h.unit,
                                                           "groups": None if h.groups is None else [str(g) for g in h.groups],
                                                           "breakdown": {k: list(map(str, b)) for k, b in (h.breakdown or {}).items()},
                                                           "examples": [e.id for e in kept],
                                                           **({} if linear_pairs is None else {"linear_bases": linear_pairs.bases.tolist(),
                                                                                               "linear_sources": linear_pairs.sources.tolist()})}
                                                       for v, h in held.items()})  # fmt: skip
    architecture = (getattr(lab.model.module.config, "architectures", None) or [type(lab.model.module).__name__])[0]
    return Localization(rows, table, len(right), len(examples), out, tuple(getattr(task, "dropped", ())), kept, task=task.name,
                        architecture=architecture)  # fmt: skip


def export_mib(found: Localization, export: Path) -> dict[str, str]:
    """Write the pretrained model's units of ``found`` in MIB's submission layout (:mod:`interp.files.mib`) into the
    new folder ``export``: ``{featurizer}/{task}_{architecture}_{variable}/ResidualStream(Layer-L,Token-P)_*``, the
    full vector and every DAS and DBM-over-neurons unit; a featurizer MIB's layout cannot carry (DBM over PCA or an
    SAE) is left out and said. Returns featurizer -> what was written or why not. The folder appears whole or not at
    all (built beside it, then renamed).

    Raises:
        OutputError: naming ``export=``: it exists, or cannot be written.
    """
    if export.exists():
        raise OutputError(f"{named('export', export)} exists; an export is written into a new folder")
    staging = export.with_name(export.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    said: dict[str, str] = {}
    try:
        for r in found.rows:
            if r["model"] != PRETRAINED:
                continue
            if r["featurizer"] in ("dbm-pca", "dbm-sae"):
                said[r["featurizer"]] = "not exported: MIB's layout has no featurizer that computes it as interp does"
                continue
            if r.get("site", "residual") != "residual":
                said["heads"] = "not exported: MIB's head units cover every token, interp's one position"
                continue
            folder = staging / r["featurizer"] / f"{found.task}_{found.architecture}_{r['variable']}".replace("/", "_")
            folder.mkdir(parents=True, exist_ok=True)
            unit = (r["model"], r["featurizer"], r["variable"], r["block"], r["position"], "resid")
            trained = Interchange(int(r["k"])) if r["featurizer"] == "full" else load_trained_intervention(found.out / "localize.parts" / "interventions" / _name(unit))[0]
            write_mib_unit(folder / mib_unit_name(int(r["block"]), str(r["position"])), trained)
            said[r["featurizer"]] = f"{r['featurizer']}/: {found.task}_{found.architecture}_VARIABLE folders"
        staging.mkdir(parents=True, exist_ok=True)
        os.replace(staging, export)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise OutputError(f"{named('export', export)}: cannot be written ({exc.strerror or exc})") from None
    return said


def _held_out(bound, variables: Sequence[str], config: LocalizeConfig) -> dict[str, HeldOut]:
    """Each variable's held-out pairs (the same for every unit, either model) and their bootstrap."""
    grouped = das.groups_of(bound)
    task = bound.binding.task
    out = {}
    for v in variables:
        bases, sources, _ = das.pairs(bound, v, seed=config.seed, test_share=TEST_SHARE, n_pairs=config.train_pairs, test_pairs=config.test_pairs)[1]
        breakdown = {name: np.array([str(key(bound[i])) for i in bases.tolist()]) for name, key in task.breakdown.items()}
        out[v] = HeldOut(bases.numpy(), sources.numpy(), grouped.get("groups"), grouped.get("unit", "examples"), breakdown)
    return out


def _unit(lab: IntervenableModel, bound, unit, config: LocalizeConfig, pairs: HeldOut | None) -> tuple[dict, object]:
    """One unit's row and its trained intervention (``None`` for the full vector); where the task has a linear readout
    (MIB's IOI score), the row keeps the intervened readout of each of MIB's counterfactual pairs (:func:`~interp.analysis.localization.mib_pairs`)
    (and the full vector's row, each base's own)."""
    model, featurizer, variable, block, position, site = unit
    loc = lab.location(_location(block, position, site))
    started = time.perf_counter()
    row = {"model": model, "featurizer": featurizer, "variable": variable, "block": block, "position": position, "location": str(loc),
           "site": site_kind({"location": str(loc)})}  # fmt: skip
    kind = FEATURIZERS[featurizer]
    if kind is None:  # the whole vector: nothing to train
        width = bound.pairs(loc).width
        scored = das.score(bound, Interchange(width), loc, variable, seed=config.seed, test_share=TEST_SHARE, test_pairs=config.test_pairs,
                           keep_hits=True)["intervention"]  # fmt: skip
        row.update({"k": width, **{f"{n}{e}": round(scored[n + e], 4) for n in ("iia", "stays_base", "copies_source") for e in ("", "_low", "_high")},
                    "chance": round(scored["chance"], 4), "das_verdict": "", "untrained_iia": "", "test_pairs": scored["pairs"],
                    "hits": hits_string(scored["hits"]), "stays_hits": hits_string(scored["stays_hits"]), "over": scored["interval"]})  # fmt: skip
    else:
        found = das.train(bound, loc, variable, k=config.k if kind == "rotated" else None, kind=kind, n_pairs=config.train_pairs, epochs=config.epochs,
                          lr=config.lr, batch_size=config.run.batch(64), seed=config.seed, test_share=TEST_SHARE, test_pairs=config.test_pairs,
                          warn_unlearned=False, localist=False)  # MIB's comparison is between featurizers: no localist block  # fmt: skip
        row.update({"k": found.k, "chance": round(found.chance, 4), "das_verdict": found.verdict, "test_pairs": len(found.held_out_pairs),
                    "hits": hits_string(found.hits["iia"]), "stays_hits": hits_string(found.hits["stays_base"]), "over": found.interval})  # fmt: skip
        for name in ("iia", "untrained_iia", "gain", "stays_base", "copies_source", "vanilla_iia"):
            row.update(flat(name, getattr(found, name)))
        for breakdown, values in found.by_base.items():
            for value, estimate in values.items():
                row.update(flat(f"{breakdown}_{value}_iia", estimate))
    linear = bound.binding.task.linear
    if linear is not None and pairs is not None:
        runner = bound.pairs(loc)
        bases, sources = torch.as_tensor(pairs.bases), torch.as_tensor(pairs.sources)
        chosen = Interchange(runner.width) if kind is None else found.intervention
        labels, examples = lab.model.labels, [bound[i] for i in pairs.bases.tolist()]
        with torch.no_grad():
            row["readouts"] = readouts_string(linear.readout(runner.logits(bases, sources, chosen).float().cpu(), examples, labels))
            if kind is None:
                row["base_readouts"] = readouts_string(linear.readout(runner.logits(bases, bases, chosen).float().cpu(), examples, labels))
    row["seconds"] = round(time.perf_counter() - started, 1)
    return row, (None if kind is None else found.intervention)


def _judge(rows: list[dict], held: dict[str, HeldOut]) -> None:
    """Each pretrained unit's verdict against its controls, and RAVEL's scores where the pairs ask attributes (in place)."""
    controls = {(r["featurizer"], r["variable"], r["location"]): r for r in rows if r["model"] == CONTROL}
    for r in rows:
        pairs = held[r["variable"]]
        found = ravel(r, r["variable"], pairs)
        if found:
            for name, estimate in found.items():
                r.update(flat(name, estimate))
        if r["model"] != PRETRAINED:
            r["verdict"] = ""
            continue
        control = controls.get((r["featurizer"], r["variable"], r["location"]))
        r["control_iia"] = "" if control is None else control["iia"]
        r["verdict"] = verdict(r, control, pairs)
