"""What ``torch.compile`` does on a CPU to the suffix the engine runs per pair: eager against compiled, at MiniLM and
BERT-base shapes.

    .venv/bin/python benchmarks/compile_cpu.py
    .venv/bin/python benchmarks/compile_cpu.py --rows 256 --tokens 20 --repeats 5

Random weights (speed does not depend on them): a ``BertForSequenceClassification`` of each shape. The suffix is the
second half of its blocks on ``--rows`` unpadded rows of ``--tokens`` tokens (one length bucket of an interchange
run), in two forms:

* the engine's :class:`~interp.engine.blocks.FastBlocks` (fused projections, reused buffers: what ``interp intervene``
  runs on BERT-like models), and
* the model's own ``BertLayer`` modules;

each timed eagerly and through ``torch.compile(dynamic=False)`` (inductor, one graph for the bucket's shape), the
median of ``--repeats`` calls after the first, under ``torch.no_grad``. The first compiled call, compilation
included, is reported beside it, and the largest difference from the eager output (fp32). Prints one table.

``--engine`` measures what the switch changes instead: :func:`interp.engine.interchange_logits` with
``compile=False`` and ``compile=True`` (:mod:`interp.engine.compiled`) on ``--bases`` NMoNLI-test bases × ``--sources``
sources at ``blocks.L/2-1.hook_resid_post@w_h`` (every length bucket, its full passes compiled, its last eager),
the first call (compiling included) and the median of ``--repeats`` calls after it, and the largest logit difference.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
import warnings

import torch

SHAPES = {"minilm": (6, 384, 12, 1536), "base": (12, 768, 12, 3072)}  # blocks, width, heads, feed-forward width


def timed(call, repeats: int) -> tuple[float, torch.Tensor]:
    """The median seconds of ``repeats`` calls, and the last output (copied: buffers are reused)."""
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = call().clone()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="minilm,base")
    parser.add_argument("--rows", type=int, default=256)
    parser.add_argument("--tokens", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--engine", action="store_true", help="the engine's interchange with compile=False and compile=True instead")
    parser.add_argument("--bases", type=int, default=8)
    parser.add_argument("--sources", type=int, default=256)
    args = parser.parse_args()
    if args.engine:
        return engine(args)

    from transformers import BertConfig, BertForSequenceClassification

    from interp.engine.blocks import FastBlocks

    warnings.simplefilter("ignore")
    print(f"{'shape, suffix':32}{'eager ms':>10}{'compiled ms':>13}{'speed-up':>10}{'first call s':>14}{'max |diff|':>12}")
    for name in args.shapes.split(","):
        layers, width, heads, ff = SHAPES[name]
        torch.manual_seed(0)
        config = BertConfig(num_hidden_layers=layers, hidden_size=width, num_attention_heads=heads, intermediate_size=ff)
        model = BertForSequenceClassification(config).eval()
        fast = FastBlocks(model, layers // 2, layers)
        own = model.bert.encoder.layer[layers // 2 :]

        def modules(x):
            for block in own:
                out = block(x)
                x = out[0] if isinstance(out, tuple) else out
            return x

        x = torch.randn(args.rows, args.tokens, width)
        for label, run in ((f"{name}, FastBlocks", lambda h: fast(h)), (f"{name}, BertLayer modules", modules)):
            with torch.no_grad():
                eager, reference = timed(lambda: run(x), args.repeats)
                compiled = torch.compile(run, dynamic=False)
                start = time.perf_counter()
                compiled(x)
                first = time.perf_counter() - start
                fast_s, out = timed(lambda: compiled(x), args.repeats)
            print(f"{label:32}{eager * 1e3:>10.1f}{fast_s * 1e3:>13.1f}{eager / fast_s:>9.2f}×{first:>14.1f}{(out - reference).abs().max().item():>12.1e}",
                  flush=True)  # fmt: skip
    print(f"{args.rows} rows × {args.tokens} tokens, blocks L/2..L-1; {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__} "
          f"({torch.get_num_threads()} threads)")  # fmt: skip


def engine(args) -> None:
    """The engine's interchange with and without the compiled suffix, at each shape (see the module's docstring)."""
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    import interp
    from interp.engine import interchange_logits, source_vectors
    from interp.engine.compiled import CompileStats
    from interp.hooks.encoding import encode_examples
    from interp.hooks.locations import Location
    from interp.models import embedded_model_dir

    warnings.simplefilter("ignore")
    tokenizer = AutoTokenizer.from_pretrained(embedded_model_dir())
    task = interp.load_task("monli")
    examples = task.examples(("nmonli_test",), n=args.sources, seed=0)
    encoded = encode_examples(examples, tokenizer, "first", task.labels)
    print(f"{'shape':10}{'eager s':>10}{'compiled s':>12}{'speed-up':>10}{'first compiled call s':>23}{'shapes':>8}{'max |diff|':>12}")
    for name in args.shapes.split(","):
        layers, width, heads, ff = SHAPES[name]
        torch.manual_seed(0)
        config = BertConfig(vocab_size=tokenizer.vocab_size, num_hidden_layers=layers, hidden_size=width, num_attention_heads=heads,
                            intermediate_size=ff, num_labels=2)  # fmt: skip
        model = BertForSequenceClassification(config).eval()
        loc = Location.parse(f"blocks.{layers // 2 - 1}.hook_resid_post@w_h")
        sources, bases = source_vectors(model, encoded, loc), encoded[: args.bases]
        stats = CompileStats()
        times = {}
        for compile in (False, True):
            start = time.perf_counter()
            out = interchange_logits(model, bases, sources, loc, compile=compile, stats=stats)
            first = time.perf_counter() - start
            runs = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                interchange_logits(model, bases, sources, loc, compile=compile, stats=stats)
                runs.append(time.perf_counter() - start)
            times[compile] = (first, statistics.median(runs), out)
        diff = (times[True][2] - times[False][2]).abs().max().item()
        print(f"{name:10}{times[False][1]:>10.2f}{times[True][1]:>12.2f}{times[False][1] / times[True][1]:>9.2f}×{times[True][0]:>23.1f}"
              f"{len(stats.shapes):>8}{diff:>12.1e}", flush=True)  # fmt: skip
    print(f"{args.bases} bases × {len(encoded)} sources at blocks.L/2-1.hook_resid_post@w_h, 256 pairs a pass; {platform.machine()}, "
          f"{os.cpu_count()} cores, torch {torch.__version__} ({torch.get_num_threads()} threads)")  # fmt: skip


if __name__ == "__main__":
    main()
