"""`interp intervene`: interchange interventions for all (base, source) pairs of an example set, to HDF5.

Usage::

    from interp.interventions import InterventionConfig, run_interventions
    run_interventions(InterventionConfig(
        model="runs/demo/model", out="runs/demo/interventions.h5",
        locations="blocks.0.hook_resid_post@w_h", splits=("nmonli_test",)))

For every location, every base i and source j: the model's prediction with
the vector at the location on i replaced by the one on j (``model_pred``),
and the causal model's counterfactual for the same interchange on its
variable (``causal_pred``; for INFER on lexrel, §6.2 of Geiger, Richardson &
Potts 2020). The file layout is in :mod:`interp.interventions.store`.

Work is done in units of ``unit_size`` bases (all sources each) and written
after each unit to ``<out>.partial``; an interrupted run, started again,
skips finished units. The file appears at ``out`` only when complete.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from interp.cache import model_sha256, open_cache, pick_device
from interp.causal_models import CAUSAL_MODELS, interchange_table, monli_inputs
from interp.data import LABELS, SPLITS, encode_examples, load_monli
from interp.data.align import check_wordpiece_rule
from interp.errors import ConfigError, OutputError
from interp.hdf5 import finished, open_partial
from interp.hooks import n_layers
from interp.interventions.engine import interchange_logits, source_vectors
from interp.interventions.store import FORMAT, initialise, open_interventions
from interp.locations import Location, parse_locations
from interp.models.evaluation import predict_logits
from interp.models.loading import load_classifier
from interp.outputs import ensure_writable_dir, partial_path


@dataclass(frozen=True)
class InterventionConfig:
    """Which interventions to run and where to write them."""

    model: str
    out: str
    locations: str
    splits: tuple[str, ...] = ("nmonli_test",)
    causal_model: str = "infer"
    variable: str = "lexrel"
    wordpiece: str = "first"
    cache: str | None = None
    max_examples: int | None = None
    seed: int = 0
    batch_size: int = 256
    unit_size: int = 16
    device: str = "auto"
    data_dir: str | None = None
    verify_checksums: bool = True
    overwrite: bool = False

    def validate(self) -> "InterventionConfig":
        check_wordpiece_rule(self.wordpiece)
        if self.causal_model not in CAUSAL_MODELS:
            raise ConfigError(f"--causal-model must be one of {', '.join(CAUSAL_MODELS)}, got {self.causal_model!r}")
        for name, value in (("--batch-size", self.batch_size), ("--unit-size", self.unit_size)):
            if value < 1:
                raise ConfigError(f"{name} must be at least 1")
        if self.max_examples is not None and self.max_examples < 2:
            raise ConfigError("--max-examples must be at least 2")
        return self


def select_examples(config: InterventionConfig):
    """The example set: the named splits, or a seeded random subset of them kept in file order."""
    examples = load_monli(config.data_dir, config.splits, verify_checksums=config.verify_checksums)
    if config.max_examples is not None and config.max_examples < len(examples):
        keep = sorted(random.Random(config.seed).sample(range(len(examples)), config.max_examples))
        examples = [examples[i] for i in keep]
    return examples


def _cache_rows(config: InterventionConfig, ids: list[str], locations: list[Location]) -> list[int]:
    """Check ``config.cache`` can give the source vectors; returns each example's row in it.

    Raises:
        ConfigError: the cache is missing or foreign, made with other weights,
            another WordPiece rule or float16, or lacks an example or a location.
    """
    with open_cache(config.cache, model=config.model) as cache:
        if cache.meta["wordpiece"] != config.wordpiece:
            raise ConfigError(f"--cache {config.cache} used WordPiece rule {cache.meta['wordpiece']!r}, not {config.wordpiece!r}")
        if cache.meta["dtype"] != "float32":
            raise ConfigError(f"--cache {config.cache} is {cache.meta['dtype']}; interventions need a float32 cache")
        row = {example_id: i for i, example_id in enumerate(cache.example_ids)}
        missing = [i for i in ids if i not in row]
        if missing:
            raise ConfigError(f"--cache {config.cache} lacks {len(missing)} of the examples (first: {missing[0]})")
        for loc in locations:
            if str(loc) not in cache.handle:
                raise ConfigError(f"location {loc} is not in the cache {config.cache}")
    return [row[i] for i in ids]


def _cached_vectors(path: str, rows: list[int], location: Location) -> torch.Tensor:
    with open_cache(path) as cache:
        return torch.from_numpy(cache.vectors(location)[rows])


def run_interventions(config: InterventionConfig, *, progress: bool = True) -> Path:
    """Run (or resume, or reuse) the interventions of ``config``; returns the finished file's path.

    Raises:
        ConfigError: bad settings, a location out of range or absent from
            ``cache``, a causal model that does not fit the examples.
        DataError, ModelError: bad data or model.
        OutputError: ``out`` holds other interventions (without ``overwrite``) or cannot be written.
    """
    config.validate()
    out = Path(config.out)
    examples = select_examples(config)
    causal = CAUSAL_MODELS[config.causal_model](examples)
    causal.check_variable(config.variable)
    model, tokenizer = load_classifier(config.model, labels=LABELS, require_head=True)
    model.to(pick_device(config.device))
    locations = parse_locations(config.locations, n_layers(model))
    encoded = encode_examples(examples, tokenizer, config.wordpiece)
    ids = [e.id for e in examples]
    n_units = -(-len(examples) // config.unit_size)
    meta = {
        "format": FORMAT,
        "model": config.model,
        "model_sha256": model_sha256(config.model),
        "wordpiece": config.wordpiece,
        "causal_model": causal.name,
        "variable": config.variable,
        "labels": list(LABELS),
        "locations": [str(loc) for loc in locations],
        "unit_size": config.unit_size,
    }
    rows = _cache_rows(config, ids, locations) if config.cache is not None else None
    ensure_writable_dir(out.parent if str(out.parent) else Path("."))
    if out.exists():
        if finished(out, meta, ids):
            if progress:
                tqdm.write(f"{out}: these interventions are already done, reusing them")
            return out
        if not config.overwrite:
            raise OutputError(
                f"--out {out} holds other interventions (another model, example set, location or setting); "
                "pass --overwrite to replace it or choose another --out"
            )
    inputs = [monli_inputs(e) for e in examples]
    table = interchange_table(causal, inputs, inputs, config.variable)
    causal_pred = np.vectorize(LABELS.index, otypes=[np.int8])(table)
    work = partial_path(out)
    handle = open_partial(work, meta, ids)
    try:
        if "example_ids" not in handle:
            base_pred = predict_logits(model, encoded, tokenizer.pad_token_id).argmax(-1).numpy()
            initialise(handle, meta, examples, encoded, base_pred, locations, n_units)
        for loc in locations:
            _run_location(config, handle[str(loc)], model, encoded, rows, loc, causal_pred, progress)
        handle.attrs["complete"] = True
    finally:
        handle.close()
    os.replace(work, out)
    return out


def _run_location(config, group, model, encoded, cache_rows, loc: Location, causal_pred: np.ndarray, progress: bool) -> None:
    done = group["units_done"]
    todo = [u for u in range(len(done)) if not done[u]]
    if not todo:
        return
    n, size = len(encoded), config.unit_size
    if cache_rows is not None:
        sources = _cached_vectors(config.cache, cache_rows, loc)
    else:
        sources = source_vectors(model, encoded, loc)
    remaining = sum(min(size, n - u * size) for u in todo) * n
    bar = tqdm(total=n * n, initial=n * n - remaining, desc=str(loc), unit="pair", unit_scale=True, disable=not progress)
    try:
        for u in todo:
            start, stop = u * size, min((u + 1) * size, n)
            logits = interchange_logits(model, encoded[start:stop], sources, loc, batch_size=config.batch_size, on_rows=bar.update)
            group["logits"][start:stop] = logits.numpy()
            group["model_pred"][start:stop] = logits.argmax(-1).numpy().astype(np.int8)
            group["causal_pred"][start:stop] = causal_pred[start:stop]
            done[u] = True
            group.file.flush()
    finally:
        bar.close()


def summarize(path: str | Path, location: str | None = None) -> dict:
    """Agreement of model and causal model at a location of a finished file.

    Returns:
        ``pairs`` run; ``agreement`` (share of pairs where ``model_pred ==
        causal_pred``); ``causal_pairs`` (lexrel(i) != lexrel(j)) and the
        agreement on them; ``changed`` (share of pairs whose prediction differs
        from the base's own); ``base_accuracy``.
    """
    with open_interventions(path) as file:
        name = file.location(location)
        model_pred, causal_pred = file.matrix("model_pred", name), file.matrix("causal_pred", name)
        lexrel, label, base_pred = file.column("lexrel"), file.column("label"), file.column("base_pred")
    run = model_pred >= 0
    causal = (lexrel[:, None] != lexrel[None, :]) & run
    agree = (model_pred == causal_pred) & run
    return {
        "location": name,
        "pairs": int(run.sum()),
        "agreement": float(agree.sum() / max(run.sum(), 1)),
        "causal_pairs": int(causal.sum()),
        "agreement_causal": float((agree & causal).sum() / max(causal.sum(), 1)),
        "changed": float(((model_pred != base_pred[:, None]) & run).sum() / max(run.sum(), 1)),
        "base_accuracy": float((base_pred == label).mean()),
    }


def summarize_all(path: str | Path) -> list[dict]:
    """:func:`summarize` for every location of a finished file, in file order."""
    with open_interventions(path) as file:
        names = file.locations
    return [summarize(path, name) for name in names]


def format_summaries(summaries: list[dict]) -> str:
    """One line per location: pairs run, agreement with the causal model overall and on causal pairs."""
    lines = [f"{'location':32}{'pairs':>8}{'agree':>8}{'agree (causal pairs)':>22}{'output changed':>16}"]
    for s in summaries:
        lines.append(
            f"{s['location']:32}{s['pairs']:>8}{s['agreement']:>8.3f}{s['agreement_causal']:>22.3f}{s['changed']:>16.3f}"
        )
    return "\n".join(lines)
