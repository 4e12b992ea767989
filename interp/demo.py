"""The main job (`make demo`): the paper's pipeline on real MoNLI with the embedded model, stage by stage.

1. Behavioral, Table 1 (§5): :mod:`interp.behavioral` trains ``challenge_model/``
   and ``model/`` and writes ``metrics.json``.
2. Activations: every location of ``model/`` for every example, ``activations.h5``.
3. Probes (§6.1, Figure 2): the sweep over all locations, ``probes.csv`` and ``probes.png``.

Every stage reuses what an earlier run already finished, so an interrupted
demo, started again, continues where it stopped.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from interp.behavioral import BehavioralConfig, BehavioralResult, format_table, run_behavioral
from interp.cache import CacheConfig, build_cache
from interp.probes import ProbeSweepConfig, run_probe_sweep


@dataclass(frozen=True)
class DemoConfig:
    """The behavioral settings, plus how many seeds the probe sweep averages over."""

    behavioral: BehavioralConfig = BehavioralConfig()
    probe_seeds: int = 3


@dataclass
class DemoResult:
    behavioral: BehavioralResult
    probe_rows: list[dict]
    seconds: float


def run_demo(config: DemoConfig, *, progress: bool = True) -> DemoResult:
    """Run the three stages into ``config.behavioral.out_dir``.

    Raises:
        InterpError: as the stages do (bad data, model, settings or output path).
    """
    started = time.perf_counter()
    b = config.behavioral
    out = Path(b.out_dir)
    behavioral = run_behavioral(b, progress=progress)
    model = str(out / "model")
    if progress:
        print("== caching activations of model/ at every location", flush=True)
    cache = build_cache(
        CacheConfig(model=model, out=str(out / "activations.h5"), data_dir=b.data_dir, verify_checksums=b.verify_checksums),
        progress=progress,
    )
    if progress:
        print("== probe sweep", flush=True)
    rows = run_probe_sweep(
        ProbeSweepConfig(cache=str(cache), out_dir=str(out), model=model, seeds=config.probe_seeds), progress=progress
    )
    return DemoResult(behavioral, rows, time.perf_counter() - started)


def format_probe_summary(rows: list[dict]) -> str:
    """Per target and token role: the layer where the MLP probe is most selective against the type control."""
    lines = ["Probes (§6.1): MLP probe, held-out; layer 0 = embeddings, r = BERT^r", ""]
    lines.append(f"{'target':8}{'role':6}{'best layer':>11}{'accuracy':>10}{'sel. type':>11}{'sel. shuffle':>14}")
    for target in dict.fromkeys(r["target"] for r in rows):
        for role in dict.fromkeys(r["role"] for r in rows):
            cands = [r for r in rows if (r["target"], r["role"], r["probe"]) == (target, role, "mlp")]
            if not cands:
                continue
            best = max(cands, key=lambda r: r["selectivity_type_mean"])
            lines.append(
                f"{target:8}{role:6}{best['hidden_index']:>11}{best['task_acc_mean']:>10.3f}"
                f"{best['selectivity_type_mean']:>11.3f}{best['selectivity_shuffle_mean']:>14.3f}"
            )
    return "\n".join(lines)


def format_demo(result: DemoResult) -> str:
    return format_table(result.behavioral) + "\n\n" + format_probe_summary(result.probe_rows)
