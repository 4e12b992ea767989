"""The backend protocol, the default Hugging Face backend, and the lookup by name."""

from __future__ import annotations

import importlib.util
from typing import Callable, Mapping, Protocol, Sequence

import torch
from torch import Tensor

from interp.core.errors import ConfigError, named
from interp.engine import interchange_logits, source_vectors
from interp.hooks import hooked
from interp.hooks.locations import Location
from interp.hooks.encoding import Encoded

#: Names ``--backend`` takes.
BACKENDS = ("hf", "transformer-lens")


class Backend(Protocol):
    """Reads vectors at locations and runs interchange interventions, on one model."""

    name: str

    def read(self, inputs: Mapping[str, Tensor], positions: Mapping[str, Tensor], locations: Sequence[Location]) -> dict[Location, Tensor]:
        """One forward pass of a padded batch (``input_ids``, ``token_type_ids``, ``attention_mask``,
        int64 ``[batch, seq]``); each location's float ``[batch, tokens × width]``."""
        ...

    def source_vectors(self, encoded: Sequence[Encoded], location: Location) -> Tensor:
        """float32 ``[len(encoded), tokens × width]``: each example's vector at ``location``."""
        ...

    def interchange_logits(self, bases: Sequence[Encoded], sources: Tensor, location: Location, *,
                           batch_size: int | None = None, on_rows: Callable[[int], None] | None = None) -> Tensor:  # fmt: skip
        """float32 ``[len(bases), n_sources, n_labels]``, as :func:`interp.engine.interchange_logits`."""
        ...


class HFBackend:
    """The Hugging Face model itself: PyTorch hooks (:func:`interp.hooks.hooked`) and the batched engine."""

    name = "hf"

    def __init__(self, model) -> None:
        self.model = model

    @torch.no_grad()
    def read(self, inputs, positions, locations):
        with hooked(self.model, positions, read=list(locations)) as trace:
            self.model(**inputs)
        return dict(trace)

    def source_vectors(self, encoded, location):
        return source_vectors(self.model, encoded, location)

    def interchange_logits(self, bases, sources, location, *, batch_size=None, on_rows=None):
        return interchange_logits(self.model, bases, sources, location, batch_size=batch_size, on_rows=on_rows)


def check_backend_name(name: str) -> str:
    """``name`` if it is one of :data:`BACKENDS` and, for ``transformer-lens``, the package is installed.

    Raises:
        ConfigError: naming ``backend=``: an unknown backend, or transformer-lens not installed.
    """
    if name not in BACKENDS:
        raise ConfigError(f"{named('backend')} must be one of {', '.join(BACKENDS)}, got {name!r}")
    if name == "transformer-lens" and importlib.util.find_spec("transformer_lens") is None:
        raise ConfigError(f"{named('backend', 'transformer-lens')}: the transformer-lens package is not installed; pip install 'interp[tl]'")
    return name


def get_backend(name: str, model, tokenizer=None) -> Backend:
    """The backend ``name`` on ``model`` (a Hugging Face classifier in eval mode).

    ``transformer-lens`` wraps a copy of ``model`` in a TransformerBridge
    (the model itself is left as it is) and needs its ``tokenizer``.

    Raises:
        ConfigError: as :func:`check_backend_name`; or a model the bridge's classifier adapter does not cover.
    """
    check_backend_name(name)
    if name == "hf":
        return HFBackend(model)
    from interp.backends.tl_bridge import BridgeBackend  # transformer-lens only when asked for

    return BridgeBackend(model, tokenizer)
