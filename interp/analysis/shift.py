"""How far an interchange moves the logits toward the counterfactual, whether or not a label flips.

Usage::

    res = lab.interchange(examples, examples, "blocks.3.hook_resid_post@w_h")
    res.logit_shift("lexrel")        # 0.84 [0.61, 1.07]: logit units, mean over the pairs whose counterfactual differs

IIA counts flipped labels, so on a model whose interchange moves every logit but flips none it reads 0.000 [0.000,
0.000]. Beside it this reads the logit difference between two labels, the counterfactual ``c`` and the base's own
label ``b`` (what the model says without the intervention), on each pair whose counterfactual differs from ``b``:
``shift = (z[c] − z[b]) after − (z[c] − z[b]) before``, where before is the base's own run. Positive: the interchange
moved the model toward the counterfactual (Wang et al. 2023's logit difference, as a change; Heimersheim & Nanda 2024,
*How to use and interpret activation patching*, §3, on why a continuous metric beside a discrete one). Its interval
comes from the same seeded bootstrap as IIA's, over the same examples or groups.
"""

from __future__ import annotations

import numpy as np

from interp.analysis.bootstrap import N_BOOT, SEED, Estimate, ExampleBootstrap
from interp.core.errors import ConfigError


def logit_shift(after: np.ndarray, before: np.ndarray, counterfactual: np.ndarray, base_own: np.ndarray, columns: np.ndarray, *,
                groups: np.ndarray | None = None, unit: str = "groups", n_boot: int = N_BOOT, seed: int = SEED) -> Estimate:  # fmt: skip
    """The mean shift toward the counterfactual over a square grid of pairs, with its 95% interval.

    Args:
        after: float ``[n, n, model labels]``, the intervened logits of every (base, source).
        before: float ``[n, model labels]``, each base's own logits.
        counterfactual: int ``[n, n]`` task label ids, the causal model's output for each pair.
        base_own: int ``[n]`` task label ids, each base's own prediction.
        columns: int ``[task labels]``, the model logit column read for each task label.
        groups: each example's group (the bootstrap resamples groups), or ``None`` (examples).

    Returns:
        An :class:`~interp.analysis.bootstrap.Estimate` in logit units; NaN with no pair whose counterfactual differs.

    Raises:
        ConfigError: shapes that do not fit one another.
    """
    after, before = np.asarray(after, dtype=np.float64), np.asarray(before, dtype=np.float64)
    n = before.shape[0]
    if after.shape[:2] != (n, n) or np.asarray(counterfactual).shape != (n, n) or len(base_own) != n:
        raise ConfigError(f"logit shift: a square grid of {n} bases is needed, got logits {after.shape} and counterfactuals {np.shape(counterfactual)}")
    cf = columns[np.asarray(counterfactual, dtype=np.int64)]  # [n, n] model columns
    own = columns[np.asarray(base_own, dtype=np.int64)][:, None].repeat(n, 1)
    rows = np.arange(n)[:, None].repeat(n, 1)
    gap_after = np.take_along_axis(after, cf[..., None], -1)[..., 0] - np.take_along_axis(after, own[..., None], -1)[..., 0]
    gap_before = before[rows, cf] - before[rows, own]
    shift = gap_after - gap_before
    mask = cf != own
    boot = ExampleBootstrap(n, n, square=True, n_boot=n_boot, seed=seed, base_groups=groups, unit=unit)
    value = float(shift[mask].mean()) if mask.any() else float("nan")
    with np.errstate(invalid="ignore", divide="ignore"):
        replicates = boot.totals(np.where(mask, shift, 0.0)) / boot.totals(mask.astype(np.float64))
    return boot.interval(value, replicates)


def label_columns(read, n_labels: int) -> np.ndarray:
    """int ``[n_labels]``: the model's logit column that reads as each task label (``read``: per model label, the task
    label id it reads as); the first where several fold into one, 0 where none does."""
    read = np.asarray(read)
    return np.asarray([int(np.flatnonzero(read == j)[0]) if (read == j).any() else 0 for j in range(n_labels)])


def gap(logits: np.ndarray, toward: np.ndarray, away: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """Per example, ``z[toward] − z[away]`` of float ``[n, model labels]`` logits, the labels as task label ids (int
    ``[n]`` each) read through ``columns`` (int ``[task labels]``, the model column of each task label)."""
    logits = np.asarray(logits, dtype=np.float64)
    rows = np.arange(len(logits))
    return logits[rows, columns[np.asarray(toward, dtype=np.int64)]] - logits[rows, columns[np.asarray(away, dtype=np.int64)]]


def margin(logits: np.ndarray, label: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """Per example, the logit of the task label ``label`` (int ``[n]``) minus the largest logit among the task's other
    labels: positive where the model answers ``label``, in logit units."""
    logits = np.asarray(logits, dtype=np.float64)[:, columns]  # [n, task labels]
    rows = np.arange(len(logits))
    own = logits[rows, np.asarray(label, dtype=np.int64)]
    others = logits.copy()
    others[rows, np.asarray(label, dtype=np.int64)] = -np.inf
    return own - others.max(-1)


def mean_change(boot: ExampleBootstrap, change: np.ndarray, mask: np.ndarray) -> Estimate:
    """The mean of ``change`` (float ``[n]``) over the examples of ``mask`` with its interval from ``boot``, a one-axis
    bootstrap of those ``n`` examples (its single source column); NaN where ``mask`` is empty."""
    change, mask = np.asarray(change, dtype=np.float64), np.asarray(mask, dtype=bool)
    value = float(change[mask].mean()) if mask.any() else float("nan")
    with np.errstate(invalid="ignore", divide="ignore"):
        replicates = boot.totals(np.where(mask, change, 0.0)[:, None]) / boot.totals(mask.astype(np.float64)[:, None])
    return boot.interval(value, replicates)

