"""Labels compared as a kernel leaves them: equal wherever the reference's top two logits stand apart.

Two runs of the same computation over different batch shapes, thread counts or CPU kernels (``ATEN_CPU_CAPABILITY``:
default, AVX2, AVX-512) agree to rounding, not to the bit; a label whose two best logits lie within rounding of each
other may flip between them. A test of labels asserts them equal outside that band, and that the band holds few.
"""

from __future__ import annotations

import torch

#: Logits closer than this to a tie are not asked to agree on their label (rounding across kernels is below 1e-5).
BAND = 1e-4


def assert_labels_agree(got: torch.Tensor, reference: torch.Tensor, band: float = BAND, decided: float = 0.9) -> None:
    """``got.argmax(-1) == reference.argmax(-1)`` wherever the reference's top-two margin exceeds ``band``, and at
    least ``decided`` of the rows are decided so (a test of labels whose every row sits on a tie tests nothing).

    Args:
        got, reference: float ``[..., labels]`` logits of the same rows.
    """
    assert got.shape == reference.shape, (got.shape, reference.shape)
    top = reference.float().topk(2, dim=-1).values
    clear = (top[..., 0] - top[..., 1]) > band
    assert clear.float().mean() >= decided, f"only {int(clear.sum())} of {clear.numel()} rows stand {band} from a tie"
    same = got.argmax(-1) == reference.argmax(-1)
    assert bool(same[clear].all()), f"{int((~same & clear).sum())} labels differ away from a tie"
