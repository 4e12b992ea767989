"""Featurizers: invertible maps at a location, and interchange interventions on chosen features.

Usage::

    pca = PCABasis(mean, scale, components)               # fitted by interp.analysis.featurizers.fit_pca
    f, error = pca.featurize(x)                           # float [..., n_features], float [..., width]
    x_again = pca.inverse(f, error)                       # x, to float rounding
    out = pca.interchange(base, source, chosen)           # the source's chosen features, the base's others
    dbm = FeatureMask(pca)                                # DBM: a learned mask over those features (an Intervention)

A featurizer maps a location's vector ``x`` (float ``[..., width]``) to
features and the error it leaves, ``featurize(x) -> (f, error)``, and back,
``inverse(f, error) -> x`` (the interface of MIB's causal variable track,
Mueller et al. 2025, "MIB: A Mechanistic Interpretability Benchmark", §4,
and of causalab's ``Featurizer``). An interchange on chosen features takes
those features from the source run and every other feature, and the error,
from the base run; choosing none returns the base, and choosing all
(``chosen=None``) takes the error from the source too and so returns the
source's vector. Each holds to float rounding:

* :class:`Identity`: the neurons themselves, ``f = x`` (MIB's full vector;
  DBM over it is DBM over neurons);
* :class:`LinearBasis`: ``f = ((x − mean) / scale) B`` for a basis ``B``
  (``width × n``, orthonormal columns), the part of ``x`` outside its span
  kept as the error; a DAS rotation (:meth:`LinearBasis.from_rotation`) and
  PCA on standardized activations (MIB's ``DBM+PCA``) are two of these;
* :class:`SparseAutoencoder`: ``f = act((x − b_dec) W_enc + b_enc)``,
  ``x̂ = f W_dec + b_dec``, error ``x − x̂`` (SAELens's layout; ReLU or
  TopK), so an interchange of no features is the base exactly, however
  poorly the SAE reconstructs.

:class:`FeatureMask` is differential binary masking (DBM; De Cao et al.
2020, Csordás et al. 2021, as MIB uses it): a mask ``m`` over a
featurizer's features, ``σ(m / T)`` in training with the temperature ``T``
annealed from 1 to 0.01, the hard mask ``σ(m) > 0.5`` in evaluation, an L1
penalty on the soft mask in the loss; the base's error kept. It is an
:class:`~interp.engine.interventions.Intervention` (kind ``dbm``), so the one
DAS trainer (:func:`interp.analysis.das.fit_intervention`) trains it and
every runner runs it.

Raises:
    ConfigError (a ValueError): on construction, naming the tensor whose shape does not fit the others, or
        holds a NaN or an infinity; a ``chosen`` mask of another length than ``n_features``.
"""

from __future__ import annotations

import torch
from jaxtyping import Bool, Float
from torch import Tensor, nn

from interp.core.errors import ConfigError
from interp.engine.interventions import Intervention, _check_width

#: Every featurizer kind by name, as :data:`interp.engine.interventions.REGISTRY` holds interventions.
FEATURIZERS: dict[str, type["Featurizer"]] = {}


def _finite(name: str, value: Tensor) -> Tensor:
    value = torch.as_tensor(value, dtype=torch.float32).detach().clone().contiguous()
    if not torch.isfinite(value).all():
        raise ConfigError(f"the featurizer's {name} holds a NaN or an infinity")
    return value


class Featurizer(nn.Module):
    """The interface: ``featurize(x) -> (features, error)`` and ``inverse(features, error) -> x``.

    Attributes:
        kind: its registered name (``identity``, ``basis``, ``sae``).
        width: the location's width it reads (``x``'s last dimension).
        n_features: the number of features (``features``' last dimension).
    """

    kind: str = ""
    width: int
    n_features: int

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("kind"):
            FEATURIZERS[cls.kind] = cls

    def featurize(self, x: Float[Tensor, "*batch width"]) -> tuple[Float[Tensor, "*batch features"], Float[Tensor, "*batch width"]]:
        raise NotImplementedError

    def inverse(self, features: Float[Tensor, "*batch features"], error: Float[Tensor, "*batch width"]) -> Float[Tensor, "*batch width"]:
        raise NotImplementedError

    def interchange(self, base: Float[Tensor, "*batch width"], source: Float[Tensor, "*batch width"],
                    chosen: Bool[Tensor, "features"] | Float[Tensor, "features"] | None = None) -> Float[Tensor, "*batch width"]:  # fmt: skip
        """The base's vector with the source's ``chosen`` features (a bool or 0..1 mask over the features; ``None``:
        every feature and the error, which is the source's vector).

        Raises:
            ConfigError (a ValueError): ``chosen`` is not ``n_features`` long.
        """
        source = source.expand_as(base)
        f_base, e_base = self.featurize(base)
        f_source, e_source = self.featurize(source)
        if chosen is None:
            return self.inverse(f_source, e_source)
        if chosen.shape != (self.n_features,):
            raise ConfigError(f"chosen must be a mask of the {self.n_features} features, got shape {tuple(chosen.shape)}")
        gate = chosen.to(f_base.dtype)
        return self.inverse(gate * f_source + (1 - gate) * f_base, e_base)

    def settings(self) -> dict:
        """What a file needs to rebuild it before its tensors are loaded (:func:`featurizer_from`)."""
        return {"kind": self.kind, "width": self.width, "n_features": self.n_features}

    def tensors(self) -> dict[str, Tensor]:
        return {name: value.detach() for name, value in self.state_dict().items()}


class Identity(Featurizer):
    """The neurons themselves: ``f = x``, no error (MIB's full vector; DBM over it is DBM over neurons)."""

    kind = "identity"

    def __init__(self, width: int) -> None:
        super().__init__()
        self.width = self.n_features = _check_width(width)

    @classmethod
    def from_settings(cls, settings: dict) -> "Identity":
        return cls(int(settings["width"]))

    def featurize(self, x):
        return x, torch.zeros_like(x)

    def inverse(self, features, error):
        return features + error


class LinearBasis(Featurizer):
    """``f = ((x − mean) / scale) B`` for a ``width × n`` basis ``B`` with orthonormal columns; the error is what the
    basis does not span, ``x − ((f Bᵀ) · scale + mean)``, so ``inverse(f, error) = (f Bᵀ) · scale + mean + error``.

    Args:
        basis: float ``[width, n]``, orthonormal columns (checked to 1e-4).
        mean, scale: float ``[width]`` (zeros and ones by default): the standardization the basis was fitted after.
        name: what the basis is, as outputs say it (``rotation``, ``pca``).

    Raises:
        ConfigError (a ValueError): a basis whose columns are not orthonormal, a mean or scale of another width, a
            scale not positive, any tensor not finite.
    """

    kind = "basis"

    def __init__(self, basis: Tensor, mean: Tensor | None = None, scale: Tensor | None = None, name: str = "basis") -> None:
        super().__init__()
        basis = _finite("basis", basis)
        if basis.ndim != 2 or basis.shape[1] > basis.shape[0]:
            raise ConfigError(f"the featurizer's basis must be [width, n] with n <= width, got shape {tuple(basis.shape)}")
        self.width, self.n_features, self.name = int(basis.shape[0]), int(basis.shape[1]), str(name)
        if not torch.allclose(basis.T @ basis, torch.eye(self.n_features), atol=1e-4):
            raise ConfigError(f"the featurizer's basis ({self.width} x {self.n_features}) does not have orthonormal columns")
        mean = torch.zeros(self.width) if mean is None else _finite("mean", mean).reshape(-1)
        scale = torch.ones(self.width) if scale is None else _finite("scale", scale).reshape(-1)
        for label, value in (("mean", mean), ("scale", scale)):
            if value.shape != (self.width,):
                raise ConfigError(f"the featurizer's {label} has {value.numel()} entries; its basis is {self.width} wide")
        if not (scale > 0).all():
            raise ConfigError("the featurizer's scale must be positive everywhere")
        self.register_buffer("basis", basis)
        self.register_buffer("mean", mean)
        self.register_buffer("scale", scale)

    @classmethod
    def from_rotation(cls, matrix: Tensor) -> "LinearBasis":
        """A DAS rotation's features (float ``[width, width]`` or an orthonormal ``[width, k]`` basis, its columns
        the features), as :class:`~interp.engine.interventions.RotatedSubspace` computes them: ``x @ R``."""
        return cls(matrix, name="rotation")

    @classmethod
    def from_settings(cls, settings: dict) -> "LinearBasis":
        width, n = int(settings["width"]), int(settings["n_features"])
        return cls(torch.eye(width)[:, :n], name=str(settings.get("name", "basis")))

    def settings(self) -> dict:
        return {**super().settings(), "name": self.name}

    def _project(self, f):
        return (f @ self.basis.T) * self.scale + self.mean

    def featurize(self, x):
        f = ((x - self.mean) / self.scale) @ self.basis
        return f, x - self._project(f)

    def inverse(self, features, error):
        return self._project(features) + error


class SparseAutoencoder(Featurizer):
    """A sparse autoencoder's latents, its reconstruction error carried (SAELens's parameters and names).

    ``f = act((x − b_dec) W_enc + b_enc)`` with ``act`` ReLU, or TopK (the ``k`` largest pre-activations kept,
    ReLU'd; Gao et al. 2024, "Scaling and evaluating sparse autoencoders", §2.3); ``x̂ = f W_dec + b_dec``; the error
    ``x − x̂``. :func:`interp.analysis.featurizers.train_sae` trains one; :mod:`interp.files.saes` reads and writes
    SAELens's folders.

    Args:
        W_enc: float ``[width, n_features]``; b_enc: ``[n_features]``; W_dec: ``[n_features, width]``; b_dec: ``[width]``.
        activation: ``"relu"`` or ``"topk"``; k: the latents TopK keeps (``activation="topk"`` only).
        center: subtract ``b_dec`` before encoding (SAELens's ``apply_b_dec_to_input``).

    Raises:
        ConfigError (a ValueError): shapes that do not fit one another (named), a tensor not finite, an unknown
            activation, a TopK ``k`` outside 1..n_features.
    """

    kind = "sae"

    def __init__(self, W_enc: Tensor, b_enc: Tensor, W_dec: Tensor, b_dec: Tensor, activation: str = "relu", k: int | None = None,  # noqa: N803
                 center: bool = True) -> None:
        super().__init__()
        W_enc, b_enc, W_dec, b_dec = (_finite(n, v) for n, v in (("W_enc", W_enc), ("b_enc", b_enc), ("W_dec", W_dec), ("b_dec", b_dec)))
        if W_enc.ndim != 2:
            raise ConfigError(f"the SAE's W_enc must be [width, n_features], got shape {tuple(W_enc.shape)}")
        width, n = W_enc.shape
        for name, value, shape in (("b_enc", b_enc, (n,)), ("W_dec", W_dec, (n, width)), ("b_dec", b_dec, (width,))):
            if tuple(value.shape) != shape:
                raise ConfigError(f"the SAE's {name} has shape {tuple(value.shape)}; W_enc ({width} x {n}) needs {shape}")
        if activation not in ("relu", "topk"):
            raise ConfigError(f"the SAE's activation must be relu or topk, got {activation!r}")
        if activation == "topk" and (not isinstance(k, int) or not 1 <= k <= n):
            raise ConfigError(f"a TopK SAE needs k in 1..{n}, got {k!r}")
        self.width, self.n_features, self.activation, self.k = int(width), int(n), activation, (k if activation == "topk" else None)
        self.center = bool(center)
        self.W_enc, self.b_enc = nn.Parameter(W_enc), nn.Parameter(b_enc)
        self.W_dec, self.b_dec = nn.Parameter(W_dec), nn.Parameter(b_dec)

    @classmethod
    def from_settings(cls, settings: dict) -> "SparseAutoencoder":
        width, n = int(settings["width"]), int(settings["n_features"])
        return cls(torch.zeros(width, n), torch.zeros(n), torch.zeros(n, width), torch.zeros(width), settings.get("activation", "relu"),
                   settings.get("k"), settings.get("center", True))  # fmt: skip

    def settings(self) -> dict:
        return {**super().settings(), "activation": self.activation, "k": self.k, "center": self.center}

    def encode(self, x: Float[Tensor, "*batch width"]) -> Float[Tensor, "*batch features"]:
        pre = ((x - self.b_dec) if self.center else x) @ self.W_enc + self.b_enc
        if self.activation == "topk":
            top = pre.topk(self.k, dim=-1)
            return torch.zeros_like(pre).scatter(-1, top.indices, torch.relu(top.values))
        return torch.relu(pre)

    def decode(self, features: Float[Tensor, "*batch features"]) -> Float[Tensor, "*batch width"]:
        return features @ self.W_dec + self.b_dec

    def featurize(self, x):
        f = self.encode(x)
        return f, x - self.decode(f)

    def inverse(self, features, error):
        return self.decode(features) + error


def featurizer_from(settings: dict, tensors: dict[str, Tensor]) -> Featurizer:
    """A featurizer rebuilt from :meth:`Featurizer.settings` and :meth:`Featurizer.tensors` (as a file keeps them).

    Raises:
        ConfigError (a ValueError): an unknown kind, a missing or misshapen tensor (named).
    """
    kind = settings.get("kind")
    if kind not in FEATURIZERS:
        raise ConfigError(f"featurizer kind must be one of {', '.join(FEATURIZERS)}, got {kind!r}")
    made = FEATURIZERS[kind].from_settings(settings)
    expected = made.state_dict()
    if set(tensors) != set(expected):
        raise ConfigError(f"a {kind} featurizer holds {', '.join(sorted(expected)) or 'no tensors'}; got {', '.join(sorted(tensors)) or 'none'}")
    for name, value in tensors.items():
        if tuple(value.shape) != tuple(expected[name].shape):
            raise ConfigError(f"the {kind} featurizer's {name} has shape {tuple(value.shape)}, not {tuple(expected[name].shape)}")
    if kind == "basis":  # checked as a new one is: orthonormal, finite, positive scale
        return LinearBasis(tensors["basis"], tensors["mean"], tensors["scale"], name=str(settings.get("name", "basis")))
    if kind == "sae":
        return SparseAutoencoder(tensors["W_enc"], tensors["b_enc"], tensors["W_dec"], tensors["b_dec"], made.activation, made.k, made.center)
    return made


class FeatureMask(Intervention):
    """DBM: a learned mask over a featurizer's features; the source's masked-in features, the base's others and error.

    ``out = inverse(g ⊙ f_s + (1 − g) ⊙ f_b, error_b)`` with ``g = σ(m / T)`` in training (``T`` annealed by the
    trainer over :attr:`temperatures`, MIB's (1.0, 0.01)) and ``g = [σ(m) > 0.5]`` in evaluation; ``m`` starts at 0
    (causalab). :meth:`penalty` is ``l1 · Σ σ(m / T)``: MIB's baselines set ``l1 = 0`` (IOI, RAVEL), causalab's
    default is ``1e-4``; the default here is MIB's. :attr:`k` is the number of features the hard mask takes.

    Args:
        featurizer: the features masked (a new one is over the neurons: :class:`Identity`).
        l1: the penalty's coefficient (>= 0).

    Raises:
        ConfigError (a ValueError): ``l1`` negative or not finite; a featurizer that is not one.
    """

    kind = "dbm"
    trainable = True
    #: The temperature the trainer anneals the mask's over: (start, end), MIB's schedule.
    temperatures = (1.0, 0.01)
    #: The share of training steps the temperature falls over; it is held at its end after (causalab's 0.5).
    anneal_share = 0.5

    def __init__(self, featurizer: Featurizer, l1: float = 0.0) -> None:
        super().__init__()
        if not isinstance(featurizer, Featurizer):
            raise ConfigError(f"a feature mask needs a Featurizer, got {type(featurizer).__name__}")
        if not isinstance(l1, (int, float)) or isinstance(l1, bool) or not 0 <= float(l1) < float("inf"):
            raise ConfigError(f"l1 = {l1!r}: give a finite coefficient >= 0")
        self.featurizer, self.width, self.l1 = featurizer, featurizer.width, float(l1)
        for p in featurizer.parameters():
            p.requires_grad_(False)  # the basis is fixed; only the mask learns
        self.mask = nn.Parameter(torch.zeros(featurizer.n_features))
        self.register_buffer("temperature", torch.tensor(1.0))

    @classmethod
    def create(cls, width: int, k: int | None = None, seed: int | None = 0) -> "FeatureMask":
        """A mask over the neurons (DBM): its size is learned, ``k`` is not taken."""
        return cls(Identity(width))

    @classmethod
    def from_settings(cls, settings: dict) -> "FeatureMask":
        """A mask over the featurizer its settings name (the neurons where they name none), before its tensors load.

        Raises:
            ConfigError (a ValueError): a featurizer kind no class registers.
        """
        inner = dict(settings.get("featurizer") or {"kind": "identity", "width": settings["width"]})
        if inner.get("kind") not in FEATURIZERS:
            raise ConfigError(f"featurizer kind must be one of {', '.join(FEATURIZERS)}, got {inner.get('kind')!r}")
        return cls(FEATURIZERS[inner["kind"]].from_settings(inner), l1=float(settings.get("l1", 0.0)))

    @property
    def k(self) -> int:
        return int(self.hard_mask().sum().item())

    def hard_mask(self) -> Bool[Tensor, "features"]:
        """The features evaluation takes from the source: ``σ(m) > 0.5``."""
        return torch.sigmoid(self.mask.detach()) > 0.5

    def gate(self) -> Float[Tensor, "features"]:
        return torch.sigmoid(self.mask / self.temperature) if self.training else self.hard_mask().to(self.mask.dtype)

    def penalty(self) -> Tensor:
        return self.l1 * torch.sigmoid(self.mask / self.temperature).sum()

    def settings(self) -> dict:
        return {**super().settings(), "l1": self.l1, "featurizer": self.featurizer.settings()}

    def tensors(self) -> dict[str, Tensor]:
        return {"mask": self.mask.detach(), "temperature": self.temperature,
                **{f"featurizer.{name}": value for name, value in self.featurizer.tensors().items()}}  # fmt: skip

    def load_tensors(self, tensors: dict[str, Tensor]) -> None:
        """The featurizer rebuilt from its ``featurizer.*`` tensors (checked as a new one is), then the mask's."""
        inner = {name.removeprefix("featurizer."): value for name, value in tensors.items() if name.startswith("featurizer.")}
        self.featurizer = featurizer_from(self.featurizer.settings(), inner).requires_grad_(False)
        super().load_tensors(tensors)  # names and shapes checked against the rebuilt module's; _set takes the mask's

    def _set(self, name: str, value: Tensor) -> None:
        if name in ("mask", "temperature"):
            getattr(self, name).copy_(value)

    def forward(self, base: Float[Tensor, "*batch width"], source: Float[Tensor, "*batch width"]) -> Float[Tensor, "*batch width"]:
        return self.featurizer.interchange(base, source, self.gate())


class ChosenFeatures(Intervention):
    """An interchange of fixed features: the source's ``chosen`` features, the base's others and error; every feature
    and the error (the source's vector) where ``chosen`` is ``None``. Nothing to learn (a DAS rotation's first ``k``
    features, a trained DBM's hard mask, MIB's ``indices`` read back).

    Raises:
        ConfigError (a ValueError): ``chosen`` not a mask of the featurizer's ``n_features``.
    """

    def __init__(self, featurizer: Featurizer, chosen: Tensor | None = None) -> None:
        super().__init__()
        if not isinstance(featurizer, Featurizer):
            raise ConfigError(f"chosen features need a Featurizer, got {type(featurizer).__name__}")
        self.featurizer, self.width = featurizer, featurizer.width
        if chosen is not None:
            chosen = torch.as_tensor(chosen).bool().reshape(-1)
            if chosen.shape != (featurizer.n_features,):
                raise ConfigError(f"chosen must be a mask of the {featurizer.n_features} features, got {chosen.numel()} entries")
        self.register_buffer("chosen", chosen)

    @classmethod
    def indices(cls, featurizer: Featurizer, indices) -> "ChosenFeatures":
        """The features at ``indices`` (MIB's ``{unit}_indices``; ``None``: all).

        Raises:
            ConfigError (a ValueError): an index outside ``0 .. n_features - 1``.
        """
        if indices is None:
            return cls(featurizer)
        index = torch.as_tensor(list(indices), dtype=torch.long)
        if index.numel() and (index.min() < 0 or index.max() >= featurizer.n_features):
            raise ConfigError(f"feature indices must lie in 0..{featurizer.n_features - 1}")
        return cls(featurizer, torch.zeros(featurizer.n_features, dtype=torch.bool).index_fill_(0, index, True))

    @property
    def k(self) -> int:
        return self.featurizer.n_features if self.chosen is None else int(self.chosen.sum())

    def forward(self, base: Float[Tensor, "*batch width"], source: Float[Tensor, "*batch width"]) -> Float[Tensor, "*batch width"]:
        return self.featurizer.interchange(base, source, self.chosen)
