"""Fitting a featurizer's fixed basis on a model's cached activations: PCA, and a sparse autoencoder.

Usage::

    X = lab.vectors(examples, "blocks.3.hook_resid_post@last").flatten(1)    # float [n, width]
    pca = fit_pca(X)                                  # LinearBasis over standardized activations (MIB's DBM+PCA)
    sae = train_sae(X, n_features=4 * X.shape[1], k=16, seed=0)               # a TopK SAE, its error carried
    reconstruction(sae, X)                            # {'fve': ..., 'l0': ..., 'mse': ...}

Both bases are then masked by DBM (:class:`~interp.engine.featurizers.FeatureMask`), as MIB's causal variable track
masks them (Mueller et al. 2025, §4.2): PCA is fitted on activations standardized per dimension (scikit-learn's
``StandardScaler`` then ``PCA``, every component kept, so the basis spans the whole space and its error is rounding);
the SAE is trained here, on the model's own activations at that site, as no SAE of these models can be downloaded.

The SAE trainer is short and plain (Bricken et al. 2023's recipe with Gao et al. 2024's TopK): the decoder's rows
initialised at unit norm and the encoder as its transpose, ``b_dec`` at the activations' mean, Adam on the mean
squared reconstruction error (plus ``l1`` times the latents' L1 norm for a ReLU SAE), the decoder's rows set back to
unit norm after each step. It is seeded and deterministic on one machine.

Raises:
    ConfigError (a ValueError): naming the parameter: activations that are not a finite ``[n, width]`` float array
        with at least 2 rows; ``n_components``, ``n_features``, ``k``, ``l1``, ``epochs``, ``lr`` or ``batch_size`` out
        of range.
"""

from __future__ import annotations

import numpy as np
import torch
from jaxtyping import Float
from torch import Tensor

from interp.core.checks import check_int, check_number
from interp.core.errors import ConfigError, named
from interp.engine.featurizers import Featurizer, LinearBasis, SparseAutoencoder


def _activations(vectors) -> Tensor:
    x = torch.as_tensor(np.asarray(vectors, dtype=np.float32) if not isinstance(vectors, Tensor) else vectors).detach().float().cpu()
    if x.ndim != 2 or x.shape[0] < 2:
        raise ConfigError(f"{named('vectors')} must be [n, width] activations with n >= 2, got shape {tuple(x.shape)}")
    if not torch.isfinite(x).all():
        raise ConfigError(f"{named('vectors')} hold a NaN or an infinity")
    return x


def fit_pca(vectors: Float[Tensor, "n width"], n_components: int | None = None) -> LinearBasis:
    """PCA on standardized activations (scikit-learn), as a :class:`~interp.engine.featurizers.LinearBasis`.

    Args:
        vectors: float ``[n, width]``, one location's vectors over the examples.
        n_components: components kept (every one, ``min(n, width)``, by default); what they do not span is the
            featurizer's error.

    Returns:
        ``LinearBasis`` named ``pca``: ``mean`` and ``scale`` the scaler's (a constant dimension's scale is 1), the
        basis the components as columns, in order of explained variance.
    """
    from sklearn.decomposition import PCA
    from sklearn.preprocessing import StandardScaler

    x = _activations(vectors).double().numpy()
    limit = min(x.shape)
    if n_components is not None:
        check_int(n_components, "n_components", least=1)
        if n_components > limit:
            raise ConfigError(f"{named('n_components', n_components)}: at most min(n, width) = {limit}")
    scaler = StandardScaler().fit(x)
    pca = PCA(n_components=n_components or limit, svd_solver="full").fit(scaler.transform(x))
    basis = torch.as_tensor(pca.components_.T, dtype=torch.float32)  # orthonormal rows of a full SVD: columns here
    return LinearBasis(basis, torch.as_tensor(scaler.mean_), torch.as_tensor(scaler.scale_), name="pca")


def train_sae(vectors: Float[Tensor, "n width"], n_features: int, *, k: int | None = 16, l1: float = 0.0, epochs: int = 20,
              lr: float = 1e-3, batch_size: int = 256, seed: int = 0) -> SparseAutoencoder:  # fmt: skip
    """A sparse autoencoder trained on ``vectors`` (TopK with ``k``; ReLU with an L1 penalty where ``k`` is ``None``).

    Args:
        vectors: float ``[n, width]``, the activations at the site it will featurize.
        n_features: its latents (its width; MIB's SAEs are 16 to 32 times the model's).
        k: latents kept per vector (TopK); ``None`` for a ReLU SAE with ``l1``.
        l1: the L1 coefficient on the latents (ReLU only).
        epochs, lr, batch_size, seed: Adam's loop, seeded.

    Returns:
        The SAE in evaluation mode, on the CPU.
    """
    x = _activations(vectors)
    check_int(n_features, "n_features", least=1)
    if k is not None:
        check_int(k, "k", least=1)
        if k > n_features:
            raise ConfigError(f"{named('k', k)}: at most n_features = {n_features}")
    check_number(l1, "l1", least=0)
    check_int(epochs, "epochs", least=1)
    check_int(batch_size, "batch_size", least=1)
    check_number(lr, "lr", positive=True)
    generator = torch.Generator().manual_seed(int(seed))
    width = x.shape[1]
    decoder = torch.randn(n_features, width, generator=generator)
    decoder = decoder / decoder.norm(dim=1, keepdim=True)
    sae = SparseAutoencoder(decoder.T.clone(), torch.zeros(n_features), decoder, x.mean(0),
                            activation="topk" if k is not None else "relu", k=k)  # fmt: skip
    sae.train()
    for p in sae.parameters():
        p.requires_grad_(True)
    optimizer = torch.optim.Adam(sae.parameters(), lr=lr)
    scale = x.var(0).sum().clamp_min(1e-12)  # the loss as a share of the variance: lr means the same at any scale
    for _ in range(epochs):
        for batch in torch.randperm(len(x), generator=generator).split(batch_size):
            f = sae.encode(x[batch])
            loss = ((sae.decode(f) - x[batch]) ** 2).sum(-1).mean() / scale
            if k is None and l1:
                loss = loss + l1 * f.abs().sum(-1).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                sae.W_dec /= sae.W_dec.norm(dim=1, keepdim=True).clamp_min(1e-12)
    sae.eval()
    for p in sae.parameters():
        p.requires_grad_(False)
    return sae


@torch.no_grad()
def reconstruction(featurizer: Featurizer, vectors: Float[Tensor, "n width"]) -> dict[str, float]:
    """How well a featurizer's features alone rebuild ``vectors`` (its error dropped).

    Returns:
        ``fve``: the fraction of variance explained, ``1 − Σ‖x − x̂‖² / Σ‖x − x̄‖²``; ``mse``: the mean squared error
        per vector; ``l0``: the mean number of non-zero features per vector.
    """
    x = _activations(vectors)
    f, error = featurizer.featurize(x)
    rebuilt = featurizer.inverse(f, torch.zeros_like(error))
    residual = ((x - rebuilt) ** 2).sum(-1)
    total = ((x - x.mean(0)) ** 2).sum().clamp_min(1e-12)
    return {"fve": float(1 - residual.sum() / total), "mse": float(residual.mean()), "l0": float((f != 0).float().sum(-1).mean())}
