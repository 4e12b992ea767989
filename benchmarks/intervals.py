"""What the IIA intervals cost: the bootstrap over examples beside the interchange interventions it summarizes.

    .venv/bin/python benchmarks/intervals.py --model runs/demo_like --per-split 150      # 300 × 300 pairs, as the demo

Runs ``interp intervene``'s job (:func:`interp.jobs.intervene.run_interventions`) on a seeded mixed set of PMoNLI
and NMoNLI-test examples at one location for lexrel, negated and output, then times
:func:`interp.analysis.iia.summarize_all` on the file: the intervals' work, which ``intervene`` does twice (once to keep
the summaries in the file, once to print them). The share is that work over the rest of the job's wall time.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

import interp  # noqa: E402
from interp.analysis.iia import summarize_all  # noqa: E402
from interp.jobs.intervene import InterventionConfig, run_interventions  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="runs/demo/model")
    parser.add_argument("--location", default="blocks.2.hook_resid_post@w_h")
    parser.add_argument("--per-split", type=int, default=150)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = InterventionConfig(model=args.model, out=f"{tmp}/iv.h5", locations=args.location, variables=("lexrel", "negated", "output"),
                                    sample=interp.SampleSpec(("pmonli", "nmonli_test"), max_per_split=args.per_split), run=interp.RunSpec(device="cpu"))  # fmt: skip
        began = time.perf_counter()
        path = run_interventions(config, progress=False)
        job = time.perf_counter() - began
        began = time.perf_counter()
        summaries = summarize_all(path)
        intervals = time.perf_counter() - began
    n = 2 * args.per_split
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"{n} x {n} pairs at {args.location}, {len(summaries)} variables; 1,000 bootstrap replicates each")
    print(f"job wall {job:.1f} s (the intervals kept in the file included); intervals {intervals:.2f} s per pass, two passes per run")
    print(f"the intervals add {100 * 2 * intervals / (job - intervals):.1f}% to `interp intervene`")


if __name__ == "__main__":
    main()
