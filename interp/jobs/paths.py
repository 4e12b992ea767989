"""`interp path-sweep`: path patching from every sender to the readout, direct beside total effect, into a table.

Usage::

    from interp.jobs.paths import PathSweepConfig, run_path_sweep, format_path_sweep
    frame = run_path_sweep(PathSweepConfig(model="runs/demo/model", senders="heads@w_h", out="runs/paths"))
    print(format_path_sweep(frame))

Every example drawn is a base and a source (every pair). What each figure is: :mod:`interp.api.paths`. ``out`` (a
folder) gets ``paths.csv`` and ``paths.json`` (the settings: model, senders, receiver, examples, seed, the interval)
together, with ``path-sweep.manifest.json`` (:class:`~interp.core.outputs.OutputSet`), so ``interp report`` shows the
sweep; nothing is written without it, and an existing ``paths.csv`` only with ``overwrite``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from interp.api.intervenable import IntervenableModel
from interp.api.loading import Classifier
from interp.api.specs import DataSpec, RunSpec, SampleSpec
from interp.core.errors import OutputError, named
from interp.core.outputs import OutputSet, require_writable, write_json_atomic

__all__ = ["PathSweepConfig", "run_path_sweep", "format_path_sweep"]


@dataclass(frozen=True)
class PathSweepConfig:
    """Which model and senders (``heads@ROLE``, ``components@ROLE`` or a list); ``receiver``: a later head's query, key
    or value input to patch through (``None``: the readout); the examples (``sample``, every pair of them); ``seed``:
    the bootstrap's; ``out``: a folder for ``paths.csv`` (``overwrite`` to replace one)."""

    model: str | Classifier
    senders: str = "heads@cls"
    receiver: str | None = None
    data: DataSpec = DataSpec()
    sample: SampleSpec = SampleSpec(max_examples=20)
    run: RunSpec = RunSpec()
    seed: int = 0
    out: str | None = None
    overwrite: bool = False


def run_path_sweep(config: PathSweepConfig):
    """Load, draw, :meth:`~interp.api.intervenable.IntervenableModel.path_patch_sweep`, and write ``paths.csv``.

    Raises:
        ConfigError: as :func:`interp.api.paths.path_patch_sweep`.
        DataError, ModelError, OutputError: bad data or model; an ``out`` that holds ``paths.csv`` (checked first).
    """
    target = None if config.out is None else Path(config.out) / "paths.csv"
    if target is not None:
        if target.exists() and not config.overwrite:
            raise OutputError(f"{named('out', config.out)} holds paths.csv; pass {named('overwrite', True)} to replace it")
        require_writable(target)
    lab = IntervenableModel.from_specs(config.model, config.data, config.run, splits=config.sample.splits)
    examples = config.sample.draw(lab.task)
    frame = lab.path_patch_sweep(examples, examples, config.senders, receiver=config.receiver, seed=config.seed)
    if target is not None:
        with OutputSet(target.parent, "path-sweep") as outputs:
            frame.to_csv(outputs.path("paths.csv"), index=False)
            write_json_atomic(outputs.path("paths.json"), {"model": lab.model.name, "task": lab.task.name, "senders": config.senders,
                                                           "receiver": config.receiver or "readout", "examples": len(examples),
                                                           "pairs": int(frame.pairs.iloc[0]), "seed": config.seed,
                                                           "interval": str(frame.interval.iloc[0]), **lab.model.reading_record})  # fmt: skip
    return frame


def format_path_sweep(frame, top: int = 10) -> str:
    """The ``top`` senders by direct effect, then by total (a sender at a token the classifier does not read has no
    direct path): each its direct effect (sender → readout alone) and total effect (every path), as the share of pairs
    whose label moves, each with its 95% interval; then what the intervals resample."""
    rows = frame.sort_values(["direct", "total"], ascending=False, kind="stable").head(top)
    width = max(len(s) for s in rows.sender) if len(rows) else 6
    receiver = frame.receiver.iloc[0] if "receiver" in frame and len(frame) else "readout"
    path = "to the readout alone" if receiver == "readout" else f"through {receiver}"
    lines = [f"{'sender':<{width}}  direct ({path})  total (every path)   [labels moved off the base's own, of {int(frame.pairs.iloc[0])} pairs]"
             "   margin change, direct / total [logits]"]
    for r in rows.itertuples():
        margins = (f"   {r.direct_margin:+.3f} [{r.direct_margin_low:+.3f}, {r.direct_margin_high:+.3f}] / "
                   f"{r.total_margin:+.3f} [{r.total_margin_low:+.3f}, {r.total_margin_high:+.3f}]") if hasattr(r, "direct_margin") else ""
        lines.append(f"{r.sender:<{width}}  {r.direct:.3f} [{r.direct_low:.3f}, {r.direct_high:.3f}]         "
                     f"{r.total:.3f} [{r.total_low:.3f}, {r.total_high:.3f}]{margins}")  # fmt: skip
    lines.append(f"(the {len(rows)} of {len(frame)} senders with the largest direct effect, then total) [95%]: {frame.interval.iloc[0]}; "
                 "margin change: the mean change of the base's own answer's logit minus the largest other label's, in logit units, "
                 "negative where the patch moved the model off its answer, whether or not a label flipped")  # fmt: skip
    return "\n".join(lines)
