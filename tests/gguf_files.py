"""GGUF files for the suite, made from the packaged pretrained decoders with the ``gguf`` package's own reader and
writer: the real weights truncated to their first blocks (the metadata's block count set to match, every other field
and the tokenizer kept), and spoiled copies for the bad-input tests.
"""

from __future__ import annotations

import re
from pathlib import Path

#: The packaged decoders the suite reads, by name (:data:`interp.models.gguf.PACKAGED`).
PACKAGED_DECODERS = ("smollm2-135m", "gemma3-270m")


def installed(name: str) -> bool:
    """Whether a packaged decoder's packages and the gguf package are installed (``make setup-decoders``)."""
    from interp.core.errors import ModelError
    from interp.models.gguf import packaged_gguf

    try:
        import gguf  # noqa: F401

        packaged_gguf(name)
    except (ImportError, ModelError):
        return False
    return True


#: The tokenizer's arrays with one entry per token: what ``vocab=`` cuts.
VOCAB_ARRAYS = ("tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type")
#: The tensors with one row per token: what ``vocab=`` cuts likewise.
VOCAB_TENSORS = ("token_embd.weight", "output.weight")


def rewrite(source: Path, out: Path, *, blocks: int | None = None, drop: str | None = None, set_fields: dict | None = None,
            vocab: int | None = None) -> Path:
    """Write a copy of the GGUF ``source`` to ``out``: only its first ``blocks`` blocks (``blk.N.`` tensors, and the
    block count in the metadata), without the metadata keys matching ``drop``, with ``set_fields`` (key -> str) set,
    and with ``vocab`` only the first ``vocab`` tokens and every single character (a SentencePiece vocabulary of scores
    without merges, as Gemma's: its special and byte tokens come first and keep their ids, and the converted tokenizer
    builds its pieces from the single characters; the embedding rows kept to match). Gemma 3's 262,144 tokens cost each
    reader of the file 20-30 s on a 2-core CPU, and a conversion reads it four times."""
    import gguf

    reader = gguf.GGUFReader(str(source))
    arch = str(reader.fields["general.architecture"].contents())
    arch = (set_fields or {}).get("general.architecture", arch)
    writer = gguf.GGUFWriter(str(out), arch=arch, endianess=reader.endianess)
    keep = None
    if vocab is not None:
        tokens = reader.fields["tokenizer.ggml.tokens"].contents()
        keep = [i for i, token in enumerate(tokens) if i < vocab or len(token) == 1]
    alignment = reader.fields.get("general.alignment")
    if alignment is not None:
        writer.data_alignment = int(alignment.contents())
    for field in reader.fields.values():
        if field.name.startswith("GGUF.") or field.name in ("general.architecture", "general.alignment"):
            continue
        if drop and re.search(drop, field.name):
            continue
        kind = field.types[0]
        sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
        value = field.contents()
        if blocks is not None and field.name.endswith(".block_count"):
            value = blocks
        if field.name.endswith(".attention.sliding_window_pattern") and blocks is not None and isinstance(value, list):
            value = value[:blocks]
        if keep is not None and field.name in VOCAB_ARRAYS:
            value = [value[i] for i in keep]
        if vocab is not None and field.name == "tokenizer.ggml.merges":
            raise ValueError("vocab= cuts a vocabulary of scores; this one has BPE merges")
        writer.add_key_value(field.name, value, kind, sub_type=sub)
    for key, value in (set_fields or {}).items():
        if key != "general.architecture":
            writer.add_string(key, value)

    def kept(name: str) -> bool:
        found = re.match(r"blk\.(\d+)\.", name)
        return blocks is None or found is None or int(found.group(1)) < blocks

    tensors = [(t, t.data[keep] if keep is not None and t.name in VOCAB_TENSORS else t.data) for t in reader.tensors if kept(t.name)]
    for t, data in tensors:
        writer.add_tensor_info(t.name, data.shape, data.dtype, data.nbytes, t.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for _, data in tensors:
        writer.write_tensor_data(data, tensor_endianess=reader.endianess)
    writer.close()
    return out


#: Gemma 3's vocabulary cut to its first tokens in the suite (specials and bytes come first): its 262,144 cost each of a
#: conversion's four reads of the file 20-30 s. SmolLM2's 49,152 BPE tokens and their merges stay whole.
VOCAB = {"gemma3-270m": 16_384}


def truncated_checkpoint(tmp_path_factory, name: str) -> Path:
    """``name``'s GGUF cut to its first two blocks, and its conversion, made once per test run (shared by the xdist
    workers): the converted folder. Fails the test, naming the set-up, where the packages are not installed."""
    import pytest
    from conftest import made_once

    from interp.models.gguf import converted_checkpoint, packaged_gguf

    if not installed(name):
        pytest.fail(f"{name}'s packages are not installed: `make setup-decoders` (make test's set-up runs it)")

    def make(folder: Path) -> None:
        small = rewrite(packaged_gguf(name), folder / f"{name}-2blocks.gguf", blocks=2, vocab=VOCAB.get(name))
        converted_checkpoint(small, root=folder / "cache")

    folder = made_once(tmp_path_factory, f"gguf_{name}", make)
    return next(p for p in (folder / "cache" / "converted").iterdir() if p.is_dir())  # beside it: the conversion's lock file
