"""The probe sweep's terminal summary: per target and role, the most selective layer, each figure with its interval and null.

Reads the rows of :func:`interp.jobs.probe_sweep.run_probe_sweep` (one per
location × target × probe kind). For each target, role and site it picks the
layer whose ``probe`` is most selective against the type control (Hewitt &
Liang 2019, *Designing and interpreting probes with control tasks*; Geiger,
Richardson & Potts 2020, §6.1) and prints its held-out accuracy beside chance
(the most common value's share: the null accuracy must beat) and both
selectivities (null 0), each with the row's 95% interval over examples.
"""

from __future__ import annotations

from typing import Sequence

from interp.core.estimates import Estimate


def row_interval(row: dict, name: str) -> tuple[float, float] | None:
    """The 95% interval over examples of a sweep row's figure ``name`` (``_low``, ``_high``), or ``None`` for a row written
    before intervals were kept (the keys absent, or empty in a CSV)."""
    low, high = row.get(f"{name}_low"), row.get(f"{name}_high")
    return None if low in (None, "") or high in (None, "") else (float(low), float(high))


def _with_interval(row: dict, name: str) -> str:
    """The row's figure ``name`` as an :class:`~interp.core.estimates.Estimate` prints it, or its mean alone without bounds."""
    mean, bounds = row[f"{name}_mean"], row_interval(row, name)
    return f"{mean:.3f}" if bounds is None else repr(Estimate(mean, *bounds))


def format_probe_summary(rows: Sequence[dict], probe: str = "mlp") -> str:
    """The summary table of a probe sweep's ``rows`` for one probe kind.

    Args:
        rows: the sweep's rows (``probes.csv`` / ``probes.json``), with
            ``target``, ``role``, ``site``, ``probe``, ``hidden_index``,
            ``chance``, ``seeds``, ``n_examples`` and, for each figure,
            ``_mean``, ``_low`` and ``_high``.
        probe: the probe kind to summarize (``mlp`` or ``linear``).

    Returns:
        The table, one line per (target, site, role), with a header and a
        footer saying what the intervals are, what each figure must beat, and
        that the layer is chosen on the figures it shows. ``""`` when no row
        is of ``probe``. A row without intervals (a sweep written before they
        were kept) shows its means alone.
    """
    picked = [r for r in rows if r["probe"] == probe]
    if not picked:
        return ""
    sites = list(dict.fromkeys(r.get("site", "resid") for r in picked))
    show_site = sites != ["resid"]
    head = f"{'target':8}{'role':8}" + (f"{'site':>16}" if show_site else "") + f"{'layer':>6}"
    head += f"{'accuracy':>22}{'chance':>8}{'sel. type':>23}{'sel. shuffle':>23}"
    lines = [f"Probes (§6.1): {probe} probe, held-out; layer 0 = embeddings, r = BERT^r; at each target and role the layer most "
             "selective against the type control", "", head]  # fmt: skip
    for target in dict.fromkeys(r["target"] for r in picked):
        for site in sites:
            for role in dict.fromkeys(r["role"] for r in picked):
                cands = [r for r in picked if (r["target"], r.get("site", "resid"), r["role"]) == (target, site, role)]
                if not cands:
                    continue
                best = max(cands, key=lambda r: r["selectivity_type_mean"])
                line = f"{target:8}{role:8}" + (f"{site:>16}" if show_site else "") + f"{best['hidden_index']:>6}"
                line += f"{_with_interval(best, 'task_acc'):>22}{best['chance']:>8.3f}"
                line += f"{_with_interval(best, 'selectivity_type'):>23}{_with_interval(best, 'selectivity_shuffle'):>23}"
                lines.append(line)
    seeds, examples = picked[0].get("seeds"), picked[0].get("n_examples")
    lines += [
        f"[low, high]: 95% bootstrap over the {examples} examples of each one's held-out correctness, averaged over {seeds} probe "
        "seeds; accuracy must beat chance (the most common value's share), a selectivity 0 (accuracy minus the control task's)",
        "the layer is chosen as the most selective of several on these same figures: read its selectivity as an upper estimate",
    ]  # fmt: skip
    return "\n".join(lines)
