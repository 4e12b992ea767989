"""Whether a trained intervention found something: DAS judged against every null a vanilla IIA is judged against.

A held-out IIA is a finding only where three differences, each with its 95%
interval from the same bootstrap replicates over the held-out examples
(:func:`interp.analysis.das.score_intervention`), lie above zero:

* ``gain``: the IIA minus the same intervention's untrained IIA (same kind,
  ``k`` and initial parameters, on the same pairs): training moved it;
* ``gap``: the IIA minus the larger of its two nulls, ``stays_base`` (the
  intervened label is the model's own on the base) and ``copies_source``
  (it is the model's own on the source): the rule every vanilla IIA follows
  (:func:`interp.analysis.iia.summarize_matrices`);
* ``over_chance``: the IIA minus chance (the most common counterfactual's
  share of the pairs).

A figure without one of the three (an older ``das.csv``, a result scored
before the nulls were) is **not judged**, never learned: the verdict names
each difference it lacks.

A DAS can clear its untrained baseline and still sit below a null: a random
rotation of a model that mostly keeps its own label scores low, training
lifts it towards the label the base already had, and the pairs where base
and counterfactual agree carry the IIA. The verdict names every null it
does not clear.

What it does not cover: the seed of the intervention (with several seeds,
:func:`interp.analysis.das_figure.summarize_seeds` judges the mean over
seeds with Student's t intervals) and pairs beyond the held-out examples.

>>> verdict({"gain_low": 0.06, "gap": -0.145, "gap_low": -0.3, "over_chance_low": -0.08,
...          "stays_base": 0.795, "copies_source": 0.41, "chance": 0.585})
'not learned: below the stays-the-base null (0.795), not above chance (0.585)'
>>> verdict({"gain_low": 0.06, "gap": 0.1, "gap_low": 0.02, "over_chance_low": 0.1, "stays_base": 0.5, "copies_source": 0.4,
...          "chance": 0.5})
'learned'
>>> verdict({"gain_low": 0.06, "stays_base": 0.5, "copies_source": 0.4, "chance": 0.5})
'not judged: no interval for its gap over the larger null, its difference from chance'
"""

from __future__ import annotations

from typing import Mapping

#: The differences a held-out IIA must clear, as ``{name}``, ``{name}_low``, ``{name}_high`` in a score or row.
DIFFERENCES = ("gain", "gap", "over_chance")
_NULLS = {"stays_base": "stays-the-base", "copies_source": "copies-the-source"}


def larger_null(figures: Mapping[str, float]) -> str:
    """``"stays_base"`` or ``"copies_source"``: the null with the larger share in ``figures``."""
    return "stays_base" if figures["stays_base"] >= figures["copies_source"] else "copies_source"


def shortfalls(figures: Mapping[str, float]) -> list[str]:
    """What a held-out IIA does not clear, in words (``[]`` where it clears all three).

    ``figures`` holds ``gain_low``, ``gap_low``, ``over_chance_low`` (the low bounds of the three differences), and
    ``stays_base``, ``copies_source``, ``chance`` (shares, 0..1) to name them. A difference whose low bound is missing
    (an older file or row) is not a shortfall here but :func:`unjudged`.
    """
    found = []
    if "gain_low" in figures and not figures["gain_low"] > 0:
        found.append("no gain over the untrained intervention")
    if "gap_low" in figures and not figures["gap_low"] > 0:
        null = larger_null(figures)
        where = "below" if figures.get("gap", 0) < 0 else "not above"
        found.append(f"{where} the {_NULLS[null]} null ({figures[null]:.3f})")
    if "over_chance_low" in figures and not figures["over_chance_low"] > 0:
        found.append(f"not above chance ({figures['chance']:.3f})")
    return found


#: What each difference is, in a verdict's words.
_NAMES = {"gain": "its gain over the untrained intervention", "gap": "its gap over the larger null", "over_chance": "its difference from chance"}


def unjudged(figures: Mapping[str, float]) -> list[str]:
    """The differences ``figures`` gives no low bound for (an older file or row), in words: what keeps it from being judged."""
    return [_NAMES[name] for name in DIFFERENCES if f"{name}_low" not in figures]


def row_figures(row: Mapping, prefix: str = "das_") -> dict:
    """The figures :func:`verdict` reads from a flat row (``das.csv``: ``das_gain_low``, ``das_stays_base``, ``chance``, ...)."""
    keys = [f"{name}{end}" for name in DIFFERENCES for end in ("", "_low")] + ["stays_base", "copies_source"]
    return {**{key: float(row[prefix + key]) for key in keys if row.get(prefix + key) not in (None, "")}, "chance": float(row["chance"])}


def verdict(figures: Mapping[str, float]) -> str:
    """``"learned"`` where all three differences are given and above zero; ``"not learned: "`` and every
    :func:`shortfalls` item where one given is not; else ``"not judged: no interval for "`` each :func:`unjudged` one."""
    missing = shortfalls(figures)
    if missing:
        return "not learned: " + ", ".join(missing)
    absent = unjudged(figures)
    return "learned" if not absent else "not judged: no interval for " + ", ".join(absent)


def is_learned(figures: Mapping[str, float]) -> bool:
    """Whether :func:`verdict` reads ``"learned"``: every difference given, each above zero."""
    return verdict(figures) == "learned"


__all__ = ["DIFFERENCES", "is_learned", "larger_null", "row_figures", "shortfalls", "unjudged", "verdict"]
