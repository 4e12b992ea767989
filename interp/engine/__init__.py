"""The intervention engine: slicing a model without mutating it, fused blocks, first-block reuse, the batched engine and the naive reference."""

from interp.engine import featurizers as _featurizers  # noqa: F401  registers DBM's kind, ``dbm``, beside every other intervention's
from interp.engine.batched import interchange_logits, source_vectors
from interp.engine.naive import naive_interchange

__all__ = ["interchange_logits", "naive_interchange", "source_vectors"]
