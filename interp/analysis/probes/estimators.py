"""Probes as scikit-learn estimators.

Usage::

    from interp.analysis.probes import Probe
    probe = Probe(hidden_units=4, random_state=0).fit(X_train, y_train)   # X: [n, d_model]
    probe.score(X_test, y_test)

``Probe(hidden_units=4)`` is the paper's "linear classifier with 4 hidden
units" (Geiger, Richardson & Potts 2020, §6.1), read as a one-hidden-layer
ReLU MLP; ``hidden_units=0`` is a linear probe (multinomial logistic
regression). Both are trained by :func:`interp.analysis.probes.batched.fit_probes`,
the same code that trains a whole sweep at once.
"""

from __future__ import annotations

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from interp.analysis.probes.batched import ProbeSettings, fit_probes, predict_probes
from interp.core.errors import ConfigError


class Probe(ClassifierMixin, BaseEstimator):
    """A small classifier trained on model-internal vectors.

    Args:
        hidden_units: 4 (default) for the paper's MLP probe; 0 for a linear probe.
        max_iter: full-batch Adam steps.
        lr: Adam learning rate.
        alpha: L2 penalty on the weights.
        random_state: seed of the initial weights.

    Attributes (after ``fit``): ``classes_``, ``n_features_in_``, ``n_iter_`` (Adam steps), ``params_``.
    """

    def __init__(self, hidden_units: int = 4, max_iter: int = 100, lr: float = 0.05, alpha: float = 1e-4, random_state=None):
        self.hidden_units = hidden_units
        self.max_iter = max_iter
        self.lr = lr
        self.alpha = alpha
        self.random_state = random_state

    def _settings(self) -> ProbeSettings:
        if not isinstance(self.hidden_units, (int, np.integer)) or self.hidden_units < 0:
            raise ConfigError(f"hidden_units must be a non-negative int, got {self.hidden_units!r}")
        if self.max_iter < 1 or self.lr <= 0 or self.alpha < 0:
            raise ConfigError("max_iter must be >= 1, lr > 0 and alpha >= 0")
        return ProbeSettings(int(self.hidden_units), int(self.max_iter), float(self.lr), float(self.alpha))

    def fit(self, X, y):
        """Fit on ``X`` ``[n, d]`` (float) and labels ``y`` ``[n]``; returns self.

        Raises:
            ValueError: bad shapes, non-finite values, non-classification
                targets, or invalid hyperparameters.
        """
        settings = self._settings()
        X, y = validate_data(self, X, y, dtype=np.float32)
        check_classification_targets(y)
        self.classes_, encoded = np.unique(y, return_inverse=True)
        self.n_iter_ = settings.max_iter
        seed = 0 if self.random_state is None else int(np.random.RandomState(self.random_state).randint(2**31 - 1))
        if len(self.classes_) == 1:
            self.params_ = None
            return self
        self.params_ = fit_probes(
            torch.from_numpy(X),
            torch.from_numpy(encoded.astype(np.int64))[None],
            torch.ones(1, len(y), dtype=torch.bool),
            len(self.classes_),
            settings,
            [seed],
        )
        return self

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities ``[n, n_classes]``, columns in ``classes_`` order."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float32, reset=False)
        if self.params_ is None:
            return np.ones((len(X), 1))
        return predict_probes(torch.from_numpy(X), self.params_)[0].numpy().astype(np.float64)

    def predict(self, X) -> np.ndarray:
        """Predicted labels ``[n]``."""
        proba = self.predict_proba(X)  # checks fitting before classes_ is read
        return self.classes_[np.argmax(proba, axis=1)]
