"""Screen every site in two passes: attribution patching estimates each location's IIA, the exact interchange confirms.

Usage::

    found = lab.screen(examples, examples, "all", variable="lexrel", confirm=5)   # every residual, component and head location
    found.to_frame()          # location, estimated IIA with its interval, rank, and the exact IIA where confirmed
    found.agreement           # Spearman of estimated against exact IIA, the screen's miss rate, each with its interval

The estimate (:mod:`interp.analysis.attribution`: Nanda 2023; Syed, Rager & Conmy 2023) replaces each interchange's
logits by their first-order expansion around the base, from one forward and one backward pass per base and label,
shared by every source and location; read against the causal model's counterfactuals as the exact interchange is
(:func:`interp.api.interchange.result_of_logits`), so its interval resamples what the exact one does (the task's
groups, else examples). That interval covers sampling only, not the linear approximation's error: ``confirm=K`` runs
the exact interchange at the K locations the screen ranks highest **and** at K drawn at random from the rest, and
:func:`~interp.analysis.attribution.agreement` measures how far the two agree on the user's own model.

AtP*'s two refinements (Kramár, Lieberum, Shah & Nanda 2024, §3), each switchable and on by default: ``qk_fix``
recomputes exactly, per pair, the attention probabilities of the block a residual site feeds (a saturated softmax
otherwise hides the site's effect); ``graddrop`` scores each estimate's robustness with one later layer's gradient
path dropped at a time and flags a site whose paths cancel (``cancels``), beside the estimate and not mixed into it
(:mod:`interp.analysis.attribution`). ``interp screen`` runs the confirmation into a resumable interventions file
(:mod:`interp.jobs.screen`); ``interp report`` draws a screen's folder as a site × layer heatmap
(:func:`interp.analysis.report.collect.screen_section`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch
from tqdm.auto import tqdm

from interp.analysis.attribution import agreement, graddrop_robustness, site_estimate
from interp.api.example_set import ExampleSet
from interp.api.interchange import interchange_set, result_of_logits
from interp.core.checks import check_bool, check_int
from interp.core.errors import ConfigError, InterpWarning, named
from interp.hooks.locations import Location


@dataclass(eq=False)
class ScreenResult:
    """An attribution-patching screen of many locations for one variable, and its confirmation.

    Attributes:
        variable: the causal variable interchanged.
        rows: one dict per location, best estimate first: ``rank``, ``location``, ``estimated_iia`` (on causal pairs,
            0..1) with ``_low`` and ``_high``, ``estimated_stays``, ``estimated_copies`` (the nulls under the estimated
            labels), ``confirmed`` (``"top"``, ``"drawn"`` or ``""``) and, where confirmed, ``exact_iia`` with its
            interval, ``exact_gap_low`` (IIA minus the larger null, low bound) and ``above_nulls``.
        agreement: with ``confirm``: ``spearman`` and ``miss_rate`` (:class:`~interp.core.estimates.Estimate`) and
            their counts (:func:`interp.analysis.attribution.agreement`); else ``{}``.
        interval: how the estimated and exact intervals were found (sampling only, not the approximation's error).
        examples: how many examples, as bases and as sources.
    """

    variable: str
    rows: list[dict]
    agreement: dict = field(default_factory=dict)
    interval: str = ""
    examples: int = 0

    def to_frame(self):
        """The rows as a ``pandas.DataFrame``."""
        import pandas as pd

        return pd.DataFrame(self.rows)

    def save(self, path: str | Path, overwrite: bool = False) -> Path:
        """Write the rows as CSV at ``path`` (nothing half-written; an existing file only with ``overwrite``)."""
        from interp.core.errors import renamed
        from interp.core.outputs import refuse_existing, write_csv_atomic

        with renamed(out="path"):
            refuse_existing(Path(path), overwrite)
        return write_csv_atomic(self.rows, Path(path))

    def __repr__(self) -> str:
        said = ""
        if self.agreement:
            said = f"; Spearman with the exact IIA {self.agreement['spearman']!r}, miss rate {self.agreement['miss_rate']!r}"
        flagged = sum(bool(r.get("cancels")) for r in self.rows)
        said += f"; {flagged} flagged as cancelling (GradDrop)" if flagged else ""
        return f"ScreenResult({self.variable} at {len(self.rows)} locations over {self.examples} examples{said})"


def screen_locations(parse: Callable[[str], list[Location]], roles: Sequence[str], text: str) -> list[Location]:
    """The locations a screen covers: ``all`` is every residual location (:func:`~interp.hooks.locations.all_locations`)
    and every component and head location at each of ``roles``; else what ``parse`` makes of ``text`` (the location
    grammar: ``heads``, ``components``, a comma-separated list)."""
    if not isinstance(text, str):
        raise ConfigError(f"{named('locations', repr(text))} must be a string: 'all', 'heads', 'components' or a comma-separated list")
    if text.strip() != "all":
        return parse(text)
    found = parse("all") + [loc for role in roles for loc in parse(f"components@{role}") + parse(f"heads@{role}")]
    return list(dict.fromkeys(found))


def screen(every: ExampleSet, bases: Sequence, sources: Sequence, locations: Sequence[Location], variable: str, *, confirm: int = 0,
           seed: int = 0, qk_fix: bool | None = None, graddrop: bool | None = None, progress: bool = False,
           on_rows: Callable[[int], None] | None = None, on_location: Callable[[], None] | None = None) -> ScreenResult:  # fmt: skip
    """Estimate the IIA of ``variable`` at every location for every base with every source (both among ``every``'s
    examples: the estimate is made over all of them and read at the bases' rows and the sources' columns), rank, and
    with ``confirm`` K > 0 run the exact interchange at the top K and at K drawn (``seed``) from the rest.

    ``qk_fix`` and ``graddrop`` (``None``: on where the runner has them, the hf backend; off on transformer-lens).
    ``progress``: a bar over the gradient pass's examples and one over the locations' estimates (stderr); ``on_rows(k)``:
    told after each batch of ``k`` examples of the gradient pass, ``on_location()`` after each location's estimate.

    Raises:
        ConfigError: naming ``confirm=`` below 0 or above the number of locations; a location an example lacks (as
            the interchange); naming ``qk_fix=`` or ``graddrop=`` on a runner without them, or ``qk_fix`` on a family
            whose attention returns no probabilities.
    """
    check_int(confirm, "confirm", least=0)
    check_int(seed, "seed", least=0)
    check_bool(qk_fix, "qk_fix", optional=True)
    check_bool(graddrop, "graddrop", optional=True)
    if confirm > len(locations):
        raise ConfigError(f"{named('confirm', confirm)} asks for more locations than the {len(locations)} screened")
    base_rows, source_rows = torch.tensor(every.rows(bases)), torch.tensor(every.rows(sources))
    runner = every.binding.runner
    qk_fix = runner.atp_star if qk_fix is None else qk_fix
    graddrop = runner.atp_star if graddrop is None else graddrop
    with tqdm(total=len(every.encoded), desc="screen: gradients", unit="example", disable=not progress, leave=False) as bar:
        found = runner.gradients(every.encoded, list(locations), qk_fix=qk_fix, graddrop=graddrop,
                                 on_rows=lambda k: (bar.update(k), on_rows and on_rows(k)))  # fmt: skip
    with tqdm(total=len(locations), desc="screen: estimates", unit="location", disable=not progress, leave=False) as bar:
        own = every.logits()
        rows, interval = [], ""
        with warnings.catch_warnings():  # a split at chance is warned of once, not once per location
            for i, loc in enumerate(locations):
                if i == 1:
                    warnings.simplefilter("ignore", InterpWarning)
                site = found[loc]
                estimate = site_estimate(own, site, qk_fix)[base_rows][:, source_rows]
                s = result_of_logits(every, bases, sources, loc, (variable,), estimate, None).summary(variable)
                interval = s["interval"]
                robust = graddrop_robustness(own, site)
                rows.append({"location": str(loc), "estimated_iia": s["iia_causal"], "estimated_iia_low": s["iia_causal_low"],
                             "estimated_iia_high": s["iia_causal_high"], "estimated_stays": s["stays_base_causal"],
                             "estimated_copies": s["copies_source_causal"], "qk_fixed": qk_fix and site.qk_term is not None,
                             "robustness": robust["robustness"], "cancels": robust["cancels"], "confirmed": ""})  # fmt: skip
                bar.update()
                if on_location is not None:
                    on_location()
    rows.sort(key=lambda r: -r["estimated_iia"])
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    result = ScreenResult(variable, rows, interval=interval, examples=len(every.examples))
    if confirm:
        top, drawn = confirmed_locations(rows, confirm, seed)
        by_name = {str(loc): loc for loc in locations}
        with warnings.catch_warnings():  # a split at chance was warned of by the screen already
            warnings.simplefilter("ignore", InterpWarning)
            exact = interchange_set(every, bases, sources, [by_name[name] for name in [*top, *drawn]], variables=(variable,))
        confirm_rows(result, {name: r.summary(variable) for name, r in exact.results.items()}, top, drawn)
    return result


def confirmed_locations(rows: list[dict], k: int, seed: int) -> tuple[list[str], list[str]]:
    """The locations to confirm, from rows ranked best first: the top ``k``, and ``k`` drawn (``seed``) from the rest."""
    top = [r["location"] for r in rows[:k]]
    rest = [r["location"] for r in rows[k:]]
    drawn = [rest[i] for i in sorted(np.random.default_rng(seed).choice(len(rest), size=min(k, len(rest)), replace=False))]
    return top, drawn


def confirm_rows(result: ScreenResult, exact: dict[str, dict], top: Sequence[str], drawn: Sequence[str]) -> None:
    """Write the exact interchange's summaries (location -> :meth:`~interp.api.results.InterchangeResult.summary` of
    the variable, or a file's :func:`~interp.analysis.iia.summarize_all` row) into ``result``'s rows, and the agreement."""
    for row in result.rows:
        if row["location"] in exact:
            s = exact[row["location"]]
            row.update(confirmed="top" if row["location"] in top else "drawn", exact_iia=s["iia_causal"], exact_iia_low=s["iia_causal_low"],
                       exact_iia_high=s["iia_causal_high"], exact_gap_low=s["gap_causal_low"], above_nulls=bool(s["gap_causal_low"] > 0))  # fmt: skip
    result.agreement = agreement(result.rows, top, drawn)


__all__ = ["ScreenResult", "confirm_rows", "confirmed_locations", "screen", "screen_locations"]
