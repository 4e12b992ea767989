"""The demo's behavioral stage: the fine-tunings a task declares, scored, their effects checked (``metrics.json``).

A task's :class:`~interp.tasks.stages.BehavioralStage` says what to train and
how to read it; MoNLI's is Table 1 of Geiger, Richardson & Potts (2020), §5
(:mod:`interp.tasks.monli.behavior`); a task without one is fine-tuned once
on its training splits.

Usage::

    from interp.jobs.behavioral import BehavioralConfig, run_behavioral, format_table
    result = run_behavioral(BehavioralConfig(out="runs/demo"))          # data=DataSpec(task="monli"): Table 1
    print(format_table(result))

Writes one checkpoint per training under ``out`` (each with its
``training.json``; the one the demo studies is ``model/``) and
``metrics.json``. Finished trainings are reused when the command is run
again with the same settings.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

from interp.core.outputs import OutputSet, ensure_writable_dir, write_json_atomic
from interp.jobs.train import TrainConfig, TrainResult, train
from interp.api.loading import model_layers
from interp.api.specs import DataSpec, RunSpec, SampleSpec, flat
from interp.core.errors import ConfigError, named
from interp.api.objects import BehavioralStage


@dataclass(frozen=True)
class BehavioralConfig:
    """Settings shared by the stage's fine-tunings (they differ in their training splits, which the task's stage names):
    the recipe (``epochs`` ... ``seed``, as :class:`~interp.jobs.train.TrainConfig`'s), the task (``data``), a seeded
    subset of each training's examples (``sample.max_examples``, drawn with ``sample.seed``; ``sample.splits`` stays
    empty), and where they run (``run.device``: in the demo, every later stage too; ``run.batch_size``: examples per
    pass when scoring, 128 when ``None``)."""

    out: str = "runs/demo"
    model: str = TrainConfig.model
    epochs: int = TrainConfig.epochs
    lr: float = TrainConfig.lr
    warmup_ratio: float = TrainConfig.warmup_ratio
    batch_size: int = TrainConfig.batch_size
    seed: int = TrainConfig.seed
    train_blocks: int | None = TrainConfig.train_blocks  # the last N blocks and the head alone (None: every weight)
    lora_rank: int | None = TrainConfig.lora_rank  # LoRA adapters of this rank, merged at the end (None: no adapters)
    lora_alpha: float | None = TrainConfig.lora_alpha  # their scale is alpha / rank (None: twice the rank)
    data: DataSpec = DataSpec()
    sample: SampleSpec = SampleSpec()
    run: RunSpec = RunSpec()
    label_map: tuple[str, ...] | str | None = None  # the starting head's label names in id order, where its id2label does not say
    template: str | None = None  # a decoder's text joining the pair (as TrainConfig's)
    label_words: tuple[tuple[str, str], ...] | str | None = None  # a causal LM fine-tuned through one word per label

    def __post_init__(self) -> None:
        if self.sample.splits:
            raise ConfigError(f"{named('splits', ','.join(self.sample.splits))}: the task's behavioral stage names each training's splits; leave `splits=` empty")

    def train_config(self, splits: tuple[str, ...], eval_splits: tuple[str, ...] = ()) -> TrainConfig:
        return TrainConfig(
            model=self.model, data=self.data, sample=replace(self.sample, splits=splits), epochs=self.epochs, lr=self.lr,
            warmup_ratio=self.warmup_ratio, batch_size=self.batch_size, seed=self.seed, train_blocks=self.train_blocks, lora_rank=self.lora_rank, lora_alpha=self.lora_alpha, run=self.run,
            eval_splits=eval_splits or None, label_map=self.label_map, template=self.template, label_words=self.label_words,
        ).validate()  # fmt: skip


@dataclass
class BehavioralResult:
    """Every training's result, by the stage's names, and the checks of the effects."""

    config: BehavioralConfig
    stage: BehavioralStage
    runs: dict[str, TrainResult]
    seconds: float

    @property
    def accuracy(self) -> dict[str, dict[str, float]]:
        """training -> split -> accuracy (a fraction)."""
        return {name: {split: m["accuracy"] for split, m in run.metrics.items()} for name, run in self.runs.items()}

    @property
    def holds(self) -> dict[str, bool]:
        """check -> whether the effect holds."""
        return {c.name: c.holds(self.accuracy[c.training][c.split]) for c in self.stage.checks}

    def to_json(self) -> dict:
        trainings = {
            t.directory: {
                "path": str(self.runs[t.name].out_dir),
                "trained_on": list(t.splits),
                "accuracy": self.accuracy[t.name],
                "metrics": self.runs[t.name].metrics,
            }
            for t in self.stage.trainings
        }
        checks = {c.name: c.to_json(self.accuracy[c.training][c.split]) for c in self.stage.checks}
        config = {k: v for k, v in flat(self.config).items()
                  if not (k in ("train_blocks", "lora_rank", "lora_alpha") and v is None)}  # every weight: as before the settings  # fmt: skip
        return {"config": config, **trainings, **({"checks": checks} if checks else {}), **self.stage.paper,
                "seconds": self.seconds}  # fmt: skip


def run_behavioral(config: BehavioralConfig, *, progress: bool = True) -> BehavioralResult:
    """Run the task's behavioral stage into ``config.out``: each fine-tuning, scored; ``metrics.json``.

    Raises:
        ConfigError, DataError, ModelError, OutputError: as :func:`interp.jobs.train.train`.
    """
    task = config.data.load()
    stage = task.behavioral_stage
    # Fail on missing data, settings or model before anything is created.
    settings = {t.name: config.train_config(t.splits, stage.eval_splits) for t in stage.trainings}
    task.load(stage.trainings[0].splits[:1])
    model_layers(config.model)
    out = ensure_writable_dir(Path(config.out))
    started = time.perf_counter()
    runs = {}
    for t in stage.trainings:
        if progress:
            print(f"== training {t.directory}/ on {' + '.join(t.splits)}", flush=True)
        runs[t.name] = train(replace(settings[t.name], out=str(out / t.directory), overwrite=True), progress=progress)
    result = BehavioralResult(config, stage, runs, time.perf_counter() - started)
    with OutputSet(out, "behavioral") as outputs:
        write_json_atomic(outputs.path("metrics.json"), result.to_json())
    return result


def format_table(result: BehavioralResult) -> str:
    """The stage's table (MoNLI: Table 1, the paper's BERT beside it), else each training's accuracy per split in percent."""
    if result.stage.table is not None:
        return result.stage.table(result, result.config.model)
    splits = list(dict.fromkeys(s for acc in result.accuracy.values() for s in acc))
    width = max(9, *(len(s) + 2 for s in splits))
    lines = [f"Fine-tuned {result.config.model!r}; accuracy (%) by split", "", f"{'trained on':28}" + "".join(f"{s:>{width}}" for s in splits)]
    for t in result.stage.trainings:
        acc = result.accuracy[t.name]
        lines.append(f"{' + '.join(t.splits):28}" + "".join(f"{100 * acc[s]:{width}.1f}" for s in splits))
    lines += [f"{name}: {'holds' if ok else 'DOES NOT HOLD'}" for name, ok in result.holds.items()]
    return "\n".join(lines)
