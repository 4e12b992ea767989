"""One unit of ``interp localize`` against the same unit as ``interp das`` runs it: what leaving out the localist block saves.

    .venv/bin/python benchmarks/localize.py --model smollm2-135m --task ioi --location blocks.20.hook_resid_post@last

A unit of ``interp das`` trains its intervention and scores it beside vanilla interchange and the localist baseline,
the best block of ``k`` coordinates: every block of a site ``width`` wide (``width // k`` of them) scored on up to 256
training pairs, ``width // k × 256`` suffix runs. MIB's comparison is between featurizers, so ``interp localize``
leaves that block out (``interp.api.das.train(localist=False)``). Here both run on the same example set, variable,
location, pairs and seed, for each featurizer of ``--featurizers`` (the example set's prefix and pairs drawn once
before either is timed): seconds of each, the ratio, and whether the trained intervention's held-out IIA is the same
(it must be: the same training, the baseline beside it or not).
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings

import torch

import interp
from interp.api import das
from interp.core.subsets import seeded_subset

KINDS = {"das": "rotated", "dbm": "dbm"}


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--task", default="ioi")
    parser.add_argument("--location", default="blocks.20.hook_resid_post@last")
    parser.add_argument("--variable", default="output_position")
    parser.add_argument("--featurizers", default="das,dbm")
    parser.add_argument("--examples", type=int, default=400)
    parser.add_argument("--train-pairs", type=int, default=256)
    parser.add_argument("--test-pairs", type=int, default=200)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", category=interp.InterpWarning)
    lab = interp.IntervenableModel(args.model, args.task, wordpiece="last")
    examples = seeded_subset(lab.task.examples(lab.task.splits), args.examples, 0)
    bound = lab.bind(examples)
    loc = lab.location(args.location)
    bound.pairs(loc)  # the prefix, once, before anything is timed
    das.pairs(bound, args.variable, seed=0, test_share=0.2, n_pairs=args.train_pairs, test_pairs=args.test_pairs)
    print(f"machine: {platform.processor() or platform.machine()}, {torch.get_num_threads()} threads, torch {torch.__version__}")
    rows = []
    for name in args.featurizers.split(","):
        kind = KINDS[name]
        timed = {}
        for localist in (True, False):
            began = time.perf_counter()
            found = das.train(bound, loc, args.variable, k=16 if kind == "rotated" else None, kind=kind, n_pairs=args.train_pairs,
                              epochs=args.epochs, lr=1e-2, batch_size=64, seed=0, test_share=0.2, test_pairs=args.test_pairs,
                              warn_unlearned=False, localist=localist)  # fmt: skip
            timed[localist] = (time.perf_counter() - began, float(found.iia))
        row = {"featurizer": name, "with_block_s": timed[True][0], "without_s": timed[False][0], "ratio": timed[True][0] / timed[False][0],
               "same_iia": timed[True][1] == timed[False][1]}  # fmt: skip
        rows.append(row)
        print(f"{name}: das's unit {row['with_block_s']:.1f} s, localize's {row['without_s']:.1f} s ({row['ratio']:.2f}x); "
              f"held-out IIA {timed[False][1]:.3f}, {'the same' if row['same_iia'] else 'DIFFERENT'} in both")  # fmt: skip
    return rows


if __name__ == "__main__":
    main()
