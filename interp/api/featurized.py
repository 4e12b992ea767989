"""DBM over a basis fitted on the training examples: the kinds ``dbm`` (the neurons), ``dbm-pca`` and ``dbm-sae``.

Usage::

    found = lab.train_das(examples, "blocks.3.hook_resid_post@w_h", "lexrel", kind="dbm-pca", lr=1e-2)
    found = lab.train_das(examples, "blocks.3.hook_resid_post@w_h", "lexrel", kind="dbm", featurizer=load_sae("my_sae"))

MIB's causal variable track (Mueller et al. 2025, §4.2) compares featurizers by training a differential binary mask
(DBM, :class:`~interp.engine.featurizers.FeatureMask`) over a fixed basis: the neurons, the principal components of the
site's activations, a sparse autoencoder's latents. Here each basis is fitted on the vectors of the training pairs'
examples alone (the held-out pairs' examples never shape it): PCA on standardized activations, every component kept
(:func:`~interp.analysis.featurizers.fit_pca`); an SAE of :data:`SAE_EXPANSION` times the width, TopK with
:data:`SAE_K`, trained for :data:`SAE_EPOCHS` epochs, seeded by the run's seed (:func:`~interp.analysis.featurizers.train_sae`).
MIB trains its SAEs on far more text than a task's examples: an SAE here describes the task's own activations.
The mask then trains through the one DAS trainer; MIB's baselines train it at learning rate 1.0 (IOI), causalab's at
1e-2, DAS's default here is 1e-3: pass ``lr=``.
"""

from __future__ import annotations

import torch
from jaxtyping import Float, Int
from torch import Tensor

from interp.analysis.featurizers import fit_pca, train_sae
from interp.core.errors import ConfigError, named
from interp.engine.featurizers import FeatureMask, Featurizer
from interp.engine.interventions import Intervention, kinds, make_intervention

#: The kinds of DBM whose basis is fitted on the training examples, and the basis each fits.
FEATURIZED = {"dbm-pca": "pca", "dbm-sae": "sae"}
#: The SAE a ``dbm-sae`` run trains: latents per dimension of the site, latents kept (TopK), epochs.
SAE_EXPANSION, SAE_K, SAE_EPOCHS = 4, 16, 50


def trainable_kinds() -> tuple[str, ...]:
    """Every kind DAS trains: the registered trainable interventions, then the fitted DBM kinds."""
    return kinds(trainable=True) + tuple(FEATURIZED)


def make_trained(kind: str, width: int, k: int | None, seed: int, training: Float[Tensor, "n width"] | None,
                 featurizer: Featurizer | None = None) -> Intervention:
    """A new intervention of ``kind`` to train at a location ``width`` wide: a fitted DBM kind's basis fitted on
    ``training`` (float ``[n, width]``, the training examples' vectors; ``None`` for another kind); ``featurizer``
    given, a DBM mask over it.

    Raises:
        ConfigError: naming ``kind=``, ``k=`` or ``featurizer=``: an unknown kind, ``k`` out of range, a featurizer
            with a kind other than ``dbm`` or of another width than the location.
    """
    if featurizer is not None:
        if kind != "dbm":
            raise ConfigError(f"{named('featurizer')} is masked by DBM: give it with kind='dbm', not {kind!r}")
        if not isinstance(featurizer, Featurizer):
            raise ConfigError(f"{named('featurizer')} must be a Featurizer (interp.engine.featurizers), got {type(featurizer).__name__}")
        if featurizer.width != width:
            raise ConfigError(f"{named('featurizer')} reads {featurizer.width}-wide vectors; the location is {width} wide")
        return FeatureMask(featurizer)
    if kind in FEATURIZED:
        vectors = training.detach().float().cpu()
        if FEATURIZED[kind] == "pca":
            return FeatureMask(fit_pca(vectors))
        return FeatureMask(train_sae(vectors, SAE_EXPANSION * width, k=min(SAE_K, SAE_EXPANSION * width), epochs=SAE_EPOCHS, seed=seed))
    if kind not in kinds(trainable=True):
        raise ConfigError(f"{named('kind', repr(kind))} must be one of {', '.join(trainable_kinds())}")
    try:
        return make_intervention(kind, width, k, seed)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{named('kind', repr(kind))}, {named('k', repr(k))}: {exc}") from None


def training_indices(bases: Int[Tensor, "pairs"], sources: Int[Tensor, "pairs"]) -> Int[Tensor, "examples"]:
    """The examples the training pairs use, as bases or sources (int64, sorted): what a basis is fitted on."""
    return torch.unique(torch.cat([bases, sources]))
