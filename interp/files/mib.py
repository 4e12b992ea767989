"""MIB's submission layout for a featurizer at one site: ``{unit}_featurizer``, ``{unit}_inverse_featurizer``, ``{unit}_indices``.

Usage::

    write_mib_unit(folder / "ResidualStream(Layer-20,Token-last_token)", intervention)   # a trained DAS or DBM, or the full vector
    chosen = read_mib_unit(folder / "ResidualStream(Layer-20,Token-last_token)", width=576)  # a ChosenFeatures, scored as any intervention

The causal variable track of MIB (Mueller et al. 2025, §4; its ``MIB-causal-variable-track`` README) takes, for each
task, model and variable, a folder ``{TASK}_{MODEL}_{VARIABLE}`` holding three files per model unit: the featurizer
and its inverse, each a ``torch.save`` of ``{"model_info": {...}, "state_dict": {...}}`` (``model_info``:
``featurizer_class``, ``inverse_featurizer_class``, ``n_features``, ``additional_config``), and the feature
indices, one line of JSON (a list, or ``null`` for every feature). Two of its classes carry what interp trains:

* ``IdentityFeaturizerModule`` (the neurons): the full vector (indices ``null``) and DBM over the neurons (the hard
  mask's indices);
* ``SubspaceFeaturizerModule``, an orthonormal ``width × k`` rotation in ``additional_config["rotation_matrix"]``
  (features ``x @ R``, error ``x − f Rᵀ``) and its state dict as torch's orthogonal parametrization of that matrix
  holds it (pyvene's ``LowRankRotateLayer``, whose weight is the matrix): DAS's first ``k`` columns, indices all ``k``.

DBM over a PCA basis of standardized activations and over an SAE have no class there that computes what interp's do
(MIB's subspace featurizer has no standardization; its SAE featurizer is not saved), so they are refused by name. A
unit is read back as :class:`~interp.engine.featurizers.ChosenFeatures`, which computes the same interchange.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from torch import nn
from torch.nn.utils import parametrizations

from interp.core.errors import ConfigError, DataError, named
from interp.engine.featurizers import ChosenFeatures, FeatureMask, Identity, LinearBasis
from interp.engine.interventions import Interchange, Intervention, RotatedSubspace

IDENTITY = ("IdentityFeaturizerModule", "IdentityInverseFeaturizerModule")
SUBSPACE = ("SubspaceFeaturizerModule", "SubspaceInverseFeaturizerModule")


def mib_unit_name(block: int, position: str) -> str:
    """MIB's name of the residual stream after ``block`` at a token position (``last``/``cls`` is its ``last_token``)."""
    return f"ResidualStream(Layer-{int(block)},Token-{'last_token' if position in ('last', 'cls') else position})"


def _rotation_state(matrix: torch.Tensor) -> dict:
    """The state dict of a module holding ``matrix`` as ``rotate.weight`` under torch's orthogonal parametrization."""
    layer = nn.Module()
    layer.weight = nn.Parameter(torch.empty_like(matrix))
    parametrizations.orthogonal(layer)
    with torch.no_grad():
        layer.weight = matrix.clone()
    holder = nn.Module()
    holder.rotate = layer
    return {k: v.detach().clone() for k, v in holder.state_dict().items()}


def _parts(intervention: Intervention) -> tuple[tuple[str, str], int, dict, dict, list | None]:
    """(classes, n_features, additional_config, state_dict, indices) of ``intervention`` in MIB's terms."""
    if isinstance(intervention, Interchange):
        return IDENTITY, intervention.width, {}, {}, None
    if isinstance(intervention, FeatureMask) and isinstance(intervention.featurizer, Identity):
        return IDENTITY, intervention.width, {}, {}, torch.nonzero(intervention.hard_mask()).flatten().tolist()
    if isinstance(intervention, RotatedSubspace):
        matrix = intervention.matrix.detach()[:, : intervention.k].float().contiguous()
        return SUBSPACE, intervention.k, {"rotation_matrix": matrix, "requires_grad": False}, _rotation_state(matrix), list(range(intervention.k))
    kind = getattr(getattr(intervention, "featurizer", None), "name", None) or getattr(intervention, "kind", type(intervention).__name__)
    raise ConfigError(f"{named('intervention')}: MIB's layout has no featurizer that computes a {kind!r} interchange as interp does; "
                      "the full vector, DAS (rotated) and DBM over the neurons can be exported")  # fmt: skip


def write_mib_unit(prefix: str | Path, intervention: Intervention) -> tuple[Path, Path, Path]:
    """Write ``prefix_featurizer``, ``prefix_inverse_featurizer`` and ``prefix_indices`` for ``intervention`` (module
    docstring); returns the three paths. The caller writes into a folder of its own (none of them is replaced here).

    Raises:
        ConfigError: naming ``intervention=``: a kind MIB's layout cannot carry.
        DataError: naming the path: one of the three exists.
    """
    classes, n_features, config, state, indices = _parts(intervention)
    prefix = Path(prefix)
    paths = tuple(prefix.with_name(prefix.name + end) for end in ("_featurizer", "_inverse_featurizer", "_indices"))
    taken = [p for p in paths if p.exists()]
    if taken:
        raise DataError(f"{taken[0]}: exists; a MIB unit is written once, into a new folder")
    info = {"featurizer_class": classes[0], "inverse_featurizer_class": classes[1], "n_features": n_features, "additional_config": config}
    torch.save({"model_info": info, "state_dict": state}, paths[0])
    torch.save({"model_info": info, "state_dict": state}, paths[1])
    paths[2].write_text(json.dumps(indices) + "\n")
    return paths  # type: ignore[return-value]


def read_mib_unit(prefix: str | Path, width: int) -> ChosenFeatures:
    """The unit at ``prefix`` as :class:`~interp.engine.featurizers.ChosenFeatures` at a site ``width`` wide.

    Raises:
        DataError: naming the file: missing, not a torch file of MIB's form, a featurizer class interp does not read,
            a rotation of another width or not orthonormal, indices that are not a JSON list or ``null`` or lie
            outside the features.
    """
    prefix = Path(prefix)
    path = prefix.with_name(prefix.name + "_featurizer")
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
        info = saved["model_info"]
        kind = info["featurizer_class"]
    except FileNotFoundError:
        raise DataError(f"{path}: no such MIB featurizer file") from None
    except Exception as exc:  # noqa: BLE001 - any other failure is a file that is not MIB's
        raise DataError(f"{path}: not a MIB featurizer file ({type(exc).__name__})") from None
    if kind == IDENTITY[0]:
        featurizer = Identity(width)
    elif kind == SUBSPACE[0]:
        matrix = info.get("additional_config", {}).get("rotation_matrix")
        if not isinstance(matrix, torch.Tensor) or matrix.ndim != 2 or matrix.shape[0] != width:
            raise DataError(f"{path}: its rotation is {tuple(getattr(matrix, 'shape', ()))}, not [{width}, k] for a site {width} wide")
        try:
            featurizer = LinearBasis.from_rotation(matrix.float())
        except ConfigError as exc:
            raise DataError(f"{path}: {exc}") from None
    else:
        raise DataError(f"{path}: featurizer class {kind!r}; interp reads {IDENTITY[0]} and {SUBSPACE[0]}")
    index_path = prefix.with_name(prefix.name + "_indices")
    try:
        indices = json.loads(index_path.read_text().splitlines()[0])
        if indices is not None and not (isinstance(indices, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in indices)):
            raise ValueError
        return ChosenFeatures.indices(featurizer, indices)
    except FileNotFoundError:
        raise DataError(f"{index_path}: no such MIB indices file") from None
    except (ValueError, IndexError, ConfigError) as exc:
        raise DataError(f"{index_path}: the indices must be one line, a JSON list of feature numbers below {featurizer.n_features} or null"
                        + (f" ({exc})" if isinstance(exc, ConfigError) else "")) from None  # fmt: skip
