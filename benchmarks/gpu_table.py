"""The rows ``benchmarks/gpu.py`` prints and writes (``gpu.md``) for BENCHMARKS.md, from its figures (``gpu.json``):
one Markdown table, an arm that failed or was skipped in a row saying so, and under ``--check`` each target met or not.

    python benchmarks/gpu_table.py runs/gpu_check/gpu.json     # the rows again, from a run's figures
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _fmt(value, pattern: str = "{:,.0f}") -> str:
    return "-" if value is None else pattern.format(value)


def table(results: dict) -> str:
    """The figures as one Markdown table (what BENCHMARKS.md records); an arm that failed gets a row saying how; with
    ``--check``, each target met or not."""
    lines = [f"{results['env']['device']}, torch {results['env']['torch']}, transformers {results['env']['transformers']}, {results['env']['date']}",
             "| arm | figure |", "| --- | --- |"]  # fmt: skip
    for arm in ("finetune", "allpairs", "cpu", "engine", "decoder", "smollm2", "localize", "das", "cache", "profile"):
        if isinstance(results.get(arm), dict) and "error" in results[arm]:
            lines.append(f"| {arm} | failed: {results[arm]['error']} |")
    rows = {arm: results[arm] if isinstance(results.get(arm), list) else [] for arm in ("finetune", "allpairs", "engine")}
    for r in rows["finetune"]:
        lines.append(f"| fine-tune MiniLM, recipe {r['recipe']}, seed {r['seed']} | {r['seconds']:.1f} s; NMoNLI test {100 * r['nmonli_test']:.1f}% "
                     f"[{100 * r['low']:.1f}, {100 * r['high']:.1f}]; losses {r['losses']} |")  # fmt: skip
    for r in rows["allpairs"]:
        if "error" in r:
            lines.append(f"| intervene, all pairs, {r['precision']}, {r.get('compile', 'auto')} | failed: {r['error']} |")
            continue
        agreement = "" if r["agreement"] is None else f"; labels agree with fp32 on {100 * r['agreement']:.2f}% of the sample"
        compiled = r.get("compiled") or {}
        first = (f"; compiled suffix: {compiled['shapes']} shapes, their first calls {compiled['first_call_seconds']:.1f} s (in the wall), "
                 f"{compiled['compiled_pairs']:,} pairs compiled, {compiled['eager_pairs']:,} eager") if compiled.get("shapes") else ""  # fmt: skip
        lines.append(f"| intervene, all {r['pairs']:,} pairs, {r['precision']}, {r.get('compile', 'auto')} | engine {r['engine_s']:.1f} s "
                     f"({r['pairs_per_s']:,.0f} pairs/s), wall {r['wall_s']:.1f} s, intervals {r['intervals_s']:.1f} s{agreement}{first} |")  # fmt: skip
    for r in rows["engine"]:
        if "error" in r:
            lines.append(f"| engine at {r['size']} shape | failed: {r['error']} |")
            continue
        against = "" if r["pyvene_pairs_per_s"] is None else (f"; {r['engine_over_pyvene']:.1f}x pyvene, both {r['pyvene_precision']} "
                                                               f"(labels agree on {100 * r['pyvene_labels_agree']:.1f}%)")  # fmt: skip
        lines.append(f"| engine at {r['size']} shape | {_fmt(r['engine_pairs_per_s'])} pairs/s fp32, {_fmt(r['engine_tf32_pairs_per_s'])} tf32, "
                     f"{_fmt(r['engine_bf16_pairs_per_s'])} bf16 (all MoNLI pairs in {_fmt(r['all_pairs_tf32_s'])} s at tf32, "
                     f"{_fmt(r['all_pairs_bf16_s'])} s at bf16, extrapolated: rate x pairs); {r['ratio']:.1f}x the naive loop{against}; "
                     f"labels agree with naive {r['labels_agree']}; {r['pyvene']} |")  # fmt: skip
    if isinstance(results.get("decoder"), dict) and "error" not in results["decoder"]:
        d = results["decoder"]
        peer = "pyvene absent" if d["pyvene_pairs_per_s"] is None else (
            f"{d['reuse_pairs_per_s'] / d['pyvene_pairs_per_s']:.1f}x pyvene (labels agree on {100 * d['pyvene_labels_agree']:.1f}%)")
        lines.append(f"| decoder, {d['shape']} shape, {d['dtype']}, {d['pairs']:,} pairs | {d['reuse_pairs_per_s']:,.0f} pairs/s with each base's prefix "
                     f"reused, {d['no_reuse_pairs_per_s']:,.0f} without ({d['reuse_pairs_per_s'] / d['no_reuse_pairs_per_s']:.2f}x); {peer} |")  # fmt: skip
    if isinstance(results.get("smollm2"), dict) and "error" not in results["smollm2"]:
        s = results["smollm2"]
        for route, r in s["finetune"].items():
            accuracy = "" if "nmonli_test" not in r else f"; NMoNLI test {100 * r['nmonli_test']:.1f}% [{100 * r['low']:.1f}, {100 * r['high']:.1f}]"
            lines.append(f"| fine-tune SmolLM2-135M ({s['weights']}), {route}, {s['dtype']}, one epoch | {r['examples_per_s']:,.1f} examples/s "
                         f"on {r['examples']:,} examples{accuracy} |")  # fmt: skip
        lines.append(f"| intervene SmolLM2-135M ({s['weights']}), all {s['pairs']:,} pairs at {s['location']}, {s['dtype']}, prefix reused | "
                     f"{s['seconds']:.1f} s, {s['pairs_per_s']:,.0f} pairs/s; labels agree with the naive loop on {100 * s['naive_labels_agree']:.1f}% "
                     f"of {s['naive_pairs'][0]} bases x {s['naive_pairs'][1]} sources |")  # fmt: skip
    if isinstance(results.get("localize"), dict) and "error" not in results["localize"]:
        z = results["localize"]
        best = z.get("best_output_token")
        found = "" if not best else f"; output_token best at block {best['block']} ({best['featurizer']}) {best['iia']:.3f} [{best['low']:.3f}, {best['high']:.3f}]"
        lines.append(f"| localize SmolLM2-135M ({z['weights']}), IOI, blocks {z['blocks']} at the last token, full/DAS/DBM | {z['units']} units in "
                     f"{z['seconds']:.1f} s ({z['units_per_min']:.1f} a minute; " + ", ".join(f"{f} {v:.1f} s" for f, v in z["seconds_per_unit"].items())
                     + f" a unit); MIB's filter kept {z['kept']} of {z['of']}{found} |")  # fmt: skip
    if "das" in results and "error" not in results["das"]:
        das = results["das"]
        against = ("" if das.get("pyvene_pairs_per_s") is None else
                   f", {das['train_pairs_per_s'] / das['pyvene_pairs_per_s']:.1f}x pyvene ({das['pyvene_pairs_per_s']:,.0f} pairs/s, held-out IIA "
                   f"{das['pyvene_held_out_iia']:.3f})")  # fmt: skip
        lines.append(f"| DAS k=64 training, MiniLM, one epoch | {das['train_pairs_per_s']:,.0f} pairs/s on {das['pairs']:,} pairs, prefix pass included "
                     f"(steps alone {das['steps_pairs_per_s']:,.0f}), held-out IIA {das['held_out_iia']:.3f}{against}; {das['pyvene']} |")  # fmt: skip
    if "cache" in results and "error" not in results["cache"]:
        lines.append(f"| cache (every block output, every role, all splits) | {results['cache']['seconds']:.1f} s |")
    if isinstance(results.get("cpu"), dict) and "error" not in results["cpu"]:
        c = results["cpu"]
        lines.append(f"| the device against the CPU, fp32, {c['pairs']:,} pairs (the device {'compiled' if c['compiled'] else 'eager'}) | labels agree on "
                     f"{100 * c['labels_agree']:.2f}%, largest logit difference {c['max_logit_diff']:.1e} |")  # fmt: skip
    profiled = results.get("profile")
    for r in profiled if isinstance(profiled, list) else []:
        steps = ", ".join(f"{k.removeprefix('interp.')} {v['ms']:,.0f} ms" for k, v in r.get("host_steps", {}).items())
        lines.append(f"| profile, {r['precision']}, {r['compile']} | " + (r["error"] if "error" in r else f"{r['examples']} examples, {r['seconds']:.1f} s "
                     f"profiled; host steps: {steps or 'none recorded'} |"))  # fmt: skip
    peaks = [r.get("peak_gib") for key in ("finetune", "allpairs", "engine") for r in rows[key]]
    peaks += [results[k].get("peak_gib") for k in ("das", "cache", "decoder", "smollm2", "localize") if isinstance(results.get(k), dict)]
    if any(p is not None for p in peaks):
        lines.append(f"| peak device memory | {max(p for p in peaks if p is not None):.1f} GiB |")
    if results["env"].get("check"):
        smoke = " (--smoke: tiny models on a CPU, not a measurement of the target)" if results["env"]["smoke"] else ""
        lines += [line[:-2] + smoke + " |" for line in targets(results)]
    lines.append(f"| whole script | {results['seconds']:.0f} s |")
    return "\n".join(lines)


def targets(results: dict) -> list[str]:
    """The check's targets (set for an H100), each met or not by this run's figures, or not measured."""
    pairs = [r for r in results.get("allpairs") or [] if isinstance(r, dict) and r.get("precision") == "bf16" and "error" not in r]
    best = min(pairs, key=lambda r: r["wall_s"], default=None)
    base = next((r for r in results.get("engine") or [] if isinstance(r, dict) and r.get("size") == "base" and "error" not in r), None)

    def verdict(name: str, value, goal, fmt: str, below: bool = True) -> str:
        if value is None:
            return f"| target: {name} | not measured |"
        met = value <= goal if below else value >= goal
        return f"| target: {name} | {fmt.format(value)}: {'met' if met else 'not met'} |"

    return [
        verdict("all pairs at bf16, compile included, ≤ 10 s wall", None if best is None else best["wall_s"], 10, "{:.1f} s"),
        verdict("labels agree with fp32 on ≥ 99.8% of the checked sample", None if best is None or best["agreement"] is None else 100 * best["agreement"],
                99.8, "{:.2f}%", below=False),  # fmt: skip
        verdict("BERT-base all pairs at bf16 ≤ 60 s (extrapolated from the engine's rate)", None if base is None else base["all_pairs_bf16_s"], 60, "{:.0f} s"),
        verdict("engine ≥ 10x pyvene at BERT-base shape, both bf16", None if base is None else base["engine_over_pyvene"], 10, "{:.1f}x", below=False),
    ]


def main(argv=None) -> None:
    """Print the rows of the ``gpu.json`` named on the command line."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        raise SystemExit("usage: python benchmarks/gpu_table.py DIR/gpu.json")
    print(table(json.loads(Path(args[0]).read_text())))


if __name__ == "__main__":
    main()
