"""What distributed alignment search returns: the trained intervention, its held-out IIA beside the untrained baseline, and its history.

Usage::

    das = lab.train_das(examples, "blocks.2.hook_resid_post@w_h", "lexrel", k=16)
    das.iia, das.untrained_iia, das.gain     # held-out IIA, the same intervention before training, their difference (95% intervals)
    das.verdict                              # 'learned', or which of the untrained baseline, the larger null and chance it does not clear
    das.history_frame()                      # per epoch: loss, IIA on training pairs, IIA on held-out pairs
    das.intervention                         # the trained module; interchange(..., intervention=das) takes das itself

A learned intervention can score above chance without having learned
anything: a random k-dimensional rotation already moves some labels. The
null it must beat is the same kind of intervention, at the same k and
initial parameters, untrained, scored on the same held-out pairs; and, as
every IIA, the larger of its stays-the-base and copies-the-source nulls and
chance (:mod:`interp.analysis.das_verdict`). The intervals of all (and of
their differences) come from one bootstrap over the held-out examples, or
their groups (MoNLI's word pairs) where the task declares them
(:func:`interp.analysis.das.score_intervention`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from interp.analysis.bootstrap import Estimate
from interp.analysis.das_verdict import DIFFERENCES, is_learned, verdict
from interp.engine.interventions import Intervention
from interp.hooks.locations import Location


@dataclass(eq=False)
class DasResult:
    """A trained subspace intervention and how sure its held-out IIA is (Geiger, Wu, Potts, Icard & Goodman 2024, §3).

    Attributes:
        intervention: the trained module (eval mode), for :meth:`~interp.api.intervenable.IntervenableModel.interchange`.
        variable, location: what was aligned, and where.
        iia: held-out IIA (0..1) with its 95% interval (a bootstrap over the held-out examples, or their groups where the
            task declares them; ``interval`` says which).
        untrained_iia: the same kind, ``k`` and initial parameters before training, on the same pairs.
        gain: ``iia − untrained_iia``, its interval from the same replicates.
        stays_base, copies_source: the held-out nulls of the trained intervention, with intervals.
        chance: the most common counterfactual label's share of the held-out pairs.
        gap: ``iia`` minus the larger of ``stays_base`` and ``copies_source``; ``over_chance``: ``iia − chance``; each
            with its interval from the same replicates.
        history: one dict per epoch: ``epoch``, ``loss`` (mean cross-entropy, nats per pair), ``train_iia`` (on up to
            128 training pairs), ``held_out_iia``.
        train_pairs: how many pairs it was trained on; ``held_out_pairs``: the (base id, source id) of every held-out pair.
        interval: how the intervals were found.
        vanilla_iia: vanilla interchange (the whole vector) on the same held-out pairs: what the location carries at all.
        block_iia, block: the localist baseline: of the blocks of ``k`` coordinates (``block``, ``start:stop``), the one
            with the best IIA on up to 256 seeded training pairs, scored on the held-out pairs. DAS that does no better
            than it has found nothing a coordinate basis does not show.
        kind, seed: the intervention's kind (``rotated``, ``lowrank``, ``boundless``) and the seed of the split, pairs,
            initial parameters and batch order.
        losses: each epoch's mean loss; ``train_seconds``: the training's wall time (its history's scoring included).
        scores: every figure behind the fields above, per intervention (``das``, ``untrained``, ``vanilla``, ``block``):
            ``pairs``, ``iia``, ``stays_base``, ``copies_source`` each with ``_low`` and ``_high``, ``chance``, ``interval``.
        causal_model: the name of the causal model whose counterfactuals were the targets.
        by_base: the trained intervention's held-out IIA among the pairs whose base has each value of each of the task's
            breakdowns (:attr:`Task.breakdown <interp.tasks.base.Task.breakdown>`), with intervals: name -> value ->
            :class:`~interp.analysis.bootstrap.Estimate` (city attributes: ``attribute`` -> ``country`` / ``continent``,
            RAVEL's Cause and Isolate).
        hits: bool ``[held-out pairs]`` each, in the pairs' order: ``iia`` (the trained intervention gives the
            counterfactual), ``stays_base`` (it gives the base's own label), ``vanilla`` (the whole vector gives the
            counterfactual): what a paired comparison on the same pairs resamples.
    """

    intervention: Intervention
    variable: str
    location: Location
    iia: Estimate
    untrained_iia: Estimate
    gain: Estimate
    stays_base: Estimate
    copies_source: Estimate
    chance: float
    history: list[dict]
    train_pairs: int
    held_out_pairs: list[tuple[str, str]] = field(repr=False)
    interval: str = ""
    vanilla_iia: Estimate | None = None
    block_iia: Estimate | None = None
    block: str = ""
    kind: str = "rotated"
    seed: int = 0
    losses: list[float] = field(default_factory=list, repr=False)
    train_seconds: float = 0.0
    scores: dict = field(default_factory=dict, repr=False)
    causal_model: str = ""
    gap: Estimate | None = None
    over_chance: Estimate | None = None
    by_base: dict = field(default_factory=dict, repr=False)
    hits: dict = field(default_factory=dict, repr=False)

    @property
    def k(self) -> int:
        """The subspace's dimension."""
        return self.intervention.k

    @property
    def learned(self) -> bool:
        """Whether the held-out IIA is a finding: the intervals of its gain over the untrained intervention, of its gap
        over the larger null and of its difference from chance all lie above zero (:mod:`interp.analysis.das_verdict`)."""
        return is_learned(self._figures())

    @property
    def verdict(self) -> str:
        """``"learned"``, or ``"not learned: "`` naming each of the untrained baseline, the larger null (by name and
        share) and chance that the held-out IIA does not clear."""
        return verdict(self._figures())

    def _figures(self) -> dict:
        figures = {"stays_base": float(self.stays_base), "copies_source": float(self.copies_source), "chance": self.chance}
        for name in DIFFERENCES:
            value = getattr(self, name)
            if value is not None:
                figures.update({name: float(value), f"{name}_low": value.low})
        return figures

    def history_frame(self):
        """The training history as a ``pandas.DataFrame``, one row per epoch (epoch 0: before training)."""
        import pandas as pd

        return pd.DataFrame(self.history)

    def to_frame(self):
        """One row (``pandas.DataFrame``): variable, location, k, each figure with ``_low`` and ``_high`` (the baselines'
        too), chance, pairs."""
        import pandas as pd

        row = {"variable": self.variable, "location": str(self.location), "k": self.k, "train_pairs": self.train_pairs,
               "held_out_pairs": len(self.held_out_pairs), "chance": self.chance}  # fmt: skip
        for name in ("iia", "untrained_iia", "gain", "stays_base", "copies_source", "gap", "over_chance", "vanilla_iia", "block_iia"):
            value = getattr(self, name)
            if value is None:
                continue
            row.update({name: float(value), f"{name}_low": value.low, f"{name}_high": value.high})
        return pd.DataFrame([{**row, "verdict": self.verdict, "interval": self.interval}])

    def __repr__(self) -> str:
        return (f"DasResult({self.variable} at {self.location}, k={self.k}: held-out IIA {self.iia!r}, untrained {self.untrained_iia!r}, "
                f"gain {self.gain!r}; {self.verdict}; {len(self.history) - 1} epochs)")  # fmt: skip


__all__ = ["DasResult"]
