"""MIB's featurizers on indirect-object identification, on a pretrained decoder and on its re-initialised twin.

    .venv/bin/python examples/localization/ioi.py --model smollm2-135m --out docs/results/data/localization/ioi_smollm2.csv

For each block of ``--blocks`` at the last token, each variable of the IOI task's causal model (``output_position``,
``output_token``) and each featurizer of ``--featurizers`` (DAS's rotation with k = 16, DBM over the neurons, over PCA
and over an SAE fitted on the training examples), one row: the held-out IIA of the trained featurizer with its 95%
interval over name pairs, the same featurizer untrained, the full vector (vanilla interchange), the best block of as
many neurons, the two nulls (stays the base, copies the source) and chance, DAS's verdict, and the seconds it took.

Two controls no leaderboard reports: the untrained featurizer (DAS's own null) and the same featurizers trained and
scored the same way on the model with its weights re-initialised (seeded; "The Non-Linear Representation Dilemma",
Sutter et al. 2025, where learned maps reach high IIA on random models), on ``--control-blocks`` and
``--control-featurizers``. Examples are MIB's filter: the prompts the pretrained model answers right (how many of how
many is printed and kept in each row), at most ``--max-examples`` of them (seeded); the re-initialised model is scored
on the same prompts. Rows are appended as they finish; a run started again skips the rows its CSV holds.
"""

from __future__ import annotations

import argparse
import csv
import time
import warnings
from pathlib import Path

import torch

import interp
from interp.api.loading import Classifier
from interp.core.subsets import seeded_subset
from interp.models.loading import load_classifier
from interp.tasks.ioi import TEMPLATE, ioi_task, label_words

FIELDS = ("model", "variable", "block", "featurizer", "k", "iia", "iia_low", "iia_high", "untrained_iia", "untrained_iia_low",
          "untrained_iia_high", "vanilla_iia", "vanilla_iia_low", "vanilla_iia_high", "block_iia", "block_iia_low", "block_iia_high",
          "stays_base", "copies_source", "chance", "verdict", "examples", "kept", "of", "test_pairs", "seconds")  # fmt: skip
KINDS = {"das": "rotated", "dbm": "dbm", "dbm-pca": "dbm-pca", "dbm-sae": "dbm-sae"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--out", required=True)
    parser.add_argument("--blocks", default="12,20,26")
    parser.add_argument("--featurizers", default="das,dbm,dbm-pca")
    parser.add_argument("--control-blocks", default="20,26")
    parser.add_argument("--control-featurizers", default="das,dbm")
    parser.add_argument("--variables", default="output_position,output_token")
    parser.add_argument("--max-examples", type=int, default=400)
    parser.add_argument("--train-pairs", type=int, default=256)
    parser.add_argument("--test-pairs", type=int, default=200)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--k", type=int, default=16)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=interp.InterpWarning)
    task = ioi_task()
    reading = {"template": TEMPLATE, "label_words": label_words(task)}
    real = interp.IntervenableModel(interp.load_model(args.model, **reading), task)
    examples = task.load(("train", "test"))
    predicted = real.predict(examples).argmax(-1)
    right = [e for e, p in zip(examples, predicted.tolist()) if task.labels[p] == e.label]
    kept = seeded_subset(right, args.max_examples, 0)
    print(f"{args.model}: right on {len(right)} of {len(examples)} prompts (MIB's filter); {len(kept)} drawn")
    random = Classifier(*load_classifier(args.model, init="random", seed=0, **reading), f"{args.model} (re-initialised)")
    control = interp.IntervenableModel(random, task)
    out = Path(args.out)
    done = set()
    if out.is_file():
        done = {(r["model"], r["variable"], r["block"], r["featurizer"]) for r in csv.DictReader(open(out))}
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "w", newline="") as f:
            csv.DictWriter(f, FIELDS).writeheader()
    plan = [("pretrained", real, b, f) for b in args.blocks.split(",") for f in args.featurizers.split(",")]
    plan += [("re-initialised", control, b, f) for b in args.control_blocks.split(",") for f in args.control_featurizers.split(",")]
    for name, lab, block, featurizer in plan:
        for variable in args.variables.split(","):
            if (name, variable, block, featurizer) in done:
                continue
            started = time.perf_counter()
            kind = KINDS[featurizer]
            found = lab.train_das(kept, f"blocks.{block}.hook_resid_post@last", variable, kind=kind, k=args.k if kind == "rotated" else None,
                                  n_pairs=args.train_pairs, test_pairs=args.test_pairs, epochs=args.epochs, lr=args.lr, seed=0,
                                  warn_unlearned=False)  # fmt: skip
            row = {"model": name, "variable": variable, "block": block, "featurizer": featurizer, "k": found.k, "verdict": found.verdict,
                   "examples": len(kept), "kept": len(right), "of": len(examples), "test_pairs": len(found.held_out_pairs),
                   "chance": round(found.chance, 4), "stays_base": round(float(found.stays_base), 4),
                   "copies_source": round(float(found.copies_source), 4), "seconds": round(time.perf_counter() - started, 1)}  # fmt: skip
            for figure in ("iia", "untrained_iia", "vanilla_iia", "block_iia"):
                value = getattr(found, figure)
                row.update({figure: round(float(value), 4), f"{figure}_low": round(value.low, 4), f"{figure}_high": round(value.high, 4)})
            with open(out, "a", newline="") as f:
                csv.DictWriter(f, FIELDS).writerow(row)
            print(f"{name} {variable} block {block} {featurizer}: IIA {float(found.iia):.3f} [{found.iia.low:.3f}, {found.iia.high:.3f}] "
                  f"(k {found.k}; untrained {float(found.untrained_iia):.3f}, full vector {float(found.vanilla_iia):.3f}) {row['seconds']} s", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
