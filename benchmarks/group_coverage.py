"""How often the grouped bootstrap's 95% interval covers the population IIA, by the number of groups (simulated grids).

    .venv/bin/python benchmarks/group_coverage.py --groups 10,15,20,40 --grids 400

A square grid of examples in groups of uneven sizes (1 to 5 examples, drawn per grid, as MoNLI's word pairs hold 1 to
5 sentences), every pair a hit with probability ``sigmoid(mu + u[group of base] + u[group of source] + e)``: a group
effect ``u ~ N(0, 0.8)`` shared by every example of the group, an example effect ``e ~ N(0, 0.4)``. The population
IIA is that probability's mean over new groups and examples (from 400,000 draws). Each grid's interval is the
percentile interval of :class:`interp.analysis.bootstrap.ExampleBootstrap` over its groups (1,000 replicates), as
every IIA of a task with groups gets; coverage is the share of grids whose interval holds the population IIA, with its
Wilson interval over the grids.
"""

from __future__ import annotations

import argparse
import os
import platform

import numpy as np

from interp.analysis.bootstrap import ExampleBootstrap
from interp.core.estimates import wilson

MU, GROUP_SD, EXAMPLE_SD = 0.3, 0.8, 0.4


def population(rng: np.random.Generator, n: int = 400_000) -> float:
    """The population IIA: the hit probability's mean over independent groups and examples for base and source."""
    z = MU + rng.normal(0, GROUP_SD, n) + rng.normal(0, GROUP_SD, n) + rng.normal(0, EXAMPLE_SD, n) + rng.normal(0, EXAMPLE_SD, n)
    return float(np.mean(1 / (1 + np.exp(-z))))


def grid(rng: np.random.Generator, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """One simulated square grid: hits (bool ``[n, n]``) and each example's group."""
    sizes = rng.integers(1, 6, n_groups)
    groups = np.repeat(np.arange(n_groups), sizes)
    effect = rng.normal(0, GROUP_SD, n_groups)[groups] + rng.normal(0, EXAMPLE_SD, len(groups))
    z = MU + effect[:, None] + effect[None, :]
    return rng.random(z.shape) < 1 / (1 + np.exp(-z)), groups


def coverage(n_groups: int, grids: int, truth: float, seed: int) -> tuple[int, float]:
    rng = np.random.default_rng(seed)
    held = 0
    for k in range(grids):
        hits, groups = grid(rng, n_groups)
        boot = ExampleBootstrap(len(groups), len(groups), square=True, seed=k, base_groups=groups)
        found = boot.estimate(hits, np.ones_like(hits))
        held += found.low <= truth <= found.high
    return held, held / grids


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--groups", default="10,15,20,40")
    parser.add_argument("--grids", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    truth = population(np.random.default_rng(12345))
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; population IIA {truth:.4f}; {args.grids} grids a setting")
    print(f"{'groups':>7}  {'coverage of the 95% interval [95% over grids]':>46}")
    for n_groups in map(int, args.groups.split(",")):
        held, share = coverage(n_groups, args.grids, truth, args.seed + n_groups)
        interval = wilson(held, args.grids)
        print(f"{n_groups:>7}  {share:>20.3f} [{interval.low:.3f}, {interval.high:.3f}]", flush=True)


if __name__ == "__main__":
    main()
