"""`interp das --alignment VAR=LOC,VAR=LOC`: DAS over a joint alignment, one subspace per variable trained together.

Usage::

    from interp.jobs.joint_das import JointDasConfig, run_joint_das, format_joint_das
    found = run_joint_das(JointDasConfig(model="runs/demo/model", alignment={"lexrel": "blocks.1.hook_resid_post@w_p",
                                                                            "negated": "blocks.4.hook_resid_post@w_h"},
                                         sample=SampleSpec(("pmonli", "nmonli_test"), max_per_split=100), out="runs/joint_das"))
    print(format_joint_das(found))

What is trained and how it is judged: :mod:`interp.api.joint_das`. ``out`` (a folder) gets ``joint_das.json`` (the
settings, the losses, each method's held-out IIA and nulls with their intervals, the verdict) and
``interventions/<variable>.safetensors`` (each trained subspace, :func:`interp.files.subspaces.save_intervention`),
written together with ``das-joint.manifest.json``; an existing ``joint_das.json`` is replaced only with ``overwrite``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from interp.api.intervenable import IntervenableModel
from interp.api.joint_das import JointDasResult
from interp.api.loading import Classifier
from interp.api.specs import DataSpec, RunSpec, SampleSpec
from interp.core.errors import OutputError, named
from interp.core.outputs import OutputSet, require_writable, write_json_atomic
from interp.files.subspaces import save_intervention

__all__ = ["JointDasConfig", "run_joint_das", "format_joint_das"]


@dataclass(frozen=True)
class JointDasConfig:
    """Which model; ``alignment`` (variable -> location); the examples (``sample``, split by example with ``seed``);
    ``k`` (every variable's subspace size), ``kind``, ``per_base``, ``epochs``, ``lr``, ``batch_size``, ``test_share``;
    ``out``: a folder (``overwrite`` to replace its ``joint_das.json``)."""

    model: str | Classifier
    out: str
    alignment: Mapping[str, str] = field(default_factory=dict)
    data: DataSpec = DataSpec()
    sample: SampleSpec = SampleSpec()
    run: RunSpec = RunSpec()
    k: int = 16
    kind: str = "rotated"
    per_base: int = 16
    epochs: int = 2
    lr: float = 1e-3
    batch_size: int = 64
    seed: int = 0
    test_share: float = 0.2
    overwrite: bool = False


def run_joint_das(config: JointDasConfig, *, progress: bool = False) -> JointDasResult:
    """Load, draw, :meth:`~interp.api.intervenable.IntervenableModel.train_das_jointly`, and write ``config.out``.

    Raises:
        ConfigError: as :func:`interp.api.joint_das.train_das_jointly`.
        DataError, ModelError, OutputError: bad data or model; an ``out`` holding ``joint_das.json`` (checked first).
    """
    out = Path(config.out)
    if (out / "joint_das.json").exists() and not config.overwrite:
        raise OutputError(f"{named('out', config.out)} holds joint_das.json; pass {named('overwrite', True)} to replace it")
    require_writable(out / "joint_das.json")
    lab = IntervenableModel.from_specs(config.model, config.data, config.run, splits=config.sample.splits)
    examples = config.sample.draw(lab.task)
    found = lab.train_das_jointly(examples, dict(config.alignment), k=config.k, kind=config.kind, per_base=config.per_base, epochs=config.epochs,
                                  lr=config.lr, batch_size=config.batch_size, seed=config.seed, test_share=config.test_share, progress=progress)  # fmt: skip
    frame = found.summary_frame()
    record = {"alignment": found.alignment, "k": found.k, "kind": found.kind, "per_base": found.per_base, "epochs": config.epochs, "lr": config.lr,
              "batch_size": config.batch_size, "seed": found.seed, "test_share": found.test_share, "examples": len(examples),
              "train_runs": found.train_runs, "held_out_runs": int(frame.runs.iloc[0]), "losses": found.losses, "learned": found.learned,
              "summary": frame.to_dict(orient="records"), **found.meta}  # fmt: skip
    with OutputSet(out, "das-joint") as outputs:
        write_json_atomic(outputs.path("joint_das.json"), record)
        for variable, intervention in found.interventions.items():
            staged = outputs.path(f"interventions/{variable}.safetensors")
            outputs.path(f"interventions/{variable}.json")
            staged.parent.mkdir(parents=True, exist_ok=True)
            save_intervention(intervention, staged.with_suffix(""), {"variable": variable, "location": found.alignment[variable],
                                                                     "joint_alignment": found.alignment, **found.meta}, overwrite=True)  # fmt: skip
    return found


def format_joint_das(found: JointDasResult) -> str:
    """The held-out IIA of the trained subspaces, the untrained ones and the whole vectors, each beside its nulls with
    its 95% interval; the verdict; what the intervals resample."""
    frame = found.summary_frame()
    cell = lambda r, name: f"{r[name]:.3f} [{r[name + '_low']:.3f}, {r[name + '_high']:.3f}]"  # noqa: E731
    nulls = ["stays_base", *(f"copies_{v}" for v in found.alignment)]
    head = f"{'method':<10}  {'IIA [95%]':<22}  " + "  ".join(f"{n.replace('_', ' ') + ' [95%]':<22}" for n in nulls)
    lines = [", ".join(f"{v} at {loc} (k={found.k[v]})" for v, loc in found.alignment.items()) + f": {found.train_runs} training runs", head]
    for r in frame.to_dict(orient="records"):
        lines.append(f"{r['method']:<10}  {cell(r, 'iia'):<22}  " + "  ".join(f"{cell(r, n):<22}" for n in nulls))
    lines.append(("learned" if found.learned else "not learned") + ": the trained IIA's interval "
                 + ("lies" if found.learned else "does not lie") + " above every null of its runs and the untrained IIA")
    lines.append(f"[95%]: {frame.interval.iloc[0]}; training loss by epoch (nats): " + ", ".join(f"{x:.3f}" for x in found.losses))
    return "\n".join(lines)
