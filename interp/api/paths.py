"""Path patching from a sender site to the readout, on a bound model (:mod:`interp.engine.paths` runs it).

Usage::

    lab = interp.IntervenableModel("runs/demo/model", "monli")
    direct = lab.path_patch(bases, sources, "blocks.4.attn.hook_z.h7@w_h")            # [bases, sources, labels]
    total = lab.interchange_logits(bases, sources, lab.location("blocks.4.attn.hook_z.h7@w_h"))
    frame = lab.path_patch_sweep(bases, sources, "heads@w_h")                          # every head: direct beside total

The direct effect (through the residual stream to the readout alone, every later component held at its base value)
beside the total effect (the plain interchange at the sender: every path) says how much of a head's or an MLP's effect
on the output passes through later heads and MLPs (Wang et al. 2022, §3.1, path patching; Goldowsky-Dill et al. 2023).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from jaxtyping import Float
from torch import Tensor

from interp.analysis.bootstrap import ExampleBootstrap
from interp.core.errors import ConfigError, renamed
from interp.engine.paths import naive_path_patch_logits, path_patch_logits


def path_patch(lab, bases: Sequence, sources: Sequence, sender, *, naive: bool = False) -> Float[Tensor, "bases sources labels"]:
    """Logits float32 ``[len(bases), len(sources), n_model_labels]`` on CPU: each base with the vector at ``sender`` (a
    head's ``attn.hook_z``, ``hook_attn_out`` or ``hook_mlp_out`` at a role) replaced by each source's, every
    component downstream of it held at its base value (:func:`interp.engine.paths.path_patch_logits`). ``naive``: two
    batch-1 passes per pair (the reference).

    Raises:
        ConfigError: naming ``sender=``: a residual-stream location, or as :meth:`IntervenableModel.location`; examples
            that are not the task's.
    """
    with renamed(location="sender"):
        loc = lab.location(sender)
    with renamed(examples="bases"):
        bases = lab.task.check_examples(bases)
    with renamed(examples="sources"):
        sources = lab.task.check_examples(sources)
    every = lab.bind(list({e.id: e for e in [*bases, *sources]}.values()))
    vectors = every.vectors(loc)[every.rows(sources)].cpu()
    encoded = [every.encoded[r] for r in every.rows(bases)]
    run = naive_path_patch_logits if naive else path_patch_logits
    return run(lab.model.module, encoded, vectors, loc, lab.model.n_layers, lab.model.tokenizer.pad_token_id or 0)


def path_patch_sweep(lab, bases: Sequence, sources: Sequence, senders: str = "heads@cls", *, seed: int = 0):
    """Every sender ``senders`` names (``heads@ROLE``: every head; ``components@ROLE``; or a comma-separated list): its
    direct effect on the label (sender → readout, :func:`path_patch`) beside its total effect (the plain interchange
    at the sender), each the share of (base, source) pairs whose label moves off the base's own, with its 95% interval
    (bootstrap over the bases' and the sources' groups, one draw for both where the two lists are one).

    Returns:
        A ``pandas.DataFrame``, one row per sender: ``sender``, ``direct``, ``direct_low``, ``direct_high``, ``total``,
        ``total_low``, ``total_high``, ``pairs``, ``interval``.

    Raises:
        ConfigError: as :func:`path_patch`; a sender list with a residual-stream location.
    """
    import pandas as pd

    locations = lab.locations(senders)
    residual = [loc for loc in locations if not loc.component]
    if residual:
        raise ConfigError(f"`senders={senders!r}` names {residual[0]}, a residual-stream location; senders are components (heads@ROLE, components@ROLE)")
    every = lab.bind(list({e.id: e for e in [*lab.task.check_examples(bases), *lab.task.check_examples(sources)]}.values()))
    own = every.own_labels()
    base_own = own[every.rows(bases)]
    square = [e.id for e in bases] == [e.id for e in sources]
    table = every.table()
    grouped = {} if table.groups is None else {"base_groups": [table.groups[r] for r in every.rows(bases)],
                                               "source_groups": [table.groups[r] for r in every.rows(sources)], "unit": table.group_unit}  # fmt: skip
    if square and grouped:
        grouped.pop("source_groups")
    boot = ExampleBootstrap(len(bases), len(sources), square=square, seed=seed, **grouped)
    mask = np.ones((len(bases), len(sources)), dtype=bool)
    rows = []
    for loc in locations:
        direct, total = (every.binding.reading.predict(logits.reshape(-1, logits.shape[-1])).reshape(len(bases), -1)
                         for logits in (path_patch(lab, bases, sources, loc), lab.interchange_logits(bases, sources, loc)))
        d, t = boot.estimate(direct != base_own[:, None], mask), boot.estimate(total != base_own[:, None], mask)
        rows.append({"sender": str(loc), "direct": float(d), "direct_low": d.low, "direct_high": d.high, "total": float(t),
                     "total_low": t.low, "total_high": t.high, "pairs": int(mask.sum()), "interval": d.method})  # fmt: skip
    return pd.DataFrame(rows)
