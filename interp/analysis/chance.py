"""Is the model above chance on the splits it is analysed on? Accuracy per split with its Wilson interval, beside the majority label.

An interchange intervention asks how a model computes its answers; on a
split where it does not get them (accuracy no better than always saying
the most common label) its IIA, its cliques and its DAS alignments describe
a model that has not learned the task, and the figures read as findings
about nothing. :func:`split_accuracies` gives each split's accuracy with its
95% Wilson score interval (Wilson 1927; scipy's ``binomtest``) and the
majority label's share with its own; a split is *at chance* when the
accuracy's interval does not lie above the majority share.
:func:`chance_messages` words the warning every analysing command issues.

Example:

>>> import numpy as np
>>> rows = split_accuracies(np.array(["a"] * 100 + ["b"] * 100), np.array([0, 1] * 100), np.array([0] * 110 + [1] * 90))
>>> [(r["split"], round(r["accuracy"], 2), r["at_chance"]) for r in rows]
[('a', 0.5, True), ('b', 0.5, True)]
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from interp.core.estimates import Estimate, wilson


def split_accuracies(splits: Sequence[str], gold: np.ndarray, pred: np.ndarray) -> list[dict]:
    """Per split, in order of first appearance: ``split``, ``examples``, ``accuracy`` and ``majority`` (the most common gold
    label's share; both :class:`~interp.analysis.bootstrap.Estimate` with Wilson intervals) and ``at_chance`` (the
    accuracy's interval does not lie above the majority share).

    ``gold``, ``pred``: int ``[n]`` label ids (the task's), one per example; ``splits``: each example's split.
    """
    splits, gold, pred = np.asarray(splits, dtype=object), np.asarray(gold), np.asarray(pred)
    rows = []
    for split in dict.fromkeys(splits.tolist()):
        where = splits == split
        n = int(where.sum())
        accuracy = wilson(int((gold[where] == pred[where]).sum()), n)
        majority = wilson(int(np.bincount(gold[where]).max()), n)
        rows.append({"split": split, "examples": n, "accuracy": accuracy, "majority": majority, "at_chance": at_chance(accuracy, majority)})
    return rows


def at_chance(accuracy: Estimate, majority: float) -> bool:
    """Whether an accuracy's interval does not lie above the majority label's share (the null it must beat)."""
    return bool(accuracy.low <= float(majority))


def chance_messages(rows: list[dict], model: str = "the model", whole: Mapping[str, tuple[Estimate, int, str]] | None = None) -> list[str]:
    """One warning per split at chance in :func:`split_accuracies`' ``rows``, naming the split and both figures.

    Where the accuracy itself is above the majority share but its interval is not (a handful of examples), the
    warning says the split is too small to tell, rather than that the model is at chance there. ``whole``: split ->
    (accuracy with its Wilson interval, examples, where it was read) on the whole split, where the model's own
    evaluation is known (:func:`whole_split_accuracies`); the warning then gives it beside the sample's figure, where the
    two differ in their examples.
    """
    messages = []
    for r in rows:
        if not r["at_chance"]:
            continue
        figures = (f"accuracy {r['accuracy']!r} ({r['examples']} examples, 95% Wilson interval) does not stand above the majority "
                   f"label's share {r['majority']!r}")  # fmt: skip
        if whole and r["split"] in whole and whole[r["split"]][1] != r["examples"]:
            accuracy, n, source = whole[r["split"]]
            figures += f" (on the whole split, {n} examples: accuracy {accuracy!r}, from {source})"
        if float(r["accuracy"]) > float(r["majority"]):
            messages.append(f"{model} is not shown above chance on {r['split']}: {figures}; too few examples to tell")
        else:
            messages.append(f"{model} is at chance on {r['split']}: {figures}; interventions on it describe a model that has not learned the task")
    return messages


def file_chance_messages(path) -> list[str]:
    """:func:`chance_messages` for the model of a finished interventions file, from its per-example columns (split,
    gold label, the model's own label), each prefixed with the file's name; with the whole split's accuracy where the
    model's folder keeps its evaluation (:func:`whole_split_accuracies`)."""
    from pathlib import Path

    from interp.files.interventions import open_interventions

    with open_interventions(path) as file:
        rows = split_accuracies([str(x) for x in file.column("split")], file.column("label"), file.column("base_pred"))
        model = str(file.meta.get("model", "the model"))
    whole = whole_split_accuracies(model, Path(path).parent)
    return [f"{Path(path).name}: {m}" for m in chance_messages(rows, f"model {model!r}", whole)]


def whole_split_accuracies(model: str, near) -> dict[str, tuple[Estimate, int, str]]:
    """Each split's accuracy on the whole split as the model's own training record keeps it (``training.json``'s
    ``metrics``, written by ``interp train`` and the demo for their evaluation splits): split -> (accuracy with its
    Wilson interval, examples, the record's path). The model folder is ``model`` as given, else the folder of that name
    in ``near`` (a run folder moved with its model); ``{}`` where neither holds a readable record."""
    import json
    from pathlib import Path

    for folder in (Path(model), Path(near) / Path(model).name):
        record = folder / "training.json"
        try:
            metrics = json.loads(record.read_text(encoding="utf-8")).get("metrics", {})
            return {split: (wilson(int(m["correct"]), int(m["n"])), int(m["n"]), str(record)) for split, m in metrics.items()
                    if isinstance(m, dict) and "correct" in m and "n" in m}  # fmt: skip
        except (OSError, ValueError, AttributeError, TypeError, KeyError):
            continue
    return {}




def accuracy_lines(metrics: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """:func:`interp.models.evaluation.evaluate`'s result as text: a line per split with its Wilson interval and the
    majority label's share (the null), marked where the accuracy does not stand above it (:func:`at_chance`), then one
    per group value under it (``  polarity=down``).

    >>> print(accuracy_lines({"test": {"accuracy": 0.52, "correct": 104, "n": 200, "majority": 0.5}})[0])
    test           accuracy  52.0%  (104/200; 95% Wilson interval 45.1-58.8%); majority label 50.0%: not above chance
    """
    def line(name: str, m: Mapping[str, Any]) -> str:
        interval = wilson(m["correct"], m["n"])  # a metrics file written before intervals were kept has none
        text = f"{name:14} accuracy {100 * m['accuracy']:5.1f}%  ({m['correct']}/{m['n']}; 95% Wilson interval {100 * interval.low:.1f}-{100 * interval.high:.1f}%)"
        if "majority" in m:  # a metrics file written before the null was kept has none
            text += f"; majority label {100 * m['majority']:.1f}%" + (": not above chance" if at_chance(interval, m["majority"]) else "")
        return text

    lines = []
    for split, m in metrics.items():
        lines.append(line(split, m))
        lines += [line(f"  {group}={value}", score) for group, values in m.get("by", {}).items() for value, score in values.items()]
    return lines


__all__ = ["accuracy_lines", "at_chance", "chance_messages", "file_chance_messages", "split_accuracies", "whole_split_accuracies"]
