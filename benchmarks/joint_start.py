"""A joint interchange whose sites are late in the model: each row's pass from the earliest site's block, against every
block on every row (what joint runs did before the write plan), in one run.

    .venv/bin/python benchmarks/joint_start.py --sites blocks.4.hook_resid_post@w_h,blocks.5.hook_resid_post@cls --bases 64 --per-base 8

The embedded MiniLM (6 blocks, its new head random: a timing needs no trained one; ``--model``, any name ``interp.load_model`` takes) on MoNLI examples: ``--bases``
bases, each run with ``--per-base`` drawn sources at every site (the joint run's rows), the write plan's one hooked
pass (:func:`interp.engine.plan.plan_logits`) with ``start=True`` (the blocks before the earliest site run once per
base, then each row from there) and ``start=False`` (the whole model on every row). The two arms alternate over
``--repeats`` runs after a warm-up; the figures are each arm's median seconds, rows a second, the ratio, and the
largest difference between their logits.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

import torch


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--sites", default="blocks.4.hook_resid_post@w_h,blocks.5.hook_resid_post@cls")
    parser.add_argument("--bases", type=int, default=64)
    parser.add_argument("--per-base", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)

    import interp
    from interp.engine.plan import Sources, WritePlan, plan_logits

    lab = interp.IntervenableModel(interp.load_model(args.model, labels=("entailment", "neutral"), seed=0), "monli")
    examples = lab.task.examples(("pmonli", "nmonli_test"), n=args.bases, seed=0)
    encoded = lab.encode(examples)
    locations = [lab.location(s) for s in args.sites.split(",")]
    vectors = {loc: lab.vectors(examples, loc).reshape(len(examples), -1).cpu() for loc in locations}
    generator = torch.Generator().manual_seed(0)
    base_rows = torch.arange(len(examples)).repeat_interleave(args.per_base)
    plan = WritePlan({loc: Sources(vectors[loc], torch.randint(len(examples), (len(base_rows),), generator=generator)) for loc in locations})
    model, pad = lab.model.module, lab.model.tokenizer.pad_token_id or 0

    def run(start: bool) -> tuple[float, torch.Tensor]:
        begin = time.perf_counter()
        with torch.no_grad():
            logits, _ = plan_logits(model, encoded, base_rows, plan, pad, batch_size=64, start=start)
        return time.perf_counter() - begin, logits

    run(True), run(False)  # warm-up
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(args.repeats):
        for start in (True, False):
            seconds, logits = run(start)
            times[start].append(seconds)
    difference = float((run(True)[1] - run(False)[1]).abs().max())
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, {torch.get_num_threads()} threads; "
          f"{args.model}, sites {args.sites}, {len(examples)} bases x {args.per_base} = {len(base_rows)} rows, {args.repeats} repeats")  # fmt: skip
    median = {start: statistics.median(t) for start, t in times.items()}
    for start, name in ((False, "every block on every row"), (True, f"from block {plan.start_block} (the earliest site's)")):
        print(f"{name:40} {median[start]:7.3f} s  {len(base_rows) / median[start]:8.1f} rows/s")
    print(f"ratio {median[False] / median[True]:.2f}x; largest |logit difference| {difference:.2e}")


if __name__ == "__main__":
    sys.exit(main())
