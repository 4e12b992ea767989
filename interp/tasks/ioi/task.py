"""Indirect-object identification as a :class:`~interp.tasks.base.Task`, read by a causal LM through the names.

Usage::

    task = ioi_task(tokenizer=model_tokenizer)            # the names the tokenizer reads as one token (dropped: said)
    model = interp.load_model("smollm2-135m", template=TEMPLATE, label_words=label_words(task))
    lab = interp.IntervenableModel(model, task)
    lab.evaluate(task.load(("test",)))                    # accuracy among every name the task has

The labels are the task's names: a causal LM is read through each name's token after the prompt (its label word,
`` Mary``), so its prediction is the name it ranks first among them, and :func:`logit_difference` reads the indirect
object's logit minus the subject's (Wang et al. 2023's metric) from the same logits. A name that is several tokens to a
model cannot be a label word: :func:`one_token_names` keeps the others and says how many it dropped.

The causal model (:func:`ioi_causal_model`) has MIB's two variables (Mueller et al. 2025, §4.1, IOI), as a chain:
``output_position``, the first clause's slot holding the indirect object (0: named first, 1: second; the name the
subject is not), then ``output_token``, the name at that slot, which is the answer. MIB's model makes both children of
the names and reads ``output_position`` only through a linear model of the logit difference; here an interchange of
``output_position`` moves the answer to the name at the source's slot in the base's first clause (so a model that
tracks positions answers the subject), one of ``output_token`` to the source's answer. Variables are aligned to the
last token by default (``cls``, a decoder's ``last``); the roles ``io_p``, ``s1_p`` and ``s2_h`` are MIB's other
positions. Intervals resample name pairs.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from interp.causal import CausalModel, Mechanism
from interp.core.errors import ConfigError
from interp.tasks.base import Groups, LinearReadout, Task
from interp.tasks.ioi.data import NAMES, SPLITS, ioi_examples

NAME = "ioi"
#: How a decoder joins the two clauses: one space, the answer read at the last token.
TEMPLATE = "{premise} {hypothesis}"
ROLES = ("cls", "io_p", "s1_p", "s2_h")
ALIGNMENT = {"output_position": ("cls",), "output_token": ("cls",)}
#: Examples that share their two names are not independent draws: intervals resample name pairs.
NAME_PAIRS = Groups("name pairs", lambda e: " / ".join(sorted((e.name_a, e.name_b))))


def ioi_causal_model(names: Sequence[str] = NAMES) -> CausalModel:
    """The chain ``(name_a, name_b, subject) -> output_position -> output_token`` (module docstring); ``values`` lists
    every input's values over ``names`` for a truth-table test."""
    return CausalModel(
        name="ioi",
        inputs=("name_a", "name_b", "subject"),
        mechanisms={
            "output_position": Mechanism(("name_a", "name_b", "subject"), lambda a, b, s: 0 if s == b else 1),
            "output_token": Mechanism(("name_a", "name_b", "output_position"), lambda a, b, p: (a, b)[p]),
        },
        output="output_token",
        values={"name_a": tuple(names), "name_b": tuple(names), "subject": tuple(names)},
    )


def _slot(e) -> int:
    """Which slot of the first clause holds the indirect object (``output_position``: 0 first, 1 second)."""
    return 0 if e.subject == e.name_b else 1


def mib_signals(base, source, variable: str) -> tuple[int, int] | None:
    """MIB's (position, token) signals of an interchange of ``variable`` alone from ``source`` into ``base``
    (``ioi_task.py``'s ``get_logit_diff``, where both variables are children of the names): +1 where the variable keeps
    the base's value (its slot, its answer), −1 where it takes the other; the other variable keeps the base's (+1).
    ``None`` where the source's answer is not one of the base's two names (MIB drops those counterfactuals)."""
    if variable == "output_position":
        return (1 if _slot(source) == _slot(base) else -1, 1)
    if variable == "output_token":
        if source.label not in (base.name_a, base.name_b):
            return None
        return (1, 1 if source.label == base.label else -1)
    raise ConfigError(f"task 'ioi' has no variable {variable!r} in MIB's linear model (output_position, output_token)")


def mib_both(base, source) -> tuple[int, int] | None:
    """The signals of a full interchange: the source's slot and answer both, read against the base's; ``None`` where
    the source's names are not the base's."""
    if {source.name_a, source.name_b} != {base.name_a, base.name_b}:
        return None
    return (1 if _slot(source) == _slot(base) else -1, 1 if source.label == base.label else -1)


def _inputs(e) -> dict[str, Any]:
    return {"name_a": e.name_a, "name_b": e.name_b, "subject": e.subject}


def _checked(names: Sequence[str]):
    def build(examples) -> CausalModel:
        for e in examples:
            if e.subject not in (e.name_a, e.name_b) or e.name_a == e.name_b:
                raise ConfigError(f"IOI example {e.id!r}: its subject {e.subject!r} is not one of its two names ({e.name_a}, {e.name_b})")
        return ioi_causal_model(names)

    return build


def one_token_names(tokenizer, names: Sequence[str] = NAMES) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``names`` split into those ``tokenizer`` reads as one token with a leading space (`` Mary``), which can be label
    words, and those it splits (dropped)."""
    kept, dropped = [], []
    for n in names:
        (kept if len(tokenizer(" " + n, add_special_tokens=False)["input_ids"]) == 1 else dropped).append(n)
    return tuple(kept), tuple(dropped)


def label_words(task: Task) -> dict[str, str]:
    """Each name's label word for a causal LM: the name after a space, as it follows ``to`` in a prompt."""
    return {n: " " + n for n in task.labels}


def ioi_task(names: Sequence[str] | None = None, *, tokenizer=None, draws: Mapping[str, int] | None = None) -> Task:
    """The IOI task over ``names`` (:data:`~interp.tasks.ioi.data.NAMES` by default), or over those of them that
    ``tokenizer`` reads as one token (:func:`one_token_names`; ``task.dropped`` names the others).

    Raises:
        ConfigError: fewer than 4 names left (a tokenizer that splits most of them), names that are not capitalised
            words, or a name given in ``names`` that ``tokenizer`` reads as several tokens.
    """
    explicit = names is not None
    names = tuple(names or NAMES)
    dropped: tuple[str, ...] = ()
    if tokenizer is not None:
        names, dropped = one_token_names(tokenizer, names)
        if explicit and dropped:  # a name asked for by name is refused, not dropped
            pieces = tokenizer(" " + dropped[0], add_special_tokens=False)["input_ids"]
            raise ConfigError(f"task 'ioi': the name {dropped[0]!r} is {len(pieces)} tokens to this tokenizer; a name asked for must be "
                              "one token (leave the names out to keep those of the default list that are)")  # fmt: skip
    if len(names) < 4:
        raise ConfigError(f"task 'ioi' needs 4 or more names a model reads as one token; {len(names)} are ({', '.join(names) or 'none'})")
    task = Task(
        name=NAME,
        labels=names,
        splits=SPLITS,
        load=lambda chosen: ioi_examples(tuple(chosen), names, draws),
        roles=ROLES,
        default_splits=("test",),
        causal_model=_checked(names),
        inputs=_inputs,
        alignment=ALIGNMENT,
        groups=NAME_PAIRS,
        eval_splits=("test",),
        reading={"template": TEMPLATE, "label_words": {n: " " + n for n in names}},
        for_tokenizer=None if tokenizer is not None else lambda tok: ioi_task(names if explicit else None, tokenizer=tok, draws=draws),
        linear=LinearReadout(logit_difference, mib_signals, mib_both, ("position", "token")),
    )
    object.__setattr__(task, "dropped", dropped)  # what a tokenizer could not read as one token, said by the caller
    return task


def logit_difference(logits, examples, labels: Sequence[str]):
    """The indirect object's logit minus the subject's, per example: float ``[n]`` from logits ``[n, labels]`` read
    through the task's names (Wang et al. 2023, §3: positive where the model prefers the right name)."""
    import torch

    index = {name: i for i, name in enumerate(labels)}
    rows = torch.arange(len(examples))
    io = torch.tensor([index[e.label] for e in examples])
    s = torch.tensor([index[e.subject] for e in examples])
    return logits[rows, io] - logits[rows, s]
