"""MoNLI's demo: Table 1 of Geiger, Richardson & Potts (2020), §5, as its behavioral stage, and the plan of §6.

Two fine-tunings of the same pretrained model:

* **challenge set** (§5.1): trained on PMoNLI only (standing in for SNLI,
  which is not available here), then scored on NMoNLI. A model that has not
  learned that `not` reverses entailment scores far *below* chance there
  (the paper's SNLI-trained BERT: 2.2%).
* **systematic generalization** (§5.2): trained on PMoNLI + NMoNLI train,
  scored on NMoNLI test, whose word pairs never occur under negation in
  training (none is in NMoNLI train; 126 of its 200 examples have a pair
  that PMoNLI holds unnegated) (paper: 90.0 with SNLI, 96.7 without).

The plan (§6): cache every split, probe every location, intervene at the
location the probes single out for lexrel (§6.1), among a seeded mixed set
of 150 PMoNLI and 150 NMoNLI-test examples (half of them negated, so INFER's
counterfactual on lexrel is not simply the source's label), on lexrel,
negated and output, and search lexrel's cliques there (Appendix A.3).
"""

from __future__ import annotations

from interp.core.estimates import wilson
from interp.tasks.monli.data import SPLITS
from interp.tasks.stages import BehavioralStage, Check, DemoPlan, Training

#: Table 1 of the paper, BERT rows, accuracy in percent.
PAPER_BERT = {
    "challenge": {"trained_on": "SNLI train", "pmonli": 94.4, "nmonli": 2.2},
    "generalization": {"snli_then_nmonli": 90.0, "nmonli_only": 96.7},
}
#: What a run must show: below this on NMoNLI test means the challenge-set effect holds ...
CHALLENGE_MAX_ACCURACY = 0.20
#: ... and at least this on NMoNLI test means systematic generalization holds.
GENERALIZATION_MIN_ACCURACY = 0.85


def _pct(m: dict) -> str:
    """An accuracy in percent with its 95% Wilson interval: ``99.5 [97.2-99.9]``."""
    interval = wilson(m["correct"], m["n"])
    return f"{100 * m['accuracy']:.1f} [{100 * interval.low:.1f}-{100 * interval.high:.1f}]"


def format_table(result, model: str) -> str:
    """Table 1 (behavioral part) as plain text, accuracies in percent with their 95% Wilson intervals over the split's
    examples (one fine-tuning: the seed's spread is not in them), the paper's BERT beside it."""
    c, g = result.runs["challenge"].metrics, result.runs["generalization"].metrics
    holds = result.holds
    w = 20
    lines = [
        f"Table 1, behavioral (Geiger, Richardson & Potts 2020, §5); model {model!r}, PMoNLI standing in for SNLI",
        "",
        f"{'':28}{'trained on':24}{'PMoNLI':>{w}}{'NMoNLI train':>{w}}{'NMoNLI test':>{w}}",
        f"{'challenge set (§5.1)':28}{'PMoNLI':24}{_pct(c['pmonli']):>{w}}{_pct(c['nmonli_train']):>{w}}{_pct(c['nmonli_test']):>{w}}",
        f"{'  paper, BERT':28}{'SNLI':24}{PAPER_BERT['challenge']['pmonli']:>{w}}{'':>{w}}"
        f"{PAPER_BERT['challenge']['nmonli']:>{w}}   (NMoNLI, all of it)",
        f"{'generalization (§5.2)':28}{'PMoNLI + NMoNLI train':24}{_pct(g['pmonli']):>{w}}"
        f"{_pct(g['nmonli_train']):>{w}}{_pct(g['nmonli_test']):>{w}}",
        f"{'  paper, BERT':28}{'SNLI, then NMoNLI train':24}{'':>{w}}{'':>{w}}"
        f"{PAPER_BERT['generalization']['snli_then_nmonli']:>{w}}",
        f"{'  paper, BERT':28}{'NMoNLI train':24}{'':>{w}}{'':>{w}}{PAPER_BERT['generalization']['nmonli_only']:>{w}}",
        "",
        "[low-high]: 95% Wilson interval over the split's examples, for this one fine-tuning (its seed's spread is not in it)",
        f"challenge-set effect (NMoNLI test <= {100 * CHALLENGE_MAX_ACCURACY:.0f}%): "
        f"{'holds' if holds['challenge_effect'] else 'DOES NOT HOLD'}",
        f"systematic generalization (NMoNLI test >= {100 * GENERALIZATION_MIN_ACCURACY:.0f}%): "
        f"{'holds' if holds['systematic_generalization'] else 'DOES NOT HOLD'}",
    ]
    return "\n".join(lines)


TABLE_1 = BehavioralStage(
    trainings=(
        Training("challenge", "challenge_model", ("pmonli",)),
        Training("generalization", "model", ("pmonli", "nmonli_train")),
    ),
    eval_splits=tuple(SPLITS),
    checks=(
        Check("challenge_effect", "challenge", "nmonli_test", at_most=CHALLENGE_MAX_ACCURACY),
        Check("systematic_generalization", "generalization", "nmonli_test", at_least=GENERALIZATION_MIN_ACCURACY),
    ),
    paper={"paper_bert": PAPER_BERT},
    table=format_table,
    title="fine-tuning and Table 1",
)

PLAN = DemoPlan(
    cache_splits=tuple(SPLITS),
    probe_locations="all",
    site="probes",
    splits=("pmonli", "nmonli_test"),
    per_split=150,
    variables=("lexrel", "negated", "output"),
    clique_variable="lexrel",
)
