"""The attribution-patching screen against the exact head sweep of the same locations and pairs, at BERT-base shape.

    .venv/bin/python benchmarks/screen.py                        # BERT-base, 16 examples, the head sweep's locations at w_h
    .venv/bin/python benchmarks/screen.py --size minilm --examples 24

Random weights (speed does not depend on them): a seeded ``BertForSequenceClassification`` of the size
(``benchmarks/scale.py``'s) with MoNLI's two labels and the embedded model's tokenizer. The examples are a seeded
half-PMoNLI, half-NMoNLI-test sample, every one a base and a source (n² pairs). The locations are the head sweep's at
``w_h`` (``interp head-sweep --roles w_h``): every head's ``attn.hook_z``, every block's ``hook_attn_out``,
``hook_resid_mid`` and ``hook_mlp_out``, and the residual stream (193 at BERT-base).

* the screen: ``lab.screen`` at every location, with the QK fix and GradDrop (and, for comparison, without them),
  timed whole: gradients, the QK fix's per-pair attention, the estimates read against the causal model with their
  bootstrap intervals;
* the exact sweep: ``lab.interchange`` (the engine ``interp head-sweep`` runs, each base's prefix reused) timed at
  every residual location and at head 0 of every block. A block's other heads and its three component sites run the
  same suffix from the same block, so each is counted at its block's head-0 time: the sweep's total is that sum,
  **extrapolated and labelled so**;
* the end-to-end screen with ``--confirm`` K: the screen plus the exact time of the K locations it ranks highest and
  K drawn from the rest, from the same per-block times.

Prints one table; ``--out`` also writes it as JSON. The ratios are of this one run, on this machine; BENCHMARKS.md
records them with the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import warnings
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="base", help="minilm, base or large (benchmarks/scale.py's shapes)")
    parser.add_argument("--examples", type=int, default=16, help="examples, each a base and a source (n² pairs)")
    parser.add_argument("--confirm", type=int, default=10, help="K of the end-to-end figure")
    parser.add_argument("--data-dir", default=os.environ.get("INTERP_MONLI_DIR", "data/monli"))
    parser.add_argument("--models", default=None, help="where the random checkpoints are kept (default: a temporary folder)")
    parser.add_argument("--out", default=None, help="also write the figures here as JSON")
    args = parser.parse_args()

    import interp
    from interp.api.screen import confirmed_locations, screen_locations
    from scale import build

    torch.manual_seed(0)
    path = build(args.size, Path(args.models or tempfile.mkdtemp(prefix="interp_screen_bench_")))
    lab = interp.IntervenableModel(str(path), "monli", data_dir=args.data_dir)
    task = lab.task
    examples = task.examples(("pmonli", "nmonli_test"), per_split=args.examples // 2, seed=0)
    layers, heads = lab.model.n_layers, lab.model.n_heads
    text = ",".join([f"heads@w_h", "components@w_h", "blocks.0.hook_resid_pre@w_h", *(f"blocks.{l}.hook_resid_post@w_h" for l in range(layers))])
    locations = screen_locations(lab.locations, task.roles, text)
    warnings.simplefilter("ignore", interp.InterpWarning)  # random weights: at chance, said of every call
    lab.bind(examples).logits()  # encoding and the model's own pass, shared by every arm below

    def clock(call):
        start = time.perf_counter()
        value = call()
        return value, time.perf_counter() - start

    found, screen_s = clock(lambda: lab.screen(examples, examples, text, variable="lexrel"))
    _, plain_s = clock(lambda: lab.screen(examples, examples, text, variable="lexrel", qk_fix=False, graddrop=False))
    exact: dict[str, float] = {}
    for loc in [f"blocks.{l}.attn.hook_z.h0@w_h" for l in range(layers)] + [str(loc) for loc in locations if loc.is_residual]:
        exact[loc] = clock(lambda loc=loc: lab.interchange(examples, examples, loc, variables=("lexrel",)))[1]
        print(f"  exact {loc}: {exact[loc]:.1f} s", flush=True)

    def cost(loc) -> float:
        """The measured time at ``loc``, or at its block's head 0 (the same suffix)."""
        return exact[str(loc)] if str(loc) in exact else exact[f"blocks.{loc.layer}.attn.hook_z.h0@w_h"]

    sweep_s = sum(cost(loc) for loc in locations)
    top, drawn = confirmed_locations(found.rows, args.confirm, 0)
    by_name = {str(loc): loc for loc in locations}
    confirm_s = sum(cost(by_name[name]) for name in [*top, *drawn])
    n = len(examples)
    figures = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__} ({torch.get_num_threads()} threads)",
        "size": args.size, "layers": layers, "heads": heads, "examples": n, "pairs": n * n, "locations": len(locations),
        "screen_s": round(screen_s, 1), "screen_plain_s": round(plain_s, 1), "exact_measured_locations": len(exact),
        "exact_measured_s": round(sum(exact.values()), 1), "exact_sweep_s_extrapolated": round(sweep_s, 1),
        "speedup": round(sweep_s / screen_s, 1), "speedup_plain": round(sweep_s / plain_s, 1),
        "end_to_end_s": round(screen_s + confirm_s, 1), "end_to_end_speedup": round(sweep_s / (screen_s + confirm_s), 1), "confirm": args.confirm,
    }  # fmt: skip
    print(f"\n{args.size} ({layers} blocks, {heads} heads): {len(locations)} locations, {n} examples, {n * n} pairs")
    print(f"{'arm':58}{'seconds':>10}{'× screen':>10}")
    print(f"{'screen, QK fix and GradDrop':58}{screen_s:>10.1f}{1:>10.1f}")
    print(f"{'screen, plain attribution patching':58}{plain_s:>10.1f}{plain_s / screen_s:>10.2f}")
    print(f"{'exact head sweep (extrapolated from ' + str(len(exact)) + ' locations timed)':58}{sweep_s:>10.1f}{sweep_s / screen_s:>10.1f}")
    print(f"{f'screen + exact at {args.confirm} + {args.confirm} confirmed (extrapolated)':58}{screen_s + confirm_s:>10.1f}"
          f"{(screen_s + confirm_s) / screen_s:>10.2f}")  # fmt: skip
    print(f"the screen is {sweep_s / screen_s:.1f}× faster than the exact sweep ({sweep_s / plain_s:.1f}× without AtP*'s fixes); "
          f"end to end with K = {args.confirm}: {sweep_s / (screen_s + confirm_s):.1f}×; {figures['machine']}")  # fmt: skip
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
