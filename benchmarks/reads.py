"""What a read costs that needs less than the whole model: a probe's vectors, and a causal LM's label words.

    .venv/bin/python benchmarks/reads.py --model runs/demo/model --examples 1000 --location blocks.1.hook_resid_post@w_h
    .venv/bin/python benchmarks/reads.py --vocab 262144 --width 640 --rows 64      # the head alone, at Gemma 3's shape

Two arms, each against its baseline in the same run, and each checked against it:

* **probe read**: ``IntervenableModel.vectors`` (only the blocks up to ``--location`` run) against the pass an
  interchange reads its sources' vectors from (``source_vectors``: the whole model, whose logits the nulls read), on
  ``--examples`` MoNLI examples with a fresh model object each (nothing held); the vectors must be equal exactly.
* **label-word head**: a causal LM read through two label words (:class:`interp.models.decoders.DecoderClassifier`'s
  head: the two words' rows of the output embedding) against projecting onto the whole vocabulary and picking the two
  columns, at ``--vocab`` × ``--width`` (random weights: the cost is the shape's) on ``--rows`` final hidden states;
  the logits must agree within 1e-4 of their scale.

Each arm prints the median seconds of ``--repeats`` runs of each side and the ratio. Threads: torch's default unless
``--threads``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import torch


def _median(run, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def probe_read(model: str, location: str, n: int, repeats: int) -> dict:
    """Seconds for ``n`` examples' vectors at ``location``: a probe's read against the interchange's whole pass."""
    import interp

    task = interp.load_task("monli")
    loaded = interp.load_model(model)
    examples = task.examples(("pmonli", "nmonli_train", "nmonli_test"), n=n, seed=0)
    probe, read = _median(lambda: interp.IntervenableModel(loaded, task).vectors(examples, location), repeats)
    whole, full = _median(lambda: interp.IntervenableModel(loaded, task).source_vectors(examples, location).cpu(), repeats)
    assert torch.equal(read.flatten(1), full), "the probe's read differs from the whole pass's vectors"
    return {"arm": "probe read", "examples": n, "location": location, "probe_s": probe, "whole_s": whole, "ratio": whole / probe}


def label_word_head(vocab: int, width: int, rows: int, repeats: int) -> dict:
    """Seconds for the logits of two label words on ``rows`` hidden states: their rows of the output embedding
    against the whole vocabulary's projection."""
    from transformers import GPT2Config, GPT2LMHeadModel

    from interp.hooks.templates import Template
    from interp.models.decoders import DecoderClassifier

    torch.manual_seed(0)
    lm = GPT2LMHeadModel(GPT2Config(vocab_size=vocab, n_embd=width, n_layer=1, n_head=1, n_positions=8)).eval()
    classifier = DecoderClassifier(lm, Template(), {"entailment": " yes", "neutral": " no"}, {"entailment": 7, "neutral": vocab - 3})
    hidden = torch.randn(rows, width)
    with torch.no_grad():
        rows_s, ours = _median(lambda: classifier.head(hidden), repeats)
        whole_s, theirs = _median(lambda: lm.get_output_embeddings()(hidden)[..., classifier.word_ids], repeats)
    scale = float(theirs.abs().max())
    assert float((ours - theirs).abs().max()) <= 1e-4 * scale, "the label words' rows give other logits"
    return {"arm": "label-word head", "vocab": vocab, "width": width, "rows": rows, "rows_s": rows_s, "whole_s": whole_s,
            "ratio": whole_s / rows_s}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="a classifier for the probe read (a checkpoint folder or `minilm`); "
                                                      "without it only the head arm runs")
    parser.add_argument("--location", default="blocks.1.hook_resid_post@w_h")
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--vocab", type=int, default=262_144)
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--rows", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads")
    rows = [label_word_head(args.vocab, args.width, args.rows, args.repeats)]
    if args.model:
        rows.append(probe_read(args.model, args.location, args.examples, args.repeats))
    for row in rows:
        print(", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items()))


if __name__ == "__main__":
    main()
