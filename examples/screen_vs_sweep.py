"""A screen against a full exact sweep of the same locations: Spearman over all of them, and how many of the exact
sweep's top 10 the screen ranks in its top 20, overall and by kind of site.

    interp screen --model M --locations all --confirm 0 --max-per-split 20 --out runs/screen
    interp head-sweep --model M --roles cls,w_p,w_h --max-per-split 20 --out runs/heads
    python examples/screen_vs_sweep.py runs/screen/screen.csv runs/heads/heads.csv

The MoNLI results page's table is this script's output on the two files committed beside it:

    python examples/screen_vs_sweep.py docs/results/data/screen_page/screen.csv docs/results/data/screen_page/heads.csv

Both commands draw the same seeded sample (20 PMoNLI and 20 NMoNLI-test examples, every one a base and a source) and
cover the same locations: every residual, component and head location at each role. The IIA compared is on causal
pairs. The Spearman intervals resample whole groups of locations (a role and a site kind, over the layers; over
locations where fewer than 3 groups), since the locations of one group behave alike; beside each, the Spearman within
the groups (their mean, weighted by locations, over the locations that are not 0 under both, ties no ranking can get
wrong; a group where the screen gives them all one estimate counts 0): a high overall figure with a low one within is
the contrast between roles or kinds, not a ranking of sites. Where the groups allow fewer than 20 distinct resamples
(3 groups: 10) no interval is given; under 30 groups an interval reads narrower than it is. Recall's are Wilson intervals over the exact top 10. They cover which
locations, not which examples.
"""

from __future__ import annotations

import sys

import pandas as pd

from interp.analysis.attribution import sweep_agreement


def main(screen_csv: str, sweep_csv: str) -> None:
    screen = pd.read_csv(screen_csv)
    sweep = pd.read_csv(sweep_csv)
    kinds = {"residual": lambda name: "hook_resid_pre" in name or "hook_resid_post" in name,
             "heads": lambda name: ".attn.hook_z.h" in name,
             "components": lambda name: any(c in name for c in ("attn.hook_z@", "hook_attn_out", "hook_resid_mid", "hook_mlp_out"))}  # fmt: skip
    flat: dict[str, str] = {}
    print(f"{'sites':12}{'locations':>10}  {'Spearman [95%]':30}{'within groups':>14}{'exact top 10 in screen top 20 [95%]':>40}  {'a random ranking: p':>20}")
    for kind, keep in [("all", lambda name: True), *kinds.items()]:
        estimated = {r.location: r.estimated_iia for r in screen.itertuples() if keep(r.location)}
        exact = {r.location: r.iia_causal for r in sweep.itertuples() if keep(r.location)}
        if len(set(estimated) & set(exact)) < 20:
            continue
        found = sweep_agreement(estimated, exact)
        s, recall = found["spearman"], found["recall"]
        groups = len(found["within_groups"])
        interval = f"[{s.low:.3f}, {s.high:.3f}]" if s.low == s.low else f"(no interval: {groups} groups)"
        flat.update({g: kind for g in found["within_flat"]})
        print(f"{kind:12}{found['locations']:>10}  {float(s):.3f} {interval:24}{found['within_mean']:>14.3f}"
              f"{found['found']:>10} of 10 ({float(recall):.1f} [{recall.low:.2f}, {recall.high:.2f}])"
              f"  {found['recall_p']:>20.3g}")  # fmt: skip
    print(f"groups where the screen gives every location not 0 under both one estimate (within: 0, it ranks nothing there): {', '.join(flat) or 'none'}")
    flagged = screen[screen["cancels"].astype(str) == "True"]
    print(f"GradDrop flags {len(flagged)} of {len(screen)} locations as cancelling")


if __name__ == "__main__":
    main(*sys.argv[1:3])
