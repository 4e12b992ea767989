"""The engine on every encoder family: pairs/s against the naive loop, on MiniLM-shaped random classifiers.

    .venv/bin/python benchmarks/families.py                    # all seven families
    .venv/bin/python benchmarks/families.py --families bert,deberta-v2 --bases 16

Each family's classifier has the embedded model's shape (6 blocks, width
384, 12 heads, feed-forward 1,536) with random weights (speed does not
depend on them), MoNLI's two labels and the embedded model's WordPiece
vocabulary; what sets the family apart is on as in ``tests/families.py``
(ELECTRA's 192-wide embeddings and their projection, DeBERTa-v3's relative
attention, ModernBERT's alternating local and global attention). At
``blocks.2.hook_resid_post@w_h`` on NMoNLI test (200 examples) each row
times the naive batch-1 hooked loop and the batched engine (as
``interp intervene`` runs it: fused blocks for BERT and RoBERTa, the
model's own modules otherwise) on the same pairs and checks their labels
agree. The ratio, not the rate, is the figure: both arms run in this
process on this machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from families import FAMILIES, family_config  # noqa: E402

from interp.engine import interchange_logits, naive_interchange, source_vectors  # noqa: E402
from interp.hooks.locations import Location  # noqa: E402
from interp.models import embedded_model_dir  # noqa: E402
from interp.tasks import resolve_task  # noqa: E402
from interp.tasks.monli import encode_examples  # noqa: E402


def minilm_shaped(family: str):
    """``family``'s tiny test config widened to the embedded model's shape, as a random classifier in eval mode."""
    from transformers import AutoModelForSequenceClassification

    config = family_config(family, init=0.02, shape=(6, 384, 12, 1536))
    torch.manual_seed(0)
    return AutoModelForSequenceClassification.from_config(config).eval()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--naive-bases", type=int, default=2)
    parser.add_argument("--bases", type=int, default=24)
    parser.add_argument("--location", default="blocks.2.hook_resid_post@w_h")
    args = parser.parse_args()
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(embedded_model_dir())
    task = resolve_task("monli")
    encoded = encode_examples(task.load(("nmonli_test",)), tokenizer, "first", task.labels)
    loc = Location.parse(args.location)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads; {len(encoded)} NMoNLI-test sources; {loc}")  # fmt: skip
    print(f"{'family':16} {'naive pairs/s':>14} {'engine pairs/s':>15} {'ratio':>7}  labels agree, max |Δ logit|")
    for family in args.families.split(","):
        model = minilm_shaped(family)
        started = time.perf_counter()
        naive = naive_interchange(model, encoded[: args.naive_bases], encoded, loc, tokenizer.pad_token_id)
        naive_rate = naive.shape[0] * naive.shape[1] / (time.perf_counter() - started)
        source_vectors(model, encoded[:8], loc)  # one-time setup outside the timing
        started = time.perf_counter()
        fast = interchange_logits(model, encoded[: args.bases], source_vectors(model, encoded, loc), loc)
        rate = fast.shape[0] * fast.shape[1] / (time.perf_counter() - started)
        shared = fast[: args.naive_bases]
        print(f"{family:16} {naive_rate:14.1f} {rate:15.1f} {rate / naive_rate:6.1f}x  "
              f"{torch.equal(shared.argmax(-1), naive.argmax(-1))}, {(shared - naive).abs().max().item():.1e}")


if __name__ == "__main__":
    main()
