"""What can move a figure between machines: the versions of the numerical stack, the thread count, the BLAS.

Kept beside every result (every command's ``*.manifest.json``, the interventions
file's ``environment`` attribute, ``training.json``), so a figure that moves between two runs can be traced to
the machine rather than the method: the same seed gives other weights under
another torch or BLAS, or with another number of threads.

>>> sorted(environment())[:3]
['blas', 'device', 'numpy']
"""

from __future__ import annotations

import platform
import re


def environment() -> dict:
    """``python``, ``torch``, ``transformers``, ``numpy`` versions, torch's ``threads``, its ``blas`` and the ``device`` (CPU model or GPU name).

    transformers' version is read from its installed metadata, not by importing it (several seconds on a small CPU),
    so a command that runs no model (``cliques``, ``report``) does not pay for it."""
    from importlib.metadata import version

    import numpy
    import torch

    config = torch.__config__.show()
    blas = re.search(r"BLAS_INFO=(\w+)", config)
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else (platform.processor() or platform.machine())
    return {"python": platform.python_version(), "torch": torch.__version__, "transformers": version("transformers"),
            "numpy": numpy.__version__, "threads": torch.get_num_threads(), "blas": blas.group(1) if blas else "unknown",
            "device": device}  # fmt: skip


__all__ = ["environment"]
