"""Probe sweep speed: the batched torch sweep against scikit-learn defaults, same data, same folds.

    .venv/bin/python benchmarks/probes.py --cache runs/demo/activations.h5

Baseline: for a sample of locations, one scikit-learn estimator per (target,
label set, fold), as a plain loop would: ``LogisticRegression()`` and
``MLPClassifier(hidden_layer_sizes=(4,))`` with their defaults, on the task
labels and the type-control labels, 5 folds, 1 seed; the full sweep's
baseline time is extrapolated from it. Then the batched sweep
(:func:`interp.jobs.probe_sweep.sweep_location`) on the same sample and on all
locations. Held-out accuracies of both are printed side by side.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.neural_network import MLPClassifier

from interp.analysis.probes.controls import TypeControl
from interp.files.activations import open_cache
from interp.hooks.locations import Location
from interp.jobs.probe_sweep import (
    ProbeSweepConfig,
    _labels,
    control_units,
    sweep_location,
)


def sklearn_location(X, y_by_target, units, folds: int) -> tuple[dict, float]:
    """Held-out task accuracy per (target, kind), and seconds, for the scikit-learn loop."""
    started = time.perf_counter()
    acc = {}
    for target, y in y_by_target.items():
        control = TypeControl(random_state=0).fit_transform(units, y)
        for kind, make in (("linear", lambda: LogisticRegression()), ("mlp", lambda: MLPClassifier(hidden_layer_sizes=(4,), random_state=0))):
            scores = []
            for labels in (y, control):
                for train, test in StratifiedKFold(folds, shuffle=True, random_state=0).split(X, y):
                    scores.append(make().fit(X[train], labels[train]).score(X[test], labels[test]))
            acc[(target, kind)] = float(np.mean(scores[:folds]))
    return acc, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", required=True)
    parser.add_argument("--sample", default="blocks.0.hook_resid_pre@w_h,blocks.2.hook_resid_post@w_h,blocks.5.hook_resid_post@cls")
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=ConvergenceWarning)

    with open_cache(args.cache) as cache:
        n_layers = cache.meta["n_layers"]
        ids = np.array(cache.example_ids)
        targets = _labels(cache, ("lexrel", "infer"))
        words = {role: cache.words(role) for role in cache.word_roles}
        vectors = {name: cache.vectors(name) for name in cache.meta["locations"]}
    sample = [Location.parse(s, n_layers) for s in args.sample.split(",")]
    config = ProbeSweepConfig(cache=args.cache, out="", seeds=1, folds=args.folds)

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, threads {torch.get_num_threads()}")
    print(f"cache {args.cache}: {len(ids)} examples, {len(vectors)} locations, d_model {next(iter(vectors.values())).shape[1]}")
    sk_seconds = ours_sample = 0.0
    for loc in sample:
        units = control_units(loc.roles, words)
        sk_acc, seconds = sklearn_location(vectors[str(loc)], targets, units, args.folds)
        sk_seconds += seconds
        started = time.perf_counter()
        rows = sweep_location(vectors[str(loc)], loc, targets, ids, words, config)
        ours_sample += time.perf_counter() - started
        for row in rows:
            print(
                f"  {loc!s:32} {row['target']:7} {row['probe']:6} held-out task accuracy: "
                f"scikit-learn {sk_acc[(row['target'], row['probe'])]:.3f}  interp {row['task_acc_mean']:.3f}"
            )
    n_all = len(vectors)
    # The baseline fits task + type control; the batched sweep also fits the shuffle control (3/2 the probes).
    print(f"sample of {len(sample)} locations, 2 targets, task + type control, {args.folds} folds, both probe kinds:")
    print(f"  scikit-learn loop {sk_seconds:7.1f} s   -> full sweep of {n_all} locations ~ {sk_seconds * n_all / len(sample):7.0f} s (extrapolated)")
    print(f"  interp batched    {ours_sample:7.1f} s   (also fits the shuffle control)")
    started = time.perf_counter()
    for name, X in vectors.items():
        sweep_location(X, Location.parse(name), targets, ids, words, config)
    full = time.perf_counter() - started
    print(f"full sweep, {n_all} locations x 2 targets x 3 label sets x {args.folds} folds x 1 seed, both kinds: {full:.1f} s")
    print(f"speed-up against the extrapolated scikit-learn loop: {sk_seconds * n_all / len(sample) / full:.1f}x")


if __name__ == "__main__":
    main()
