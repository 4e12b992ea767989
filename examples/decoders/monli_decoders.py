"""Small decoders built from scratch and studied on real MoNLI: a GPT-2-style and a Llama-style classifier through `interp demo`.

    python examples/decoders/monli_decoders.py --family gpt2 --out runs/decoders/gpt2
    python examples/decoders/monli_decoders.py --family llama --out runs/decoders/llama
    python examples/decoders/monli_decoders.py --family gpt2 --out runs/decoders/quick --quick   # a minute: 2 blocks, 2 epochs

No pretrained decoder can be had here, so each is built from nothing: a tokenizer trained on MoNLI's own sentences
with the `tokenizers` library (byte-level BPE for GPT-2, SentencePiece-style BPE for Llama;
``scratch_tokenizers.py``), a causal LM of a few blocks with random weights, saved as a checkpoint (``OUT/base``);
then ``interp demo --model OUT/base`` fine-tunes it as a classifier (a new head read at the last token, the pair
joined by the default template) on MoNLI's two Table 1 trainings, long enough from random weights to stand above
chance on the splits it trained on, and runs the rest of the main job on it: probes, interchange interventions at
the location the probe table picks, cliques and the report page (``OUT/demo/report/index.html``). Every figure the
demo prints carries its interval and its null, as for the encoder; where a model stays at chance it says so.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scratch_tokenizers import byte_level_bpe, sentencepiece_bpe  # noqa: E402

#: The text the default template adds around the sentences (its words are in the tokenizer's training text).
TEMPLATE_WORDS = "Premise: Hypothesis: Answer:"


def shape(family: str, quick: bool) -> dict:
    """A small decoder's shape: 4 blocks of width 128 (2 and 64 with ``quick``)."""
    blocks, width = (2, 64) if quick else (4, 128)
    if family == "gpt2":
        return dict(n_layer=blocks, n_embd=width, n_head=4, n_inner=2 * width, n_positions=128)
    return dict(num_hidden_layers=blocks, hidden_size=width, num_attention_heads=4, num_key_value_heads=2, intermediate_size=2 * width,
                max_position_embeddings=128)  # fmt: skip


def build(family: str, out: Path, quick: bool, seed: int = 0, data_dir: str | None = None) -> Path:
    """The tokenizer and a random causal LM of ``family`` (``gpt2`` or ``llama``), saved at ``out`` (MoNLI read from
    ``data_dir``, else ``$INTERP_MONLI_DIR``)."""
    import torch
    import transformers as t

    import interp

    task = interp.load_task("monli", data_dir=data_dir)
    sentences = [TEMPLATE_WORDS] * 20 + [s for e in task.examples(task.splits) for s in (e.premise, e.hypothesis)]
    tokenizer = (byte_level_bpe if family == "gpt2" else sentencepiece_bpe)(sentences, vocab_size=2000)
    special = dict(bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    config = (t.GPT2Config if family == "gpt2" else t.LlamaConfig)(vocab_size=len(tokenizer), **shape(family, quick), **special)
    torch.manual_seed(seed)
    model = (t.GPT2LMHeadModel if family == "gpt2" else t.LlamaForCausalLM)(config)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", choices=("gpt2", "llama"), default="gpt2")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--quick", action="store_true", help="2 blocks of width 64, 2 epochs on 400 examples per training: a check, not a result")
    parser.add_argument("--epochs", type=int, default=None, help="[default: 10; 2 with --quick]")
    parser.add_argument("--lr", type=float, default=1e-3, help="From random weights a decoder needs a larger rate than a pretrained encoder.")
    args = parser.parse_args()
    base = build(args.family, args.out / "base", args.quick)
    epochs = args.epochs or (2 if args.quick else 10)
    command = [sys.executable, "-m", "interp.cli", "demo", "--model", str(base), "--out", str(args.out / "demo"), "--epochs", str(epochs),
               "--lr", str(args.lr), "--batch-size", "32", "--warmup-ratio", "0.1"]  # fmt: skip
    if args.quick:
        command += ["--max-train", "400", "--probe-seeds", "1"]
    print("$", " ".join(command[2:]).replace("interp.cli", "interp", 1), flush=True)
    raise SystemExit(subprocess.run(command, env=dict(os.environ, HF_HUB_OFFLINE="1")).returncode)


if __name__ == "__main__":
    main()
