"""Counterfactual (base, source) pairs from a causal model: seeded, balanced, split by example.

Usage::

    train, test = split_examples(len(inputs), test_share=0.2, seed=0)
    pairs = counterfactual_pairs(causal, inputs, "lexrel", train, n_pairs=2000, seed=0)
    pairs.base, pairs.source          # int64 [n], indices into inputs (both in ``train``)
    pairs.counterfactual              # object [n]: the output of INFER_{lexrel <- source}(base)
    pairs.changed.mean()              # 0.5: half the pairs change the base's output

Training and scoring an alignment by interchange intervention (Geiger et
al. 2022, IIT, §3; Geiger, Wu, Potts, Icard & Goodman 2024, DAS, §3) needs
pairs whose counterfactual is known. Drawn uniformly, most pairs of a
variable that rarely matters would leave the output as it is, and "the
intervention did nothing" would score well; so half the pairs are drawn
from those whose counterfactual differs from the base's own output and
half from those where it does not. Splitting the *examples* first means
no held-out example is seen in training, as base or as source.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from interp.causal.base import CausalModel, interchange_table, run_forward
from interp.core.errors import ConfigError, named, renamed, warn


@dataclass(frozen=True)
class Pairs:
    """Pairs of example indices with the causal model's counterfactual output for each.

    ``base``, ``source``: int64 ``[n]``; ``counterfactual``: object ``[n]``
    (output values); ``changed``: bool ``[n]``, whether the counterfactual
    differs from the base's own output.
    """

    base: np.ndarray
    source: np.ndarray
    counterfactual: np.ndarray
    changed: np.ndarray

    def __len__(self) -> int:
        return len(self.base)


#: Added to a seed for the held-out pairs, so they are not drawn with the training pairs' stream.
HELD_OUT_SEED_OFFSET = 7919


def split_examples(n: int, test_share: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A seeded split of ``range(n)`` into training and held-out indices (each sorted; the held-out part ``round(n × test_share)``, at least 2).

    Raises:
        ConfigError: ``test_share`` outside (0, 1), or fewer than 2 examples on a side.
    """
    if not 0 < test_share < 1:
        raise ConfigError(f"`test_share=` must lie in (0, 1), got {test_share}")
    n_test = max(2, int(round(n * test_share)))
    if n - n_test < 2:
        raise ConfigError(f"{n} examples cannot be split into training and held-out parts of at least 2 each")
    order = np.random.default_rng(seed).permutation(n)
    return np.sort(order[n_test:]), np.sort(order[:n_test])


def counterfactual_pairs(
    causal: CausalModel,
    inputs: Sequence[Mapping[str, Any]],
    variable: str,
    indices: Sequence[int],
    n_pairs: int,
    seed: int,
) -> Pairs:
    """``n_pairs`` (base, source) pairs among ``indices`` (base ≠ source), half of them changing the base's output.

    Drawn without replacement, seeded. When one kind has fewer than
    ``n_pairs / 2`` pairs, as many of the other are kept (the set stays
    balanced and is smaller), and an :class:`~interp.core.errors.InterpWarning`
    naming ``n_pairs=`` says how many pairs are used.

    Raises:
        ConfigError: ``variable`` is not the model's; ``n_pairs`` < 2; no pair
            of these examples changes the output (or none leaves it), so a
            balanced set cannot exist (say: a variable that is constant on them).
    """
    causal.check_variable(variable)
    if n_pairs < 2:
        raise ConfigError(f"{named('n_pairs')} must be at least 2, got {n_pairs}")
    indices = np.asarray(indices, dtype=np.int64)
    chosen = [inputs[i] for i in indices]
    table = interchange_table(causal, chosen, chosen, variable)
    own = np.array([run_forward(causal, x)[causal.output] for x in chosen], dtype=object)
    changed = table != own[:, None]
    off_diagonal = ~np.eye(len(indices), dtype=bool)
    kinds = [np.flatnonzero(changed & off_diagonal), np.flatnonzero(~changed & off_diagonal)]
    if not all(len(k) for k in kinds):
        which = "changes" if not len(kinds[0]) else "leaves"
        raise ConfigError(
            f"{named('variable', repr(variable))}: no pair of these {len(indices)} examples {which} the output under the interchange, "
            "so no balanced pair set exists (is the variable constant on them? mix splits, e.g. `max_per_split=`)"
        )
    half = min(n_pairs // 2, *(len(k) for k in kinds))
    if 2 * half < 2 * (n_pairs // 2):
        warn(f"{named('n_pairs', n_pairs)}: only {2 * half} balanced pairs exist among these {len(indices)} examples "
             f"({min(len(k) for k in kinds)} pairs {'change' if len(kinds[0]) <= len(kinds[1]) else 'leave'} the output); using {2 * half}")
    rng = np.random.default_rng(seed)
    cells = np.concatenate([rng.choice(k, size=half, replace=False) for k in kinds])
    cells = cells[rng.permutation(len(cells))]
    rows, cols = np.divmod(cells, len(indices))
    return Pairs(indices[rows], indices[cols], table[rows, cols], changed[rows, cols])


def das_pairs(causal: CausalModel, inputs: Sequence[Mapping[str, Any]], variable: str, test_share: float, seed: int,
              n_pairs: int | None, test_pairs: int) -> tuple[Pairs | None, Pairs]:  # fmt: skip
    """The training and held-out pairs of a learned intervention (distributed alignment search, Geiger, Wu, Potts,
    Icard & Goodman 2024, §3), drawn one way everywhere (``train_das``, ``interp das``, ``das --load``).

    The examples are split (:func:`split_examples`, ``test_share`` held out, ``seed``); ``n_pairs`` balanced pairs are
    drawn among the training part with ``seed`` (``None``: none, ``Pairs`` is ``None``), ``test_pairs`` among the
    held-out part with ``seed + HELD_OUT_SEED_OFFSET`` (:func:`counterfactual_pairs`); no held-out example is a
    base or a source of a training pair.

    Raises:
        ConfigError: as :func:`split_examples` and :func:`counterfactual_pairs`.
    """
    train_idx, test_idx = split_examples(len(inputs), test_share, seed)
    train = None if n_pairs is None else counterfactual_pairs(causal, inputs, variable, train_idx, n_pairs, seed)
    with renamed(n_pairs="test_pairs"):
        return train, counterfactual_pairs(causal, inputs, variable, test_idx, test_pairs, seed + HELD_OUT_SEED_OFFSET)
