"""Checks on a checkpoint directory before transformers reads it, and on the tokenizer it gives.

Usage::

    from interp.models.checkpoint import check_weights, check_tokenizer_files, check_tokenizer_ids
    check_weights(Path("runs/demo/model"))                 # every weights file a valid safetensors file
    check_tokenizer_files(Path("runs/demo/model"))         # tokenizer.json, vocab.txt, ... present
    check_tokenizer_ids(tokenizer, config, "runs/demo/model")

Why each check exists:

* a truncated, empty or garbled ``model.safetensors`` makes transformers
  raise deep inside its loader; here it is one :class:`ModelError` naming
  the file;
* a ``model.safetensors.index.json`` may name shards that are pickles
  (``pytorch_model-00001.bin``), which transformers would hand to
  ``torch.load``: every shard must be a ``.safetensors`` file inside the
  directory, and a valid one, before anything is loaded;
* with its tokenizer files missing, transformers builds a 5-token
  tokenizer from the config and every word becomes ``[UNK]``: the model
  then evaluates at chance with exit code 0. A directory without tokenizer
  files is refused, and so is a tokenizer whose ids reach past the model's
  embedding matrix or that covers less than half of it.

Only headers are read (``safetensors.safe_open``), never tensors: a check
costs milliseconds.
"""

from __future__ import annotations

import json
from pathlib import Path

from interp.core.errors import ModelError

WEIGHTS = "model.safetensors"
WEIGHTS_INDEX = "model.safetensors.index.json"
#: Files any one of which gives transformers a real vocabulary for an encoder tokenizer.
TOKENIZER_FILES: tuple[str, ...] = (
    "tokenizer.json",  # fast tokenizers (what interp saves)
    "vocab.txt",  # BERT, ELECTRA WordPiece
    "vocab.json",  # RoBERTa byte-level BPE (with merges.txt)
    "sentencepiece.bpe.model",  # XLM-R
    "spm.model",
    "tokenizer.model",
)


def check_safetensors_file(path: Path) -> None:
    """Raise :class:`ModelError` naming ``path`` unless it is a complete, valid safetensors file.

    Reads the header only; ``safe_open`` checks that it is JSON and that the
    tensors' offsets cover the file exactly (so truncation and trailing
    bytes are caught too).
    """
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="pt") as handle:
            handle.keys()
    except Exception as exc:  # noqa: BLE001 - SafetensorError, OSError: all mean "not usable weights"
        reason = str(exc).removeprefix("Error while deserializing header: ")
        raise ModelError(f"{path}: not a valid safetensors file ({reason})") from None


def check_weights(directory: Path) -> None:
    """Check the weights transformers will read from ``directory`` (a local checkpoint).

    ``model.safetensors`` when it is there (transformers prefers it), else
    every shard named by ``model.safetensors.index.json``.

    Raises:
        ModelError: naming the file: a missing or invalid weights file, an
            unreadable index, or an index that names a shard that is not a
            ``.safetensors`` file inside ``directory``.
    """
    single = directory / WEIGHTS
    if single.is_file():
        check_safetensors_file(single)
        return
    index = directory / WEIGHTS_INDEX
    try:
        weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        shards = sorted(set(weight_map.values()))
    except FileNotFoundError:
        pickled = [n for n in ("pytorch_model.bin", "pytorch_model.bin.index.json") if (directory / n).is_file()]
        raise ModelError(f"model directory {directory} has no {WEIGHTS}: interp loads weights only from safetensors"
                         + (f"; it holds {pickled[0]}: convert it once with interp convert-checkpoint {directory} NEW_DIR" if pickled else "")) from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ModelError(f"{index}: not a safetensors index ({type(exc).__name__}: {exc})") from None
    if not shards:
        raise ModelError(f"{index}: its weight_map names no shard")
    for shard in shards:
        if not isinstance(shard, str) or Path(shard).name != shard or not shard.endswith(".safetensors"):
            raise ModelError(
                f"{index}: shard {shard!r} is not a .safetensors file in the same directory; "
                "interp loads weights only from safetensors (a .bin checkpoint: interp convert-checkpoint converts it once)"
            )
        path = directory / shard
        if not path.is_file():
            raise ModelError(f"{index}: shard {shard} does not exist")
        check_safetensors_file(path)


#: The names a classification head's output weights end with: ``classifier.weight`` (BERT, ALBERT, DeBERTa, DistilBERT),
#: ``classifier.out_proj.weight`` (RoBERTa, XLM-R, ELECTRA), ``score.weight`` (the decoders).
HEAD_WEIGHTS: tuple[str, ...] = ("classifier.out_proj.weight", "classifier.weight", "score.weight")


def check_head_rows(directory: Path, num_labels: int) -> None:
    """The classification head saved in ``directory``'s weights has one row per label its ``config.json`` names.

    Reads the safetensors headers only. A checkpoint whose config was edited to three labels over a two-row head
    (or the reverse) is named here, by both files, instead of failing inside transformers.

    Raises:
        ModelError: naming ``config.json``, the weights file and the tensor, with both counts.
    """
    from safetensors import safe_open

    index = directory / WEIGHTS_INDEX
    files = [directory / WEIGHTS] if (directory / WEIGHTS).is_file() else []
    if not files and index.is_file():
        files = [directory / n for n in sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))]
    for path in files:
        with safe_open(str(path), framework="pt") as handle:
            names = [k for k in handle.keys() if any(k == w or k.endswith("." + w) for w in HEAD_WEIGHTS)]
            if not names:
                continue
            name = min(names, key=len)
            rows = handle.get_slice(name).get_shape()[0]
        if rows != num_labels:
            raise ModelError(f"{directory / 'config.json'} names {num_labels} labels (num_labels, id2label), but {path.name}'s head "
                             f"{name} has {rows} rows; the two files disagree (was one of them edited or copied from another model?)")
        return


def check_tokenizer_files(directory: Path) -> None:
    """Raise :class:`ModelError` unless ``directory`` holds one of :data:`TOKENIZER_FILES`."""
    if not any((directory / name).is_file() for name in TOKENIZER_FILES):
        raise ModelError(
            f"model directory {directory} has no tokenizer files ({', '.join(TOKENIZER_FILES[:3])}, ...): "
            "without them every word would become [UNK]; copy the tokenizer the model was trained with"
        )


def check_tokenizer_ids(tokenizer, config, spec: str) -> None:
    """Every token id must index the model's embedding matrix, and the vocabulary must fill most of it.

    Args:
        tokenizer: a Hugging Face tokenizer.
        config: the model's config (``vocab_size``: rows of the embedding matrix).
        spec: the model as the user named it, for the message.

    Raises:
        ModelError: an id at or above ``config.vocab_size`` (the model
            would fail or read another row), or a tokenizer with fewer than
            half as many tokens as the model has rows (the wrong tokenizer).
    """
    rows = int(config.vocab_size)
    ids = tokenizer.get_vocab().values()
    largest = max(ids, default=-1)
    if largest >= rows:
        raise ModelError(
            f"model {spec!r}: its tokenizer has token id {largest}, but the model's embedding has only "
            f"{rows} rows (config vocab_size): tokenizer and weights do not belong together"
        )
    if 2 * len(tokenizer) < rows:
        raise ModelError(
            f"model {spec!r}: its tokenizer knows {len(tokenizer)} tokens, the model's embedding has {rows} rows: "
            "the tokenizer files are missing or wrong"
        )


def check_finite(model, spec: str) -> None:
    """Every weight and buffer of a loaded ``model`` is finite: a NaN or an infinity in one block makes every logit NaN,
    and an argmax over NaN reads as the first label, so accuracies and IIAs come out believable. Checked once, at load,
    in about a tenth of a second for 100M parameters.

    Raises:
        ModelError: naming ``spec``, the first tensor holding a NaN or an infinity, and how many of its entries do.
    """
    import torch

    for name, tensor in [*model.named_parameters(), *model.named_buffers()]:
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            bad = int((~torch.isfinite(tensor)).sum())
            raise ModelError(f"model {spec!r}: its weight {name} holds {bad} non-finite value{'s' if bad > 1 else ''} (NaN or infinity) "
                             f"of {tensor.numel()}; every output would be NaN")  # fmt: skip

