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


def rewrite(source: Path, out: Path, *, blocks: int | None = None, drop: str | None = None, set_fields: dict | None = None) -> Path:
    """Write a copy of the GGUF ``source`` to ``out``: only its first ``blocks`` blocks (``blk.N.`` tensors, and the
    block count in the metadata), without the metadata keys matching ``drop``, with ``set_fields`` (key -> str) set."""
    import gguf

    reader = gguf.GGUFReader(str(source))
    arch = str(reader.fields["general.architecture"].contents())
    arch = (set_fields or {}).get("general.architecture", arch)
    writer = gguf.GGUFWriter(str(out), arch=arch, endianess=reader.endianess)
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
        writer.add_key_value(field.name, value, kind, sub_type=sub)
    for key, value in (set_fields or {}).items():
        if key != "general.architecture":
            writer.add_string(key, value)

    def kept(name: str) -> bool:
        found = re.match(r"blk\.(\d+)\.", name)
        return blocks is None or found is None or int(found.group(1)) < blocks

    tensors = [t for t in reader.tensors if kept(t.name)]
    for t in tensors:
        writer.add_tensor_info(t.name, t.data.shape, t.data.dtype, t.data.nbytes, t.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for t in tensors:
        writer.write_tensor_data(t.data, tensor_endianess=reader.endianess)
    writer.close()
    return out
