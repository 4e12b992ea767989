"""Interventions as small modules: ``forward(base, source)`` over the vectors at a location.

Usage::

    rotated = RotatedSubspace(384, k=64, seed=0)      # DAS: rotate, take the first k coordinates from the source, rotate back
    out = rotated(base, source)                       # float [batch, width] from two float [batch, width]

Every intervention maps a base vector and a source vector (a location's
vector: ``tokens × d_model`` floats, :mod:`interp.hooks.context`) to the
vector written into the base's run. One engine runs them all
(:mod:`interp.engine.pair_suffix`); pyvene's ``forward(base, source)``
interface is the model (Wu et al. 2024, pyvene, §2).

* :class:`Interchange`: the source's vector; the vanilla interchange
  intervention of Geiger, Richardson & Potts (2020), §6.2. Nothing to learn.
* :class:`CoordinateBlock`: the source's coordinates ``start .. stop - 1``,
  the base's elsewhere: a localist alignment of a variable to some neurons,
  the baseline DAS is measured against.
* :class:`RotatedSubspace`: distributed alignment search (Geiger, Wu,
  Potts, Icard & Goodman 2024, "Finding alignments between interpretable
  causal variables and distributed neural representations", §3): with an
  orthogonal ``R`` (``width × width``, its columns the new basis),
  ``out = (m ⊙ (s R) + (1 − m) ⊙ (b R)) Rᵀ`` where ``m`` is 1 on the first
  ``k`` rotated coordinates. ``R`` is learned through
  :func:`torch.nn.utils.parametrizations.orthogonal`, so it stays
  orthogonal at every step.
* :class:`LowRankSubspace`: the same function through an orthonormal
  ``width × k`` basis ``W`` alone, ``out = b + (s − b) W Wᵀ``; what
  ``RotatedSubspace`` computes, with ``width × k`` parameters instead of
  ``width²`` (pyvene's ``LowRankRotatedSpaceIntervention``).
* :class:`Additive` (steering: ``b + scale · v``), :class:`ZeroAblation`
  (0) and :class:`MeanAblation` (a reference set's mean): the base's vector
  moved or replaced whatever the source; nothing to learn.
* :class:`BoundlessSubspace`: DAS with the size of the subspace learned
  (Wu, Geiger, Icard, Potts & Goodman 2023, "Interpretability at scale",
  §3): the mask is ``m_i = σ((β·width − i) / τ)`` with a learned boundary
  ``β`` in (0, 1] and a temperature ``τ`` the trainer anneals; the
  training loss adds ``β`` (:meth:`BoundlessSubspace.penalty`).

Raises on construction:
    ConfigError (a ValueError): naming ``k``, ``start``/``stop`` or ``width`` when out of range.
"""

from __future__ import annotations

import torch
from jaxtyping import Float
from torch import Tensor, nn
from torch.nn.utils import parametrizations

from interp.core.errors import ConfigError

#: Every intervention kind by name: each class registers itself under its ``kind`` when it is defined
#: (:meth:`Intervention.__init_subclass__`), so a new kind is one class.
REGISTRY: dict[str, type["Intervention"]] = {}


def _check_width(width: int) -> int:
    if not isinstance(width, int) or width < 1:
        raise ConfigError(f"width must be a positive int, got {width!r}")
    return width


def _generator(seed: int | None) -> torch.Generator:
    generator = torch.Generator()
    generator.manual_seed(0 if seed is None else int(seed))
    return generator


class Intervention(nn.Module):
    """The interface: ``forward(base, source)``, both float ``[..., width]``, returns float ``[..., width]``.

    ``k`` is the number of coordinates taken from the source (``width`` for
    :class:`Interchange`; the learned one, rounded, for :class:`BoundlessSubspace`).
    A subclass with a ``kind`` is registered under it (:data:`REGISTRY`): DAS trains it (``trainable``; of a size
    ``k`` chosen beforehand where ``sized``), files save and load it, by that name alone.

    Raises:
        ConfigError (a ValueError): on definition, a ``kind`` another class already has.
    """

    kind: str = ""
    width: int
    trainable: bool = False
    #: Whether its size ``k`` is chosen before training (a DAS subspace), rather than fixed or learned.
    sized: bool = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("kind")
        if kind:
            held = REGISTRY.get(kind)
            if held is not None and (held.__module__, held.__qualname__) != (cls.__module__, cls.__qualname__):
                raise ConfigError(f"intervention kind {kind!r} is {held.__module__}.{held.__qualname__}'s already; name the new one otherwise")
            REGISTRY[kind] = cls

    @classmethod
    def create(cls, width: int, k: int | None = None, seed: int | None = 0) -> "Intervention":
        """A new one of this kind, ``width`` wide, of size ``k`` where the kind takes one, seeded (what DAS trains).
        The default calls ``cls(width, k=k, seed=seed)``; a kind whose constructor differs overrides it."""
        return cls(width, k=k, seed=seed)

    @classmethod
    def from_settings(cls, settings: dict) -> "Intervention":
        """One of this kind rebuilt from :meth:`settings` as a file keeps them, before its tensors are loaded."""
        return cls.create(int(settings["width"]), int(settings["k"]))

    @property
    def k(self) -> int:
        raise NotImplementedError

    def settings(self) -> dict:
        """What :mod:`interp.files.subspaces` needs to rebuild the module before loading its weights."""
        return {"kind": self.kind, "width": self.width, "k": self.k}

    def penalty(self) -> Tensor | None:
        """An extra training loss term (``None`` for all but :class:`BoundlessSubspace`)."""
        return None

    def tensors(self) -> dict[str, Tensor]:
        """What a saved file holds: the realized matrices (``R``, ``W``), not the parametrization's internals,
        so a file does not depend on how orthogonality is kept (:meth:`load_tensors` reverses it)."""
        return {}

    def load_tensors(self, tensors: dict[str, Tensor]) -> None:
        """Set the learned state from :meth:`tensors`' output.

        Raises:
            ConfigError (a ValueError): a tensor is missing, extra, of the wrong shape, or a matrix is not orthonormal.
        """
        expected = self.tensors()
        if set(tensors) != set(expected):
            found = sorted(tensors)
            shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
            raise ConfigError(f"it holds {len(found)} tensor(s) ({shown}), not {', '.join(sorted(expected))}")
        for name, value in tensors.items():
            if value.shape != expected[name].shape:
                raise ConfigError(f"tensor {name!r} has shape {tuple(value.shape)}, not {tuple(expected[name].shape)}")
        with torch.no_grad():
            for name, value in tensors.items():
                self._set(name, value.to(expected[name].dtype))

    def _set(self, name: str, value: Tensor) -> None:
        raise NotImplementedError


class _Whole(Intervention):
    """An intervention on the whole vector, ``width`` wide, with nothing to set: its size ``k`` is the width."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.width = _check_width(width)

    @classmethod
    def create(cls, width: int, k: int | None = None, seed: int | None = 0) -> "_Whole":
        return cls(width)

    @property
    def k(self) -> int:
        return self.width


class Interchange(_Whole):
    """The vanilla interchange: the source's whole vector (Geiger, Richardson & Potts 2020, §6.2)."""

    kind = "interchange"

    def forward(self, base: Float[Tensor, "*batch width"], source: Float[Tensor, "*batch width"]) -> Float[Tensor, "*batch width"]:
        return source.expand_as(base)


class CoordinateBlock(Intervention):
    """The source's coordinates ``start`` to ``stop - 1`` (in the location's vector), the base's elsewhere: a localist baseline.

    Raises:
        ConfigError (a ValueError): not ``0 <= start < stop <= width``.
    """

    kind = "block"

    def __init__(self, width: int, start: int, stop: int) -> None:
        super().__init__()
        self.width = _check_width(width)
        if not 0 <= start < stop <= width:
            raise ConfigError(f"start, stop = {start}, {stop}: need 0 <= start < stop <= width = {width}")
        self.start, self.stop = int(start), int(stop)

    @property
    def k(self) -> int:
        return self.stop - self.start

    def settings(self) -> dict:
        return {**super().settings(), "start": self.start, "stop": self.stop}

    @classmethod
    def create(cls, width: int, k: int | None = None, seed: int | None = 0) -> "CoordinateBlock":
        """The first ``k`` coordinates (all, without ``k``)."""
        return cls(width, 0, k or width)

    @classmethod
    def from_settings(cls, settings: dict) -> "CoordinateBlock":
        return cls(int(settings["width"]), int(settings["start"]), int(settings["stop"]))

    def forward(self, base: Float[Tensor, "*batch width"], source: Float[Tensor, "*batch width"]) -> Float[Tensor, "*batch width"]:
        source = source.expand_as(base)
        return torch.cat([base[..., : self.start], source[..., self.start : self.stop], base[..., self.stop :]], dim=-1)


class _Basis(nn.Module):
    """A ``rows × cols`` matrix with orthonormal columns, learned through torch's orthogonal parametrization, seeded."""

    def __init__(self, rows: int, cols: int, seed: int | None) -> None:
        super().__init__()
        self.linear = nn.Linear(cols, rows, bias=False)  # weight [rows, cols]
        with torch.no_grad():
            nn.init.orthogonal_(self.linear.weight, generator=_generator(seed))
        parametrizations.orthogonal(self.linear, orthogonal_map="cayley" if rows == cols else None)

    @property
    def matrix(self) -> Tensor:
        """float ``[rows, cols]``, orthonormal columns (``matrix.T @ matrix == I`` to float rounding)."""
        return self.linear.weight

    def set(self, matrix: Tensor) -> None:
        """Make :attr:`matrix` equal ``matrix`` (through the parametrization's right inverse).

        Raises:
            ConfigError (a ValueError): ``matrix``'s columns are not orthonormal (to 1e-4).
        """
        eye = torch.eye(matrix.shape[1], dtype=matrix.dtype)
        if not torch.allclose(matrix.T @ matrix, eye, atol=1e-4):
            raise ConfigError("the saved matrix's columns are not orthonormal")
        with torch.no_grad():
            self.linear.weight = matrix.clone()


class _Learned(Intervention):
    """A learned orthonormal basis of ``width × columns(width, k)`` (:attr:`basis`) and a fixed size ``k``."""

    trainable = True
    sized = True

    def __init__(self, width: int, k: int, seed: int | None, columns: int | None) -> None:
        super().__init__()
        self.width = _check_width(width)
        if not isinstance(k, int) or not 1 <= k <= width:
            raise ConfigError(f"k = {k!r}: need 1 <= k <= width = {width}")
        self._k = k
        self.basis = _Basis(width, columns or width, seed)

    @property
    def k(self) -> int:
        return self._k

    @property
    def matrix(self) -> Tensor:
        """The learned matrix, float ``[width, columns]`` with orthonormal columns."""
        return self.basis.matrix

    def tensors(self) -> dict[str, Tensor]:
        return {self._saved_as: self.matrix.detach()}

    def _set(self, name: str, value: Tensor) -> None:
        self.basis.set(value)


class RotatedSubspace(_Learned):
    """DAS: rotate by an orthogonal ``R``, take the first ``k`` rotated coordinates from the source, rotate back.

    ``out = (m ⊙ (s R) + (1 − m) ⊙ (b R)) Rᵀ`` (Geiger, Wu, Potts, Icard &
    Goodman 2024, §3); ``R`` (:attr:`matrix`, float ``[width, width]``,
    rotated coordinates are ``x @ R``) starts as a seeded random orthogonal
    matrix (:func:`torch.nn.init.orthogonal_`) and stays orthogonal through
    :func:`torch.nn.utils.parametrizations.orthogonal`. With ``k = width``
    this is :class:`Interchange` for any ``R``.

    Raises:
        ConfigError (a ValueError): not ``1 <= k <= width``.
    """

    kind = "rotated"
    _saved_as = "rotation"

    def __init__(self, width: int, k: int, seed: int | None = 0) -> None:
        super().__init__(width, k, seed, columns=None)

    def forward(self, base: Float[Tensor, "*batch width"], source: Float[Tensor, "*batch width"]) -> Float[Tensor, "*batch width"]:
        r = self.matrix
        rb, rs = base @ r, source.expand_as(base) @ r
        mixed = torch.cat([rs[..., : self._k], rb[..., self._k :]], dim=-1)
        return mixed @ r.T


class LowRankSubspace(_Learned):
    """The source's component in the span of an orthonormal ``width × k`` basis ``W``, the base's elsewhere: ``b + (s − b) W Wᵀ``.

    The function of :class:`RotatedSubspace` (whose first ``k`` columns of
    ``R`` are ``W``, :attr:`matrix`), learned with ``width × k`` parameters
    (pyvene's ``LowRankRotatedSpaceIntervention``); the right choice for
    wide, several-token locations.

    Raises:
        ConfigError (a ValueError): not ``1 <= k <= width``.
    """

    kind = "lowrank"
    _saved_as = "basis"

    def __init__(self, width: int, k: int, seed: int | None = 0) -> None:
        super().__init__(width, k, seed, columns=k)

    def forward(self, base: Float[Tensor, "*batch width"], source: Float[Tensor, "*batch width"]) -> Float[Tensor, "*batch width"]:
        w = self.matrix
        return base + ((source.expand_as(base) - base) @ w) @ w.T


class BoundlessSubspace(Intervention):
    """DAS with a learned subspace size: mask ``m_i = σ((β·width − i) / τ)`` over the rotated coordinates.

    ``β`` (the boundary, a share of ``width``) starts at ``start`` and is
    clamped to [1/width, 1]; the temperature ``τ`` is set by the trainer
    (:attr:`temperature`, annealed from 50 to 0.1 as in Wu et al. 2023, §3);
    :meth:`penalty` (``β``) is added to the loss so the subspace stays small.
    :attr:`k` is the boundary rounded to whole coordinates.

    Raises:
        ConfigError (a ValueError): ``start`` outside (0, 1].
    """

    kind = "boundless"
    trainable = True

    def __init__(self, width: int, start: float = 0.5, seed: int | None = 0) -> None:
        super().__init__()
        self.width = _check_width(width)
        if not 0 < start <= 1:
            raise ConfigError(f"start = {start!r}: the boundary starts as a share of width in (0, 1]")
        self.rotation = _Basis(width, width, seed)
        self.boundary = nn.Parameter(torch.tensor(float(start)))
        self.register_buffer("temperature", torch.tensor(0.1))
        self.register_buffer("index", torch.arange(width, dtype=torch.float32), persistent=False)

    @classmethod
    def create(cls, width: int, k: int | None = None, seed: int | None = 0) -> "BoundlessSubspace":
        """Its size is learned: ``k`` is not taken."""
        return cls(width, seed=seed)

    @property
    def k(self) -> int:
        return max(1, int(round(self._beta().item() * self.width)))

    def _beta(self) -> Tensor:
        return self.boundary.clamp(1.0 / self.width, 1.0)

    @property
    def mask(self) -> Float[Tensor, "width"]:
        """The soft mask over rotated coordinates, float ``[width]`` in (0, 1)."""
        return torch.sigmoid((self._beta() * self.width - self.index) / self.temperature)

    def penalty(self) -> Tensor:
        return self._beta()

    def tensors(self) -> dict[str, Tensor]:
        return {"rotation": self.rotation.matrix.detach(), "boundary": self.boundary.detach(), "temperature": self.temperature}

    def _set(self, name: str, value: Tensor) -> None:
        if name == "rotation":
            self.rotation.set(value)
        else:
            getattr(self, name).copy_(value)

    def forward(self, base: Float[Tensor, "*batch width"], source: Float[Tensor, "*batch width"]) -> Float[Tensor, "*batch width"]:
        r = self.rotation.matrix
        rb, rs = base @ r, source.expand_as(base) @ r
        m = self.mask.to(rb.dtype)
        return (m * rs + (1 - m) * rb) @ r.T


class _Fixed(_Whole):
    """A fixed vector of ``width`` (a buffer, saved as :attr:`_saved_as`) that the base's vector is set to or moved by;
    the source plays no part. Nothing to learn; made with a zero vector (``create``), which a file's tensors replace."""

    _saved_as = "vector"

    def __init__(self, width: int, vector: Tensor | None = None) -> None:
        super().__init__(width)
        value = torch.zeros(width) if vector is None else torch.as_tensor(vector, dtype=torch.float32).detach().clone().reshape(-1)
        if value.numel() != width:
            raise ConfigError(f"the vector has {value.numel()} entries, not the location's width {width}")
        if not torch.isfinite(value).all():
            raise ConfigError("the vector holds a NaN or an infinity")
        self.register_buffer("vector", value)

    def tensors(self) -> dict[str, Tensor]:
        return {self._saved_as: self.vector.detach()}

    def _set(self, name: str, value: Tensor) -> None:
        self.vector.copy_(value.reshape(-1))


class Additive(_Fixed):
    """Steering: the base's vector plus ``scale`` times a fixed ``vector`` (activation addition; Turner et al. 2023,
    *Steering language models with activation engineering*, §2), ``out = b + scale · v``; the source plays no part.

    Raises:
        ConfigError (a ValueError): a vector of another size than ``width``, or not finite; a ``scale`` not finite.
    """

    kind = "additive"

    def __init__(self, width: int, vector: Tensor | None = None, scale: float = 1.0) -> None:
        super().__init__(width, vector)
        if not isinstance(scale, (int, float)) or isinstance(scale, bool) or not torch.isfinite(torch.tensor(float(scale))):
            raise ConfigError(f"scale = {scale!r}: give a finite number")
        self.scale = float(scale)

    @classmethod
    def from_settings(cls, settings: dict) -> "Additive":
        return cls(int(settings["width"]), scale=float(settings.get("scale", 1.0)))

    def settings(self) -> dict:
        return {**super().settings(), "scale": self.scale}

    def forward(self, base: Float[Tensor, "*batch width"], source: Float[Tensor, "*batch width"]) -> Float[Tensor, "*batch width"]:
        return base + self.scale * self.vector.to(base.dtype)


class ZeroAblation(_Whole):
    """Zero ablation: the vector set to 0, whatever the base and source (Olsson et al. 2022 use it to knock out heads;
    it moves a model off its activations' range, which mean ablation avoids)."""

    kind = "zero"

    def forward(self, base: Float[Tensor, "*batch width"], source: Float[Tensor, "*batch width"]) -> Float[Tensor, "*batch width"]:
        return torch.zeros_like(base)


class MeanAblation(_Fixed):
    """Mean ablation: the vector set to its mean over a reference set (``vector``, e.g. :meth:`of` the reference's
    vectors at the location), whatever the base and source (Wang et al. 2022, *Interpretability in the wild*, §3).

    Raises:
        ConfigError (a ValueError): a mean of another size than ``width``, or not finite.
    """

    kind = "mean"

    @classmethod
    def of(cls, vectors: Float[Tensor, "n width"]) -> "MeanAblation":
        """The mean of ``vectors`` (float ``[n, width]``, n ≥ 1) over its rows.

        Raises:
            ConfigError (a ValueError): no rows, or not a matrix.
        """
        if vectors.dim() != 2 or vectors.shape[0] < 1:
            raise ConfigError(f"the reference vectors must be [n, width] with n >= 1, got shape {tuple(vectors.shape)}")
        return cls(vectors.shape[1], vectors.float().mean(0))

    def forward(self, base: Float[Tensor, "*batch width"], source: Float[Tensor, "*batch width"]) -> Float[Tensor, "*batch width"]:
        return self.vector.to(base.dtype).expand_as(base)


def kinds(*, trainable: bool | None = None, sized: bool | None = None) -> tuple[str, ...]:
    """The registered kinds (:data:`REGISTRY`), in the order their classes were defined: those that train
    (``trainable=True``) and whose size is chosen beforehand (``sized=True``), or all."""
    return tuple(kind for kind, cls in REGISTRY.items()
                 if (trainable is None or cls.trainable == trainable) and (sized is None or cls.sized == sized))  # fmt: skip


def intervention_class(kind: str) -> type[Intervention]:
    """The class registered under ``kind``.

    Raises:
        ConfigError (a ValueError): naming ``kind=``, one no class registers (the known kinds listed).
    """
    if kind not in REGISTRY:
        raise ConfigError(f"kind must be one of {', '.join(REGISTRY)}, got {kind!r}")
    return REGISTRY[kind]


def make_intervention(kind: str, width: int, k: int | None = None, seed: int | None = 0) -> Intervention:
    """A new intervention by name (:meth:`Intervention.create` of the class registered under ``kind``).

    Raises:
        ConfigError (a ValueError): an unknown ``kind``, or ``k`` out of range for it.
    """
    return intervention_class(kind).create(width, k, seed)
