"""MQNLI as a :class:`~interp.tasks.base.Task`: a generated file, its token roles, and each tree node's default alignment.

Roles: ``cls`` and one per surface position of each sentence, ``q_s.p``
(the premise's subject quantifier) ... ``n_o.h`` (the hypothesis's object
noun): 19 in all. A role covers the tokens of its word (``does not`` is two
words, one role; ε is a token of its own). The variables are the nodes of
the composition tree (Geiger et al. 2019, Figure 3): each is aligned by
default to the tokens of the words below it, in premise and hypothesis
(``n_s`` to ``n_s.p+n_s.h``, ``subj_np`` to both sentences' adjective and
noun, ``root``, whose relation decides the label, to all 18); any location
may still be named for any node (``blocks.5.hook_resid_post@cls`` for
``root``). An interchange of every
word below a node at the embedding output merely substitutes the words, so
there the interchange is the input's, not a finding.

Usage::

    task = mqnli_task("runs/mqnli/iid.jsonl")
    task.alignment["subj_np"]   # ('adj_s.p', 'n_s.p', 'adj_s.h', 'n_s.h')
"""

from __future__ import annotations

from pathlib import Path

from interp.core.errors import ConfigError
from interp.tasks.base import Task
from interp.tasks.mqnli.causal_model import NODES, POSITIONS, abstract_tree, inputs_of, mqnli_causal_model
from interp.tasks.mqnli.files import MQNLI_LABELS, MQNLI_SPLITS, read_mqnli

#: [CLS], then every position of the premise, then of the hypothesis.
ROLES: tuple[str, ...] = ("cls", *(f"{k}.p" for k in POSITIONS), *(f"{k}.h" for k in POSITIONS))


def positions_below(node: str) -> tuple[str, ...]:
    """The surface positions under ``node`` in the composition tree, in surface order (a position is below itself).

    >>> positions_below("obj_dp")
    ('adv', 'v', 'q_o', 'adj_o', 'n_o')
    """
    tree = abstract_tree().tree
    below, todo = set(), [node]
    while todo:
        n = todo.pop()
        children = tree.children.get(n, ())
        if not children:
            below.add(n)
        todo.extend(children)
    return tuple(k for k in POSITIONS if k in below)


def default_alignment() -> dict[str, tuple[str, ...]]:
    """Each node -> the roles of the words below it (premise first, then hypothesis)."""
    alignment = {}
    for node in NODES:
        below = positions_below(node)
        alignment[node] = (*(f"{k}.p" for k in below), *(f"{k}.h" for k in below))
    return alignment


def mqnli_task(data_file: str | Path | None) -> Task:
    """The MQNLI task on a file written by ``interp mqnli``.

    Raises:
        ConfigError: no ``data_file`` given.
    """
    if not data_file:
        raise ConfigError("`task=mqnli` needs `data_file=`, a file written by interp mqnli")
    causal = mqnli_causal_model()
    return Task(
        name="mqnli",
        labels=MQNLI_LABELS,
        splits=MQNLI_SPLITS,
        load=lambda splits: read_mqnli(data_file, tuple(splits)),
        roles=ROLES,
        default_splits=("test",),
        causal_model=lambda examples: causal,
        inputs=lambda e: inputs_of(e.premise_words, e.hypothesis_words),
        alignment=default_alignment(),
    )
