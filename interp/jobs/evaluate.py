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
from interp.api.evaluation import score_tasks
from interp.api.loading import Classifier, resolve_tasks, task_for_file
from interp.api.objects import Task, TaskGroup, canonical_label
from interp.api.prompts import Prompt, make_prompt, model_tokenizer
from interp.core.errors import ConfigError, named
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
    shots: int = 0  # a causal LM read through label_words: solved training pairs before each pair (interp.api.prompts)
    shot_seed: int = 0
    chat: bool = False  # ask in the tokenizer's chat template
    show: bool = False  # each example's answer and its labels' logits, after the accuracies


@dataclass
class Evaluation:
    """Accuracy per task and split; ``group``: the task group scored, with its averages, or ``None`` for one task;
    ``prompt``: the few-shot or chat prompt a causal LM was asked with (:class:`~interp.api.prompts.Prompt`), else ``None``."""

    metrics: dict[str, dict[str, dict]]
    group: TaskGroup | None
    prompt: Prompt | None = None
    reading: str | None = None  # a decoder without a prompt: how it read each pair (its template, head or label words)

    def format(self, as_json: bool = False) -> str:
        """A line per split with its Wilson interval (one task), or a table of tasks × splits with the group's averages
        (Richardson et al. 2020, Table 1); with ``as_json`` the metrics as JSON (and ``"prompt"`` where one was made).
        Where each example's answers were kept (``show``), the text ends with a line per example: id, gold, answer
        (``*`` where wrong) and each label's logit; the JSON has them under each split's ``"answers"``."""
        text = self._format(as_json)
        shown = [(split, a) for metrics in self.metrics.values() for split, m in metrics.items() if isinstance(m, dict)
                 for a in m.get("answers", [])]  # fmt: skip
        if as_json or not shown:
            return text
        names = list(shown[0][1]["logits"])
        many = len(names) > 6  # IOI's fifty names: the gold label's logit and the answer's, not a column each
        heads = ["gold logit", "answer logit"] if many else [n[:10] for n in names]
        wide = max(len(a["id"]) for _, a in shown)
        lines = [f"{'id':{wide}}  {'gold':>12}  {'answer':>12}  " + "  ".join(f"{h:>12}" for h in heads)]
        for _, a in shown:
            mark = " " if a["predicted"] == a["gold"] else "*"
            logit = {canonical_label(n): v for n, v in a["logits"].items()}  # the model's labels as compared: by name
            values = [logit.get(canonical_label(a["gold"]), float("nan")), logit.get(canonical_label(a["predicted"]), float("nan"))] \
                if many else [a["logits"][n] for n in names]  # fmt: skip
            lines.append(f"{a['id']:{wide}}  {a['gold'][:12]:>12}  {a['predicted'][:12]:>11}{mark}  " + "  ".join(f"{v:12.3f}" for v in values))
        return text + "\n\n" + "\n".join(lines)

    def _format(self, as_json: bool) -> str:
        if self.group is None:
            (metrics,) = self.metrics.values()
            if self.prompt is not None:
                if as_json:
                    return json.dumps({**metrics, "prompt": self.prompt.record()}, indent=2)
                shown = f"{self.prompt.shots} solved training pairs (seed {self.prompt.seed}: {', '.join(self.prompt.demonstrations)}), left out of the scores" \
                    if self.prompt.shots else "zero-shot"  # fmt: skip
                return "\n".join([f"prompt ({'chat template, ' if self.prompt.chat else ''}{shown}), label words "
                                  f"{self.prompt.label_words}:", *(f"  | {line}" for line in self.prompt.template.split("\n")),
                                  *accuracy_lines(metrics)])  # fmt: skip
            if as_json:
                return json.dumps({**metrics, "reading": self.reading} if self.reading else metrics, indent=2)
            return "\n".join([*(self.reading.split("\n") if self.reading else []), *accuracy_lines(metrics)])
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
    prompt = _prompt(config, tasks)
    template, words = (config.template, config.label_words) if prompt is None else (prompt.template, prompt.label_words)
    metrics, model = score_tasks(config.model, tasks, lambda task: sample.splits or task.eval_splits or task.splits, run.batch(128),
                                 progress=progress, label_map=config.label_map, template=template, label_words=words, input=config.input,
                                 device=run.device, fold_labels=config.fold_labels, max_examples=sample.max_examples,
                                 max_per_split=sample.max_per_split, seed=sample.seed, exclude=prompt.demonstrations if prompt else (),
                                 answers=config.show)  # fmt: skip
    return Evaluation(metrics, group, prompt, None if prompt is not None else decoder_reading(model))


def decoder_reading(model: Classifier) -> str | None:
    """How a decoder reads a pair, in words: the template that joins it into one text (its lines marked ``|``) and
    whether its classification head or label words answer; ``None`` for an encoder (two segments, its head)."""
    if not model.decoder:
        return None
    template = model.template
    words = getattr(model.module, "label_words", None)
    answer = f"label words {words}" if words else "its classification head at the last token"
    return "\n".join([f"template (the pair joined into one text; read by {answer}):", *(f"  | {line}" for line in template.text.split("\n"))])


def _prompt(config: EvaluateConfig, tasks: dict[str, Task]) -> Prompt | None:
    """The few-shot or chat prompt ``config`` asks for (:func:`interp.api.prompts.make_prompt`), else ``None``.

    Raises:
        ConfigError: naming ``shots=`` or ``chat=``: without label words, or over a task group.
    """
    if not config.shots and not config.chat:
        return None
    asked = f"{named('shots', config.shots)}" if config.shots else named("chat", True)
    if config.label_words is None:
        raise ConfigError(f"{asked}: a prompt asks a causal LM for a word per label; give label_words=")
    if len(tasks) != 1:
        raise ConfigError(f"{asked}: give one task, not a group")
    (task,) = tasks.values()
    tokenizer = None
    if config.chat:
        tokenizer = config.model.tokenizer if isinstance(config.model, Classifier) else model_tokenizer(config.model)
    return make_prompt(task, label_words=config.label_words, template=config.template, shots=config.shots,
                       seed=config.shot_seed, tokenizer=tokenizer, chat=config.chat)  # fmt: skip

