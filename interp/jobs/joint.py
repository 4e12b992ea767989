"""`interp intervene --alignment VAR=LOC,VAR=LOC`: a joint interchange intervention, beside each variable alone.

Usage::

    from interp.jobs.joint import JointConfig, run_joint, format_joint
    joint, alone = run_joint(JointConfig(model="runs/demo/model", alignment={"lexrel": "blocks.1.hook_resid_post@w_h",
                                                                            "negated": "blocks.3.hook_resid_post@cls"},
                                         sample=SampleSpec(("pmonli", "nmonli_test"), max_per_split=100), out="runs/joint.json"))
    print(format_joint(joint, alone))

Every example drawn is a base and each variable's source pool; each base gets ``per_base`` source tuples (seeded by the
sample's seed). Each variable alone is run on the same bases, with the same draw of its sources
(:meth:`IntervenableModel.interchange_jointly <interp.api.intervenable.IntervenableModel.interchange_jointly>` with
that variable only), so the joint IIA and each alone's are read on the same runs' bases. The file (JSON) records every
run's base and sources, the summary, and each alone's summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from interp.api.intervenable import IntervenableModel
from interp.api.joint import JointResult
from interp.api.loading import Classifier
from interp.api.specs import DataSpec, RunSpec, SampleSpec
from interp.core.errors import ConfigError, DataError, OutputError, named
from interp.core.jsonlines import json_record, read_lines
from interp.core.outputs import require_writable

__all__ = ["JointConfig", "parse_alignment", "run_joint", "format_joint"]


@dataclass(frozen=True)
class JointConfig:
    """Which model; ``alignment`` (variable -> location); the examples (``sample``: bases and every source pool);
    ``per_base`` source tuples a base; ``out``: a JSON file (``overwrite`` to replace one)."""

    model: str | Classifier
    alignment: Mapping[str, str] = field(default_factory=dict)
    data: DataSpec = DataSpec()
    sample: SampleSpec = SampleSpec()
    run: RunSpec = RunSpec()
    per_base: int = 16
    out: str | None = None
    overwrite: bool = False
    source_ids: str | None = None  # a JSON-lines file naming each run: {"base": ID, VARIABLE: ID, ...} (no draw)


def parse_alignment(text: str) -> dict[str, str]:
    """``"lexrel=LOC,negated=LOC"`` as ``{"lexrel": "LOC", "negated": "LOC"}``.

    Raises:
        ConfigError: naming ``alignment=`` (``--alignment``): an item without ``=``, or a variable named twice.
    """
    found: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        variable, sep, location = item.partition("=")
        if not sep or not variable.strip() or not location.strip():
            raise ConfigError(f"{named('alignment', repr(text))}: {item!r} is not VARIABLE=LOCATION (e.g. lexrel=blocks.1.hook_resid_post@w_h)")
        if variable.strip() in found:
            raise ConfigError(f"{named('alignment', repr(text))}: variable {variable.strip()!r} is named twice")
        found[variable.strip()] = location.strip()
    if not found:
        raise ConfigError(f"{named('alignment')} names no variable; give VARIABLE=LOCATION,VARIABLE=LOCATION")
    return found


def read_source_ids(path: str, variables: tuple[str, ...]) -> list[dict[str, str]]:
    """Named runs of a joint intervention: a JSON-lines file, one object a line, ``{"base": ID, VARIABLE: ID, ...}``
    with a source for each of ``variables``.

    Raises:
        DataError: naming ``file:line``: as :func:`~interp.core.jsonlines.read_lines`, a line without the base or a
            variable's source, an id that is not a string, a field that is no variable.
    """
    runs = []
    for lineno, text in enumerate(read_lines(path, "a file of one JSON object a line: base and each variable's source id"), 1):
        where = f"{path}:{lineno}"
        record = json_record(text, where, required=("base", *variables), strings=("base", *variables))
        extra = sorted(set(record) - {"base", *variables})
        if extra:
            raise DataError(f"{where}: field {extra[0]!r} is not a variable of the alignment ({', '.join(variables)})")
        runs.append(record)
    return runs


def run_joint(config: JointConfig) -> tuple[JointResult, dict[str, JointResult]]:
    """Load, draw, run the joint intervention and each variable alone, and save into ``config.out`` where given.

    Raises:
        ConfigError: as :meth:`~interp.api.intervenable.IntervenableModel.interchange_jointly`.
        DataError, ModelError, OutputError: bad data, model, or an ``out`` that exists (checked before the model loads).
    """
    if config.out is not None:  # before the model loads
        if Path(config.out).exists() and not config.overwrite:
            raise OutputError(f"{named('out', config.out)} exists; pass {named('overwrite', True)} to replace it")
        require_writable(Path(config.out))
    named_runs = None if config.source_ids is None else read_source_ids(config.source_ids, tuple(config.alignment))
    lab = IntervenableModel.from_specs(config.model, config.data, config.run, splits=config.sample.splits)
    examples = config.sample.draw(lab.task)
    if named_runs is None:
        settings = {"per_base": config.per_base, "seed": config.sample.seed}
        bases, sources = examples, {v: examples for v in config.alignment}
    else:  # each run as the file names it
        by_id = {e.id: e for e in examples}
        for lineno, run in enumerate(named_runs, 1):
            unknown = next((i for i in run.values() if i not in by_id), None)
            if unknown is not None:
                raise DataError(f"{config.source_ids}:{lineno}: example {unknown!r} is not among the examples drawn ({len(by_id)}; "
                                f"{named('splits')}, {named('max_examples')})")  # fmt: skip
        settings = {"per_base": None, "seed": config.sample.seed}
        bases = [by_id[run["base"]] for run in named_runs]
        sources = {v: [by_id[run[v]] for run in named_runs] for v in config.alignment}
    joint = lab.interchange_jointly(bases, sources, dict(config.alignment), **settings)
    alone = {v: lab.interchange_jointly(bases, {v: sources[v]}, {v: loc}, **settings) for v, loc in config.alignment.items()} \
        if len(config.alignment) > 1 else {}  # fmt: skip
    if config.out is not None:
        joint.save(config.out, overwrite=config.overwrite, alone=alone)
    return joint, alone


def format_joint(joint: JointResult, alone: Mapping[str, JointResult]) -> str:
    """The joint IIA with its nulls, then each variable alone on the same bases, each figure with its interval."""
    s = joint.summary()
    sites = ", ".join(f"{v} at {loc}" for v, loc in joint.alignment.items())
    lines = [f"joint interchange ({sites}): {s['rows']} runs, {joint.per_base} source tuples per base",
             f"  IIA {s['iia']!r}  (on the {s['causal_rows']} runs whose counterfactual differs from the base's label: {s['iia_causal']!r})",
             f"  nulls: stays the base {s['stays_base']!r}; " + "; ".join(f"copies the {v} source {s[f'copies_{v}']!r}" for v in joint.alignment),
             f"  chance (the commonest counterfactual) {s['chance']:.3f}"]  # fmt: skip
    for v, r in alone.items():
        a = r.summary()
        lines.append(f"{v} alone at {r.alignment[v]}: IIA {a['iia']!r}  (stays the base {a['stays_base']!r}, copies the source {a[f'copies_{v}']!r})")
    lines.append(f"[95%]: {s['interval']}")
    return "\n".join(lines)
