"""Intervals for IIA and its nulls: a bootstrap that resamples examples, not pairs.

The pairs of an interchange grid are not independent: every pair in a row
shares its base, every pair in a column its source, so an example that the
model handles oddly moves a whole row and column at once (McCullagh 2000,
*Resampling and exchangeable arrays*). Resampling pairs ignores that and
gives intervals several times too narrow. Here each replicate resamples
*examples*:

* on a square grid (the same examples as bases and sources, what
  ``interp intervene`` writes) one draw of the examples serves both axes
  (Owen & Eckles 2012, *Bootstrapping data arrays of arbitrary order*, §3);
* on a non-square grid, or a list of sampled pairs (DAS's held-out pairs),
  bases and sources are drawn independently (Owen 2007, *The pigeonhole
  bootstrap*).

A replicate is computed with weight vectors, not copied index arrays: with
``w`` the multinomial counts of the drawn examples, a share over the pairs in
mask ``M`` with hits ``Y`` is ``wᵀ(Y∘M)w′ / wᵀMw′`` (``w′ = w`` on a square
grid), one matrix product per statistic for all replicates together, so
1,000 replicates of all 7.17M MoNLI pairs take seconds. The interval is the
percentile interval of the replicates. It collapses to a point where every
replicate agrees (an IIA of 1.000 or 0.000): then it says only that no
resample of these examples finds a miss, not that the population has none.

Groups. Examples that share more than a row or a column are not independent
either: MoNLI's examples share word pairs (the demo's 300 examples hold 199
distinct pairs, up to 5 sharing one), and examples that share a pair share
how the model treats it. Where a task declares groups (MoNLI: the word
pair; :attr:`interp.tasks.base.Task.groups`), each replicate draws *groups*
with replacement and weights every example by its group's count
(``base_groups``, ``source_groups``; Davison & Hinkley 1997, §3.8, the
cluster bootstrap, here on each axis of the grid). The interval is then
over the population of groups, new word pairs, and wider; over examples
(``unit="example"``) it is about new sentences for the same pairs. With few
groups the percentile interval is too narrow (0.91 coverage at 10 to 15
groups, 0.93 at 20 to 25, in simulation); under :data:`FEW_GROUPS` groups
the method line printed with every interval says so.

What it does not cover: the seed of a trained model or intervention (see
:mod:`interp.analysis.intervals` for intervals over seeds), the data
distribution beyond the examples (or groups) drawn, and, over examples,
dependence between examples beyond sharing a base or a source.

Example:

>>> import numpy as np
>>> hits = np.eye(4, dtype=bool) | np.array([[0, 1, 0, 0]] * 4, dtype=bool)
>>> boot = ExampleBootstrap(4, 4, square=True, n_boot=200, seed=0)
>>> est = boot.estimate(hits, np.ones((4, 4), dtype=bool))
>>> round(float(est), 3), est.low <= est <= est.high
(0.438, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from interp.core.errors import ConfigError, named
from interp.core.estimates import CONFIDENCE, Estimate, is_point

#: Replicates and seed every interval uses unless told otherwise.
N_BOOT = 1000
SEED = 0


def collapsed_note(bounds: Iterable[tuple[float, float]], over: str = "examples") -> list[str]:
    """The line a table prints under itself when it shows a point interval, else ``[]``.

    A point interval (:func:`~interp.core.estimates.is_point`, as :attr:`Estimate.collapsed
    <interp.core.estimates.Estimate.collapsed>`) is a finite ``(low, high)`` with ``low == high``: every replicate gave the same figure (an IIA of 1.000 on every resample, or seeds
    that all agree). ``over`` names what was resampled.

    >>> collapsed_note([(0.4, 0.6), (1.0, 1.0)])
    ['[x, x]: a point interval: the figure does not move across these examples (or their resamples); that says nothing of examples not drawn']
    >>> collapsed_note([(0.4, 0.6), (float("nan"), float("nan"))])
    []
    """
    return [f"[x, x]: {point_interval(over)}"] if any(is_point(low, high) for low, high in bounds) else []


def point_interval(over: str = "examples") -> str:
    """What a point interval over resamples of ``over`` says, and what it does not (:func:`collapsed_note`)."""
    return f"a point interval: the figure does not move across these {over} (or their resamples); that says nothing of {over} not drawn"


def percentile_interval(replicates: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The ``confidence`` percentile interval of ``replicates`` (NaN replicates, where a resample held no pair, dropped).

    Returns ``(nan, nan)`` when no replicate is finite.
    """
    finite = np.asarray(replicates, dtype=float)
    finite = finite[np.isfinite(finite)]
    if finite.size == 0:
        return float("nan"), float("nan")
    tail = (1 - confidence) / 2
    low, high = np.quantile(finite, [tail, 1 - tail])
    return float(low), float(high)


#: Below this many groups the grouped percentile interval under-covers: simulated square grids of groups of 1 to 5
#: examples (``benchmarks/group_coverage.py``, 400 grids a setting, Wilson intervals over grids) gave 0.907 [0.875,
#: 0.932] at 10 groups, 0.912 at 15, 0.927 at 20 and 25, 0.943 [0.915, 0.961] at 30, 0.960 at 40.
FEW_GROUPS = 30
FEW_GROUPS_NOTE = "; few groups: under 30 this 95% interval covers about 91-93% (simulated), read it as narrower than it is"


@dataclass(frozen=True, eq=False)
class ExampleBootstrap:
    """Seeded replicate weights over the bases and the sources of a grid of pairs (one draw for both on a square grid).

    Args:
        n_bases, n_sources: the grid's shape (rows are bases).
        square: the sources are the bases: one draw weights both axes (Owen & Eckles 2012); otherwise two
            independent draws (Owen 2007).
        n_boot: replicates; ``seed``: their random stream; ``confidence``: the intervals' level.
        base_groups, source_groups: each base's (source's) group, any hashable keys, one per example; given, a replicate
            draws groups, not examples (``source_groups`` is ``base_groups`` on a square grid). ``unit`` names a group
            in the method line (``"word pairs"``).

    Raises:
        ConfigError: naming ``n_boot``, ``confidence``, the grid's shape or groups of another length.
    """

    n_bases: int
    n_sources: int
    square: bool
    n_boot: int = N_BOOT
    seed: int = SEED
    confidence: float = CONFIDENCE
    base_groups: np.ndarray | None = None
    source_groups: np.ndarray | None = None
    unit: str = "groups"

    def __post_init__(self) -> None:
        if not isinstance(self.n_boot, (int, np.integer)) or self.n_boot < 2:
            raise ConfigError(f"{named('n_boot', self.n_boot)}: give at least 2 replicates")
        if not 0 < self.confidence < 1:
            raise ConfigError(f"{named('confidence', self.confidence)}: a probability between 0 and 1")
        if self.n_bases < 1 or self.n_sources < 1:
            raise ConfigError(f"the grid is {self.n_bases} × {self.n_sources}: give at least one base and one source")
        if self.square and self.n_bases != self.n_sources:
            raise ConfigError(f"a square grid has as many sources as bases, not {self.n_bases} × {self.n_sources}")
        if not self.square and (self.base_groups is None) != (self.source_groups is None):
            raise ConfigError("give `base_groups=` and `source_groups=` together, or neither")
        sizes = {"base_groups": (self.base_groups, self.n_bases), "source_groups": (self.source_groups, self.n_sources)}
        for name, (groups, n) in sizes.items():
            if groups is not None and len(groups) != n:
                raise ConfigError(f"{named(name)}: {len(groups)} groups for {n} examples; give one group per example")
        rng = np.random.default_rng(self.seed)
        bases = _draw(rng, self.n_bases, self.n_boot, self.base_groups)
        object.__setattr__(self, "base_weights", bases)
        sources = bases if self.square else _draw(rng, self.n_sources, self.n_boot, self.source_groups)
        object.__setattr__(self, "source_weights", sources)

    @property
    def grouped(self) -> bool:
        """Whether a replicate draws groups (else examples)."""
        return self.base_groups is not None

    @property
    def one_axis(self) -> bool:
        """Whether the grid has one column (``n_sources`` 1, not square): scores of the examples alone, as an ablation or
        a steering gives, resampled over the bases only (the single source's weight is always 1)."""
        return not self.square and self.n_sources == 1

    def _counts(self) -> tuple[int, int]:
        """How many examples or groups each axis draws from: (bases, sources)."""
        if not self.grouped:
            return self.n_bases, self.n_sources
        source = self.base_groups if self.square else self.source_groups
        return len(set(np.asarray(self.base_groups).tolist())), len(set(np.asarray(source).tolist()))

    @property
    def over(self) -> str:
        """What the intervals are over, with its count: ``"300 examples"``, ``"199 word pairs"`` (the bases' and the
        sources' counts where they differ)."""
        counts, unit = self._counts(), self.unit if self.grouped else "examples"
        if self.one_axis or self.square or counts[0] == counts[1]:
            return f"{counts[0]} {unit}"
        return f"{counts[0]} × {counts[1]} {unit} (bases × sources)"

    @property
    def few_groups(self) -> bool:
        """Whether the replicates draw fewer than :data:`FEW_GROUPS` groups on an axis that is resampled (the interval is
        then too narrow); a one-axis grid's single source is not resampled."""
        if not self.grouped:
            return False
        counts = self._counts()
        return (counts[0] if self.one_axis else min(counts)) < FEW_GROUPS

    @property
    def method(self) -> str:
        """One line saying how the intervals were found.

        >>> ExampleBootstrap(40, 1, square=False, base_groups=np.arange(40) // 2, source_groups=np.zeros(1), unit="word pairs").method
        '95% percentile bootstrap over 20 word pairs (the examples alone: one axis), 1000 replicates, seed 0; few groups: under 30 this 95% interval covers about 91-93% (simulated), read it as narrower than it is'
        """
        axes = "the examples alone: one axis" if self.one_axis else "one draw for bases and sources" if self.square else "bases and sources drawn independently"
        said = f"{self.confidence:.0%} percentile bootstrap over {self.over} ({axes}), {self.n_boot} replicates, seed {self.seed}"
        return said + (FEW_GROUPS_NOTE if self.few_groups else "")

    def totals(self, matrix: np.ndarray) -> np.ndarray:
        """float64 ``[n_boot]``: each replicate's weighted sum ``wᵀ matrix w′`` of a ``[n_bases, n_sources]`` grid."""
        grid = np.asarray(matrix, dtype=np.float32)
        if grid.shape != (self.n_bases, self.n_sources):
            raise ConfigError(f"a {grid.shape} matrix on a {self.n_bases} × {self.n_sources} bootstrap")
        rows = self.base_weights @ grid  # [n_boot, n_sources]; integer sums below 2**24 are exact in float32
        return np.einsum("bs,bs->b", rows.astype(np.float64), self.source_weights.astype(np.float64))

    def pair_totals(self, bases: np.ndarray, sources: np.ndarray, values: np.ndarray) -> np.ndarray:
        """float64 ``[n_boot]``: each replicate's weighted sum over a list of pairs (base index, source index, value)."""
        weights = self.base_weights[:, np.asarray(bases)].astype(np.float64) * self.source_weights[:, np.asarray(sources)]
        return weights @ np.asarray(values, dtype=np.float64)

    def share(self, hits: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Each replicate's share of ``hits`` among the pairs of ``mask`` (bool ``[n_bases, n_sources]``); NaN where none."""
        hits, mask = np.asarray(hits, dtype=bool), np.asarray(mask, dtype=bool)
        return _ratio(self.totals(hits & mask), self.totals(mask))

    def pair_share(self, bases: np.ndarray, sources: np.ndarray, hits: np.ndarray) -> np.ndarray:
        """Each replicate's share of ``hits`` (bool ``[pairs]``) over a list of pairs with the given base and source indices."""
        return _ratio(self.pair_totals(bases, sources, np.asarray(hits, dtype=bool)), self.pair_totals(bases, sources, np.ones(len(hits))))

    def estimate(self, hits: np.ndarray, mask: np.ndarray) -> Estimate:
        """The share of ``hits`` in ``mask`` on the grid, with its interval."""
        mask = np.asarray(mask, dtype=bool)
        value = float((np.asarray(hits, dtype=bool) & mask).sum() / max(mask.sum(), 1))
        return self.interval(value, self.share(hits, mask))

    def interval(self, value: float, replicates: np.ndarray) -> Estimate:
        """``value`` with the percentile interval of ``replicates``."""
        return Estimate(value, *percentile_interval(replicates, self.confidence), self.method)


def _draw(rng: np.random.Generator, n: int, n_boot: int, groups: np.ndarray | None = None) -> np.ndarray:
    """float32 ``[n_boot, n]``: how often each of ``n`` examples is drawn in each replicate (multinomial counts summing
    to n); with ``groups`` (one key per example), how often its group is (counts over the groups, summing to their number)."""
    if groups is None:
        return rng.multinomial(n, np.full(n, 1.0 / n), size=n_boot).astype(np.float32)
    _, member = np.unique(np.asarray(groups), return_inverse=True)
    k = int(member.max()) + 1 if n else 0
    return rng.multinomial(k, np.full(k, 1.0 / k), size=n_boot).astype(np.float32)[:, member.reshape(-1)]


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan)


__all__ = ["CONFIDENCE", "N_BOOT", "SEED", "Estimate", "ExampleBootstrap", "percentile_interval"]
