"""A null for the clique search: does the model's intervened label depend on the source? Its own intervened labels,
shuffled within each base.

The chance baselines of :mod:`interp.analysis.cliques.baselines` ask how
many cliques a *random graph* of the observed density would hold. A graph
is not random, though: a model that ignores the intervention (its label
stays the base's whatever the source) still gives rows of agreement, and
the search finds large cliques in them whose odds under a random graph
look astronomical. Here the null keeps everything about the model except
what the interchange is about, the *source*:

* each base's row of intervened labels (``model_pred[i, :]``, the self-
  interchange on the diagonal left in place) is permuted among its other
  sources, so a base keeps how often each label came out of it, and the
  examples the model gets right stay the ones it gets right;
* the graph is rebuilt with the same counterfactuals and the same search
  run (same α values and minimum size);
* the observed largest clique is compared with the largest of each
  shuffle: ``p = (1 + #{shuffle ≥ observed}) / (1 + shuffles)``.

**What it tests: source dependence, not learning.** A model whose
intervened labels do not depend on the source (it ignores the
intervention, or its labels are drawn afresh for every pair) meets the null
(``p`` near 1). A model whose labels do depend on the source beats it, *whether
or not* they depend on it the way the causal model says: a model at chance
whose interventions move its outputs (its label a function of the source
unrelated to the counterfactual) gives column-wise agreement that shuffling
breaks, and a small ``p`` (``tests/test_cliques.py``: labels that are a
random function of the source, agreeing with the counterfactuals on half
the pairs, beat it at p < 0.05). Beating it is necessary for a clique to mean anything, not
sufficient: the at-chance gate of the clique job is what keeps a model that
learned nothing from being read as evidence. What it does not cover either:
structure shared by whole rows or columns (a base the model always flips),
and the examples beyond those in the file.

>>> import numpy as np
>>> values = np.array([0, 1] * 20)
>>> counterfactual = np.tile(values, (40, 1))                 # the label follows the source's value
>>> ignores = np.tile(values[:, None], (1, 40))               # a model that keeps the base's label
>>> shuffle_null(ignores, counterfactual, values, range(1, 4), 2, n_shuffles=20)["p_value"]
1.0
>>> shuffle_null(counterfactual, counterfactual, values, range(1, 4), 2, n_shuffles=20)["p_value"] < 0.05
True
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from interp.analysis.cliques.graph import build_graph
from interp.analysis.cliques.search import search
from interp.core.checks import check_int

#: Shuffles of the null unless told otherwise, and their seed; where the observed clique beats every one (``p`` on its
#: floor, 1 / (1 + shuffles)), the search is rerun on :data:`MORE_SHUFFLES` in all, so the floor is lower.
N_SHUFFLES = 50
MORE_SHUFFLES = 200
SEED = 0
METHOD = ("intervened labels shuffled among each base's sources (self-interchange kept), the same search rerun: a test that the "
          "labels depend on the source, not that they follow the causal model")


def shuffled_within_rows(model_pred: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``model_pred`` (int ``[n, n]``, row = base) with each row's off-diagonal entries permuted; the diagonal kept."""
    n = model_pred.shape[0]
    off = ~np.eye(n, dtype=bool)
    rows = model_pred[off].reshape(n, n - 1)
    order = np.argsort(rng.random(rows.shape), axis=1)  # an independent permutation per row
    out = model_pred.copy()
    out[off] = np.take_along_axis(rows, order, axis=1).reshape(-1)
    return out


def largest_clique(model_pred: np.ndarray, causal_pred: np.ndarray, values: np.ndarray, alphas: Iterable[int], min_size: int) -> int:
    """The size of the largest clique with a causal edge the search finds (0: none of at least ``min_size``)."""
    result = search(build_graph(model_pred, causal_pred, values), tuple(alphas), min_size)
    return len(result.best[0]) if result.best else 0


def shuffle_null(model_pred: np.ndarray, causal_pred: np.ndarray, values: np.ndarray, alphas: Iterable[int], min_size: int, *,
                 n_shuffles: int = N_SHUFFLES, seed: int = SEED) -> dict:  # fmt: skip
    """The observed largest clique against the same search on ``n_shuffles`` row-shuffled grids.

    Args:
        model_pred, causal_pred: int ``[n, n]`` label ids, row = base, column = source (-1: not run).
        values: int ``[n]``, the intervened variable's value per example.
        alphas, min_size: the search's settings (:func:`~interp.analysis.cliques.search.search`).
        n_shuffles, seed: the null's shuffles and their seed; where the observed clique beats every one, the search
            is rerun to :data:`MORE_SHUFFLES` in all.

    Returns:
        ``observed`` (examples), ``shuffled`` (the largest clique of each shuffle), ``median``, ``high`` (their 95th
        percentile), ``p_value`` (one-sided, the share of shuffles at least as large, with the observed counted once),
        ``beats_null`` (``p_value < 0.05``), ``shuffles``, ``seed`` and ``method``.

    Raises:
        ConfigError: naming ``n_shuffles`` below 1.
    """
    check_int(n_shuffles, "n_shuffles", least=1)
    alphas = tuple(alphas)
    rng = np.random.default_rng(seed)
    return _against(largest_clique(model_pred, causal_pred, values, alphas, min_size),
                    lambda: largest_clique(shuffled_within_rows(model_pred, rng), causal_pred, values, alphas, min_size),
                    n_shuffles, seed, METHOD)  # fmt: skip


def _against(observed: int, draw, n_shuffles: int, seed: int, method: str) -> dict:
    """The observed largest clique against ``n_shuffles`` draws of the null (``draw()``: one draw's largest clique),
    rerun to :data:`MORE_SHUFFLES` in all where the observed beats every one (``p`` on its floor): the record
    :func:`shuffle_null` and :func:`relation_null` return."""
    shuffled = [draw() for _ in range(n_shuffles)]
    if observed > max(shuffled) and n_shuffles < MORE_SHUFFLES:  # p on its floor: a lower floor before it is read
        shuffled += [draw() for _ in range(MORE_SHUFFLES - n_shuffles)]
    p = (1 + sum(s >= observed for s in shuffled)) / (1 + len(shuffled))
    return {"observed": observed, "shuffled": shuffled, "median": float(np.median(shuffled)), "high": float(np.percentile(shuffled, 95)),
            "p_value": float(p), "beats_null": bool(p < 0.05), "shuffles": len(shuffled), "seed": seed, "method": method}  # fmt: skip


RELATION_METHOD = ("the causal model's side (its counterfactuals and values) permuted among examples the model labels alike, the "
                   "model's intervened labels kept, the same search rerun: a test that the labels follow the causal model, not "
                   "only the source")


def permuted_within_classes(classes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A permutation of ``range(n)`` that moves each example only among those of its own class (int ``[n]``)."""
    classes = np.asarray(classes)
    perm = np.arange(len(classes))
    for c in np.unique(classes):
        members = np.flatnonzero(classes == c)
        perm[members] = rng.permutation(members)
    return perm


def relation_null(model_pred: np.ndarray, causal_pred: np.ndarray, values: np.ndarray, classes: np.ndarray, alphas: Iterable[int],
                  min_size: int, *, n_shuffles: int = N_SHUFFLES, seed: int = SEED) -> dict:  # fmt: skip
    """The observed largest clique against the same search with the causal model's side permuted among examples of one
    class (the model's own label): each example's counterfactuals, as base and as source, and its value go to another
    example the model labels alike, the model's intervened labels stay. A model whose labels depend on the source in a
    way unrelated to the causal model (a random function of the source, or a copy of the source's own label, which a
    permutation within the source's class keeps) meets this null; one whose labels follow the counterfactuals does not.
    (Geiger, Richardson & Potts 2020, Appendix A.3, read cliques as evidence of the causal model; this is the null that
    claim has to beat.)

    Args:
        model_pred, causal_pred, values: as :func:`shuffle_null`.
        classes: int ``[n]``, each example's class (the model's own label on it).
        n_shuffles, seed: permutations and their seed; with ``p`` on its floor, rerun to :data:`MORE_SHUFFLES`.

    Returns:
        As :func:`shuffle_null` (``method``: :data:`RELATION_METHOD`).

    Raises:
        ConfigError: naming ``n_shuffles`` below 1.
    """
    check_int(n_shuffles, "n_shuffles", least=1)
    alphas = tuple(alphas)
    rng = np.random.default_rng(seed)

    def permuted() -> int:
        perm = permuted_within_classes(classes, rng)
        return largest_clique(model_pred, causal_pred[np.ix_(perm, perm)], np.asarray(values)[perm], alphas, min_size)

    return _against(largest_clique(model_pred, causal_pred, values, alphas, min_size), permuted, n_shuffles, seed, RELATION_METHOD)


def copy_gate(model_pred: np.ndarray, causal_pred: np.ndarray, own: np.ndarray, *, seed: int = SEED) -> dict:
    """Whether the interchanges follow the causal model more often than they copy the source's own label: IIA and the
    copies-the-source null over every run pair but the self-interchange, and their difference with its 95% interval
    (one draw of the examples for bases and sources, :class:`~interp.analysis.bootstrap.ExampleBootstrap`). A site
    whose IIA does not stand above copying (the last [CLS], read by the head) is no evidence about the causal model,
    whatever its cliques. ``passes``: the difference's interval lies above 0."""
    from interp.analysis.bootstrap import ExampleBootstrap

    n = model_pred.shape[0]
    mask = (causal_pred >= 0) & ~np.eye(n, dtype=bool)
    iia_hits, copy_hits = model_pred == causal_pred, model_pred == np.asarray(own)[None, :]
    boot = ExampleBootstrap(n, n, square=True, seed=seed)
    iia, copies = boot.estimate(iia_hits, mask), boot.estimate(copy_hits, mask)
    gap = boot.interval(float(iia) - float(copies), boot.share(iia_hits, mask) - boot.share(copy_hits, mask))
    return {"iia": [float(iia), iia.low, iia.high], "copies_source": [float(copies), copies.low, copies.high],
            "difference": [float(gap), gap.low, gap.high], "passes": bool(gap.low > 0), "method": boot.method}  # fmt: skip


__all__ = ["METHOD", "MORE_SHUFFLES", "N_SHUFFLES", "RELATION_METHOD", "copy_gate", "largest_clique", "permuted_within_classes",
           "relation_null", "shuffle_null", "shuffled_within_rows"]
