"""The behavioral part of Table 1 (Geiger, Richardson & Potts 2020, §5), on MoNLI alone.

Two fine-tunings of the same pretrained model:

* **challenge set** (§5.1): trained on PMoNLI only (standing in for SNLI,
  which is not available here), then scored on NMoNLI. A model that has not
  learned that `not` reverses entailment scores far *below* chance there
  (the paper's SNLI-trained BERT: 2.2%).
* **systematic generalization** (§5.2): trained on PMoNLI + NMoNLI train,
  scored on NMoNLI test, whose substituted general words never occur in
  training (paper: 90.0 with SNLI, 96.7 without).

Usage::

    from interp.jobs.behavioral import BehavioralConfig, run_behavioral, format_table
    result = run_behavioral(BehavioralConfig(out_dir="runs/demo"))
    print(format_table(result))

Writes ``<out>/challenge_model/``, ``<out>/model/`` (checkpoints, each with
its ``training.json``) and ``<out>/metrics.json``. Finished trainings are
reused when the command is run again with the same settings.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

from interp.core.outputs import OutputSet, ensure_writable_dir, write_json_atomic
from interp.jobs.train import TrainConfig, TrainResult, train
from interp.models.loading import model_layers
from interp.tasks.monli import SPLITS, resolve_data_dir

#: Table 1 of the paper, BERT rows, accuracy in percent.
PAPER_BERT = {
    "challenge": {"trained_on": "SNLI train", "pmonli": 94.4, "nmonli": 2.2},
    "generalization": {"snli_then_nmonli": 90.0, "nmonli_only": 96.7},
}
#: What this run must show: below this on NMoNLI test means the challenge-set effect holds ...
CHALLENGE_MAX_ACCURACY = 0.20
#: ... and at least this on NMoNLI test means systematic generalization holds.
GENERALIZATION_MIN_ACCURACY = 0.85

CHALLENGE_SPLITS = ("pmonli",)
GENERALIZATION_SPLITS = ("pmonli", "nmonli_train")


@dataclass(frozen=True)
class BehavioralConfig:
    """Settings of the two fine-tunings (shared but for their training splits)."""

    out_dir: str = "runs/demo"
    model: str = TrainConfig.model
    epochs: int = TrainConfig.epochs
    lr: float = TrainConfig.lr
    batch_size: int = TrainConfig.batch_size
    seed: int = TrainConfig.seed
    data_dir: str | None = None
    verify_checksums: bool = True

    def train_config(self, splits: tuple[str, ...]) -> TrainConfig:
        return TrainConfig(
            model=self.model,
            splits=splits,
            epochs=self.epochs,
            lr=self.lr,
            batch_size=self.batch_size,
            seed=self.seed,
            eval_splits=tuple(SPLITS),
            data_dir=self.data_dir,
            verify_checksums=self.verify_checksums,
        ).validate()


@dataclass
class BehavioralResult:
    """Both runs and the checks of the two effects."""

    config: BehavioralConfig
    challenge: TrainResult
    generalization: TrainResult
    seconds: float

    @property
    def challenge_effect(self) -> bool:
        return self.challenge.metrics["nmonli_test"]["accuracy"] <= CHALLENGE_MAX_ACCURACY

    @property
    def systematic_generalization(self) -> bool:
        return self.generalization.metrics["nmonli_test"]["accuracy"] >= GENERALIZATION_MIN_ACCURACY

    def to_json(self) -> dict:
        def accuracies(run: TrainResult) -> dict:
            return {split: m["accuracy"] for split, m in run.metrics.items()}

        return {
            "config": asdict(self.config),
            "challenge_model": {
                "path": str(self.challenge.out_dir),
                "trained_on": list(CHALLENGE_SPLITS),
                "accuracy": accuracies(self.challenge),
                "metrics": self.challenge.metrics,
            },
            "model": {
                "path": str(self.generalization.out_dir),
                "trained_on": list(GENERALIZATION_SPLITS),
                "accuracy": accuracies(self.generalization),
                "metrics": self.generalization.metrics,
            },
            "checks": {
                "challenge_effect": {
                    "nmonli_test": self.challenge.metrics["nmonli_test"]["accuracy"],
                    "at_most": CHALLENGE_MAX_ACCURACY,
                    "holds": self.challenge_effect,
                },
                "systematic_generalization": {
                    "nmonli_test": self.generalization.metrics["nmonli_test"]["accuracy"],
                    "at_least": GENERALIZATION_MIN_ACCURACY,
                    "holds": self.systematic_generalization,
                },
            },
            "paper_bert": PAPER_BERT,
            "seconds": self.seconds,
        }


def run_behavioral(config: BehavioralConfig, *, progress: bool = True) -> BehavioralResult:
    """Train the challenge-set and the generalization model, score both, write ``metrics.json``.

    Raises:
        ConfigError, DataError, ModelError, OutputError: as :func:`interp.models.train`.
    """
    resolve_data_dir(config.data_dir)  # fail on missing data, settings or model before anything is created
    for splits in (CHALLENGE_SPLITS, GENERALIZATION_SPLITS):
        config.train_config(splits)
    model_layers(config.model)
    out = ensure_writable_dir(Path(config.out_dir), "out_dir")
    started = time.perf_counter()
    runs = {}
    for name, directory, splits in (
        ("challenge", "challenge_model", CHALLENGE_SPLITS),
        ("generalization", "model", GENERALIZATION_SPLITS),
    ):
        if progress:
            print(f"== training {directory}/ on {' + '.join(splits)}", flush=True)
        runs[name] = train(config.train_config(splits), out / directory, progress=progress, overwrite=True)
    result = BehavioralResult(config, runs["challenge"], runs["generalization"], time.perf_counter() - started)
    with OutputSet(out, "behavioral", "out_dir") as outputs:
        write_json_atomic(outputs.path("metrics.json"), result.to_json())
    return result


def _pct(value: float) -> str:
    return f"{100 * value:5.1f}"


def format_table(result: BehavioralResult) -> str:
    """Table 1 (behavioral part) as plain text, accuracies in percent, the paper's BERT beside it."""
    c, g = result.challenge.metrics, result.generalization.metrics
    lines = [
        f"Table 1, behavioral (Geiger, Richardson & Potts 2020, §5); model {result.config.model!r}, "
        "PMoNLI standing in for SNLI",
        "",
        f"{'':28}{'trained on':24}{'PMoNLI':>8}{'NMoNLI train':>14}{'NMoNLI test':>13}",
        f"{'challenge set (§5.1)':28}{'PMoNLI':24}{_pct(c['pmonli']['accuracy']):>8}"
        f"{_pct(c['nmonli_train']['accuracy']):>14}{_pct(c['nmonli_test']['accuracy']):>13}",
        f"{'  paper, BERT':28}{'SNLI':24}{PAPER_BERT['challenge']['pmonli']:>8}{'':>14}"
        f"{PAPER_BERT['challenge']['nmonli']:>13}   (NMoNLI, all of it)",
        f"{'generalization (§5.2)':28}{'PMoNLI + NMoNLI train':24}{_pct(g['pmonli']['accuracy']):>8}"
        f"{_pct(g['nmonli_train']['accuracy']):>14}{_pct(g['nmonli_test']['accuracy']):>13}",
        f"{'  paper, BERT':28}{'SNLI, then NMoNLI train':24}{'':>8}{'':>14}"
        f"{PAPER_BERT['generalization']['snli_then_nmonli']:>13}",
        f"{'  paper, BERT':28}{'NMoNLI train':24}{'':>8}{'':>14}{PAPER_BERT['generalization']['nmonli_only']:>13}",
        "",
        f"challenge-set effect (NMoNLI test <= {100 * CHALLENGE_MAX_ACCURACY:.0f}%): "
        f"{'holds' if result.challenge_effect else 'DOES NOT HOLD'}",
        f"systematic generalization (NMoNLI test >= {100 * GENERALIZATION_MIN_ACCURACY:.0f}%): "
        f"{'holds' if result.systematic_generalization else 'DOES NOT HOLD'}",
    ]
    return "\n".join(lines)
