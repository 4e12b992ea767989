"""`interp screen`: every location's IIA estimated by attribution patching, the top K and K at random confirmed exactly.

Usage::

    from interp.jobs.screen import ScreenConfig, run_screen
    found = run_screen(ScreenConfig(model="runs/demo/model", out="runs/screen", variable="lexrel", confirm=5))
    found.agreement["spearman"], found.agreement["miss_rate"]

The exact interchange at the confirmed locations runs into ``out/screen.h5``, an interventions file
(:func:`interp.jobs.intervene.run_interventions`): it shows progress, and an interrupted screen run again with the same
settings recomputes the estimates (one pass: they come out the same) and resumes that file at its first unfinished unit.
A screen that finished is not run again: where ``screen.json`` records the same weights (SHA-256), examples (by id),
variable, locations and settings, its rows are read back and returned (``reuse`` in ``screen.json``; a resumed demo
relies on it). Then ``screen.csv`` (a row per location, best estimate first: :class:`~interp.api.screen.ScreenResult`'s rows) and
``screen.json`` (the settings, how the intervals were found, the agreement with the exact interchange, how many sites
GradDrop flags) are written together (:class:`interp.core.outputs.OutputSet`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from interp.api.intervenable import IntervenableModel
from interp.api.loading import Classifier
from interp.analysis.attribution import CANCELS_BELOW, agreement_verdict
from interp.analysis.iia import summarize_all
from interp.api.screen import ScreenResult, confirm_rows, confirmed_locations, screen_locations
from interp.api.specs import DataSpec, RunSpec, SampleSpec
from interp.core.checks import check_int
from interp.core.errors import ConfigError, OutputError, named
from interp.core.estimates import Estimate
from interp.core.outputs import OutputSet, read_json, refuse_foreign, write_csv_atomic, write_json_atomic
from interp.jobs.intervene import InterventionConfig, run_interventions


@dataclass(frozen=True)
class ScreenConfig:
    """Which model, examples (bases and sources alike), variable and locations; how many to confirm exactly."""

    model: str | Classifier
    out: str
    variable: str = "lexrel"
    locations: str = "all"
    confirm: int = 5
    seed: int = 0  # which K of the rest are drawn
    qk_fix: bool = True
    graddrop: bool = True
    data: DataSpec = DataSpec()
    sample: SampleSpec = SampleSpec()
    run: RunSpec = RunSpec()


def run_screen(config: ScreenConfig, *, progress: bool = True) -> ScreenResult:
    """Screen, confirm into ``screen.h5`` (resumable), and write ``screen.csv`` and ``screen.json`` into ``config.out``.

    Raises:
        ConfigError: a variable, location or count that does not fit (naming it).
        OutputError: ``out`` is a file or cannot be written.
    """
    check_int(config.confirm, "confirm", least=0)
    out = Path(config.out)
    if out.exists() and not out.is_dir():
        raise OutputError(f"{named('out', out)} is a file; give a directory")
    _refuse_others(out)  # before any work: the files this screen would write are its own or absent
    lab = IntervenableModel.from_specs(config.model, config.data, config.run, splits=config.sample.splits)
    lab.task.check_variable(config.variable)
    examples = config.sample.draw(lab.task)
    n = len(screen_locations(lab.locations, lab.task.roles, config.locations))
    if config.confirm > n:  # said before the screen runs
        raise ConfigError(f"{named('confirm', config.confirm)} asks for more locations than the {n} screened")
    key = _reuse_key(config, lab, examples)
    done = _finished(out, key)
    if done is not None:
        if progress:
            tqdm.write(f"{out}: this screen is already done (same model, examples and settings), reusing it")
        return done
    found = lab.screen(examples, examples, config.locations, variable=config.variable, seed=config.seed, qk_fix=config.qk_fix,
                       graddrop=config.graddrop, progress=progress)  # fmt: skip
    if config.confirm:
        top, drawn = confirmed_locations(found.rows, config.confirm, config.seed)
        exact = InterventionConfig(model=lab.model, out=str(out / "screen.h5"), locations=",".join([*top, *drawn]), variables=(found.variable,),
                                   data=config.data, sample=config.sample, run=config.run, overwrite=True,  # this screen's own file (checked above)
                                   command="screen")  # fmt: skip
        summaries = {s["location"]: s for s in summarize_all(run_interventions(exact, progress=progress))}
        confirm_rows(found, summaries, top, drawn)
    agreement = {name: (repr(value) if hasattr(value, "low") else value) for name, value in found.agreement.items()}
    with OutputSet(out, "screen") as outputs:
        write_csv_atomic(found.rows, outputs.path("screen.csv"))
        write_json_atomic(outputs.path("screen.json"), {"model": lab.model.name, **lab.model.reading_record, "variable": found.variable, "examples": found.examples,
                                                        "locations": len(found.rows), "confirm": config.confirm, "seed": config.seed,
                                                        "qk_fix": config.qk_fix, "graddrop": config.graddrop,
                                                        "cancels": sum(bool(r["cancels"]) for r in found.rows),
                                                        "interval": found.interval, "agreement": agreement,
                                                        **({"verdict": agreement_verdict(found.agreement)} if found.agreement else {}),
                                                        "reuse": key, "estimates": _estimates(found.agreement),
                                                        "rows": [{k: _plain(v) for k, v in r.items()} for r in found.rows]})  # fmt: skip
    return found


def _reuse_key(config: ScreenConfig, lab: IntervenableModel, examples: list) -> dict:
    """What makes a finished screen the same one: the model's weights by their SHA-256 (a checkpoint on disk or a model
    held in memory alike), the examples by id, the variable, locations and settings."""
    return {"model": lab.model.sha256, "task": lab.task.name, "examples": [e.id for e in examples], "variable": config.variable,
            "locations": config.locations, "confirm": config.confirm, "seed": config.seed, "qk_fix": config.qk_fix,
            "graddrop": config.graddrop, "precision": str(getattr(config.run, "precision", ""))}  # fmt: skip


def _finished(out: Path, key: dict) -> ScreenResult | None:
    """The screen ``out`` holds, where its ``screen.json`` records ``key`` and its rows; else ``None``."""
    record = read_json(out / "screen.json") if (out / "screen.csv").is_file() else None
    if not isinstance(record, dict) or record.get("reuse") != key or not isinstance(record.get("rows"), list):
        return None
    rows = [{k: float("nan") if v is None else v for k, v in r.items()} for r in record["rows"]]
    agreement = {**record.get("agreement", {}), **{k: Estimate(*v) for k, v in record.get("estimates", {}).items()}}
    return ScreenResult(record["variable"], rows, agreement if record.get("agreement") else {}, record.get("interval", ""), record.get("examples", 0))


def _estimates(agreement: dict) -> dict:
    """The agreement's :class:`~interp.core.estimates.Estimate` figures in full (value, low, high, method), to read back."""
    return {k: [float(v), v.low, v.high, v.method] for k, v in agreement.items() if isinstance(v, Estimate)}


def _plain(value):
    """A row's value as JSON holds it: NaN as null, numpy scalars as Python's."""
    value = value.item() if hasattr(value, "item") else value
    return None if isinstance(value, float) and value != value else value


def _refuse_others(out: Path) -> None:
    """Refuse a folder whose ``screen.csv``, ``screen.json`` or ``screen.h5`` another command (or a person) wrote: a
    screen replaces only its own files. ``screen.h5`` is a screen's when its manifest names ``screen`` as its writer.

    Raises:
        OutputError: naming ``out=`` and the file.
    """
    if not out.is_dir():
        return
    refuse_foreign(out, ["screen.csv", "screen.json"])
    h5 = out / "screen.h5"
    if h5.exists() or h5.is_symlink():
        record = read_json(h5.with_name(h5.name + ".manifest.json"))
        writer = record.get("command") if isinstance(record, dict) else None
        if writer != "screen":
            said = f"`interp {writer}` wrote it" if writer else "interp did not write it"
            raise OutputError(f"{named('out', out)}: {h5} exists and {said}, not a screen; move it away or choose another folder")


def format_screen(found: ScreenResult, top: int = 15) -> str:
    """The best ``top`` locations by estimate, the confirmed ones with their exact IIA, and the agreement."""
    lines = [f"{'rank':>4}  {'location':34}{'estimated IIA [95%]':>26}{'robust':>8}{'exact IIA [95%]':>26}  confirmed"]
    shown = [r for r in found.rows if r["rank"] <= top or r["confirmed"] or r["cancels"]]
    for r in shown:
        exact = f"{r['exact_iia']:.3f} [{r['exact_iia_low']:.3f}, {r['exact_iia_high']:.3f}]" if r["confirmed"] else ""
        robust = "" if r["robustness"] != r["robustness"] else f"{r['robustness']:.2f}{'!' if r['cancels'] else ' '}"
        lines.append(f"{r['rank']:>4}  {r['location']:34}{r['estimated_iia']:>7.3f} [{r['estimated_iia_low']:.3f}, {r['estimated_iia_high']:.3f}]"
                     f"{robust:>8}{exact:>26}  {r['confirmed']}{' (above both nulls)' if r.get('above_nulls') else ''}")  # fmt: skip
    lines.append(f"IIA on causal pairs; [95%]: {found.interval} (sampling only: not the linear approximation's error)")
    if any(r["qk_fixed"] for r in found.rows):
        lines.append("residual sites that feed attention: that attention recomputed exactly per pair (AtP*'s QK fix)")
    flagged = sum(bool(r["cancels"]) for r in found.rows)
    if any(r["robustness"] == r["robustness"] for r in found.rows):
        lines.append(f"robust: GradDrop's robustness (1: the estimate holds with any one later layer's gradient dropped); ! below "
                     f"{CANCELS_BELOW}: paths that cancel, the estimate may be far too low ({flagged} sites; shown whatever their rank)")  # fmt: skip
    if found.agreement:
        a = found.agreement
        lines.append(f"agreement with the exact interchange over the {a['top'] + a['drawn']} confirmed locations: Spearman {a['spearman']!r} "
                     f"({a['spearman'].method}); miss rate {a['miss_rate']!r}: {a['missed']} of {a['drawn']} locations drawn from the rest "
                     f"beat the lowest exact IIA among the top {a['top']} ({a['bar']:.3f})")  # fmt: skip
        lines.append(agreement_verdict(a))
    return "\n".join(lines)
