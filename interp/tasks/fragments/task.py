"""A semantic fragment as a behavioral :class:`~interp.tasks.base.Task`: ``--task fragment:NAME``.

Usage::

    task = fragment_task("negation", data_dir="path/to/semantic_fragments")
    task.labels                 # ('entailment', 'contradiction', 'neutral')
    task.read_labels(("entailment", "neutral")).scored   # a MoNLI model: (0, 2, 2), contradiction is scored as neutral

The fragments (Richardson, Hu, Moss & Sabharwal 2020, §3) have no causal
model here: they are challenge sets scored behaviorally (their Table 1)
and used for inoculation. Their only token role is [CLS]. A two-label
model (MoNLI's entailment / neutral) is scored with contradiction folded
into non-entailment, the task's declared ``label_mapping``.
"""

from __future__ import annotations

from interp.tasks.base import NOT_ENTAILED, Task
from interp.tasks.fragments.data import FRAGMENTS, LABELS, SPLITS, load_fragment

#: A gold label's stand-in for a model without it: contradiction is not entailed.
LABEL_MAPPING = NOT_ENTAILED
PREFIX = "fragment:"


#: ``fragment:all``: the eight fragments' splits pooled (ids keep their fragment's name), a three-label NLI training set.
ALL = "all"


def fragment_task(name: str, data_dir: str | None = None, verify_checksums: bool = True) -> Task:
    """The fragment ``name`` (one of :data:`~interp.tasks.fragments.data.FRAGMENTS`, or :data:`ALL` for the eight pooled)
    reading from ``data_dir`` (else ``$INTERP_FRAGMENTS_DIR``)."""
    names = FRAGMENTS if name == ALL else (name,)
    return Task(
        name=f"{PREFIX}{name}",
        labels=LABELS,
        splits=SPLITS,
        load=lambda splits: [p for n in names for p in load_fragment(n, tuple(splits), data_dir=data_dir, verify_checksums=verify_checksums)],
        roles=("cls",),
        default_splits=("test",),
        eval_splits=("test",),
        label_mapping=LABEL_MAPPING,
    )


__all__ = ["ALL", "FRAGMENTS", "PREFIX", "fragment_task"]
