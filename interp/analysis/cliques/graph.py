"""The intervention graph (Geiger, Richardson & Potts 2020, Appendix A.3).

A node per example. An edge i–j when the model agrees with the causal model
on the interchange from i to j, from j to i, and on both self-interchanges
(i to i, j to j: the model must get i and j themselves right, so an example
the model gets wrong is in no clique). An edge is *causal* when
its two examples differ in the intervened variable (for INFER's
lexrel: lexrel(i) != lexrel(j)): on it the intervention must flip the output. A
clique is then a subset of examples on which the network mimics the causal
dynamics of INFER at that location. The variable is the one intervened on:
its values come from the interventions file (``Interventions.values``),
never from a fixed column.

Usage::

    graph = build_graph(model_pred, causal_pred, values)   # values: int [n], the variable's value per example
    graph.edges.sum() // 2, graph.causal.sum() // 2
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from interp.core.errors import ConfigError


@dataclass(frozen=True)
class InterventionGraph:
    """Boolean adjacency matrices ``[n, n]``, symmetric, with an empty diagonal."""

    edges: np.ndarray
    causal: np.ndarray

    @property
    def n_nodes(self) -> int:
        return self.edges.shape[0]

    @property
    def n_edges(self) -> int:
        return int(self.edges.sum() // 2)

    @property
    def n_causal_edges(self) -> int:
        return int(self.causal.sum() // 2)

    @property
    def density(self) -> float:
        """Edges over possible edges, n (n - 1) / 2; 0 for fewer than two nodes."""
        n = self.n_nodes
        return self.n_edges / (n * (n - 1) / 2) if n > 1 else 0.0


def build_graph(model_pred: np.ndarray, causal_pred: np.ndarray, values: np.ndarray) -> InterventionGraph:
    """The graph from outcome matrices.

    Args:
        model_pred, causal_pred: int ``[n, n]``, row = base, column = source,
            label ids; -1 where the pair was not run (no edge then).
        values: int ``[n]``, each example's value of the intervened variable.

    Raises:
        ConfigError: shapes that do not fit together.
    """
    n = len(values)
    if model_pred.shape != (n, n) or causal_pred.shape != (n, n):
        raise ConfigError(f"outcome matrices must be [{n}, {n}], got {model_pred.shape} and {causal_pred.shape}")
    agree = (model_pred >= 0) & (causal_pred >= 0) & (model_pred == causal_pred)
    itself = np.diagonal(agree).copy()
    edges = agree & agree.T & itself[:, None] & itself[None, :]
    np.fill_diagonal(edges, False)
    causal = edges & (values[:, None] != values[None, :])
    return InterventionGraph(edges=edges, causal=causal)
