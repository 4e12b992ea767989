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

Splits: ``train``, ``test``, ``dev`` (where the file has one) and
``test_informative``, the informative open-class subset of the test split
(Geiger et al. 2018, §4.2 and Table 1): the pairs labelled neutral only
because aligned open-class words are independent, which a model blind to
their identity reads as entailments or contradictions.

Usage::

    task = mqnli_task("runs/mqnli/iid.jsonl")
    task.alignment["subj_np"]   # ('adj_s.p', 'n_s.p', 'adj_s.h', 'n_s.h')
    task.load(("test_informative",))
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Sequence

from interp.core.errors import ConfigError, DataError
from interp.tasks.base import Task
from interp.tasks.mqnli.causal_model import NODES, POSITIONS, abstract_tree, informative, inputs_of, mqnli_causal_model
from interp.tasks.mqnli.files import MQNLI_LABELS, MQNLI_SPLITS, MQNLIExample, read_mqnli

#: The informative open-class subset of the test split (Geiger et al. 2018, Table 1), a split of its own name.
INFORMATIVE = "test_informative"

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
        extra_splits=(INFORMATIVE,),
        load=lambda splits: load_mqnli(data_file, splits),
        roles=ROLES,
        default_splits=("test",),
        causal_model=lambda examples: causal,
        inputs=lambda e: inputs_of(e.premise_words, e.hypothesis_words),
        alignment=default_alignment(),
    )


def load_mqnli(data_file: str | Path, splits: Sequence[str]) -> list[MQNLIExample]:
    """The examples of ``splits`` in ``data_file``; ``test_informative`` is the test pairs labelled neutral only because
    aligned open-class words are independent (:func:`~interp.tasks.mqnli.causal_model.informative`), split renamed.

    Raises:
        DataError: as :func:`~interp.tasks.mqnli.files.read_mqnli`; none of ``splits`` is in the file (naming
            ``interp mqnli`` and ``n_dev=`` where ``dev`` is missing).
    """
    wanted = set(splits)
    read = tuple(s for s in MQNLI_SPLITS if s in wanted or (s == "test" and INFORMATIVE in wanted))
    examples = read_mqnli(data_file, read)
    out = [e for e in examples if e.split in wanted]
    if INFORMATIVE in wanted:
        out += [replace(e, split=INFORMATIVE) for e in examples if e.split == "test" and informative(e.premise_words, e.hypothesis_words, e.label)]
    if not out:
        hint = " (a dev split is generated with interp mqnli and `n_dev=`)" if "dev" in wanted else ""
        raise DataError(f"{data_file}: no pairs in split(s) {', '.join(splits)}{hint}")
    return out
