"""Distributed alignment search over a joint alignment: one subspace per variable, at its own location, trained together.

Usage::

    lab = interp.IntervenableModel("runs/demo/model", "monli")
    examples = lab.task.examples(("pmonli", "nmonli_test"), per_split=100, seed=0)
    found = lab.train_das_jointly(examples, {"lexrel": "blocks.1.hook_resid_post@w_h", "negated": "blocks.4.hook_resid_post@w_h"},
                                  k=16, per_base=16, epochs=2)
    found.trained, found.untrained, found.vanilla    # JointResult each: IIA with its interval and the three nulls
    found.summary_frame()                           # one row per method: IIA [95%], the larger null, learned or not

DAS (Geiger, Wu, Potts, Icard & Goodman 2024, §3) learns, for each variable, a k-dimensional subspace of its location
(an orthogonal rotation's first k coordinates) such that interchanging those coordinates sets that variable. With
several variables the subspaces are trained together on joint interchange interventions: each training run writes
every variable's subspace from its own source (Geiger et al. 2021, §3; :mod:`interp.api.joint`), and the loss is the
cross-entropy of the network's output against the causal model's counterfactual with every variable from its source.
The examples are split by example (seeded): training runs draw bases and sources among the training part, held-out runs
among the rest, so no held-out example was seen in training.

Each held-out figure is a :class:`~interp.api.joint.JointResult` on the same runs: ``trained``; ``untrained`` (the same
interventions before training: what a random subspace does); ``vanilla`` (every location's whole vector, no subspace).
``learned`` asks that the trained IIA's interval lie above every null of its own runs (the network keeping the base's
label, or returning either source's) and above the untrained IIA. What it does not cover: each variable's subspace is
judged only jointly (train each alone with :meth:`IntervenableModel.train_das` to see it alone), and the interval
resamples the held-out bases' groups, not a new draw of sources, a new split or a new seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm
from torch.nn.utils import parametrize

from interp.analysis.das import FitSettings
from interp.api.joint import JointResult, counterfactuals, joint_alignment, joint_result
from interp.causal.pairs import split_examples
from interp.core.checks import check_int
from interp.core.errors import ConfigError, named
from interp.engine.interventions import Intervention, kinds, make_intervention
from interp.backends.base import Intervened, Sources, WritePlan
from interp.engine.rows import joint_batches


@dataclass
class JointDasResult:
    """Joint DAS's trained interventions and its held-out figures.

    Attributes:
        alignment: variable -> location; ``k``: variable -> the subspace's size; ``kind``: the intervention kind.
        interventions: variable -> the trained :class:`~interp.engine.interventions.Intervention` (eval mode, on CPU).
        trained, untrained, vanilla: :class:`~interp.api.joint.JointResult` on the same held-out runs.
        losses: mean training loss per epoch (cross-entropy, nats per run); ``train_runs``: runs trained on.
        seed, per_base, test_share: the draw and the split.
    """

    alignment: dict[str, str]
    k: dict[str, int]
    kind: str
    interventions: dict[str, Intervention]
    trained: JointResult
    untrained: JointResult
    vanilla: JointResult
    losses: list[float]
    train_runs: int
    seed: int
    per_base: int
    test_share: float
    meta: dict = field(default_factory=dict)

    @property
    def learned(self) -> bool:
        """Whether the trained IIA's 95% interval lies above every null of its runs and above the untrained IIA."""
        s = self.trained.summary()
        nulls = [float(s["stays_base"]), *(float(s[f"copies_{v}"]) for v in self.alignment), float(self.untrained.iia)]
        return bool(self.trained.iia.low > max(nulls))

    def summary_frame(self):
        """One row per method (``trained``, ``untrained``, ``vanilla``): ``iia``, ``iia_low``, ``iia_high``, ``stays_base``,
        ``copies_<variable>`` (each with ``_low`` and ``_high``), ``runs``, ``interval``."""
        import pandas as pd

        rows = []
        for method, res in (("trained", self.trained), ("untrained", self.untrained), ("vanilla", self.vanilla)):
            s = res.summary()
            row = {"method": method}
            for name in ("iia", "stays_base", *(f"copies_{v}" for v in self.alignment)):
                row.update({name: float(s[name]), f"{name}_low": s[name].low, f"{name}_high": s[name].high})
            rows.append({**row, "runs": s["rows"], "interval": s["interval"]})
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        s = self.trained.summary()
        sites = ", ".join(f"{v}@{loc} (k={self.k[v]})" for v, loc in self.alignment.items())
        nulls = ", ".join([f"stays the base {s['stays_base']!r}", *(f"copies {v} {s[f'copies_{v}']!r}" for v in self.alignment)])
        verdict = "learned" if self.learned else "not learned: the trained IIA's interval does not lie above every null and the untrained IIA"
        return (f"JointDasResult({sites}: held-out IIA {self.trained.iia!r} on {s['rows']} runs; untrained {self.untrained.iia!r}, "
                f"vanilla {self.vanilla.iia!r}; {nulls}; {verdict}; {s['interval']})")


def _task_logits(logits: torch.Tensor, read: Sequence[int], n_labels: int) -> torch.Tensor:
    """Model logits ``[rows, model labels]`` as the task's ``[rows, n_labels]``: each task label the log-sum-exp of the
    model labels read as it (the identity where they are the task's)."""
    index = torch.tensor(read, device=logits.device)
    return torch.stack([logits[:, index == t].logsumexp(-1) for t in range(n_labels)], dim=-1)


def train_das_jointly(lab, examples: Sequence, alignment: Mapping[str, object], *, k: int | Mapping[str, int] = 16, kind: str = "rotated",
                      per_base: int = 16, epochs: int = 2, lr: float = 1e-3, batch_size: int = 64, seed: int = 0,
                      test_share: float = 0.2, progress: bool = False) -> JointDasResult:  # fmt: skip
    """Train one ``kind`` intervention of size ``k`` per variable of ``alignment`` (variable -> location), together, on
    joint interchange runs among ``examples``' training part, and score it on runs among the held-out part beside its
    untrained self and the whole vectors (module docstring; Geiger et al. 2024, §3).

    Args:
        examples: the task's examples (or one's own with the causal model's values); split by example with ``seed``.
        alignment: variable -> location string or Location, each variable at its own location.
        k: the subspace's size (coordinates), one for every variable or a mapping variable -> size.
        per_base: source tuples drawn for each base, in training and held out. ``epochs``, ``lr``, ``batch_size``: Adam
            over shuffled batches of runs of one input length; ``seed``: the split, the draws, the initial
            interventions and the order. ``test_share``: the held-out share of the examples. ``progress``: a bar over
            the training steps (stderr).

    Raises:
        ConfigError: naming the parameter: an alignment as :func:`~interp.api.joint.joint_alignment` refuses it;
            ``kind`` not a trainable kind of a chosen size (``rotated``, ``lowrank``); ``k`` out of range for a location or naming other variables; ``per_base``,
            ``epochs`` or ``batch_size`` below 1; ``test_share`` outside (0, 1) or leaving fewer than 2 examples on a
            side; examples that are not the task's.
    """
    locations = joint_alignment(lab, alignment)
    variables = list(locations)
    trainable = kinds(trainable=True, sized=True)
    if kind not in trainable:
        raise ConfigError(f"{named('kind', repr(kind))} must be one of {', '.join(trainable)}")
    sizes = dict(k) if isinstance(k, Mapping) else {v: k for v in variables}
    if set(sizes) != set(variables):
        raise ConfigError(f"{named('k', repr(k))} must give one size for every variable, or a size for each of {', '.join(variables)}")
    check_int(per_base, "per_base", least=1)
    settings = FitSettings(epochs=epochs, lr=lr, batch_size=batch_size, seed=seed)
    examples = lab.task.check_examples(examples)
    every = lab.bind(examples)
    train, test = split_examples(len(every.examples), test_share, seed)
    rng = np.random.default_rng(seed)

    def draw(part: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        bases = np.repeat(part, per_base)
        return bases, {v: part[rng.integers(0, len(part), size=len(bases))] for v in variables}

    (train_bases, train_sources), (test_bases, test_sources) = draw(train), draw(test)
    vectors = {v: every.vectors(locations[v]).cpu() for v in variables}
    interventions = {}
    for v in variables:
        try:
            interventions[v] = make_intervention(kind, vectors[v].shape[-1], sizes[v], seed)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"{named('kind', repr(kind))}, {named('k', repr(sizes[v]))} at {locations[v]}: {exc}") from None
    runner = every.binding.runner
    device = next(lab.model.module.parameters()).device
    read, n_labels = every.binding.reading.read, len(lab.task.labels)

    def plan(drawn: dict[str, np.ndarray], rows: torch.Tensor, chosen: dict | None = None) -> WritePlan:
        """Rows ``rows``' writes: each variable's source vectors, whole or through its intervention."""
        sources = {locations[v]: Sources(vectors[v][torch.from_numpy(drawn[v][rows.numpy()])]) for v in variables}
        return WritePlan({loc: (src if chosen is None else Intervened(chosen[loc], src)) for loc, src in sources.items()})

    def score(with_interventions: bool) -> JointResult:
        bases = torch.from_numpy(test_bases)
        if not with_interventions:  # the whole vectors: the joint interchange itself
            logits = runner.plan_logits(every.encoded, bases, plan(test_sources, torch.arange(len(bases))), batch_size=batch_size)[0]
        else:
            logits = torch.empty(len(bases), lab.model.module.config.num_labels)
            chosen = {locations[v]: interventions[v].to(device).eval() for v in variables}
            with torch.no_grad(), parametrize.cached():  # each rotation's matrix made once for every batch
                for rows in joint_batches(every.encoded, bases, batch_size, torch.Generator().manual_seed(seed)):
                    logits[rows] = runner.plan_logits(every.encoded, bases[rows], plan(test_sources, rows, chosen), batch_size=len(rows))[0]
        return joint_result(lab, every, locations, test_bases, test_sources, logits, seed=seed, per_base=per_base)

    untrained = score(True)
    parameters = [p for i in interventions.values() for p in i.parameters()]
    optimizer = torch.optim.Adam(parameters, lr=settings.lr)
    generator = torch.Generator().manual_seed(settings.seed)
    targets = torch.from_numpy(counterfactuals(lab, every, train_bases, train_sources))
    bases, losses = torch.from_numpy(train_bases), []
    chosen = {locations[v]: interventions[v].to(device).train() for v in variables}
    steps = settings.epochs * len(joint_batches(every.encoded, bases, settings.batch_size, torch.Generator().manual_seed(0)))
    with runner.frozen(), tqdm(total=steps, desc="joint DAS", unit="step", disable=not progress) as bar:
        for _ in range(settings.epochs):
            total = 0.0
            for rows in joint_batches(every.encoded, bases, settings.batch_size, generator):
                bar.update(1)
                logits = runner.plan_logits(every.encoded, bases[rows], plan(train_sources, rows, chosen), batch_size=len(rows))[0]
                loss = F.cross_entropy(_task_logits(logits.float(), read, n_labels), targets[rows].to(logits.device))
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                total += loss.item() * len(rows)
            losses.append(total / len(bases))
    trained = score(True)
    return JointDasResult(
        alignment={v: str(locations[v]) for v in variables}, k={v: interventions[v].k for v in variables}, kind=kind,
        interventions={v: i.cpu().eval() for v, i in interventions.items()}, trained=trained, untrained=untrained, vanilla=score(False),
        losses=losses, train_runs=len(train_bases), seed=seed, per_base=per_base, test_share=test_share,
        meta={"model": lab.model.name, "task": lab.task.name, **lab.model.reading_record},
    )  # fmt: skip
