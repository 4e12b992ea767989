"""MoNLI as a :class:`~interp.tasks.base.Task`: its splits, INFER, and where each variable lives by default.

Variables (INFER, Geiger, Richardson & Potts 2020, Figure 1): ``lexrel``
(the relation of w_p to w_h, ⊏ or ⊐), ``negated`` (whether *not* scopes
over the substitution) and ``output`` (INFER's relation after negation,
which decides the label). ``lexrel`` is aligned to w_h by default, the
paper's BERT^3_{w_h}; ``negated`` and ``output`` to [CLS], as the DAS paper
(Geiger et al. 2023) aligns them.

Usage::

    task = monli_task(data_dir="path/to/monli")
    task.variables            # ('lexrel', 'negated', 'output')
"""

from __future__ import annotations

from interp.tasks.base import NOT_ENTAILED, Groups, Task, WordPairs
from interp.tasks.monli.align import ROLES
from interp.tasks.monli.behavior import PLAN, TABLE_1
from interp.tasks.monli.data import DERIVED_SPLITS, GENERATED_SPLITS, LABELS, OWN_VALUES, SPLITS, from_own, load_monli, read_generated
from interp.tasks.monli.infer import infer_for, monli_inputs

ALIGNMENT = {"lexrel": ("w_h",), "negated": ("cls",), "output": ("cls",)}

#: MoNLI's examples share word pairs (the substituted premise and hypothesis words, in either order: car / convertible
#: in PMoNLI and convertible / car elsewhere are one pair): intervals resample pairs.
WORD_PAIRS = Groups("word pairs", lambda e: " / ".join(sorted((e.words["w_p"], e.words["w_h"]))))


def monli_task(data_dir: str | None = None, verify_checksums: bool = True, data_file: str | None = None) -> Task:
    """The MoNLI task reading the released files from ``data_dir`` (else ``$INTERP_MONLI_DIR``), or a generated ``data_file``.

    A generated file (``interp monli-generate``) has the splits ``pmonli`` and
    ``nmonli`` (its positive and negated lines) and no checksum.
    """
    if data_file:
        splits, default = GENERATED_SPLITS, ("nmonli",)
        load = lambda chosen: read_generated(data_file, tuple(chosen))  # noqa: E731
    else:
        splits, default = tuple(SPLITS), ("nmonli_test",)
        load = lambda chosen: load_monli(data_dir, tuple(chosen), verify_checksums=verify_checksums)  # noqa: E731
    return Task(
        name="monli",
        labels=LABELS,
        label_mapping=NOT_ENTAILED,
        splits=splits,
        load=load,
        roles=ROLES,
        default_splits=default,
        causal_model=infer_for,
        inputs=monli_inputs,
        alignment=ALIGNMENT,
        train_splits=() if data_file else ("pmonli", "nmonli_train"),  # the paper's systematic-generalization set-up
        extra_splits=() if data_file else tuple(DERIVED_SPLITS),
        stable_ids=True,
        probe_targets=("lexrel", "infer"),  # the paper's two (Geiger et al. 2020, Figure 2)
        word_pairs=WordPairs(premise="w_p", hypothesis="w_h", variable="lexrel", general={"⊏": "w_h", "⊐": "w_p"}),  # Figure 5
        behavioral=None if data_file else TABLE_1,  # the paper's Table 1 needs the released splits
        demo=None if data_file else PLAN,
        groups=WORD_PAIRS,
        own_values=OWN_VALUES,
        own=from_own,
    )
