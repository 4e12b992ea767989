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
training rows' mean and standard deviation; an L2 penalty ``alpha`` is on
the weights.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass(frozen=True)
class ProbeSettings:
    """Hyperparameters shared by all probes of one batch."""

    hidden_units: int = 4
    max_iter: int = 300
    lr: float = 0.02
    alpha: float = 1e-4


@dataclass
class ProbeParams:
    """Fitted weights of P probes: ``mean``/``scale`` ``[P, d]``; ``w1`` ``[P, d, h]``, ``b1`` ``[P, h]``;
    ``w2`` ``[P, h, C]`` (``[P, d, C]`` when linear), ``b2`` ``[P, C]``."""

    mean: Tensor
    scale: Tensor
    w1: Tensor | None
    b1: Tensor | None
    w2: Tensor
    b2: Tensor


def _logits(X: Tensor, p: ProbeParams) -> Tensor:
    """``X`` ``[n, d]`` (shared) -> logits ``[P, n, C]``."""
    Z = (X.unsqueeze(0) - p.mean.unsqueeze(1)) / p.scale.unsqueeze(1)  # [P, n, d]
    if p.w1 is not None:
        Z = torch.relu(torch.bmm(Z, p.w1) + p.b1.unsqueeze(1))
    return torch.bmm(Z, p.w2) + p.b2.unsqueeze(1)


def fit_probes(
    X: Tensor,
    Y: Tensor,
    train_mask: Tensor,
    n_classes: int,
    settings: ProbeSettings,
    seeds: Tensor | list[int],
) -> ProbeParams:
    """Fit P probes on shared features.

    Probes with the same training rows (a fold) share one standardized copy of
    ``X``, so each Adam step costs one ``[n, d] @ [d, P_fold * h]`` matmul per
    fold, not P small ones.

    Args:
        X: float32 ``[n, d]``, the features every probe reads.
        Y: int64 ``[P, n]``, each probe's labels in ``0..n_classes-1``.
        train_mask: bool ``[P, n]``, the rows each probe trains on.
        n_classes: C.
        settings: hidden units (0 = linear), Adam steps, learning rate, L2.
        seeds: P integers; probe p's initial weights depend on seeds[p] only.

    Returns:
        :class:`ProbeParams` of the P probes (detached).
    """
    P, n = Y.shape
    d, h, C = X.shape[1], settings.hidden_units, n_classes
    width = h if h else C
    groups: dict[bytes, list[int]] = {}
    for p in range(P):
        groups.setdefault(train_mask[p].numpy().tobytes(), []).append(p)
    stats, Zs = {}, {}
    for key, members in groups.items():
        rows = train_mask[members[0]]
        mean, scale = X[rows].mean(0), X[rows].std(0, unbiased=False).clamp(min=1e-6)
        stats[key], Zs[key] = (mean, scale), (X - mean) / scale
    w1_init, w2_init = [], []
    for seed in seeds:
        g = torch.Generator().manual_seed(int(seed))
        w1_init.append(torch.randn(d, width, generator=g) * ((2.0 / d) ** 0.5 if h else 0.01))
        w2_init.append(torch.randn(h, C, generator=g) * (1.0 / h) ** 0.5 if h else torch.zeros(0))
    w1 = torch.stack(w1_init).requires_grad_()  # [P, d, width]: the first (or only) layer
    b1 = torch.zeros(P, width, requires_grad=True)
    w2 = torch.stack(w2_init).requires_grad_() if h else None  # [P, h, C]
    b2 = torch.zeros(P, C, requires_grad=True) if h else None
    masks = train_mask.to(X.dtype)
    counts = masks.sum(1).clamp(min=1)
    index = {key: torch.tensor(members) for key, members in groups.items()}
    optimizer = torch.optim.Adam([t for t in (w1, b1, w2, b2) if t is not None], lr=settings.lr)
    for _ in range(settings.max_iter):
        optimizer.zero_grad(set_to_none=True)
        total = 0.0
        for key, idx in index.items():
            k = len(idx)
            W = w1[idx].permute(1, 0, 2).reshape(d, k * width)  # [d, k * width]
            A = (Zs[key] @ W).view(n, k, width).transpose(0, 1) + b1[idx].unsqueeze(1)  # [k, n, width]
            logits = torch.bmm(torch.relu(A), w2[idx]) + b2[idx].unsqueeze(1) if h else A
            losses = torch.nn.functional.cross_entropy(logits.transpose(1, 2), Y[idx], reduction="none")
            total = total + ((losses * masks[idx]).sum(1) / counts[idx]).sum()
        penalty = (w1**2).sum() + ((w2**2).sum() if h else 0.0)
        (total + settings.alpha * penalty).backward()
        optimizer.step()
    mean = torch.empty(P, d)
    scale = torch.empty(P, d)
    for key, idx in index.items():
        mean[idx], scale[idx] = stats[key]
    if h:
        return ProbeParams(mean, scale, w1.detach(), b1.detach(), w2.detach(), b2.detach())
    return ProbeParams(mean, scale, None, None, w1.detach(), b1.detach())


@torch.no_grad()
def predict_probes(X: Tensor, params: ProbeParams) -> Tensor:
    """Class probabilities of P probes on shared features ``X`` ``[n, d]``: float32 ``[P, n, C]``."""
    return torch.softmax(_logits(X, params), dim=-1)
