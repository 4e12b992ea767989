"""Path patching from a sender site to the readout or to a later head's input, on a bound model
(:mod:`interp.engine.paths` runs it).

Usage::

    lab = interp.IntervenableModel("runs/demo/model", "monli")
    direct = lab.path_patch(bases, sources, "blocks.4.attn.hook_z.h7@w_h")            # [bases, sources, labels]
    total = lab.interchange_logits(bases, sources, lab.location("blocks.4.attn.hook_z.h7@w_h"))
    frame = lab.path_patch_sweep(bases, sources, "heads@w_h")                          # every head: direct beside total
    via = lab.path_patch(bases, sources, "blocks.3.attn.hook_z.h2@w_h", receiver="blocks.5.attn.hook_v.h0@w_h")
    frame = lab.path_patch_sweep(bases, sources, "heads@w_h", receiver="blocks.5.attn.hook_q@w_h")

The direct effect (through the residual stream to the readout alone, every later component held at its base value)
beside the total effect (the plain interchange at the sender: every path) says how much of a head's or an MLP's effect
on the output passes through later heads and MLPs (Wang et al. 2022, §3.1, path patching; Goldowsky-Dill et al. 2023).
With a ``receiver`` (a later head's query, key or value input, ``blocks.L.attn.hook_q.hH@ROLE``; ``hook_k``,
``hook_v``; without ``.hH`` every head's), the path is sender → that input → the output: how much of the sender's effect
that one head reads through its query, key or value. Give the receiver at the sender's tokens: with the components
between them held, the residual stream differs from the base's only there, so elsewhere the receiver's input is the
base's and its effect is 0.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from jaxtyping import Float
from torch import Tensor

from interp.analysis.bootstrap import ExampleBootstrap
from interp.analysis.shift import label_columns, margin
from interp.core.estimates import Estimate
from interp.core.errors import ConfigError, named, renamed
from interp.hooks.inputs import parse_model_locations
from interp.hooks.locations import Location


def receiver_location(lab, receiver: str | Location | None) -> Location | None:
    """``receiver`` (a head's query, key or value input at a role of the task, as :meth:`IntervenableModel.location`
    reads a location) as one :class:`~interp.hooks.locations.Location`; ``None`` (the readout) as ``None``.

    Raises:
        ConfigError: naming ``receiver=``: malformed, out of range, a role the task lacks, several locations.
    """
    if receiver is None or isinstance(receiver, Location):
        return receiver
    try:
        found = parse_model_locations(str(receiver), lab.model.n_layers, lab.task.roles, (), lab.model.n_heads, decoder=lab.model.decoder,
                                      inputs=True)  # fmt: skip
    except ConfigError as exc:
        raise ConfigError(f"{named('receiver', repr(receiver))}: {exc}") from None
    if len(found) != 1:
        raise ConfigError(f"{named('receiver', repr(receiver))} names {len(found)} locations; give one (e.g. blocks.3.attn.hook_q.h1@cls)")
    return found[0]


def path_patch(lab, bases: Sequence, sources: Sequence, sender, *, receiver=None, naive: bool = False) -> Float[Tensor, "bases sources labels"]:
    """Logits float32 ``[len(bases), len(sources), n_model_labels]`` on CPU: each base with the vector at ``sender`` (a
    head's ``attn.hook_z``, ``hook_attn_out`` or ``hook_mlp_out`` at a role) replaced by each source's, every
    component downstream of it held at its base value (:func:`interp.engine.paths.path_patch_logits`, through the
    model's runner: the backend's own hooks); with a ``receiver`` (a later head's query, key or value input:
    :func:`receiver_location`), only that input is patched with what the sender made of it. ``naive``: the runner's
    reference (batch-1 passes per pair).

    Raises:
        ConfigError: naming ``sender=``: a residual-stream location, or as :meth:`IntervenableModel.location`; naming
            ``receiver=``: as :func:`receiver_location`, or in a block not after the sender's; examples that are not
            the task's.
    """
    with renamed(location="sender"):
        loc = lab.location(sender)
    target = receiver_location(lab, receiver)
    with renamed(examples="bases"):
        bases = lab.task.check_examples(bases)
    with renamed(examples="sources"):
        sources = lab.task.check_examples(sources)
    every = lab.bind(list({e.id: e for e in [*bases, *sources]}.values()))
    vectors = every.vectors(loc)[every.rows(sources)].cpu()
    encoded = [every.encoded[r] for r in every.rows(bases)]
    runner = every.binding.runner.reference() if naive else every.binding.runner
    return runner.path_patch_logits(encoded, vectors, loc, lab.model.n_layers, receiver=target)


def path_patch_sweep(lab, bases: Sequence, sources: Sequence, senders: str = "heads@cls", *, receiver=None, seed: int = 0):
    """Every sender ``senders`` names (``heads@ROLE``: every head; ``components@ROLE``; or a comma-separated list): its
    direct effect on the label (sender → readout, or sender → ``receiver`` → output: :func:`path_patch`) beside its
    total effect (the plain interchange at the sender), each the share of (base, source) pairs whose label moves off
    the base's own, with its 95% interval (bootstrap over the bases' and the sources' groups, one draw for both where
    the two lists are one). With a ``receiver``, only the senders in blocks before the receiver's are swept.

    Returns:
        A ``pandas.DataFrame``, one row per sender: ``sender``, ``direct``, ``direct_low``, ``direct_high``, ``total``,
        ``total_low``, ``total_high`` (shares of pairs whose label moves off the base's own), ``direct_margin`` and
        ``total_margin`` with their ``_low`` and ``_high`` (the continuous figure beside them: the mean change of the base's
        own answer's margin over the other labels, logit units, negative where the patch moved it away, whether or not a
        label flips), ``pairs``, ``interval``, ``receiver`` (``readout`` or the receiver's location).

    Raises:
        ConfigError: as :func:`path_patch`; a sender list with a residual-stream location; no sender before the receiver.
    """
    import pandas as pd

    target = receiver_location(lab, receiver)
    locations = lab.locations(senders)
    if target is not None:
        locations = [loc for loc in locations if loc.layer < target.layer]
        if not locations:
            raise ConfigError(f"{named('senders', repr(senders))} names no sender in a block before the receiver {target}")
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
    columns = label_columns(every.binding.reading.read, len(lab.task.labels))
    own_margin = margin(lab.predict(bases).float().numpy(), base_own, columns)  # the base's own answer over the other labels

    def moved(logits) -> Estimate:  # the mean change of that margin over every pair, logit units (negative: moved off it)
        after = margin(logits.float().numpy().reshape(-1, logits.shape[-1]), np.repeat(base_own, len(sources)), columns)
        change = after.reshape(len(bases), len(sources)) - own_margin[:, None]
        return boot.interval(float(change.mean()), boot.totals(change) / boot.totals(mask.astype(np.float64)))

    rows = []
    for loc in locations:
        found = (path_patch(lab, bases, sources, loc, receiver=target), lab.interchange_logits(bases, sources, loc))
        direct, total = (every.binding.reading.predict(logits.reshape(-1, logits.shape[-1])).reshape(len(bases), -1) for logits in found)
        d, t = boot.estimate(direct != base_own[:, None], mask), boot.estimate(total != base_own[:, None], mask)
        dm, tm = (moved(logits) for logits in found)
        rows.append({"sender": str(loc), "direct": float(d), "direct_low": d.low, "direct_high": d.high, "total": float(t),
                     "total_low": t.low, "total_high": t.high, "direct_margin": float(dm), "direct_margin_low": dm.low,
                     "direct_margin_high": dm.high, "total_margin": float(tm), "total_margin_low": tm.low, "total_margin_high": tm.high,
                     "pairs": int(mask.sum()), "interval": d.method, "receiver": str(target or "readout")})  # fmt: skip
    return pd.DataFrame(rows)
