"""Transformers' load reports and progress bars silenced for a block (:func:`quiet_transformers`)."""

from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def quiet_transformers():
    """Silence transformers' load reports and progress bars inside the block, then restore them.

    The "newly initialized head" report is expected when fine-tuning starts.
    """
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
