"""Interchange-intervention accuracy (IIA) from an interventions file, with the two nulls beside it.

IIA, one definition everywhere: the share of (base, source) pairs, in a
stated pair set, where the intervened model's label equals the causal
model's counterfactual. Two pair sets are reported:

* ``all``: every pair run;
* ``causal``: the pairs whose base and source differ in the intervened
  variable, the only ones where the interchange can change anything in the
  causal model.

Beside every IIA, two nulls on the same pairs: ``stays_base``, the share
where the model's label stays the base's own, and ``copies_source``, the
share where it is the source's own label. An interchange that does nothing
scores ``stays_base``; one that hands over the whole input (every word
below a node at the embeddings, or the last [CLS]) scores ``copies_source``.
An IIA is a finding only where it stands above both.

Usage::

    from interp.analysis.iia import summarize_all, format_summaries
    print(format_summaries(summarize_all("runs/demo/interventions.h5")))
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from interp.core.errors import ConfigError, named
from interp.analysis.bootstrap import N_BOOT, SEED, Estimate, ExampleBootstrap, collapsed_note, percentile_interval
from interp.files.interventions import Fp32Check, open_interventions
from interp.hooks.locations import Location

PAIR_SETS = ("all", "causal")


def summarize_matrices(
    location: str,
    variable: str,
    model_pred: np.ndarray,
    causal_pred: np.ndarray,
    values: np.ndarray,
    label: np.ndarray,
    base_pred: np.ndarray,
    source_values: np.ndarray | None = None,
    source_pred: np.ndarray | None = None,
    *,
    square: bool | None = None,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    groups: np.ndarray | None = None,
    source_groups: np.ndarray | None = None,
    unit: str = "groups",
) -> dict:
    """IIA and its nulls, each with its 95% interval, from one location's int8 ``[n_bases, n_sources]`` matrices (row = base).

    Args:
        values: each base's value code of ``variable``: pairs whose codes
            differ from the source's are the ``causal`` pair set.
        label, base_pred: the bases' gold and the model's own label ids.
        source_values, source_pred: the same for the sources; ``None`` when
            the sources are the bases (a square file).
        square: whether the sources are the bases (``None``: when ``source_values`` is ``None``); it decides how
            the bootstrap resamples (:class:`~interp.analysis.bootstrap.ExampleBootstrap`).
        n_boot, seed: the bootstrap's replicates and seed (the intervals are the same for the same seed).
        groups, source_groups: each base's (source's) group key (``source_groups``: ``groups`` when the sources are
            the bases); given, the bootstrap resamples groups, named ``unit`` (``"word pairs"``), not examples.

    Returns:
        ``location``, ``variable``, ``pairs``, ``causal_pairs``, and for each
        pair set ``iia``, ``stays_base``, ``copies_source`` (suffix
        ``_causal`` for the causal set; shares 0..1), each with ``_low`` and
        ``_high``, the bounds of its 95% interval from a bootstrap over
        examples; ``gap`` (``gap_causal``): IIA minus the larger null, with its
        interval from the same replicates; ``changed`` (1 − ``stays_base``),
        ``base_accuracy``, ``interval`` (a line naming the method), and ``over`` (what the intervals resample, with its
        count: ``"199 word pairs"``, ``"300 examples"``).
    """
    run = model_pred >= 0
    square = source_values is None if square is None else square
    source_values = values if source_values is None else source_values
    source_pred = base_pred if source_pred is None else source_pred
    sets = {"": run, "_causal": (values[:, None] != source_values[None, :]) & run}
    summary: dict = {"location": location, "variable": variable, "pairs": int(run.sum()), "causal_pairs": int(sets["_causal"].sum())}
    checks = {
        "iia": model_pred == causal_pred,
        "stays_base": model_pred == base_pred[:, None],
        "copies_source": model_pred == source_pred[None, :],
    }
    if groups is not None and source_groups is None:
        source_groups = groups if square else None
    boot = ExampleBootstrap(*model_pred.shape, square=square, n_boot=n_boot, seed=seed, base_groups=groups, source_groups=source_groups,
                            unit=unit)  # fmt: skip
    for suffix, pairs in sets.items():
        denominator = boot.totals(pairs)
        replicates = {}
        for name, hit in checks.items():
            summary[name + suffix] = float((hit & pairs).sum() / max(pairs.sum(), 1))
            replicates[name] = np.where(denominator > 0, boot.totals(hit & pairs) / np.maximum(denominator, 1), np.nan)
            summary[f"{name}{suffix}_low"], summary[f"{name}{suffix}_high"] = percentile_interval(replicates[name], boot.confidence)
        summary["gap" + suffix] = summary["iia" + suffix] - max(summary["stays_base" + suffix], summary["copies_source" + suffix])
        gaps = replicates["iia"] - np.maximum(replicates["stays_base"], replicates["copies_source"])
        summary[f"gap{suffix}_low"], summary[f"gap{suffix}_high"] = percentile_interval(gaps, boot.confidence)
    summary["changed"] = 1.0 - summary["stays_base"] if summary["pairs"] else 0.0
    summary["base_accuracy"] = float((base_pred == label).mean())
    summary["interval"] = boot.method
    summary["over"] = boot.over
    return summary


def estimate(summary: dict, name: str) -> Estimate:
    """A figure of a :func:`summarize_matrices` summary (``iia_causal``, ``gap``, ...) with its interval."""
    return Estimate(summary[name], summary[f"{name}_low"], summary[f"{name}_high"], summary.get("interval", ""))


#: What an interval resamples: the task's groups (MoNLI: word pairs), or examples.
UNITS = ("group", "example")


def resampled(groups, group_unit: str, unit: str | None) -> dict:
    """The keywords of :func:`summarize_matrices` that resample ``unit``: ``"group"`` (``groups``, one key per example,
    named ``group_unit``), ``"example"``, or ``None``: groups where there are any, else examples.

    Raises:
        ConfigError: naming ``unit=``: not one of :data:`UNITS`, or ``"group"`` for examples without groups.
    """
    if unit is not None and unit not in UNITS:
        raise ConfigError(f"{named('unit', repr(unit))}: choose {' or '.join(UNITS)}")
    if unit == "example" or (unit is None and groups is None):
        return {}
    if groups is None:
        raise ConfigError(f"{named('unit', repr(unit))}: these examples have no groups (the task declares none, or the file was made "
                          f"before groups were kept); give unit='example'")  # fmt: skip
    return {"groups": np.asarray(groups), "unit": group_unit or "groups"}


def _summarize_open(file, location: str | None, variable: str | None, unit: str | None = None) -> dict:
    name, var = file.location(location), file.variable(variable)
    summary = summarize_matrices(
        name,
        var,
        file.matrix("model_pred", name),
        file.matrix("causal_pred", name, var),
        file.values(var).codes,
        file.column("label"),
        file.column("base_pred"),
        **resampled(file.groups, file.group_unit, unit),
    )
    return {**summary, "fp32_check": Fp32Check.from_attrs(file.group_attrs(name))}


def summarize(path: str | Path, location: str | None = None, variable: str | None = None, unit: str | None = None) -> dict:
    """:func:`summarize_matrices` at a location of a finished file for a variable (``None``: its only one), the
    intervals over ``unit`` (:func:`resampled`: by default the file's groups where it keeps them, else examples).

    Also ``fp32_check``: after a TF32 or bf16 run, its :class:`~interp.files.interventions.Fp32Check`; else ``None``.
    """
    with open_interventions(path) as file:
        return _summarize_open(file, location, variable, unit)


def summarize_all(path: str | Path, aligned_only: bool = False, unit: str | None = None, logit_shift: bool = False) -> list[dict]:
    """:func:`summarize` for every variable and location of a finished file, in file order.

    ``aligned_only``: each variable only at the locations of its default
    alignment (``--locations aligned``: one row per variable and layer).
    ``logit_shift``: each summary also holds ``logit_shift`` with ``_low`` and
    ``_high`` (:func:`file_logit_shift`), read from the file's logits.
    """
    with open_interventions(path) as file:
        return [
            {**_summarize_open(file, name, var, unit), **(_shift_open(file, name, var, unit) if logit_shift else {})}
            for var in file.variables
            for name in (file.aligned_locations(var) if aligned_only else file.locations)
        ]


def file_logit_shift(path: str | Path, location: str | None = None, variable: str | None = None, unit: str | None = None) -> Estimate:
    """The mean change of (counterfactual's logit − the base's own label's logit) the interchange made, in logit units,
    with its 95% interval over ``unit`` (:func:`interp.analysis.shift.logit_shift`), at a location of a finished file for
    a variable: the continuous figure beside IIA (``InterchangeResult.logit_shift``), from the file's logits
    (``[n, n, model labels]``; each base's own run is its diagonal).

    Raises:
        ConfigError: the location or variable is not in the file, or ``None`` where it holds several.
    """
    with open_interventions(path) as file:
        found = _shift_open(file, location, variable, unit)
    return Estimate(found["logit_shift"], found["logit_shift_low"], found["logit_shift_high"], found["logit_shift_interval"])


def _shift_open(file, location: str | None, variable: str | None, unit: str | None = None) -> dict:
    from interp.analysis.shift import label_columns, logit_shift

    name, var = file.location(location), file.variable(variable)
    logits = file.matrix("logits", name).astype(np.float64)
    n = len(logits)
    meta = file.meta
    labels = list(meta["labels"])
    read = np.asarray(meta["model_read"]) if "model_read" in meta else np.arange(logits.shape[-1])
    grouped = resampled(file.groups, file.group_unit, unit)
    found = logit_shift(logits, logits[np.arange(n), np.arange(n)], file.matrix("causal_pred", name, var), file.column("base_pred"),
                        label_columns(read, len(labels)), groups=grouped.get("groups"), unit=grouped.get("unit", "groups"))  # fmt: skip
    return {"logit_shift": float(found), "logit_shift_low": found.low, "logit_shift_high": found.high, "logit_shift_interval": found.method}


def layer_table(summaries: list[dict]) -> str:
    """A Markdown table, variable × layer, of IIA on causal pairs with its 95% interval and the larger null in brackets.

    Layer 0 is the embedding output (``blocks.0.hook_resid_pre``), r the
    output of block r − 1. A cell in bold stands above both nulls: the
    interval of its gap (IIA minus the larger null, from the same bootstrap
    replicates) lies above zero. A cell at
    layer 0 of a location without [CLS] is marked ``(words)``: there the
    interchange swaps the words at its roles, an interchange of the input;
    where the location covers every word below the variable (MQNLI's
    alignment), its IIA is the model's accuracy on the counterfactual input,
    not a finding. Rows come from :func:`summarize_all` with ``aligned_only``;
    the columns run from layer 0 to the deepest layer among them.
    """
    cells: dict[str, dict[int, str]] = {}
    for s in summaries:
        loc = Location.parse(s["location"])
        index = loc.hidden_index
        null = max(s["stays_base_causal"], s["copies_source_causal"])
        mark = "**" if s["causal_pairs"] and s["gap_causal_low"] > 0 else ""
        words = " (words)" if index == 0 and "cls" not in loc.roles else ""
        iia = estimate(s, "iia_causal")
        text = f"{mark}{iia!r}{mark} ({null:.3f}){words}" if s["causal_pairs"] else "no causal pair"
        cells.setdefault(s["variable"], {})[index] = text
    n_layers = max((i for c in cells.values() for i in c), default=0)
    head = "| variable | " + " | ".join(str(r) for r in range(n_layers + 1)) + " |"
    rule = "| --- | " + " | ".join("---" for _ in range(n_layers + 1)) + " |"
    rows = [f"| {v} | " + " | ".join(c.get(r, "") for r in range(n_layers + 1)) + " |" for v, c in cells.items()]
    return "\n".join([head, rule, *rows])


def format_summaries(summaries: list[dict]) -> str:
    """Two lines per variable and location (all pairs, causal pairs): IIA, its two nulls and IIA minus the larger null,
    each with its 95% interval; a line on the method, and any fp32 check."""
    lines = [f"{'variable':10}{'location':32}{'pair set':>9}{'pairs':>9}  {'IIA':21}{'stays':21}{'copies':21}{'IIA - larger null':>22}"]
    for s in summaries:
        for suffix, name, count in (("", "all", s["pairs"]), ("_causal", "causal", s["causal_pairs"])):
            first = f"{s['variable']:10}{s['location']:32}" if not suffix else " " * 42
            figures = "".join(f"{estimate(s, n + suffix)!r:21}" for n in ("iia", "stays_base", "copies_source"))
            lines.append(f"{first}{name:>9}{count:>9}  {figures}{estimate(s, 'gap' + suffix)!r:>22}".rstrip())
    lines.append("IIA: intervened label = the causal model's counterfactual; stays: = the base's own label; copies: = the source's own label; "
                 "causal pairs: base and source differ in the variable")
    if summaries and "logit_shift" in summaries[0]:
        lines.append("Logit shift toward the counterfactual (logit units; the mean change of the counterfactual's logit minus the base's own "
                     "label's, on the pairs whose counterfactual differs from the base's own label: it moves where no label flips):")
        lines += [f"{s['variable']:10}{s['location']:32}{estimate(s, 'logit_shift')!r}" for s in summaries]
    if summaries:
        lines.append(f"[low, high]: {summaries[0]['interval']}; an IIA stands above the nulls where its gap's interval lies above 0")
        figures = ("iia", "stays_base", "copies_source", "gap")
        lines += collapsed_note((s[f"{n}{suffix}_low"], s[f"{n}{suffix}_high"]) for s in summaries for n in figures for suffix in ("", "_causal"))
    for s in summaries:
        check = s.get("fp32_check")
        if check is not None:
            lines.append(
                f"{s['location']}: labels agree with fp32 on {check.agreement:.1%} of {check.pairs} sampled pairs "
                f"(max |Δ logit| {check.max_abs_logit_diff:.2g})"
            )
    return "\n".join(lines)
