"""Control tasks: random labels that a probe can only learn by memorizing (Hewitt & Liang 2019).

Selectivity = task accuracy - control accuracy, on the same held-out
examples. A control matters only if it fixes what the probe could memorize:

* :class:`TypeControl` (the default): each *word type* gets a fixed random
  label, drawn with the target's label distribution (Hewitt & Liang 2019,
  §2.2). At w_p the type is w_p's word, at w_h w_h's, at [CLS] the
  (w_p, w_h) pair. A probe that reads the word identity scores high on it
  too, so selectivity falls where lexical identity alone gives the target
  away (as lexrel at w_h does).
* :class:`ShuffleControl`: the target labels permuted across examples (the
  control of Geiger, Richardson & Potts 2020, §6.1). No probe can exceed
  chance on held-out examples, so its selectivity is accuracy minus about one
  half.

Both are estimators: ``fit(units, y)`` learns the label distribution,
``transform(units)`` gives each unit (a word type, or an example id) its label.
"""

from __future__ import annotations

import hashlib

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from interp.core.errors import ConfigError


def _check_units(units, y) -> np.ndarray:
    """``y`` as an array, after checking it pairs one label with each unit."""
    y = np.asarray(y)
    if len(units) != len(y) or len(y) == 0:
        raise ConfigError(f"units and y must be non-empty and of equal length, got {len(units)} and {len(y)}")
    return y


def _unit_seed(unit: str, random_state: int) -> int:
    digest = hashlib.sha256(f"{random_state}\x00{unit}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


class TypeControl(BaseEstimator):
    """Hewitt & Liang's control: a fixed random label per type, from the target's distribution.

    The label of a type depends only on (type, ``random_state``), never on
    which other types are present or their order.
    """

    def __init__(self, random_state: int = 0):
        self.random_state = random_state

    def fit(self, types, y):
        """Learn the label distribution of ``y`` (``types`` ``[n]`` str, ``y`` ``[n]``); returns self."""
        y = _check_units(types, y)
        self.classes_, counts = np.unique(y, return_counts=True)
        self.class_prior_ = counts / counts.sum()
        return self

    def transform(self, types) -> np.ndarray:
        """The control label of each type ``[n]``."""
        check_is_fitted(self)
        cumulative = np.cumsum(self.class_prior_)
        draws = [(_unit_seed(str(t), self.random_state) >> 11) / float(1 << 53) for t in types]
        return self.classes_[np.minimum(np.searchsorted(cumulative, draws, side="right"), len(self.classes_) - 1)]

    def fit_transform(self, types, y) -> np.ndarray:
        return self.fit(types, y).transform(types)


class ShuffleControl(BaseEstimator):
    """The per-example shuffle: ``y`` permuted across the examples it was fitted on (seeded)."""

    def __init__(self, random_state: int = 0):
        self.random_state = random_state

    def fit(self, units, y):
        """Permute ``y`` over the example ids ``units``; returns self."""
        y = _check_units(units, y)
        permuted = np.random.RandomState(self.random_state).permutation(y)
        self.labels_ = dict(zip(map(str, units), permuted))
        self.classes_ = np.unique(y)
        return self

    def transform(self, units) -> np.ndarray:
        """The shuffled label of each fitted example id.

        Raises:
            KeyError: an id the control was not fitted on.
        """
        check_is_fitted(self)
        return np.array([self.labels_[str(u)] for u in units])

    def fit_transform(self, units, y) -> np.ndarray:
        return self.fit(units, y).transform(units)
