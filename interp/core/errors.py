"""The library's one exception hierarchy.

Every error that bad input can cause is an :class:`InterpError`; the CLI turns
it into a one-line message and exit code 2. Subclasses say which kind of input
was wrong, so a notebook can catch just that kind.
"""

from __future__ import annotations


class InterpError(Exception):
    """Base of every error `interp` raises on bad input or a bad environment."""


class DataError(InterpError):
    """A dataset file is missing, spoiled, or does not match its checksum.

    The message names the file and, where there is one, the line.
    """


class ModelError(InterpError):
    """A model name or directory cannot be resolved into a usable BERT-family model."""


class ConfigError(InterpError):
    """An argument or setting is invalid (the message names it)."""


class OutputError(InterpError):
    """An output path cannot be written, or holds results that do not match the request."""
