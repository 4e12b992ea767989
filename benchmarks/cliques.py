"""Clique search speed: the fast greedy search against the literal one-node-at-a-time reference.

    .venv/bin/python benchmarks/cliques.py [--interventions runs/demo/interventions.h5]

Graphs over all 2,678 MoNLI examples (lexrel from the real data; without
the data, a seeded random half): (a) G(n, 1/2), the paper's chance model;
(b) clustered: 40 groups with edge probability 0.9 inside and 0.3 across;
(c) with ``--interventions``, the demo's real 200-node graph, and (d) that
graph blown up to 2,678 nodes (each node a copy of a random real node,
edges as between the originals, 5% of pairs flipped). For each: the search
over α = 1..10 as `interp cliques` runs it (peeling down to the chance
level) and peeling to the end (min size 2), best of 3. The reference (:mod:`interp.analysis.cliques.reference`) runs on the first 400
nodes of (b) at α = 2 only (it is cubic), against the fast search on the
same subgraph; both must find the same cliques.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from interp.analysis.cliques import (
    build_graph,
    chance_clique_size,
    disjoint_cliques,
    search,
)
from interp.analysis.cliques.graph import InterventionGraph
from interp.analysis.cliques.reference import reference_cliques


def lexrel_of_monli(n: int, rng) -> np.ndarray:
    try:
        from interp.tasks.monli import Lexrel, load_monli

        return np.array([0 if e.lexrel is Lexrel.FORWARD else 1 for e in load_monli()])
    except Exception:  # no MoNLI here: a seeded random half
        return rng.integers(0, 2, n)


def graph_from(upper: np.ndarray, lexrel: np.ndarray) -> InterventionGraph:
    upper = np.triu(upper, 1)
    edges = upper | upper.T
    return InterventionGraph(edges=edges, causal=edges & (lexrel[:, None] != lexrel[None, :]))


def best_of(fn, repeats: int = 3) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interventions", default=None)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n = 2678
    lexrel = lexrel_of_monli(n, rng)
    groups = rng.integers(0, 40, n)
    same = groups[:, None] == groups[None, :]
    graphs = {
        "G(2678, 1/2)": graph_from(rng.random((n, n)) < 0.5, lexrel),
        "clustered 2678": graph_from(rng.random((n, n)) < np.where(same, 0.9, 0.3), lexrel),
    }
    if args.interventions:
        from interp.files.interventions import open_interventions

        with open_interventions(args.interventions) as file:
            loc = file.location(None)
            real = build_graph(file.matrix("model_pred"), file.matrix("causal_pred"), file.values().codes)
            real_lexrel = file.values().codes
        graphs[f"demo {loc}"] = real
        copy = rng.integers(0, real.n_nodes, n)
        tiled = real.edges[np.ix_(copy, copy)] ^ (rng.random((n, n)) < 0.05)
        tiled[copy[:, None] == copy[None, :]] = True  # copies of one example agree with each other
        graphs["demo blown up to 2678"] = graph_from(tiled, real_lexrel[copy])
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; numpy {np.__version__}")
    for name, graph in graphs.items():
        chance = chance_clique_size(graph.n_nodes, graph.density)
        for label, min_size in ((f"min size {chance} (chance)", chance), ("min size 2", 2)):
            seconds, result = best_of(lambda: search(graph, range(1, 11), min_size), repeats=3 if min_size > 2 else 1)
            sizes = [len(c) for c in result.best]
            print(f"{name:34} n {graph.n_nodes:5}  density {graph.density:.3f}  {label:22} α=1..10 in {seconds:7.3f} s; "
                  f"best α {result.best_alpha}, {len(sizes)} cliques, largest {sizes[:4]}", flush=True)
    sub = graphs["clustered 2678"]
    small = InterventionGraph(edges=sub.edges[:400, :400], causal=sub.causal[:400, :400])
    fast_s, fast = best_of(lambda: [c.nodes.tolist() for c in disjoint_cliques(small, 2)])
    started = time.perf_counter()
    slow = reference_cliques(small.edges, small.causal, 2)
    slow_s = time.perf_counter() - started
    assert fast == slow, "fast search and reference disagree"
    print(f"400 nodes, α = 2: reference {slow_s:.1f} s, fast {fast_s * 1000:.1f} ms, {slow_s / fast_s:.0f}x; same cliques")


if __name__ == "__main__":
    main()
