"""What `interp intervene --pairs all` spends outside the engine: its wall on every MoNLI pair with the engine stubbed.

    python benchmarks/host_overhead.py --monli DIR [--repeats 3] [--profile]

The engine's call (:meth:`interp.IntervenableModel.interchange_logits`) is
replaced by a stand-in that returns random logits of the right shape at
once, and the model is a tiny random BERT (3 blocks, width 32), so what is
left of the job's wall is its host-side work on all 7,171,684 pairs:
encoding the 2,678 examples, every pair's counterfactual, the unit files,
the HDF5 file with its summaries and intervals, the manifest and the chance
check. On a GPU that work is the gap between the engine's time and the
wall (``benchmarks/gpu.py``'s all-pairs arm); here it is measured on any
machine. Prints each repeat's seconds and their median; ``--profile`` adds
the top functions by cumulative time of one more run.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.append(str(Path(__file__).resolve().parent))

import torch  # noqa: E402


def run_once(monli: str) -> tuple[float, float]:
    """One job on all pairs with the engine stubbed: (wall seconds, seconds inside the stand-in)."""
    import interp
    from transformers import AutoTokenizer

    from gpu import LOCATION, random_classifier
    from interp.api.intervenable import IntervenableModel
    from interp.api.loading import Classifier
    from interp.jobs.intervene import InterventionConfig, run_interventions
    from interp.models import embedded_model_dir

    tokenizer = AutoTokenizer.from_pretrained(embedded_model_dir())
    model = Classifier(random_classifier("minilm", tokenizer, smoke=True).module, tokenizer, "<in memory>")
    inside = [0.0]
    original = IntervenableModel.interchange_logits

    def stand_in(self, bases, sources, location, *, on_rows=None):
        began = time.perf_counter()
        logits = torch.rand(len(bases), len(sources), len(self.model.labels))
        if on_rows is not None:
            on_rows(len(bases) * len(sources))
        inside[0] += time.perf_counter() - began
        return logits

    IntervenableModel.interchange_logits = stand_in
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config = InterventionConfig(model=model, out=f"{tmp}/all.h5", locations=LOCATION, variables=("lexrel",),
                                        data=interp.DataSpec(data_dir=monli), pairs="all", run=interp.RunSpec(device="cpu"))  # fmt: skip
            began = time.perf_counter()
            with warnings.catch_warnings():  # the random model is at chance on every split: its warnings say nothing here
                warnings.simplefilter("ignore")
                run_interventions(config, progress=False)
            return time.perf_counter() - began, inside[0]
    finally:
        IntervenableModel.interchange_logits = original


def main(argv: list[str] | None = None) -> list[float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--monli", default=os.environ.get("INTERP_MONLI_DIR"), help="MoNLI folder (default: $INTERP_MONLI_DIR)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    if args.monli is None:
        raise SystemExit("give --monli DIR (or set INTERP_MONLI_DIR)")
    run_once(args.monli)  # imports and caches warm
    walls = []
    for repeat in range(args.repeats):
        wall, inside = run_once(args.monli)
        walls.append(wall - inside)
        print(f"repeat {repeat}: wall {wall:.2f} s, of which the stand-in engine {inside:.2f} s: host-side {wall - inside:.2f} s", flush=True)
    print(f"host-side work of the all-pairs job, median of {args.repeats}: {statistics.median(walls):.2f} s "
          f"(torch {torch.__version__}, {torch.get_num_threads()} threads)")  # fmt: skip
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(run_once, args.monli)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
    return walls


if __name__ == "__main__":
    main()
