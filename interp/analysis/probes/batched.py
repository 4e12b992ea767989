"""Train many small probes at once: one batched torch model for every probe that reads the same features.

The probes of a sweep differ in their labels (target, control task, seed)
and their training rows (cross-validation fold), not in their input: for one
location all of them read the same ``[n_examples, d_model]`` matrix. Their
first layers are therefore one matmul ``X @ W`` with ``W`` ``[d, P * h]``,
and all P probes take their full-batch Adam steps together.

A probe is the paper's "linear classifier with 4 hidden units" (Geiger,
Richardson & Potts 2020, §6.1), read as ``softmax(W2 relu(W1 x + b1) + b2)``
with 4 hidden units, or with ``hidden_units=0`` a linear (multinomial
logistic) probe ``softmax(W x + b)``. Features are standardized with the
mean and standard deviation of all rows given (no labels involved); an L2
penalty ``alpha`` is on the weights.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass(frozen=True)
class ProbeSettings:
    """Hyperparameters shared by all probes of one batch."""

    hidden_units: int = 4
    max_iter: int = 100
    lr: float = 0.05
    alpha: float = 1e-4


@dataclass
class ProbeParams:
    """Fitted weights of P probes with K outputs (K = 1 logit for two classes, else C).

    ``mean``/``scale`` ``[d]`` standardize the features; ``w1`` ``[P, d, h]``
    and ``b1`` ``[P, h]`` are the hidden layer (``None`` when linear);
    ``w2`` ``[P, h or d, K]`` and ``b2`` ``[P, K]`` the output layer.
    """

    mean: Tensor
    scale: Tensor
    w1: Tensor | None
    b1: Tensor | None
    w2: Tensor
    b2: Tensor
    n_classes: int


def standardizer(X: Tensor) -> tuple[Tensor, Tensor]:
    """Mean and standard deviation ``[d]`` of ``X`` ``[n, d]`` over all its rows (no labels involved)."""
    return X.mean(0), X.std(0, unbiased=False).clamp(min=1e-6)


def _block_mask(P: int, h: int, K: int) -> Tensor:
    """``[P * h, P * K]``: 1 where hidden unit row and output column belong to the same probe."""
    return (torch.arange(P * h)[:, None] // h == torch.arange(P * K)[None, :] // K).float()


def _forward(Z: Tensor, w1: Tensor, b1: Tensor, w2: Tensor | None, b2: Tensor | None, mask: Tensor | None) -> Tensor:
    """Logits ``[n, P * K]`` of all probes.

    ``w1`` ``[d, P * width]`` holds every probe's first layer side by side;
    the second layer ``w2`` ``[P, h, K]`` is applied as one block-diagonal
    ``[P * h, P * K]`` matmul (much faster on CPU than a batched einsum).
    """
    A = torch.addmm(b1, Z, w1)
    if w2 is None:
        return A
    P, h, K = w2.shape
    return torch.relu(A) @ (w2.reshape(P * h, K).repeat(1, P) * mask) + b2.reshape(-1)


def _loss(logits: Tensor, targets: Tensor, weights: Tensor) -> Tensor:
    """Sum over probes of each probe's mean loss on its training rows; ``logits`` ``[n, P * K]``,
    ``targets``/``weights`` ``[n, P]``."""
    n, P = targets.shape
    K = logits.shape[1] // P
    if K == 1:
        losses = torch.nn.functional.binary_cross_entropy_with_logits(logits, targets.to(logits.dtype), reduction="none")
    else:
        losses = torch.nn.functional.cross_entropy(logits.reshape(n * P, K), targets.reshape(-1), reduction="none").view(n, P)
    return (losses * weights).sum()


def fit_probes(
    X: Tensor,
    Y: Tensor,
    train_mask: Tensor,
    n_classes: int,
    settings: ProbeSettings,
    seeds: Tensor | list[int],
) -> ProbeParams:
    """Fit P probes on shared features.

    Features are standardized with the mean and standard deviation of all
    rows of ``X`` (unsupervised: no label is used). Every probe's first layer
    is a slice of one ``[n, d] @ [d, P * h]`` matmul per full-batch Adam
    step; two-class probes have a single logit (binary cross-entropy).

    Args:
        X: float32 ``[n, d]``, the features every probe reads.
        Y: int64 ``[P, n]``, each probe's labels in ``0..n_classes-1``.
        train_mask: bool ``[P, n]``, the rows each probe trains on.
        n_classes: C >= 2.
        settings: hidden units (0 = linear), Adam steps, learning rate, L2.
        seeds: P integers; probe p's initial weights depend on seeds[p] only.

    Returns:
        :class:`ProbeParams` of the P probes (detached).
    """
    P, n = Y.shape
    d, h = X.shape[1], settings.hidden_units
    K = 1 if n_classes == 2 else n_classes
    width = h if h else K
    mean, scale = standardizer(X)
    Z = (X - mean) / scale
    w1_init, w2_init = [], []
    for seed in seeds:
        g = torch.Generator().manual_seed(int(seed))
        w1_init.append(torch.randn(d, width, generator=g) * ((2.0 / d) ** 0.5 if h else 0.01))
        if h:
            w2_init.append(torch.randn(h, K, generator=g) * (1.0 / h) ** 0.5)
    w1 = torch.cat(w1_init, dim=1).requires_grad_()  # [d, P * width]
    b1 = torch.zeros(P * width, requires_grad=True)
    w2 = torch.stack(w2_init).requires_grad_() if h else None  # [P, h, K]
    b2 = torch.zeros(P, K, requires_grad=True) if h else None
    masks = train_mask.to(X.dtype)
    weights = (masks / masks.sum(1, keepdim=True).clamp(min=1)).T.contiguous()  # [n, P]
    targets = Y.T.contiguous()  # [n, P]
    optimizer = torch.optim.Adam([t for t in (w1, b1, w2, b2) if t is not None], lr=settings.lr)
    mask = _block_mask(P, h, K) if h else None
    for _ in range(settings.max_iter):
        optimizer.zero_grad(set_to_none=True)
        loss = _loss(_forward(Z, w1, b1, w2, b2, mask), targets, weights)
        penalty = (w1 * w1).sum() + ((w2 * w2).sum() if h else 0.0)
        (loss + settings.alpha * penalty).backward()
        optimizer.step()
    w1_p = w1.detach().view(d, P, width).permute(1, 0, 2).contiguous()  # [P, d, width]
    b1_p = b1.detach().view(P, width)
    if h:
        return ProbeParams(mean, scale, w1_p, b1_p, w2.detach(), b2.detach(), n_classes)
    return ProbeParams(mean, scale, None, None, w1_p, b1_p, n_classes)


@torch.no_grad()
def predict_probes(X: Tensor, params: ProbeParams) -> Tensor:
    """Class probabilities of P probes on shared features ``X`` ``[n, d]``: float32 ``[P, n, C]``."""
    Z = (X - params.mean) / params.scale
    if params.w1 is not None:
        H = torch.relu(torch.einsum("nd,pdh->pnh", Z, params.w1) + params.b1.unsqueeze(1))
        logits = torch.bmm(H, params.w2) + params.b2.unsqueeze(1)
    else:
        logits = torch.einsum("nd,pdk->pnk", Z, params.w2) + params.b2.unsqueeze(1)
    if params.n_classes == 2:
        p1 = torch.sigmoid(logits[..., 0])
        return torch.stack([1 - p1, p1], dim=-1)
    return torch.softmax(logits, dim=-1)
