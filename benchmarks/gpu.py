"""The one GPU benchmark: fine-tuning, every MoNLI pair at three precisions, the engine against the naive loop, DAS, the cache.

    python benchmarks/gpu.py --monli DIR --minilm DIR          # on a GPU machine, about 5 minutes on one H100 or H200
    python benchmarks/gpu.py --check --monli DIR --minilm DIR  # the one device check: about 4 minutes, gpu.json and gpu.md
    python benchmarks/gpu.py --profile --monli DIR --minilm DIR  # where the all-pairs job's time goes (about a minute)
    python benchmarks/gpu.py --smoke                            # the same arms at tiny sizes on the CPU (the suite runs it, and --check --smoke)

Runs on whatever torch and transformers the machine has (nothing is installed,
nothing downloaded). ``--minilm`` is a folder holding the embedded model's
config, tokenizer and weights (float16 safetensors fit beside the repository
where the 83 MB wheel does not; they are cast to float32 on loading);
``--monli`` the MoNLI folder. The arms, in order:

* **fine-tuning**: ``interp.fine_tune`` of MiniLM on PMoNLI + NMoNLI train
  on the device, for each recipe (epochs, lr, batch size, warm-up share) and
  seed asked: seconds, the per-epoch loss, and NMoNLI test accuracy with its
  Wilson interval. The default recipe's model (its first seed) is the one the
  next arms analyse.
* **all pairs**: ``interp intervene`` (the job, :func:`interp.jobs.intervene.run_interventions`)
  on every pair of MoNLI's 2,678 examples (7.17M) at
  ``blocks.2.hook_resid_post@w_h``, in fp32, tf32 and bf16: the engine's
  seconds (its calls timed with the device synchronized), the job's wall
  time, the intervals' (bootstrap) seconds, and the reduced precisions'
  label agreement with fp32 on the job's own seeded sample.
* **engine**: at MiniLM, BERT-base and BERT-large shapes (random weights:
  speed does not depend on them) the engine's pairs/s (the fastest of ``--repeats`` calls) against the naive
  loop (one hooked batch-1 pass per pair) on the same bases, labels checked
  equal on the pairs both ran; the engine again at tf32 and bf16; pyvene 0.1.8's
  ``IntervenableModel`` on ``--pyvene-bases`` bases × every source where pyvene is
  installed (it is not a dependency; the arm says when it is skipped).
* **DAS**: training a k = 64 rotation at the same location, one epoch, pairs/s (the prefix pass included, and
  the steps alone) and held-out IIA, against pyvene's ``RotatedSpaceIntervention`` on the same initial rotation, batches and order
  where pyvene is installed.
* **cache**: ``interp cache`` on the fine-tuned model (every block output at every role, all splits).
* **decoder** (when ``--arms`` names it): a Llama shape of about a billion parameters (``--decoder-shape``,
  ``benchmarks/decoders.py``) in bf16, the engine with and without each base's prefix reused, and pyvene where
  installed, on ``--decoder-bases`` × ``--decoder-sources`` NMoNLI-test pairs.
* **smollm2** (when ``--arms`` names it; in ``--check``): SmolLM2-135M (its own weights where the package is
  installed, else random weights at its shape from ``--smollm2 DIR``) fine-tuned both ways and every MoNLI pair at one
  site in bf16, labels checked against the naive loop (``benchmarks/gpu_smollm2.py``).
* **localize** (when ``--arms`` names it; in ``--check``): ``interp localize`` on IOI with SmolLM2-135M (the same
  weights as the SmolLM2 arm), the full vector, DAS and DBM for both variables at the last token of
  ``--localize-blocks``: units per minute and seconds a unit (``benchmarks/gpu_localize.py``).
* **profile** (``--profile``, or when ``--arms`` names it): the all-pairs job on ``--profile-examples`` examples under
  ``torch.profiler`` (after one unprofiled run), for each precision and compile mode: its top kernels (or, on a CPU,
  operators) by self time, and its host steps (the engine's ``interp.*`` ranges and the unit writes) by total time.

Each all-pairs run is eager, compiled or the default (``--compile-modes``: the ``compile=`` of
:mod:`interp.engine.compiled`); a compiled one reports its shapes and their first calls' seconds (compiling
included, and part of the wall).

``--check`` is the one device check a GPU lease allows: fine-tuning, all pairs at tf32 and bf16 eager and compiled,
the device against the CPU on a sample (**cpu**: 16 bases × 256 sources in fp32, compiled on the device, eager on a
CPU copy; also ``--arms cpu``), the engine against pyvene at MiniLM and BERT-base shapes with both at bf16 (BERT-base all pairs extrapolated from the
rate, labelled so), the SmolLM2 arm, the localize arm and the decoder arm, with a ``--deadline`` of 225 s after which no arm starts (one left out says
so). It writes ``DIR/gpu.json`` and ``DIR/gpu.md`` (``--out``, default ``runs/gpu_check``): the rows for
BENCHMARKS.md, each target (set for an H100) met or not.

What to carry. ``--prepare DIR`` (on a machine with the package installed) writes the script's inputs into ``DIR``:
``DIR/minilm`` (the embedded model's config and tokenizer, its weights as float16 safetensors), ``DIR/monli`` (MoNLI,
its checksums verified), with ``--wheels pyvene==0.1.8``, ``DIR/wheels`` (``pip download --no-deps``), and with
``--with-smollm2``, ``DIR/smollm2`` (SmolLM2-135M's config and tokenizer, no weights: the SmolLM2 arm): about
50 MiB in all. On the GPU machine, beside the repository::

    python -m pip install --no-deps --no-index DIR/wheels/*.whl   # optional: the pyvene arm (python -m: a bare pip may be absent)
    python benchmarks/gpu.py --monli DIR/monli --minilm DIR/minilm --smollm2 DIR/smollm2

A recipe is ``epochs,lr,batch,warmup[,batching[,weight_decay]][,name=value...]`` (``batching``: ``length`` or
``shuffle``; ``name=value``: any other fine-tuning setting, as ``max_grad_norm=1``), so ``--arms finetune --seeds
0,1,2,3,4 --recipes "3,1e-4,32,0.1;5,5e-5,16,0.2"`` screens recipes over seeds, one after another;
``benchmarks/recipes.py`` screens many seeds with several fine-tunings at once.

Peak device memory is given per arm. An arm (or one precision of the all-pairs arm) that raises is reported with
its error, in the table too, and the arms after it still run: a GPU lease may allow one call. The last lines are one table; with ``--out DIR`` the figures are also written to
``DIR/gpu.json``.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import os
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a bare checkout: the package beside this folder
sys.path.append(str(Path(__file__).resolve().parent))  # and, last so that it shadows no package, the other benchmarks (pyvene's arm)

import torch  # noqa: E402
from gpu_localize import localize_arm  # noqa: E402  (benchmarks/gpu_localize.py: one featurizer sweep of interp localize)
from gpu_smollm2 import smollm2_arm  # noqa: E402  (benchmarks/gpu_smollm2.py: SmolLM2-135M's arm)
from gpu_table import table  # noqa: E402  (benchmarks/gpu_table.py: the rows for BENCHMARKS.md)

from interp.models.settings import FineTuneSettings  # noqa: E402

LOCATION = "blocks.2.hook_resid_post@w_h"
SIZES = {"minilm": (6, 384, 12), "base": (12, 768, 12), "large": (24, 1024, 16)}
_DEFAULTS = FineTuneSettings()
#: The library's default recipe as ``--recipes`` writes it (epochs, lr, batch, warm-up): what ``interp train`` runs.
DEFAULT_RECIPE = f"{_DEFAULTS.epochs},{_DEFAULTS.lr:g},{_DEFAULTS.batch_size},{_DEFAULTS.warmup_ratio:g}"


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def peak_gib(device: torch.device) -> float | None:
    return torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None


def reset_peak(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


def random_classifier(size: str, tokenizer, smoke: bool, seed: int = 0):
    """A seeded random BERT classifier of ``size``'s shape with MoNLI's labels (tiny under ``--smoke``)."""
    from transformers import BertConfig, BertForSequenceClassification

    from interp.api.loading import Classifier

    layers, hidden, heads = (4, 32, 2) if smoke else SIZES[size]  # 4 blocks: one after LOCATION's, for the compiled suffix
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                        intermediate_size=4 * hidden, num_labels=2, id2label={0: "entailment", 1: "neutral"},
                        label2id={"entailment": 0, "neutral": 1})  # fmt: skip
    return Classifier(BertForSequenceClassification(config).eval(), tokenizer, f"random {size}")


def finetune_arm(args, task, device, tokenizer) -> tuple[list[dict], object]:
    from recipes import fine_tune_and_score, load_start

    train = task.examples(("pmonli", "nmonli_train"), n=64 if args.smoke else None, seed=0)
    test = task.examples(("nmonli_test",), n=32 if args.smoke else None, seed=0)
    rows, kept = [], None
    for recipe in args.recipes:
        for seed in args.seeds:
            start = load_start(args.minilm, task, seed, args.smoke, device)
            row, model = fine_tune_and_score(task, train, test, start, recipe, seed, device, smoke=args.smoke)
            rows.append(row)
            print(f"fine-tune {recipe} seed {seed}: {row['seconds']:.1f} s, losses {row['losses']}, NMoNLI test {100 * row['nmonli_test']:.1f}% "
                  f"[{100 * row['low']:.1f}, {100 * row['high']:.1f}]", flush=True)  # fmt: skip
            if kept is None:
                kept = model
            else:
                del model
    return rows, kept


def cpu_arm(args, task, model, device) -> dict:
    """The device against the CPU on a sample: 16 bases × 256 sources at :data:`LOCATION`, fp32, on the device compiled
    (where it can compile) and on a CPU copy of the model eagerly; the labels' agreement and the largest logit difference."""
    import copy as copying

    import interp
    from interp.engine.compiled import compile_problem

    examples = task.examples(("pmonli", "nmonli_train", "nmonli_test"), n=24 if args.smoke else 256, seed=1)
    compiled = compile_problem(device) is None
    logits = {}
    for where, module in (("device", model.module), ("cpu", copying.deepcopy(model.module).to("cpu"))):
        lab = interp.IntervenableModel(interp.load_model(module, model.tokenizer), task, compile=compiled if where == "device" else False,
                                       batch_size=16 if args.smoke else None)  # fmt: skip
        logits[where] = lab.interchange_logits(examples[:16], examples, lab.location(LOCATION))
    agree = (logits["device"].argmax(-1) == logits["cpu"].argmax(-1)).float().mean().item()
    diff = (logits["device"] - logits["cpu"]).abs().max().item()
    print(f"device against CPU: labels agree on {100 * agree:.2f}% of {logits['cpu'].shape[0] * logits['cpu'].shape[1]} pairs, "
          f"largest logit difference {diff:.1e} (fp32; the device {'compiled' if compiled else 'eager'})", flush=True)  # fmt: skip
    return {"pairs": logits["cpu"].shape[0] * logits["cpu"].shape[1], "labels_agree": agree, "max_logit_diff": diff, "compiled": compiled}


def all_pairs_arm(args, model, device) -> list[dict]:
    """``interp intervene`` on every pair of every split, at each precision; the engine's calls timed inside the job."""
    import interp
    from interp.analysis.iia import summarize_all
    from interp.api.intervenable import IntervenableModel
    from interp.files.interventions import Fp32Check, open_interventions
    from interp.jobs.intervene import InterventionConfig, run_interventions

    engine_seconds, stats = [0.0], []
    original = IntervenableModel.interchange_logits

    def timed(self, *a, **k):
        sync(device)
        began = time.perf_counter()
        out = original(self, *a, **k)
        sync(device)
        engine_seconds[0] += time.perf_counter() - began
        found = getattr(self.runner, "compile_stats", None)  # a runner of each precision, and of the fp32 check
        if found is not None and all(found is not seen for seen in stats):
            stats.append(found)
        return out

    rows = []
    IntervenableModel.interchange_logits = timed
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for precision in args.precisions:
                if device.type != "cuda" and precision != "fp32" and not args.smoke:
                    continue
                for mode in args.compile_modes:
                    if late(args, f"all pairs {precision} {mode}"):
                        rows.append({"precision": precision, "compile": mode, "error": "skipped: past --deadline"})
                        continue
                    engine_seconds[0], stats[:] = 0.0, []
                    reset_peak(device)
                    sample = interp.SampleSpec(("pmonli", "nmonli_train", "nmonli_test"), max_examples=24 if args.smoke else None)
                    # under --smoke, passes of 16 pairs: each length bucket has full passes, which a compiled suffix runs
                    run = interp.RunSpec(device=str(device), compile=COMPILE_MODES[mode], batch_size=16 if args.smoke else None)
                    config = InterventionConfig(model=model, out=f"{tmp}/iv_{precision}_{mode}.h5", locations=LOCATION, variables=("lexrel",),
                                                data=interp.DataSpec(data_dir=args.monli), sample=sample, run=run, precision=precision,
                                                unit_size=16 if args.smoke else 512)  # fmt: skip
                    began = time.perf_counter()
                    try:
                        path = run_interventions(config, progress=False)
                    except Exception as error:  # noqa: BLE001 - one precision failing leaves the others measured
                        rows.append({"precision": precision, "compile": mode, "error": failure(error)})
                        print(f"all pairs {precision} {mode}: failed: {rows[-1]['error']}", flush=True)
                        continue
                    wall = time.perf_counter() - began
                    began = time.perf_counter()
                    summary = summarize_all(path)[0]
                    intervals = time.perf_counter() - began
                    with open_interventions(path) as file:
                        check = Fp32Check.from_attrs(file.group_attrs(LOCATION))
                        pairs = len(file.example_ids) ** 2
                    compiled = {key: sum(len(st.shapes) if key == "shapes" else getattr(st, key) for st in stats)
                                for key in ("shapes", "first_call_seconds", "compiled_pairs", "eager_pairs")}  # fmt: skip
                    rows.append({"precision": precision, "compile": mode, "pairs": pairs, "engine_s": engine_seconds[0], "wall_s": wall,
                                 "intervals_s": intervals, "pairs_per_s": pairs / engine_seconds[0], "iia_causal": summary["iia_causal"],
                                 "agreement": None if check is None else check.agreement, "compiled": compiled, "peak_gib": peak_gib(device)})  # fmt: skip
                    first = "" if not compiled or not compiled["shapes"] else (
                        f", compiled: {compiled['shapes']} shapes, their first calls {compiled['first_call_seconds']:.1f} s")
                    print(f"all pairs {precision} {mode}: {pairs} pairs, engine {engine_seconds[0]:.1f} s, wall {wall:.1f} s, intervals {intervals:.1f} s, "
                          f"agreement with fp32 {rows[-1]['agreement']}{first}", flush=True)  # fmt: skip
                    Path(path).unlink()
    finally:
        IntervenableModel.interchange_logits = original
    return rows


def pyvene_rate(lab, examples, loc, n_bases: int, logits) -> tuple[float | None, float | None, str]:
    """pyvene's pairs/s on ``n_bases`` bases × every source, the share of its labels equal to ``logits``' (the engine's at
    the same precision), or why it was skipped."""
    try:
        from interventions import pyvene_arm  # benchmarks/interventions.py, beside this file

        result = pyvene_arm(lab.model.module, lab.encode(examples), loc, n_bases)
    except Exception as error:  # absent, or a version that does not run here: the arm says so and the others go on
        return None, None, f"pyvene skipped ({type(error).__name__}: {str(error)[:80]})"
    if result is None:
        return None, None, "pyvene absent: its arm skipped"
    reference, seconds = result
    agree = (reference.argmax(-1) == logits[:n_bases].cpu().argmax(-1)).float().mean().item()
    from importlib.metadata import version

    return n_bases * len(examples) / seconds, agree, f"pyvene {version('pyvene')}"


def engine_arm(args, task, device, tokenizer) -> list[dict]:
    """The engine at each of ``--engine-precisions`` against the naive loop (fp32) and pyvene (at ``--pyvene-precision``,
    where installed) at each size, random weights, the same bases."""
    from interp.api.intervenable import IntervenableModel
    from interp.engine.batched import precision
    from interp.engine.naive import naive_interchange

    examples = task.examples(("pmonli", "nmonli_train", "nmonli_test"), n=48 if args.smoke else None, seed=0)
    all_pairs = len(task.examples(("pmonli", "nmonli_train", "nmonli_test"))) ** 2
    rows = []
    for size in args.sizes:
        if late(args, f"engine {size}"):
            rows.append({"size": size, "error": "skipped: past --deadline"})
            continue
        lab = IntervenableModel(random_classifier(size, tokenizer, args.smoke), task)
        lab.model.to(device)
        loc = lab.location(LOCATION)
        bases = examples[: 4 if args.smoke else args.engine_bases]
        reset_peak(device)
        vectors = lab.source_vectors(examples, loc)
        rates, repeats, found = {}, {}, {}
        for name in args.engine_precisions:
            with precision(lab.model.module, name):
                lab.interchange_logits(bases[:1], vectors[:64], loc)  # warm-up
                repeats[name] = []
                for _ in range(args.repeats):  # the fastest call is the rate: a first call at a new shape may pay for set-up
                    sync(device)
                    began = time.perf_counter()
                    found[name] = lab.interchange_logits(bases, vectors, loc)
                    sync(device)
                    repeats[name].append(len(bases) * len(examples) / (time.perf_counter() - began))
                if name == args.pyvene_precision:  # pyvene on the same model at the same precision
                    pyvene, pyvene_agree, pyvene_note = pyvene_rate(lab, examples, loc, 1 if args.smoke else args.pyvene_bases, found[name])
            rates[name] = max(repeats[name])
        if args.pyvene_precision not in found:
            pyvene, pyvene_agree, pyvene_note = None, None, f"pyvene skipped: --pyvene-precision {args.pyvene_precision} is not among --engine-precisions"
        logits = found.get("fp32", next(iter(found.values())))
        naive_bases, naive_sources = bases[:2], examples[: 8 if args.smoke else 64]
        pad = lab.model.tokenizer.pad_token_id
        naive_interchange(lab.model.module, lab.encode(naive_bases[:1]), lab.encode(naive_sources[:2]), loc, pad)  # warm-up
        sync(device)
        began = time.perf_counter()
        reference = naive_interchange(lab.model.module, lab.encode(naive_bases), lab.encode(naive_sources), loc, pad)
        sync(device)
        naive = len(naive_bases) * len(naive_sources) / (time.perf_counter() - began)
        agree = bool((reference.argmax(-1) == logits[: len(naive_bases), : len(naive_sources)].argmax(-1)).all())
        compiled = lab.runner.compile_stats.as_dict()
        engine = rates.get("fp32")
        rows.append({"size": size, "engine_pairs_per_s": engine, "engine_tf32_pairs_per_s": rates.get("tf32"),
                     "engine_bf16_pairs_per_s": rates.get("bf16"), "naive_pairs_per_s": naive, "ratio": max(rates.values()) / naive,
                     "labels_agree": agree, "pyvene_pairs_per_s": pyvene, "pyvene_labels_agree": pyvene_agree, "pyvene_precision": args.pyvene_precision,
                     "engine_over_pyvene": None if pyvene is None else rates[args.pyvene_precision] / pyvene,
                     "all_pairs_tf32_s": all_pairs / rates["tf32"] if "tf32" in rates else None,
                     "all_pairs_bf16_s": all_pairs / rates["bf16"] if "bf16" in rates else None, "peak_gib": peak_gib(device), "pyvene": pyvene_note,
                     "compiled": compiled, "engine_calls_pairs_per_s": repeats})  # fmt: skip
        against = "" if pyvene is None else (f", {rows[-1]['engine_over_pyvene']:.1f}x pyvene, both {args.pyvene_precision} "
                                             f"(labels agree on {100 * pyvene_agree:.1f}%)")  # fmt: skip
        calls = "; ".join(f"{k} calls {', '.join(f'{r:,.0f}' for r in v)}" for k, v in repeats.items())
        print(f"engine {size}: " + ", ".join(f"{rate:,.0f} pairs/s {k}" for k, rate in rates.items()) + f" (the fastest of {args.repeats}: {calls}); "
              f"naive {naive:,.1f} pairs/s ({rows[-1]['ratio']:.1f}x), labels agree {agree}{against}; {pyvene_note}; compiled {compiled['shapes']} shapes",
              flush=True)  # fmt: skip
        del lab, vectors, logits, found
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return rows


def load_decoder_benchmark():
    """``benchmarks/decoders.py``, loaded by its path: the test suite has a ``decoders`` module of its own."""
    spec = importlib.util.spec_from_file_location("decoder_benchmark", Path(__file__).resolve().parent / "decoders.py")
    decoders = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(decoders)
    return decoders


def decoder_arm(args, task, device) -> dict:
    """A decoder at bf16 on a GPU (fp32 on a CPU): ``benchmarks/decoders.py``'s arms, the engine with and without each
    base's prefix reused and pyvene where installed, on the same bases × NMoNLI-test sources; labels compared."""
    decoders = load_decoder_benchmark()
    from interp.backends import DecoderRunner
    from interp.api.intervenable import IntervenableModel

    shape = "tiny" if args.smoke else args.decoder_shape
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    model = decoders.build(shape, task)
    model.module.to(device, dtype)
    lab = IntervenableModel(model, task)
    loc = lab.location("blocks.1.hook_resid_post@w_h" if args.smoke else "blocks.5.hook_resid_post@w_h")
    examples = task.examples(("nmonli_test",), n=16 if args.smoke else args.decoder_sources, seed=0)
    encoded = lab.encode(examples)
    bases = 1 if args.smoke else args.decoder_bases
    pad = model.tokenizer.pad_token_id
    vectors = DecoderRunner(model.module, pad).vectors(encoded, loc)
    reset_peak(device)
    rates, found = {}, {}
    for name, reuse in (("no reuse", False), ("prefix reuse", True)):
        runner = DecoderRunner(model.module, pad, prefix_reuse=reuse)
        runner.interchange_logits(encoded[:1], vectors[:8], loc)  # warm-up
        sync(device)
        began = time.perf_counter()
        found[name] = runner.interchange_logits(encoded[:bases], vectors, loc)
        sync(device)
        rates[name] = bases * len(encoded) / (time.perf_counter() - began)
    tokens = [e.tokens(loc.roles[0]) for e in encoded]
    peer = decoders.pyvene_arm(model.module.inner, encoded, loc, tokens, bases)
    pyvene = agree = None
    if peer is not None:
        pyvene = bases * len(encoded) / peer[1]
        agree = (peer[0].argmax(-1) == found["prefix reuse"].argmax(-1)).float().mean().item()
    same = (found["no reuse"].argmax(-1) == found["prefix reuse"].argmax(-1)).float().mean().item()
    out = {"shape": shape, "dtype": str(dtype).removeprefix("torch."), "pairs": bases * len(encoded), "reuse_pairs_per_s": rates["prefix reuse"],
           "no_reuse_pairs_per_s": rates["no reuse"], "reuse_labels_agree": same, "pyvene_pairs_per_s": pyvene, "pyvene_labels_agree": agree,
           "peak_gib": peak_gib(device)}  # fmt: skip
    print(f"decoder {shape} {out['dtype']}: prefix reuse {rates['prefix reuse']:,.0f} pairs/s, without {rates['no reuse']:,.0f} "
          f"({rates['prefix reuse'] / rates['no reuse']:.2f}x; labels agree on {100 * same:.1f}%)"
          + ("; pyvene absent" if pyvene is None else f"; pyvene {pyvene:,.0f} ({rates['prefix reuse'] / pyvene:.1f}x; labels agree on {100 * agree:.1f}%)"),
          flush=True)  # fmt: skip
    return out


def profile_arm(args, task, model, device) -> list[dict]:
    """Where the all-pairs job's time goes: ``interp intervene`` on ``--profile-examples`` examples (all their pairs) at
    :data:`LOCATION` for each precision and compile mode, under ``torch.profiler``, after one unprofiled run of the
    same job (compiling, warm-up); two tables each: the top kernels (or, on a CPU, operators) by self time, and the
    job's host steps (the ``interp.*`` ranges of :mod:`interp.engine.batched` and the unit writes) by total time."""
    from torch.profiler import ProfilerActivity, profile

    import interp
    from interp.jobs.intervene import InterventionConfig, run_interventions
    from interp.jobs.shards import Shards

    write = Shards.write
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    key = "self_cuda_time_total" if device.type == "cuda" else "self_cpu_time_total"
    n = 24 if args.smoke else args.profile_examples
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.precisions:
            for mode in args.compile_modes:
                if late(args, f"profile {name} {mode}"):
                    rows.append({"precision": name, "compile": mode, "error": "skipped: past --deadline"})
                    continue

                def job(out: str):
                    sample = interp.SampleSpec(("pmonli", "nmonli_train", "nmonli_test"), max_examples=n)
                    run = interp.RunSpec(device=str(device), compile=COMPILE_MODES[mode], batch_size=16 if args.smoke else None)
                    return run_interventions(InterventionConfig(model=model, out=out, locations=LOCATION, data=interp.DataSpec(data_dir=args.monli),
                                                                sample=sample, run=run, precision=name, unit_size=16 if args.smoke else 512),
                                             progress=False)  # fmt: skip

                job(f"{tmp}/warm_{name}_{mode}.h5")
                sync(device)
                writes = [0, 0.0]  # the unit files are written on the job's writer thread, which the profiler does not follow

                def timed_write(self, *a, **k):
                    began = time.perf_counter()
                    write(self, *a, **k)
                    writes[0], writes[1] = writes[0] + 1, writes[1] + time.perf_counter() - began

                began = time.perf_counter()
                Shards.write = timed_write
                try:
                    with profile(activities=activities) as prof:
                        job(f"{tmp}/profiled_{name}_{mode}.h5")
                        sync(device)
                finally:
                    Shards.write = write
                seconds = time.perf_counter() - began
                averages = prof.key_averages()
                kernels = averages.table(sort_by=key, row_limit=15, max_name_column_width=60)
                steps = {e.key: {"calls": e.count, "ms": e.cpu_time_total / 1e3} for e in sorted(averages, key=lambda e: -e.cpu_time_total)
                         if e.key.startswith("interp.")}  # fmt: skip
                steps["interp.unit_writes (writer thread)"] = {"calls": writes[0], "ms": writes[1] * 1e3}
                host = "\n".join(f"{k:38} {v['calls']:>7} calls {v['ms']:>10.1f} ms" for k, v in steps.items())
                print(f"profile {name} {mode} ({n} examples, {n * n:,} pairs, {seconds:.1f} s profiled):\n{kernels}\nhost steps:\n{host}", flush=True)
                rows.append({"precision": name, "compile": mode, "examples": n, "seconds": seconds, "table": kernels, "host_steps": steps})
    return rows


def das_arm(args, task, model, device) -> dict:
    """DAS training of a k = 64 rotation at :data:`LOCATION`, one epoch, and pyvene's ``RotatedSpaceIntervention``
    beside it where pyvene is installed: the same initial rotation, batches and order (``benchmarks/das.py``'s arm),
    each one's training pairs/s and held-out IIA on the same held-out pairs."""
    from interp.analysis.das import FitSettings, _batches, fit_intervention, predict_pairs
    from interp.api.das import _as_tensors
    from interp.causal.pairs import HELD_OUT_SEED_OFFSET, counterfactual_pairs, split_examples
    from interp.engine.interventions import RotatedSubspace
    from interp.engine.pair_suffix import PairSuffix
    from interp.hooks.encoding import encode_examples
    from interp.hooks.locations import Location

    examples = task.examples(("pmonli", "nmonli_test"), n=48 if args.smoke else None, seed=0)
    causal = task.build_causal_model(examples)
    inputs = [task.inputs(e) for e in examples]
    train_idx, test_idx = split_examples(len(examples), 0.2, 0)
    train = _as_tensors(counterfactual_pairs(causal, inputs, "lexrel", train_idx, 64 if args.smoke else 4096, 0), task.labels)
    test = _as_tensors(counterfactual_pairs(causal, inputs, "lexrel", test_idx, 32 if args.smoke else 512, HELD_OUT_SEED_OFFSET), task.labels)
    k, settings, loc = 8 if args.smoke else 64, FitSettings(epochs=1, batch_size=64), Location.parse(LOCATION)
    encoded = encode_examples(examples, model.tokenizer, "first", task.labels)
    reset_peak(device)
    sync(device)
    began = time.perf_counter()
    runner = PairSuffix(model.module, encoded, loc)  # each example's prefix, once: part of training's time, and given apart
    sync(device)
    prefix = time.perf_counter() - began
    rotated = RotatedSubspace(runner.width, k, seed=0)
    initial = rotated.matrix.detach().clone()
    fit_intervention(runner, rotated, *train, settings)
    sync(device)
    seconds = time.perf_counter() - began
    rate, steps = len(train[0]) / seconds, len(train[0]) / (seconds - prefix)
    iia = float((predict_pairs(runner, rotated, test[0], test[1]) == test[2].numpy()).mean())
    out = {"train_pairs_per_s": rate, "steps_pairs_per_s": steps, "prefix_s": prefix, "pairs": len(train[0]), "held_out_iia": iia,
           "peak_gib": peak_gib(device)}  # fmt: skip
    print(f"DAS k={k} training: {rate:,.0f} pairs/s on {len(train[0])} pairs (steps alone {steps:,.0f}; the prefix pass {prefix:.2f} s); "
          f"held-out IIA {iia:.3f} on {len(test[0])} pairs", flush=True)
    batches = _batches(runner.lengths[train[0]], settings.batch_size, torch.Generator().manual_seed(settings.seed))  # fit_intervention's epoch
    out.update(pyvene_das(model, encoded, loc, k, initial, train, test, settings, batches, device))
    if out["pyvene_pairs_per_s"] is not None:
        print(f"pyvene DAS training: {out['pyvene_pairs_per_s']:,.0f} pairs/s ({rate / out['pyvene_pairs_per_s']:.1f}x for interp); "
              f"held-out IIA {out['pyvene_held_out_iia']:.3f}", flush=True)
    else:
        print(out["pyvene"], flush=True)
    return out


def pyvene_das(model, encoded, loc, k: int, initial, train, test, settings, batches, device) -> dict:
    """pyvene's DAS on the same initial rotation, batches and order (``benchmarks/das.py``'s arm), or why it was skipped:
    ``pyvene_pairs_per_s``, ``pyvene_held_out_iia``, ``pyvene`` (a note)."""
    skipped = {"pyvene_pairs_per_s": None, "pyvene_held_out_iia": None}
    if importlib.util.find_spec("pyvene") is None:
        return {**skipped, "pyvene": "pyvene absent: its DAS arm skipped"}
    try:
        from das import pyvene_model, pyvene_predict, pyvene_train  # benchmarks/das.py, beside this file

        # pyvene wraps a copy: it turns the weights' gradients off, and the arms after this one read the model as it was
        wrapped, intervention = pyvene_model(copy.deepcopy(model.module), loc, k, initial)
        intervention.to(device)
        (role,) = loc.roles
        sync(device)
        seconds = pyvene_train(wrapped, intervention, encoded, train, batches, role, settings.lr, device)
        predicted = pyvene_predict(wrapped, encoded, test, role, device)
    except Exception as error:  # noqa: BLE001 - a version that does not run here: the arm says so and the others go on
        return {**skipped, "pyvene": f"pyvene DAS skipped ({type(error).__name__}: {str(error)[:80]})"}
    from importlib.metadata import version

    return {"pyvene_pairs_per_s": len(train[0]) / seconds, "pyvene_held_out_iia": float((predicted == test[2].numpy()).mean()),
            "pyvene": f"pyvene {version('pyvene')}"}  # fmt: skip


def cache_arm(args, model, device) -> dict:
    import interp
    from interp.jobs.cache import CacheConfig, build_cache

    with tempfile.TemporaryDirectory() as tmp:
        reset_peak(device)
        sample = interp.SampleSpec(max_examples=24 if args.smoke else None)
        began = time.perf_counter()
        build_cache(CacheConfig(model=model, out=f"{tmp}/act.h5", data=interp.DataSpec(data_dir=args.monli), sample=sample,
                                run=interp.RunSpec(device=str(device))), progress=False)  # fmt: skip
        seconds = time.perf_counter() - began
    print(f"cache: {seconds:.1f} s", flush=True)
    return {"seconds": seconds, "peak_gib": peak_gib(device)}


#: The embedded model's files a GPU machine needs beside its weights.
MODEL_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")


def prepare(folder: str | Path, monli: str, wheels: tuple[str, ...] = (), smollm2: bool = False) -> Path:
    """Write the benchmark's inputs for a machine with no network into ``folder`` (see the module's "What to carry").

    The weights are cast to float16 (half the 90 MB of float32); the fine-tuning arm casts them back to float32 after
    loading, so only their rounding differs from the installed model's. MoNLI's files are read with their checksums
    checked before they are copied. Everything is written into ``folder.partial`` first and renamed at the end, so a
    run cut short leaves no ``folder``.

    Raises:
        FileExistsError: ``folder`` exists (nothing of it is touched).
        interp.InterpError: MoNLI is missing or its checksums differ.
        subprocess.CalledProcessError: pip could not download a wheel.
    """
    import shutil
    import subprocess

    from safetensors.torch import load_file, save_file

    from interp.models import embedded_model_dir
    from interp.tasks.monli import load_monli
    from interp.tasks.monli.data import SPLITS

    folder = Path(folder)
    if folder.exists():
        raise FileExistsError(f"{folder} exists; give a new folder")
    load_monli(monli)  # the released files, checksums verified
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)  # what an earlier, cut-short call left
    (partial / "minilm").mkdir(parents=True)
    (partial / "monli").mkdir()
    source = Path(embedded_model_dir())
    for name in MODEL_FILES:
        shutil.copyfile(source / name, partial / "minilm" / name)
    weights = {k: v.half() if v.is_floating_point() else v for k, v in load_file(source / "model.safetensors").items()}
    save_file(weights, partial / "minilm" / "model.safetensors", metadata={"format": "pt"})
    for split in SPLITS:
        shutil.copyfile(Path(monli) / f"{split}.jsonl", partial / "monli" / f"{split}.jsonl")
    if wheels:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--dest", str(partial / "wheels"), *wheels], check=True)
    if smollm2:  # SmolLM2's shape and tokenizer (its first load here converts the package's GGUF: minutes on a CPU)
        from gpu_smollm2 import prepare as prepare_smollm2

        print(prepare_smollm2(partial / "smollm2"), flush=True)
    partial.rename(folder)
    size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    also = f" --smollm2 {folder}/smollm2" if (folder / "smollm2").is_dir() else ""
    print(f"wrote {folder} ({size / 2**20:.1f} MiB): carry it beside the repository; run benchmarks/gpu.py --monli {folder}/monli "
          f"--minilm {folder}/minilm{also}")  # fmt: skip
    return folder


#: What ``--compile-modes`` names: the ``compile=`` each all-pairs run passes (auto: on for CUDA, off on a CPU).
COMPILE_MODES = {"auto": None, "eager": False, "compiled": True}
#: ``--check``: the arms, settings and time limit of the one device check (see the module's docstring).
CHECK = {"arms": "finetune,allpairs,cpu,engine,smollm2,localize,decoder", "precisions": "tf32,bf16", "compile_modes": "eager,compiled", "sizes": "minilm,base",
         "engine_precisions": "bf16", "pyvene_precision": "bf16", "repeats": 2, "deadline": 225.0}  # fmt: skip


def late(args, what: str) -> bool:
    """Whether ``what`` would start past ``--deadline`` (seconds since the script began); it is then skipped and said so."""
    if args.deadline is None or time.perf_counter() - args.began <= args.deadline:
        return False
    print(f"{what}: skipped, {time.perf_counter() - args.began:.0f} s is past --deadline {args.deadline:.0f} s", flush=True)
    return True


def parse(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--monli", default=os.environ.get("INTERP_MONLI_DIR"), help="MoNLI folder (default: $INTERP_MONLI_DIR)")
    parser.add_argument("--minilm", default=None, help="the embedded model's folder (config, tokenizer, weights); default: the installed package's")
    parser.add_argument("--smoke", action="store_true", help="tiny random models and a few examples on the CPU: checks the script runs")
    parser.add_argument("--check", action="store_true", help="the one device check: " + ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in CHECK.items())
                        + "; writes DIR/gpu.json and DIR/gpu.md (--out, default runs/gpu_check)")  # fmt: skip
    parser.add_argument("--profile", action="store_true", help="only the profile arm (the all-pairs job on --profile-examples examples, bf16, eager and compiled)")
    parser.add_argument("--recipes", default=DEFAULT_RECIPE, help="';'-separated fine-tuning recipes epochs,lr,batch,warmup[,batching[,weight_decay]][,name=value...] (the first analysed)")
    parser.add_argument("--seeds", default="0", help="comma-separated fine-tuning seeds")
    parser.add_argument("--precisions", default="fp32,tf32,bf16", help="the all-pairs and profile arms' precisions")
    parser.add_argument("--compile-modes", default="auto", help="comma-separated: auto (on for CUDA), eager, compiled: the all-pairs and profile arms' compile=")
    parser.add_argument("--sizes", default="minilm,base,large")
    parser.add_argument("--engine-precisions", default="fp32,tf32,bf16", help="the engine arm's precisions")
    parser.add_argument("--engine-bases", type=int, default=64, help="bases (each against all 2,678 sources) in the engine arm")
    parser.add_argument("--pyvene-bases", type=int, default=2, help="bases (each against all 2,678 sources) in pyvene's arm")
    parser.add_argument("--pyvene-precision", default="fp32", help="the precision pyvene and the engine are compared at (one of --engine-precisions)")
    parser.add_argument("--decoder-shape", default="llama-1b", help="the decoder arm's shape (benchmarks/decoders.py)")
    parser.add_argument("--decoder-bases", type=int, default=8)
    parser.add_argument("--smollm2", default=None, help="the SmolLM2 arm's folder (--prepare's DIR/smollm2: its shape and tokenizer; with model.safetensors, its weights); default: the installed package")
    parser.add_argument("--smollm2-train", type=int, default=1024, help="PMoNLI + NMoNLI-train examples each fine-tuning route of the SmolLM2 arm trains on (one epoch)")
    parser.add_argument("--smollm2-location", default="blocks.25.hook_resid_post@w_h", help="where the SmolLM2 arm runs every MoNLI pair")
    parser.add_argument("--localize-blocks", default="0-29:3", help="the localize arm's blocks (interp localize's --blocks)")
    parser.add_argument("--decoder-sources", type=int, default=512)
    parser.add_argument("--profile-examples", type=int, default=1024, help="examples (all their pairs) in each profiled job")
    parser.add_argument("--repeats", type=int, default=2, help="timed engine calls per precision in the engine arm (the fastest is reported)")
    parser.add_argument("--arms", default="finetune,allpairs,engine,das,cache", help="comma-separated arms; also profile, decoder, smollm2, localize, cpu")
    parser.add_argument("--deadline", type=float, default=None, help="seconds after which no further arm (or precision) starts; skipped ones are said so")
    parser.add_argument("--out", default=None, help="write DIR/gpu.json (and with --check DIR/gpu.md)")
    parser.add_argument("--prepare", default=None, metavar="DIR", help="write the inputs to carry to a GPU machine into DIR, and stop")
    parser.add_argument("--wheels", default="", help="with --prepare: comma-separated pip requirements to download (e.g. pyvene==0.1.8)")
    parser.add_argument("--with-smollm2", action="store_true", help="with --prepare: SmolLM2-135M's config and tokenizer into DIR/smollm2 (the package installed)")
    args = parser.parse_args(argv)
    if args.check and args.profile:
        raise SystemExit("--check and --profile are two device calls: give one")
    if args.check:  # the check's settings, where the command line gives none of its own
        for name, value in CHECK.items():
            if getattr(args, name) == parser.get_default(name):
                setattr(args, name, value)
        args.out = args.out or "runs/gpu_check"
    if args.profile:
        args.arms = "profile"
        if args.precisions == parser.get_default("precisions"):
            args.precisions = "bf16"
        if args.compile_modes == parser.get_default("compile_modes"):
            args.compile_modes = "eager,compiled"
    if args.repeats < 1:
        raise SystemExit(f"--repeats must be at least 1, got {args.repeats}")
    args.recipes = [r for r in args.recipes.split(";") if r]
    args.seeds = [int(s) for s in args.seeds.split(",")]
    args.precisions = args.precisions.split(",")
    args.engine_precisions = args.engine_precisions.split(",")
    args.compile_modes = args.compile_modes.split(",")
    if unknown := [m for m in args.compile_modes if m not in COMPILE_MODES]:
        raise SystemExit(f"--compile-modes: {unknown[0]!r} is not one of {', '.join(COMPILE_MODES)}")
    args.sizes = args.sizes.split(",")
    return args


def main(argv=None) -> dict:
    args = parse(argv)
    args.began = time.perf_counter()
    if args.prepare:
        if args.monli is None:
            raise SystemExit("give --monli DIR (or set INTERP_MONLI_DIR)")
        prepare(args.prepare, args.monli, tuple(w for w in args.wheels.split(",") if w), smollm2=args.with_smollm2)
        return {}
    arms = set(args.arms.split(","))
    if args.monli is None:
        raise SystemExit("give --monli DIR (or set INTERP_MONLI_DIR)")
    from interp.core.outputs import atomic_text, write_json_atomic

    if args.out and (Path(args.out) / "gpu.json").exists():  # an earlier run's figures are never replaced
        raise SystemExit(f"{Path(args.out) / 'gpu.json'} exists (an earlier run's figures); give another --out")

    import interp
    import transformers
    from transformers import AutoTokenizer

    from interp.models import embedded_model_dir

    device = torch.device("cpu" if args.smoke or not torch.cuda.is_available() else "cuda")
    args.minilm = args.minilm or str(embedded_model_dir())
    tokenizer = AutoTokenizer.from_pretrained(args.minilm)
    task = interp.load_task("monli", data_dir=args.monli)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or platform.machine()
    env = {"device": name, "python": platform.python_version(), "torch": torch.__version__, "transformers": transformers.__version__,
           "threads": torch.get_num_threads(), "date": time.strftime("%Y-%m-%d"), "smoke": args.smoke, "check": args.check}  # fmt: skip
    print(f"machine: {env}", flush=True)
    results: dict = {"env": env}

    def keep() -> None:  # after every arm: a run cut short still leaves what it measured (this run's own file, replaced whole)
        results["seconds"] = time.perf_counter() - args.began
        if args.out:
            Path(args.out).mkdir(parents=True, exist_ok=True)
            write_json_atomic(Path(args.out) / "gpu.json", results)

    model = None
    if "finetune" in arms or {"allpairs", "cpu", "das", "cache"} & arms:
        try:
            results["finetune"], model = finetune_arm(args, task, device, tokenizer)
        except Exception as error:  # noqa: BLE001 - the arms that need no fine-tuned model still run
            traceback.print_exc()
            results["finetune"] = {"error": failure(error)}
        keep()
    if model is None and "profile" in arms:  # speed does not depend on the weights: the embedded model with a seeded head
        model = interp.load_model(args.minilm, labels=task.labels, seed=0)
        model.module.float()  # carried float16 weights, as the fine-tuning arm casts them
    for arm, run in (("allpairs", lambda: all_pairs_arm(args, model, device)), ("cpu", lambda: cpu_arm(args, task, model, device)),
                     ("engine", lambda: engine_arm(args, task, device, tokenizer)),
                     ("smollm2", lambda: smollm2_arm(args, task, device)), ("localize", lambda: localize_arm(args, device)),
                     ("decoder", lambda: decoder_arm(args, task, device)),
                     ("das", lambda: das_arm(args, task, model, device)),
                     ("cache", lambda: cache_arm(args, model, device)), ("profile", lambda: profile_arm(args, task, model, device))):  # fmt: skip
        if arm in arms:
            if late(args, arm):
                results[arm] = {"error": "skipped: past --deadline"}
                continue
            try:
                results[arm] = run()
            except Exception as error:  # noqa: BLE001 - an arm that fails is reported, and the next arms still run
                traceback.print_exc()
                results[arm] = {"error": failure(error)}
            keep()
    keep()
    rows = table(results)
    print(rows)
    if args.out and args.check:
        with atomic_text(Path(args.out) / "gpu.md") as handle:
            handle.write(rows + "\n")
    return results


def failure(error: Exception) -> str:
    """An arm's error as the table shows it: its type and the first line of its message."""
    return f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:200]


if __name__ == "__main__":
    main()
