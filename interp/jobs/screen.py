"""`interp screen`: every location's IIA estimated by attribution patching, the top K and K at random confirmed exactly.

Usage::

    from interp.jobs.screen import ScreenConfig, run_screen
    found = run_screen(ScreenConfig(model="runs/demo/model", out="runs/screen", variable="lexrel", confirm=5))
    found.agreement["spearman"], found.agreement["miss_rate"]

Writes into ``out``, together (:class:`interp.core.outputs.OutputSet`): ``screen.csv`` (a row per location, best
estimate first: :class:`~interp.api.screen.ScreenResult`'s rows) and ``screen.json`` (the settings, how the intervals
were found, and the agreement with the exact interchange).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from interp.api.intervenable import IntervenableModel
from interp.api.loading import Classifier
from interp.api.screen import ScreenResult
from interp.api.specs import DataSpec, RunSpec, SampleSpec
from interp.core.checks import check_int
from interp.core.errors import OutputError, named
from interp.core.outputs import OutputSet, write_csv_atomic, write_json_atomic


@dataclass(frozen=True)
class ScreenConfig:
    """Which model, examples (bases and sources alike), variable and locations; how many to confirm exactly."""

    model: str | Classifier
    out: str
    variable: str = "lexrel"
    locations: str = "all"
    confirm: int = 5
    seed: int = 0  # which K of the rest are drawn
    data: DataSpec = DataSpec()
    sample: SampleSpec = SampleSpec()
    run: RunSpec = RunSpec()


def run_screen(config: ScreenConfig) -> ScreenResult:
    """Screen, confirm, and write ``screen.csv`` and ``screen.json`` into ``config.out``.

    Raises:
        ConfigError: a variable, location or count that does not fit (naming it).
        OutputError: ``out`` is a file or cannot be written.
    """
    check_int(config.confirm, "confirm", least=0)
    out = Path(config.out)
    if out.exists() and not out.is_dir():
        raise OutputError(f"{named('out', out)} is a file; give a directory")
    lab = IntervenableModel.from_specs(config.model, config.data, config.run, splits=config.sample.splits)
    examples = config.sample.draw(lab.task)
    found = lab.screen(examples, config.locations, variable=config.variable, confirm=config.confirm, seed=config.seed)
    agreement = {name: (repr(value) if hasattr(value, "low") else value) for name, value in found.agreement.items()}
    with OutputSet(out, "screen") as outputs:
        write_csv_atomic(found.rows, outputs.path("screen.csv"))
        write_json_atomic(outputs.path("screen.json"), {"model": lab.model.name, "variable": found.variable, "examples": found.examples,
                                                        "locations": len(found.rows), "confirm": config.confirm, "seed": config.seed,
                                                        "interval": found.interval, "agreement": agreement})  # fmt: skip
    return found


def format_screen(found: ScreenResult, top: int = 15) -> str:
    """The best ``top`` locations by estimate, the confirmed ones with their exact IIA, and the agreement."""
    lines = [f"{'rank':>4}  {'location':34}{'estimated IIA [95%]':>26}{'exact IIA [95%]':>26}  confirmed"]
    shown = [r for r in found.rows if r["rank"] <= top or r["confirmed"]]
    for r in shown:
        exact = f"{r['exact_iia']:.3f} [{r['exact_iia_low']:.3f}, {r['exact_iia_high']:.3f}]" if r["confirmed"] else ""
        lines.append(f"{r['rank']:>4}  {r['location']:34}{r['estimated_iia']:>7.3f} [{r['estimated_iia_low']:.3f}, {r['estimated_iia_high']:.3f}]"
                     f"{exact:>26}  {r['confirmed']}{' (above both nulls)' if r.get('above_nulls') else ''}")  # fmt: skip
    lines.append(f"IIA on causal pairs; [95%]: {found.interval} (sampling only: not the linear approximation's error)")
    if found.agreement:
        a = found.agreement
        lines.append(f"agreement with the exact interchange over the {a['top'] + a['drawn']} confirmed locations: Spearman {a['spearman']!r} "
                     f"({a['spearman'].method}); miss rate {a['miss_rate']!r}: {a['missed']} of {a['drawn']} locations drawn from the rest "
                     f"beat the lowest exact IIA among the top {a['top']} ({a['bar']:.3f})")  # fmt: skip
    return "\n".join(lines)
