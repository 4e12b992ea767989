"""`interp evaluate`: a classifier's accuracy on a task's splits, or on every member of a task group (the eight fragments).

Usage::

    from interp.api.specs import DataSpec
    from interp.jobs.evaluate import EvaluateConfig, run_evaluate
    found = run_evaluate(EvaluateConfig(model="runs/demo/model", data=DataSpec("monli")))
    print(found.format())            # a line per split: accuracy with its 95% Wilson interval
    found.metrics                    # {task: {split: {"accuracy", "correct", "n", ...}}}
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from interp.analysis.chance import accuracy_lines
from interp.api.evaluation import score_checkpoint
from interp.api.loading import Classifier, resolve_tasks, task_for_file
from interp.api.objects import Task, TaskGroup
from interp.api.specs import DataSpec, RunSpec, SampleSpec


@dataclass(frozen=True)
class EvaluateConfig:
    """Which model, on which task (``data``) and examples (``sample``: its splits, ``()`` for the task's evaluation
    splits, else all of them; a seeded subset with ``max_examples`` / ``max_per_split``), run how (``run``: device,
    examples per forward pass, 128 when ``None``).

    ``model``: a checkpoint, or a :class:`~interp.api.loading.Classifier` held in memory. ``label_map``, ``input`` and
    ``fold_labels`` as :func:`interp.api.evaluation.score_checkpoint`; a task group
    (``DataSpec("fragments")``) scores every member task.
    """

    model: str | Classifier
    data: DataSpec = DataSpec()
    sample: SampleSpec = SampleSpec()
    run: RunSpec = RunSpec()  # batch_size None: 128 examples per pass
    label_map: str | None = None
    template: str | None = None  # a decoder's text joining the pair (None: the checkpoint's own)
    label_words: str | dict | None = None  # a causal LM read as a classifier: one word per label
    input: str | None = None
    fold_labels: bool = False


@dataclass
class Evaluation:
    """Accuracy per task and split; ``group``: the task group scored, with its averages, or ``None`` for one task."""

    metrics: dict[str, dict[str, dict]]
    group: TaskGroup | None

    def format(self, as_json: bool = False) -> str:
        """A line per split with its Wilson interval (one task), or a table of tasks × splits with the group's averages
        (Richardson et al. 2020, Table 1); with ``as_json`` the metrics as JSON."""
        if self.group is None:
            (metrics,) = self.metrics.values()
            return json.dumps(metrics, indent=2) if as_json else "\n".join(accuracy_lines(metrics))
        if as_json:
            return json.dumps(self.metrics, indent=2)
        splits = list(dict.fromkeys(s for metrics in self.metrics.values() for s in metrics))
        width = max(10, *(len(s) + 2 for s in splits))
        lines = [f"{'task':22}" + "".join(f"{s:>{width}}" for s in splits)]
        for name, metrics in self.metrics.items():
            lines.append(f"{name:22}" + "".join(f"{100 * metrics[s]['accuracy']:{width}.1f}" for s in splits))
        for label, members in self.group.averages.items():
            lines.append(f"{label:22}" + "".join(f"{100 * sum(self.metrics[m][s]['accuracy'] for m in members) / len(members):{width}.1f}" for s in splits))
        return "\n".join(lines)


def run_evaluate(config: EvaluateConfig, *, progress: bool = False) -> Evaluation:
    """Score ``config.model`` on each task ``config.data`` names.

    Raises:
        ConfigError: naming ``task=``, a split the task lacks, or a ``run`` setting evaluation does not take.
        DataError, ModelError: as :func:`interp.api.evaluation.score_checkpoint`.
    """
    data, sample, run = config.data, config.sample, config.run
    run.refuse_unused("evaluate")
    if isinstance(data.task, Task):  # a task held in memory: itself
        tasks, group = {data.task.name: data.task}, None
    else:
        tasks, group = resolve_tasks(task_for_file(data.task, data.data_file), data_dir=data.data_dir, verify_checksums=data.verify_checksums,
                                     data_file=data.data_file)  # fmt: skip
    metrics = {name: score_checkpoint(config.model, task, sample.splits or task.eval_splits or task.splits, run.batch(128), progress=progress,
                                   label_map=config.label_map, template=config.template, label_words=config.label_words, input=config.input,
                                   device=run.device, fold_labels=config.fold_labels,
                                   max_examples=sample.max_examples, max_per_split=sample.max_per_split, seed=sample.seed)
               for name, task in tasks.items()}  # fmt: skip
    return Evaluation(metrics, group)
