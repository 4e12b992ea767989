"""Attribution patching: every interchange's logits estimated to first order from one forward and one backward pass.

For a base b and a source s, the interchange at location ℓ writes the source's activation ``a_ℓ(s)`` where the
base's ``a_ℓ(b)`` was. To first order (Nanda 2023, *Attribution patching*; Syed, Rager & Conmy 2023, §3) the
intervened logits are

    logits(b) + J_ℓ(b) · (a_ℓ(s) − a_ℓ(b))

with ``J_ℓ(b)`` the gradient of each label's logit with respect to the activation at the location's tokens, from one
backward pass per base and label (:meth:`interp.backends.base.Runner.gradients`), shared by every source and every
location. Read against the causal model, the estimated labels give an estimated IIA per location: a screen of every
site at the cost of one pass, to be confirmed by the exact interchange where it matters.

What the estimate does not cover: the linear approximation's own error. AtP*'s two refinements (Kramár, Lieberum, Shah
& Nanda 2024, *AtP\\**) meet its two known failures: a site whose effect runs through a saturated attention softmax
(:func:`site_estimate` with the QK fix recomputes that attention exactly) and a site whose paths cancel across layers
(:func:`graddrop_robustness` flags it). What remains is measured by the agreement with the exact interchange
(:func:`agreement`) on the user's own model.

>>> import torch
>>> own = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
>>> acts = torch.tensor([[1.0], [3.0]])
>>> grads = torch.tensor([[[1.0], [-1.0]], [[0.5], [0.0]]])   # [n, labels, width]
>>> estimated_logits(own, acts, grads)[0, 1].tolist()           # base 0, source 1: own + J·(3 − 1)
[3.0, -2.0]
"""

from __future__ import annotations

from math import comb

from typing import Sequence

import numpy as np
import torch
from jaxtyping import Float
from torch import Tensor

from interp.core.errors import ConfigError
from interp.core.estimates import Estimate, wilson


def estimated_logits(own: Float[Tensor, "n labels"], activations: Float[Tensor, "n width"],
                     gradients: Float[Tensor, "n labels width"]) -> Float[Tensor, "n n labels"]:  # fmt: skip
    """``own[b] + gradients[b] · (activations[s] − activations[b])`` for every base b (rows) and source s (columns),
    float32 ``[n, n, labels]``, in the logits' units."""
    if own.shape[0] != activations.shape[0] or gradients.shape[:2] != own.shape or gradients.shape[2] != activations.shape[1]:
        raise ConfigError(f"logits {tuple(own.shape)}, activations {tuple(activations.shape)} and gradients {tuple(gradients.shape)} "
                          "do not fit together ([n, labels], [n, width], [n, labels, width])")  # fmt: skip
    moved = torch.einsum("blw,sw->bsl", gradients, activations) - torch.einsum("blw,bw->bl", gradients, activations)[:, None, :]
    return own[:, None, :] + moved


def site_estimate(own: Float[Tensor, "n labels"], site, qk_fix: bool = True) -> Float[Tensor, "n n labels"]:
    """Every (base, source) interchange's estimated logits at one site (a
    :class:`~interp.engine.gradients.SiteGradients`), float32 ``[n, n, labels]``: :func:`estimated_logits`; with
    ``qk_fix`` where the site carries the QK fix's parts, the attention the site feeds exact and the rest linear
    (Kramár et al. 2024, §3.1; :mod:`interp.engine.atp_star`)."""
    if qk_fix and site.qk_term is not None:
        return estimated_logits(own, site.activations, site.gradients - site.qk_gradients) + site.qk_term
    return estimated_logits(own, site.activations, site.gradients)


#: Below this robustness a site's estimate is flagged as cancelling (:func:`graddrop_robustness`).
CANCELS_BELOW = 0.5


def graddrop_robustness(own: Float[Tensor, "n labels"], site) -> dict:
    """GradDrop (Kramár et al. 2024, §3.2) as a robustness score of one site's estimate.

    ``effect``: the estimate's mean L1 change, over every pair of different examples, of each label's logit minus the
    first label's (what decides the label; logit units); ``graddrop``: the same, averaged over the later layers, each
    estimate computed with that layer's gradient path dropped (``site.dropped``, gradients of those differences: AtP*'s
    GradDrop score); ``robustness``: ``effect / max(effect, graddrop)``, in 0..1. Paths that agree give 1 or near it; paths that cancel at first order give a small effect
    against a large one with a layer dropped, so a site under :data:`CANCELS_BELOW` is flagged ``cancels``: its
    estimate, and its rank, may be far too low. 1 where neither moves beyond rounding (a millionth of the logits'
    scale); NaN (and not flagged) where no layer follows the site.
    """
    n = own.shape[0]
    others = ~torch.eye(n, dtype=torch.bool)
    margins = own - own[:, :1]

    def effect(gradients: Tensor) -> float:
        moved = (estimated_logits(margins, site.activations, gradients) - margins[:, None, :]).abs().sum(-1)
        return float(moved[others].mean()) if n > 1 else 0.0

    full = effect(site.gradients - site.gradients[:, :1])
    if not site.dropped:
        return {"effect": full, "graddrop": float("nan"), "robustness": float("nan"), "cancels": False}
    dropped = float(np.mean([effect(g) for g in site.dropped.values()]))
    still = 1e-6 * (float(margins.abs().mean()) + 1.0)  # below this nothing moves but rounding: not a cancellation
    robustness = full / max(full, dropped) if max(full, dropped) > still else 1.0
    return {"effect": full, "graddrop": dropped, "robustness": robustness, "cancels": bool(robustness < CANCELS_BELOW)}


#: Fewer distinct resamples than this and a percentile interval is only the resamples' extremes: none is given.
DISTINCT_RESAMPLES = 20
#: Under this many groups a percentile interval over groups covers less than its level (:mod:`interp.analysis.bootstrap`).
FEW = 30


def spearman_interval(estimated: Sequence[float], exact: Sequence[float], *, n_boot: int = 1000, seed: int = 0,
                      groups: Sequence[str] | None = None) -> Estimate:  # fmt: skip
    """Spearman's rank correlation (scipy) of the estimated and the exact IIA over the confirmed locations, with its 95%
    percentile bootstrap interval over those locations, or, with ``groups`` (each location's group: its role and site
    kind, :func:`location_group`), over whole groups, since locations of one group behave alike and are not independent
    draws (a resample whose ranks are all tied is dropped); NaN where fewer than 3 locations or no spread. Over groups,
    no interval where the groups allow fewer than :data:`DISTINCT_RESAMPLES` distinct resamples (3 groups allow 10,
    whose extremes would be the interval), and the method says the interval reads narrow under 30 groups."""
    from scipy.stats import spearmanr

    from interp.analysis.bootstrap import percentile_interval

    x, y = np.asarray(estimated, dtype=float), np.asarray(exact, dtype=float)
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), "too few confirmed locations, or no spread, for a rank correlation")
    rng = np.random.default_rng(seed)
    if groups is None:
        draws = list(rng.integers(0, len(x), size=(n_boot, len(x))))
        unit = f"the {len(x)} locations"
    else:
        members = [np.flatnonzero(np.asarray(groups) == g) for g in dict.fromkeys(groups)]
        unit = f"the {len(members)} groups of locations (role and site kind), whole, over {len(x)} locations"
        if comb(2 * len(members) - 1, len(members)) < DISTINCT_RESAMPLES:
            return Estimate(float(spearmanr(x, y).statistic), float("nan"), float("nan"),
                            f"no interval: {len(members)} groups allow {comb(2 * len(members) - 1, len(members))} distinct resamples")  # fmt: skip
        draws = [np.concatenate([members[k] for k in rng.integers(0, len(members), size=len(members))]) for _ in range(n_boot)]
        if len(members) < FEW:
            unit += f" (under {FEW} groups the interval reads narrower than it is)"
    with np.errstate(invalid="ignore", divide="ignore"):
        replicates = [spearmanr(x[d], y[d]).statistic if len(d) > 2 and np.ptp(x[d]) and np.ptp(y[d]) else np.nan for d in draws]
    low, high = percentile_interval(np.asarray(replicates, dtype=float))
    return Estimate(float(spearmanr(x, y).statistic), low, high, f"95% percentile bootstrap over {unit}, {n_boot} replicates, seed {seed}")


def location_group(location: str) -> str:
    """A location's group for the agreement's resampling: its roles and its site kind (``resid``, ``attn_out``,
    ``mlp_out``, ``resid_mid``, ``head``), e.g. ``w_h/head``; the layer is left out, so a group runs over the layers."""
    from interp.hooks.locations import Location

    loc = Location.parse(location)
    kind = "head" if loc.head >= 0 else (loc.component.removeprefix("hook_") or "resid")
    return f"{'+'.join(loc.roles)}/{kind}"


def agreement(rows: list[dict], top: Sequence[str], drawn: Sequence[str]) -> dict:
    """How far the screen agrees with the exact interchange, from the rows of the confirmed locations (``location``,
    ``estimated_iia``, ``exact_iia``): ``spearman`` over the top and the drawn ones together (:func:`spearman_interval`;
    its interval resamples whole groups of locations, role and site kind, where they fall in at least 3),
    and the ``miss_rate``: the share of the locations drawn at random from those the screen did not rank in its top
    whose exact IIA beats the lowest exact IIA among the top (its Wilson interval over the drawn locations: an estimate
    of the share of unconfirmed locations the screen misses).

    Raises:
        ConfigError: a confirmed location with no exact IIA.
    """
    exact = {r["location"]: r.get("exact_iia") for r in rows}
    missing = [loc for loc in [*top, *drawn] if exact.get(loc) is None]
    if missing:
        raise ConfigError(f"confirmed location {missing[0]} has no exact IIA")
    confirmed = [r for r in rows if r["location"] in {*top, *drawn}]
    groups = [location_group(r["location"]) for r in confirmed] if _parses([r["location"] for r in confirmed]) else None
    spearman = spearman_interval([r["estimated_iia"] for r in confirmed], [r["exact_iia"] for r in confirmed],
                                 groups=groups if groups is not None and len(set(groups)) >= 3 else None)
    bar = min(exact[loc] for loc in top) if top else float("nan")
    missed = sum(exact[loc] > bar for loc in drawn)
    miss = wilson(missed, len(drawn)) if drawn else Estimate(float("nan"), float("nan"), float("nan"), "no location drawn")
    return {"spearman": spearman, "miss_rate": miss, "missed": missed, "drawn": len(drawn), "top": len(top), "bar": bar}


def agreement_verdict(found: dict) -> str:
    """:func:`agreement`'s result in one sentence: whether the screen's order is shown to agree with the exact
    interchange's over the confirmed locations (Spearman's 95% interval above 0) and how many of the locations drawn at
    random beat the lowest exact IIA of its top.

    >>> from interp.core.estimates import Estimate
    >>> agreement_verdict({"spearman": Estimate(0.97, 0.75, 1.0), "missed": 0, "drawn": 5, "top": 5})
    "The screen's order agrees with the exact interchange's over the 10 confirmed locations (Spearman 0.970 [0.750, 1.000]: its 95% interval lies above 0); 0 of the 5 locations drawn at random beat the lowest exact IIA of its top 5."
    """
    spearman, drawn, top = found["spearman"], int(found["drawn"]), int(found["top"])
    confirmed = top + drawn
    if not np.isfinite(float(spearman)):
        said = f"The screen's order is not judged over the {confirmed} confirmed locations: too few, or no spread, for a rank correlation"
    elif spearman.low > 0:
        said = (f"The screen's order agrees with the exact interchange's over the {confirmed} confirmed locations "
                f"(Spearman {spearman!r}: its 95% interval lies above 0)")
    else:
        said = (f"The screen's order is not shown to agree with the exact interchange's over the {confirmed} confirmed locations "
                f"(Spearman {spearman!r}: its 95% interval reaches 0)")
    if drawn:
        said += f"; {found['missed']} of the {drawn} locations drawn at random beat the lowest exact IIA of its top {top}"
    return said + "."


def sweep_agreement(estimated: dict[str, float], exact: dict[str, float], *, top: int = 10, within: int = 20, seed: int = 0,
                    grouped: bool = True) -> dict:  # fmt: skip
    """How far a screen agrees with a full exact sweep of the same locations (location -> IIA, each).

    ``spearman``: over every location both give (:func:`spearman_interval`), its interval a bootstrap over whole groups
    of locations (their role and site kind, :func:`location_group`) where there are at least 3 groups and ``grouped``,
    else over locations; ``within_groups``: each group's own Spearman over its locations that are not 0 under both
    methods (ties a ranking cannot get wrong), with their count: 0.0 where the screen gives every one of them the same
    estimate (it ranks nothing there; ``within_flat`` names those groups), NaN where fewer than 3 are left or the
    exact IIA does not vary; and the ``within_mean`` of those defined, weighted by their locations, so that a
    correlation that is only the contrast between roles or kinds shows as a high ``spearman`` beside a low ``within_mean``; ``recall``: the share of the exact
    sweep's ``top`` locations among the screen's ``within`` best (ties at the cut broken by location name), with its
    Wilson interval over those ``top``; beside it what a random ranking gives: ``recall_chance`` (``within /
    locations``, its expected share) and ``recall_p``, the chance that a random ranking finds at least as many
    (hypergeometric), so a recall that any ranking reaches says so (10 of 10 within 20 of 21 locations: p = 11/21 = 0.52).

    Raises:
        ConfigError: fewer than ``top`` locations in common, or ``within`` below ``top``.
    """
    from scipy.stats import spearmanr

    shared = sorted(set(estimated) & set(exact))
    if len(shared) < top or within < top:
        raise ConfigError(f"a sweep agreement needs at least top={top} locations in common (got {len(shared)}) and within >= top (got {within})")
    groups = [location_group(k) for k in shared] if grouped and _parses(shared) else None
    if groups is not None and len(set(groups)) < 3:
        groups = None
    spearman = spearman_interval([estimated[k] for k in shared], [exact[k] for k in shared], seed=seed, groups=groups)
    within_groups: dict[str, tuple[float, int]] = {}
    flat = []
    for group in dict.fromkeys(groups or []):
        keys = [k for k, g in zip(shared, groups) if g == group and (estimated[k] != 0 or exact[k] != 0)]
        x, y = [estimated[k] for k in keys], [exact[k] for k in keys]
        if len(keys) < 3 or np.ptp(y) == 0:
            rho = float("nan")
        elif np.ptp(x) == 0:  # the screen ranks nothing here: no agreement, not a gap in the mean
            rho = 0.0
            flat.append(group)
        else:
            rho = float(spearmanr(x, y).statistic)
        within_groups[group] = (rho, len(keys))
    weighted = [(rho, n) for rho, n in within_groups.values() if np.isfinite(rho)]
    within_mean = float(sum(r * n for r, n in weighted) / sum(n for _, n in weighted)) if weighted else float("nan")
    best_exact = sorted(shared, key=lambda k: (-exact[k], k))[:top]
    best_screen = set(sorted(shared, key=lambda k: (-estimated[k], k))[:within])
    found = sum(k in best_screen for k in best_exact)
    from scipy.stats import hypergeom

    chance_p = float(hypergeom.sf(found - 1, len(shared), top, within))  # P(X >= found): X of the top drawn among `within` at random
    return {"spearman": spearman, "within_groups": within_groups, "within_mean": within_mean, "within_flat": flat, "recall": wilson(found, top), "found": found,
            "top": top, "within": within, "locations": len(shared), "recall_chance": within / len(shared), "recall_p": chance_p}  # fmt: skip


def _parses(locations: Sequence[str]) -> bool:
    """Whether every name is a location interp reads (a sweep of other keys is resampled by location)."""
    try:
        for loc in locations:
            location_group(loc)
    except (ValueError, KeyError):
        return False
    return True


__all__ = ["CANCELS_BELOW", "agreement", "agreement_verdict", "estimated_logits", "graddrop_robustness", "location_group", "site_estimate", "spearman_interval",
           "sweep_agreement"]
