"""Decoder interchange speed: the engine with and without each base's prefix reused, against the naive loop and pyvene.

    .venv/bin/python benchmarks/decoders.py --shapes gpt2-small,llama --bases 4 --sources 48
    .venv/bin/python benchmarks/decoders.py --shapes gpt2-small --location blocks.9.hook_resid_post@w_h
    python benchmarks/decoders.py --shapes llama-1b --device cuda --dtype bf16 --naive-bases 0 --bases 32 --sources 512   # a GPU
    .venv/bin/python benchmarks/decoders.py --shapes smollm2-135m --location blocks.3.hook_resid_post@w_h     # pretrained weights

Random weights at a GPT-2-small shape (12 blocks of width 768, 12 heads) and a Llama shape of the same size (12
blocks of width 768, 12 query heads sharing 4 key/value heads, SwiGLU width 2048, RMSNorm, rotary positions), each a
``*ForSequenceClassification`` read at its last token, on NMoNLI-test pairs joined by the default template and
tokenized by a tokenizer trained on MoNLI's sentences (byte-level BPE for GPT-2, SentencePiece-style for Llama); or a
packaged pretrained decoder by name (``smollm2-135m``, ``gemma3-270m``: ``make setup-decoders``), its own weights and
tokenizer with a new two-label head drawn from seed 0. The same bases × sources at one location in every arm:

* naive: one batch-1 hooked forward pass per pair (:class:`interp.backends.naive.NaiveRunner`), on ``--naive-bases``;
* the engine without reuse: each base's prefix up to the location once, every position of the blocks after it per
  pair, rows batched (:func:`interp.engine.decoder.decoder_logits` with ``reuse=False``);
* the engine with prefix reuse: each base's positions before the intervened one run once through every block (a
  ``DynamicCache``), only the later positions per pair (``reuse=True``, what ``interp intervene`` runs);
* pyvene 0.1.8 (``pip install --no-deps pyvene``, a benchmark extra): ``IntervenableModel`` with a
  ``VanillaIntervention`` at the same block output and token, one base repeated against its sources of one length
  per call, each call running the sources' and the base's forward passes.

Labels must agree on every pair two arms run (logits within 1e-4 of naive). The ratios are of pairs per second in
this one run, on this machine; BENCHMARKS.md records them with the machine. ``llama-1b`` is a Llama shape of about a
billion parameters (16 blocks of width 2,048, 32 query heads sharing 8 key/value heads, SwiGLU width 8,192): the GPU
arm, in bf16 (``--dtype bf16``, the engine and pyvene alike), without the naive loop (``--naive-bases 0``; the arms
are then checked against each other).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "examples" / "decoders"))

#: Each Llama shape's (blocks, width, query heads, key/value heads, SwiGLU width).
LLAMA = {"llama": (12, 768, 12, 4, 2048), "llama-1b": (16, 2048, 32, 8, 8192), "tiny": (2, 64, 4, 2, 128)}  # tiny: benchmarks/gpu.py --smoke


def build(shape: str, task, seed: int = 0):
    """A random ``*ForSequenceClassification`` of ``shape`` with its scratch tokenizer, as interp reads it."""
    import transformers as t
    from scratch_tokenizers import byte_level_bpe, sentencepiece_bpe

    import interp
    from interp.models.gguf import PACKAGED

    if shape in PACKAGED:  # pretrained weights: the speed does not depend on the head, drawn afresh
        return interp.load_model(shape, labels=("entailment", "neutral"), seed=seed)
    sentences = ["Premise: Hypothesis: Answer:"] * 20 + [s for e in task.examples(task.splits) for s in (e.premise, e.hypothesis)]
    tokenizer = (byte_level_bpe if shape == "gpt2-small" else sentencepiece_bpe)(sentences, vocab_size=4000)
    if shape not in ("gpt2-small", *LLAMA):
        raise SystemExit(f"--shapes: {shape!r} is not one of gpt2-small, {', '.join(LLAMA)}, {', '.join(PACKAGED)}")
    labels = dict(id2label={0: "entailment", 1: "neutral"}, label2id={"entailment": 0, "neutral": 1}, num_labels=2)
    special = dict(bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                   pad_token_id=tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id)  # fmt: skip
    if shape == "gpt2-small":
        config = t.GPT2Config(vocab_size=len(tokenizer), n_layer=12, n_embd=768, n_head=12, n_positions=256, **labels, **special)
        model = t.GPT2ForSequenceClassification(config)
    else:
        blocks, width, heads, kv_heads, ff = LLAMA[shape]
        config = t.LlamaConfig(vocab_size=len(tokenizer), num_hidden_layers=blocks, hidden_size=width, num_attention_heads=heads,
                               num_key_value_heads=kv_heads, intermediate_size=ff, max_position_embeddings=256, **labels, **special)  # fmt: skip
        model = t.LlamaForSequenceClassification(config)
    torch.manual_seed(seed)
    model.apply(model._init_weights)
    return interp.load_model(model.eval(), tokenizer)


def pyvene_arm(inner, encoded, loc, tokens, n_bases: int):
    """Logits ``[n_bases, n_sources, labels]`` and seconds of pyvene at a block output, or ``None`` without pyvene."""
    try:
        import pyvene as pv
    except ImportError:
        return None
    from interp.engine.batched import length_groups

    wrapped = pv.IntervenableModel({"layer": loc.hidden_index - 1, "component": "block_output", "unit": "pos",
                                    "max_number_of_units": len(tokens[0]), "intervention_type": pv.VanillaIntervention}, model=inner)  # fmt: skip
    wrapped.disable_model_gradients()
    out = torch.empty(n_bases, len(encoded), inner.config.num_labels)
    device = next(inner.parameters()).device
    started = time.perf_counter()
    with torch.no_grad():
        for i in range(n_bases):
            for group in length_groups(encoded):
                k = len(group)
                base_in = {"input_ids": torch.tensor([encoded[i].input_ids] * k, device=device)}
                src_in = {"input_ids": torch.tensor([encoded[j].input_ids for j in group], device=device)}
                positions = ([[list(tokens[j]) for j in group]], [[list(tokens[i])] * k])
                _, counterfactual = wrapped(base_in, [src_in], {"sources->base": positions})
                out[i, torch.tensor(group)] = counterfactual.logits.float().cpu()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return out, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="gpt2-small,llama")
    parser.add_argument("--location", default="blocks.5.hook_resid_post@w_h", help="a block output (pyvene's arm needs one)")
    parser.add_argument("--bases", type=int, default=4, help="bases of the engine and pyvene arms (every source each)")
    parser.add_argument("--naive-bases", type=int, default=2)
    parser.add_argument("--sources", type=int, default=48)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="fp32", choices=("fp32", "bf16"))
    args = parser.parse_args()
    import interp
    from interp.backends import DecoderRunner, NaiveRunner

    task = interp.load_task("monli")
    examples = task.examples(("nmonli_test",), n=args.sources, seed=0)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads; {len(examples)} NMoNLI-test sources, {args.bases} bases; {args.location}")
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    for shape in args.shapes.split(","):
        model = build(shape, task)
        model.module.to(args.device, dtype)
        lab = interp.IntervenableModel(model, task)
        loc = lab.location(args.location)
        encoded = lab.encode(examples)
        pad = model.tokenizer.pad_token_id
        tokens = [e.tokens(loc.roles[0]) for e in encoded]
        lengths = [len(e.input_ids) for e in encoded]
        print(f"\n{shape}: {sum(p.numel() for p in model.module.parameters()) / 1e6:.0f}M parameters, {min(lengths)} to {max(lengths)} "
              f"tokens, the intervened token at {min(t[0] for t in tokens)} to {max(t[0] for t in tokens)}")
        vectors = DecoderRunner(model.module, pad).vectors(encoded, loc)
        rates, found = {}, {}
        if args.naive_bases:
            started = time.perf_counter()
            naive = NaiveRunner(model.module, pad).interchange_logits(encoded[: args.naive_bases], vectors, loc)
            rates["naive loop"] = naive.numel() / naive.shape[-1] / (time.perf_counter() - started)
        for name, reuse in (("engine, no reuse", False), ("engine, prefix reuse", True)):
            started = time.perf_counter()
            found[name] = DecoderRunner(model.module, pad, prefix_reuse=reuse).interchange_logits(encoded[: args.bases], vectors, loc)
            if args.device.startswith("cuda"):
                torch.cuda.synchronize()
            rates[name] = args.bases * len(encoded) / (time.perf_counter() - started)
        peer = pyvene_arm(model.module.inner, encoded, loc, tokens, args.bases)
        if peer is not None:
            found["pyvene 0.1.8"], seconds = peer
            rates["pyvene 0.1.8"] = args.bases * len(encoded) / seconds
        reference, rows = (naive, args.naive_bases) if args.naive_bases else (found["engine, no reuse"], args.bases)
        for name, rate in rates.items():
            logits = naive if name == "naive loop" else found[name]
            check = "" if logits is reference else (
                f"labels agree with {'naive' if args.naive_bases else 'the engine without reuse'}: "
                f"{torch.equal(logits[:rows].argmax(-1), reference[:rows].argmax(-1))}, "
                f"max |Δ logit| {(logits[:rows].float() - reference[:rows].float()).abs().max().item():.1e}")  # fmt: skip
            print(f"  {name:22} {rate:8.2f} pairs/s  {check}")
        reuse = rates["engine, prefix reuse"]
        print(f"  prefix reuse: {reuse / rates['engine, no reuse']:.2f}x the engine without it"
              + (f", {reuse / rates['naive loop']:.1f}x naive" if "naive loop" in rates else "")
              + (f", {reuse / rates['pyvene 0.1.8']:.1f}x pyvene" if "pyvene 0.1.8" in rates else " (pyvene not installed)"))


if __name__ == "__main__":
    main()
