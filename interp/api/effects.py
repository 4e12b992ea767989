"""The effect on behaviour of one vector written at a location of every example: ablation and steering, scored.

Usage::

    lab = interp.IntervenableModel("runs/demo/model", "monli")
    found = effects.ablation_effect(lab, examples, "blocks.3.hook_resid_post@w_h", kind="mean")
    found = effects.steering_effect(lab, examples, reference, "blocks.3.hook_resid_post@w_h", "lexrel", "reverse", scales=(1.0, 4.0))
    found.to_frame(); found.save("runs/demo/steering")

**Ablation** (zero, or the mean over a reference set: Wang et al. 2022, §3) sets every example's vector at the
location and scores the model again: per split, accuracy intact and ablated (95% Wilson intervals over the split's
examples), the change in accuracy and the share of labels that changed (95% percentile bootstrap, paired: the same
examples resampled for both, the task's groups (MoNLI: word pairs) whole), and beside them a continuous figure, the
mean change of the intact answer's margin (its logit minus the largest other label's, logit units), which moves where
logits move though no label flips. The null an effect must beat is no change: an interval of the change that covers
0 says the location is not needed, on these examples, for the answer.

**Steering** (activation addition; Turner et al. 2023, §2) adds ``scale`` times a direction: the difference of the
mean vectors of the reference examples whose ``variable`` takes the value ``to`` and of those where it does not
(difference of class means; keep the reference set disjoint from the steered one). Per scale: the share of labels
changed, and of the examples whose causal model output changes when ``variable`` is set to ``to`` (the eligible
ones), the share whose prediction is now that counterfactual output, and the mean change of (that output's logit −
the model's own answer's) on those it did not already answer so (``logit_shift``, logit units; Heimersheim & Nanda
2024, §3, on a continuous metric beside a discrete one). Beside each, the same figures for a seeded
random direction of the same norm (the null a direction must beat: any push of that size), and the eligible
examples' share before steering. The claim "the direction moves the model as the causal model says setting the
variable would" needs the direction's share above the random one's. It does not say that the model uses that
direction when it is not pushed (that is what interchange interventions and DAS test).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from interp.analysis.bootstrap import ExampleBootstrap
from interp.analysis.shift import gap, label_columns, margin, mean_change
from interp.api import ablation
from interp.causal import run_forward
from interp.causal.values import value_name
from interp.core.errors import ConfigError, named, renamed
from interp.core.estimates import Estimate, wilson
from interp.core.outputs import OutputSet, refuse_foreign, require_writable, write_csv_atomic


@dataclass
class EffectResult:
    """The rows of an ablation (one per split, then ``all``) or a steering run (one per direction and scale), each
    figure an :class:`~interp.core.estimates.Estimate`; ``method``: how the bootstrap intervals were found."""

    command: str
    location: str
    rows: list[dict]
    method: str
    settings: dict = field(default_factory=dict)

    def to_frame(self):
        """A pandas DataFrame: a column per figure, and ``_low``, ``_high`` beside each interval."""
        import pandas as pd

        return pd.DataFrame(_flat(self.rows))

    def save(self, out: str | Path) -> Path:
        """Write ``ablation.csv`` or ``steering.csv`` into the folder ``out`` (with a manifest); returns its path.

        Raises:
            OutputError: ``out`` is a file, holds that file and interp did not write it, or cannot be written.
        """
        name = f"{'ablation' if self.command == 'ablate' else 'steering'}.csv"
        out = Path(out)
        require_writable(out)
        if out.is_dir():
            refuse_foreign(out, [name])
        with OutputSet(out, self.command) as outputs:
            write_csv_atomic(_flat(self.rows), outputs.path(name))
        return out / name


def _flat(rows: list[dict]) -> list[dict]:
    flat = []
    for row in rows:
        item = {}
        for key, value in row.items():
            item[key] = float(value) if isinstance(value, Estimate) else value
            if isinstance(value, Estimate):
                item[f"{key}_low"], item[f"{key}_high"] = value.low, value.high
        flat.append(item)
    return flat


def _bootstrap(lab, examples: list, seed: int) -> ExampleBootstrap:
    """Paired replicates over ``examples`` (the task's groups whole where it has them): one axis, a single dummy source."""
    groups = None if lab.task.groups is None else np.asarray(lab.task.groups.of(examples), dtype=object)
    return ExampleBootstrap(len(examples), 1, square=False, seed=seed, base_groups=groups,
                            source_groups=None if groups is None else np.zeros(1, dtype=object),
                            unit=lab.task.groups.unit if lab.task.groups is not None else "groups")  # fmt: skip


def _share(boot: ExampleBootstrap, hits: np.ndarray, mask: np.ndarray) -> Estimate:
    return boot.estimate(hits[:, None], mask[:, None])


def _predictions(lab, logits: torch.Tensor) -> np.ndarray:
    """Task label ids of the model's argmax."""
    return np.asarray(lab.reading.read, dtype=np.int64)[logits.argmax(-1).numpy()]


def _columns(lab) -> np.ndarray:
    """The model's logit column that reads as each task label (:func:`~interp.analysis.shift.label_columns`)."""
    return label_columns(lab.reading.read, len(lab.task.labels))


def ablation_effect(lab, examples: Sequence, location, *, kind: str = "zero", reference: Sequence | None = None,
                    seed: int = 0) -> EffectResult:  # fmt: skip
    """Ablate ``location`` (``kind`` zero or mean over ``reference``, default ``examples``) on every example and score
    the model against itself intact: a row per split, then ``all`` where there are several.

    Raises:
        ConfigError: naming ``kind=``, ``reference=`` (given to a zero ablation, or empty), the location (malformed,
            a component site) or ``examples=``.
    """
    if kind not in ablation.ABLATIONS:
        raise ConfigError(f"{named('kind', repr(kind))}: choose {' or '.join(ablation.ABLATIONS)}")
    if kind == "zero" and reference is not None:
        raise ConfigError(f"{named('reference')}: a zero ablation takes no reference set (kind='mean' does)")
    examples = lab.task.check_examples(examples)
    loc = lab.location(location)
    gold = np.array([lab.task.labels.index(e.label) for e in examples])
    before = lab.predict(examples)
    after = ablation.ablate(lab, examples, loc, kind=kind, reference=reference)
    intact, ablated = _predictions(lab, before), _predictions(lab, after)
    columns = _columns(lab)  # the continuous figure: how far the intact answer's margin over the other labels moved
    moved = margin(after.float().numpy(), intact, columns) - margin(before.float().numpy(), intact, columns)
    boot = _bootstrap(lab, examples, seed)
    names = np.array([e.split for e in examples], dtype=object)
    rows = []
    for split in [*dict.fromkeys(names.tolist()), *(["all"] if len(set(names.tolist())) > 1 else [])]:
        where = np.ones(len(examples), bool) if split == "all" else names == split
        right, right_after = intact == gold, ablated == gold
        n = int(where.sum())
        change = boot.interval(float(right_after[where].mean() - right[where].mean()),
                               boot.share(right_after[:, None], where[:, None]) - boot.share(right[:, None], where[:, None]))  # fmt: skip
        rows.append({"split": split, "examples": n, "accuracy": wilson(int(right[where].sum()), n),
                     "ablated_accuracy": wilson(int(right_after[where].sum()), n), "change": change,
                     "changed": _share(boot, intact != ablated, where), "margin_change": mean_change(boot, moved, where)})  # fmt: skip
    settings = {"model": lab.model.name, "kind": kind, "reference": "the ablated examples" if reference is None else f"{len(reference)} examples"}
    return EffectResult("ablate", str(loc), rows, boot.method, settings)


def _spellings(value) -> list[str]:
    """How a value may be named: as files name it (``⊏``), and by an enum's value and name (``forward``, ``FORWARD``)."""
    return list(dict.fromkeys([value_name(value), *((str(value.value), value.name.lower()) if hasattr(value, "value") and hasattr(value, "name") else ())]))


def _setting(causal, task, reference: list, variable: str, to: str):
    """The value of ``variable`` named ``to`` (any of its spellings) as the causal model holds it, and its name in files.

    Raises:
        ConfigError: naming ``to=`` and the values the reference examples take.
    """
    seen = dict.fromkeys(run_forward(causal, task.inputs(e))[variable] for e in reference)
    raw = [v for v in causal.values.get(variable, ()) if v in seen] + [v for v in seen if v not in causal.values.get(variable, ())]
    for value in raw:
        if to in _spellings(value) or to.lower() in _spellings(value):
            return value, value_name(value)
    said = ", ".join(" ".join([names[0], *(f"({n})" for n in names[1:2])]) for names in (_spellings(v) for v in raw))
    raise ConfigError(f"{named('to', repr(to))}: {variable} takes {said} on the reference examples")


def _direction(lab, reference: list, loc, variable: str, name: str, causal) -> torch.Tensor:
    """The mean vector of ``reference`` where ``variable`` is ``name`` minus the mean where it is not: float32 ``[width]``.

    Raises:
        ConfigError: naming ``reference=``: every one or none of its examples takes that value.
    """
    values = lab.task.values(causal, reference, variable)
    towards = values.codes == values.names.index(name)
    if towards.all() or not towards.any():
        raise ConfigError(f"{named('reference')}: every one or none of its {len(reference)} examples has {variable} = {name}; "
                          "the direction needs both")  # fmt: skip
    vectors = lab.source_vectors(reference, loc).float().cpu()
    mask = torch.from_numpy(towards)
    return vectors[mask].mean(0) - vectors[~mask].mean(0)


def steering_effect(lab, examples: Sequence, reference: Sequence, location, variable: str, to: str, *,
                    scales: Sequence[float] = (1.0, 2.0, 4.0), seed: int = 0) -> EffectResult:  # fmt: skip
    """Steer ``location`` along ``variable``'s class-mean direction towards ``to`` (computed on ``reference``) at each
    of ``scales``, beside a random direction of the same norm (``seed``, also the bootstrap's): a row per direction
    and scale.

    Raises:
        ConfigError: naming ``variable=``, ``to=`` (not one of its values), ``scales=`` (empty or not finite), the
            location, ``examples=`` or ``reference=`` (without both kinds of example), or ``to=`` where setting it
            changes the causal model's output on none of the examples.
    """
    if not scales or not all(isinstance(s, (int, float)) and math.isfinite(s) for s in scales):
        raise ConfigError(f"{named('scales', ','.join(map(str, scales)) or 'none')}: give one or more finite numbers")
    task = lab.task
    variable = task.check_variable(variable)
    examples = task.check_examples(examples)
    with renamed(examples="reference"):
        reference = task.check_examples(reference)
    causal = task.build_causal_model([*{e.id: e for e in [*examples, *reference]}.values()])
    loc = lab.location(location)
    setting, name = _setting(causal, task, reference, variable, to)
    direction = _direction(lab, reference, loc, variable, name, causal)
    output = [run_forward(causal, task.inputs(e))[causal.output] for e in examples]
    counterfactual = [run_forward(causal, task.inputs(e), {variable: setting})[causal.output] for e in examples]
    target = np.array([task.labels.index(c) for c in counterfactual])
    eligible = np.array([c != o for c, o in zip(counterfactual, output)])
    if not eligible.any():
        raise ConfigError(f"{named('to', repr(to))}: setting {variable} to {to} changes the causal model's output on none of "
                          f"the {len(examples)} steered examples; choose other examples or another value")  # fmt: skip
    generator = torch.Generator().manual_seed(seed)
    random = torch.randn(direction.shape, generator=generator)
    random = random * (direction.norm() / random.norm())
    before = lab.predict(examples)
    own = _predictions(lab, before)
    columns = _columns(lab)
    gap_before = gap(before.float().numpy(), target, own, columns)
    boot = _bootstrap(lab, examples, seed)
    every = np.ones(len(examples), bool)
    rows = []
    for kind, vector in (("direction", direction), ("random", random)):
        for scale in scales:
            logits = ablation.steer(lab, examples, loc, vector, scale=float(scale))
            pred = _predictions(lab, logits)
            shift = gap(logits.float().numpy(), target, own, columns) - gap_before  # toward the counterfactual, logit units
            rows.append({"direction": kind, "scale": float(scale), "examples": len(examples), "eligible": int(eligible.sum()),
                         "changed": _share(boot, pred != own, every), "to_counterfactual": _share(boot, pred == target, eligible),
                         "before": _share(boot, own == target, eligible), "logit_shift": mean_change(boot, shift, eligible & (target != own))})  # fmt: skip
    settings = {"model": lab.model.name, "variable": variable, "to": to, "norm": float(direction.norm()),
                "reference": f"{len(reference)} examples of {', '.join(dict.fromkeys(e.split for e in reference))}", "seed": seed}  # fmt: skip
    return EffectResult("steer", str(loc), rows, boot.method, settings)


def format_effect(found: EffectResult) -> str:
    """The result as a text table with every interval, and what the intervals are over."""
    if found.command == "ablate":
        lines = [f"{found.settings['kind']} ablation at {found.location} (reference: {found.settings['reference']})",
                 f"{'split':14}{'examples':>9}  {'accuracy [95%]':>22}  {'ablated [95%]':>22}  {'change [95%]':>24}  {'labels changed [95%]':>22}"
                 f"  {'margin change [95%]':>24}"]  # fmt: skip
        for r in found.rows:
            lines.append(f"{r['split']:14}{r['examples']:>9}  {_pct(r['accuracy']):>22}  {_pct(r['ablated_accuracy']):>22}  "
                         f"{_pct(r['change'], sign=True):>24}  {_pct(r['changed']):>22}  {_logits(r.get('margin_change')):>24}")  # fmt: skip
        lines.append("accuracies: 95% Wilson over each split's examples; change, labels changed and margin change: " + found.method
                     + "; the null is no change (an interval of the change that covers 0); margin change: the intact answer's logit "
                     "minus the largest other label's, ablated minus intact, in logit units (negative: the answer weakened, "
                     "whether or not it flipped)")  # fmt: skip
        return "\n".join(lines)
    s = found.settings
    lines = [f"steering at {found.location} towards {s['variable']} = {s['to']} (difference of class means over {s['reference']}, "
             f"norm {s['norm']:.3g}); random: a seeded direction of the same norm (seed {s['seed']})",
             f"{'direction':10}{'scale':>7}  {'labels changed [95%]':>22}  {'to counterfactual [95%]':>24}  {'before steering':>22}"
             f"  {'logit shift [95%]':>24}"]  # fmt: skip
    for r in found.rows:
        lines.append(f"{r['direction']:10}{r['scale']:>7g}  {_pct(r['changed']):>22}  {_pct(r['to_counterfactual']):>24}  {_pct(r['before']):>22}"
                     f"  {_logits(r.get('logit_shift')):>24}")  # fmt: skip
    eligible = found.rows[0]["eligible"]
    lines.append(f"to counterfactual: of the {eligible} of {found.rows[0]['examples']} examples whose causal model output changes with "
                 f"{s['variable']} set to {s['to']}, the share now predicted as that output; logit shift: on those the model did not "
                 f"already answer so, the mean change of (that output's logit − the model's own answer's), in logit units, "
                 f"positive toward it whether or not a label flips; [95%]: {found.method}")  # fmt: skip
    return "\n".join(lines)


def _logits(e: Estimate | None) -> str:
    if e is None or not math.isfinite(float(e)):
        return "—"
    return f"{float(e):+.3f} [{e.low:+.3f}, {e.high:+.3f}]"


def _pct(e: Estimate, sign: bool = False) -> str:
    value = f"{100 * float(e):+.1f}" if sign else f"{100 * float(e):.1f}"
    return f"{value} [{100 * e.low:.1f}, {100 * e.high:.1f}]"
