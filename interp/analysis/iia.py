"""Interchange-intervention accuracy from an interventions file: how often the model agrees with the causal model.

Usage::

    from interp.analysis.iia import summarize_all, format_summaries
    print(format_summaries(summarize_all("runs/demo/interventions.h5")))
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from interp.files.interventions import Fp32Check, open_interventions


def summarize_matrices(
    location: str, model_pred: np.ndarray, causal_pred: np.ndarray, lexrel: np.ndarray, label: np.ndarray, base_pred: np.ndarray
) -> dict:
    """Agreement of model and causal model from one location's int8 ``[n, n]`` matrices and the ``[n]`` columns.

    Returns:
        ``pairs`` run; ``agreement`` (share of pairs where ``model_pred ==
        causal_pred``); ``causal_pairs`` (lexrel(i) != lexrel(j)) and the
        agreement on them; ``changed`` (share of pairs whose prediction differs
        from the base's own); ``base_accuracy``.
    """
    run = model_pred >= 0
    causal = (lexrel[:, None] != lexrel[None, :]) & run
    agree = (model_pred == causal_pred) & run
    return {
        "location": location,
        "pairs": int(run.sum()),
        "agreement": float(agree.sum() / max(run.sum(), 1)),
        "causal_pairs": int(causal.sum()),
        "agreement_causal": float((agree & causal).sum() / max(causal.sum(), 1)),
        "changed": float(((model_pred != base_pred[:, None]) & run).sum() / max(run.sum(), 1)),
        "base_accuracy": float((base_pred == label).mean()),
    }


def _summarize_open(file, location: str | None) -> dict:
    name = file.location(location)
    columns = (file.column(k) for k in ("lexrel", "label", "base_pred"))
    summary = summarize_matrices(name, file.matrix("model_pred", name), file.matrix("causal_pred", name), *columns)
    return {**summary, "fp32_check": Fp32Check.from_attrs(file.handle[name].attrs)}


def summarize(path: str | Path, location: str | None = None) -> dict:
    """:func:`summarize_matrices` at a location of a finished file (``None``: its only one).

    Also ``fp32_check``: after a TF32 or bf16 run, its :class:`~interp.jobs.fp32_check.Fp32Check`; else ``None``.
    """
    with open_interventions(path) as file:
        return _summarize_open(file, location)


def summarize_all(path: str | Path) -> list[dict]:
    """:func:`summarize` for every location of a finished file, in file order."""
    with open_interventions(path) as file:
        return [_summarize_open(file, name) for name in file.locations]


def format_summaries(summaries: list[dict]) -> str:
    """One line per location: pairs run, agreement with the causal model overall and on causal pairs."""
    lines = [f"{'location':32}{'pairs':>8}{'agree':>8}{'agree (causal pairs)':>22}{'output changed':>16}"]
    for s in summaries:
        lines.append(
            f"{s['location']:32}{s['pairs']:>8}{s['agreement']:>8.3f}{s['agreement_causal']:>22.3f}{s['changed']:>16.3f}"
        )
    for s in summaries:
        check = s.get("fp32_check")
        if check is not None:
            lines.append(
                f"{s['location']}: labels agree with fp32 on {check.agreement:.1%} of {check.pairs} sampled pairs "
                f"(max |Δ logit| {check.max_abs_logit_diff:.2g})"
            )
    return "\n".join(lines)
