"""`interp path-sweep`: path patching from every sender to the readout, direct beside total effect, into a table.

Usage::

    from interp.jobs.paths import PathSweepConfig, run_path_sweep, format_path_sweep
    frame = run_path_sweep(PathSweepConfig(model="runs/demo/model", senders="heads@w_h", out="runs/paths"))
    print(format_path_sweep(frame))

Every example drawn is a base and a source (every pair). What each figure is: :mod:`interp.api.paths`. ``out`` (a
folder) gets ``paths.csv``; nothing is written without it, and an existing ``paths.csv`` only with ``overwrite``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from interp.api.intervenable import IntervenableModel
from interp.api.loading import Classifier
from interp.api.specs import DataSpec, RunSpec, SampleSpec
from interp.core.errors import OutputError, named
from interp.core.outputs import require_writable

__all__ = ["PathSweepConfig", "run_path_sweep", "format_path_sweep"]


@dataclass(frozen=True)
class PathSweepConfig:
    """Which model and senders (``heads@ROLE``, ``components@ROLE`` or a list); the examples (``sample``, every pair of
    them); ``seed``: the bootstrap's; ``out``: a folder for ``paths.csv`` (``overwrite`` to replace one)."""

    model: str | Classifier
    senders: str = "heads@cls"
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
    frame = lab.path_patch_sweep(examples, examples, config.senders, seed=config.seed)
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        staged = target.with_name("paths.csv.partial")
        frame.to_csv(staged, index=False)
        staged.replace(target)
    return frame


def format_path_sweep(frame, top: int = 10) -> str:
    """The ``top`` senders by direct effect, then by total (a sender at a token the classifier does not read has no
    direct path): each its direct effect (sender → readout alone) and total effect (every path), as the share of pairs
    whose label moves, each with its 95% interval; then what the intervals resample."""
    rows = frame.sort_values(["direct", "total"], ascending=False, kind="stable").head(top)
    width = max(len(s) for s in rows.sender) if len(rows) else 6
    lines = [f"{'sender':<{width}}  direct (to the readout alone)  total (every path)   [labels moved off the base's own, of {int(frame.pairs.iloc[0])} pairs]"]
    for r in rows.itertuples():
        lines.append(f"{r.sender:<{width}}  {r.direct:.3f} [{r.direct_low:.3f}, {r.direct_high:.3f}]         "
                     f"{r.total:.3f} [{r.total_low:.3f}, {r.total_high:.3f}]")  # fmt: skip
    lines.append(f"(the {len(rows)} of {len(frame)} senders with the largest direct effect, then total) [95%]: {frame.interval.iloc[0]}")
    return "\n".join(lines)
