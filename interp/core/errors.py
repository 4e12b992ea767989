"""The library's one exception hierarchy, and how its messages name parameters.

Every error that bad input can cause is an :class:`InterpError`; the CLI turns
it into a one-line message and exit code 2. Subclasses say which kind of input
was wrong, so a notebook can catch just that kind.

A message names a parameter as the library spells it, marked with backticks:
`` `batch_size=` ``, or with the value to pass, `` `overwrite=True` ``.
``str(error)`` writes the mark as Python's keyword (``batch_size=``); the CLI
writes the same message with its flags (``--batch-size``), from one table in
``interp/cli.py``. No library message names a CLI flag (``tests/test_errors.py``
checks every string in the library against the CLI's flags).

>>> error = ConfigError("`batch_size=` must be at least 1, got 0; or pass `overwrite=True`")
>>> str(error)
'batch_size= must be at least 1, got 0; or pass overwrite=True'
>>> error.params
('batch_size', 'overwrite')
>>> error.render(lambda param, value: "--" + param.replace("_", "-"))
'--batch-size must be at least 1, got 0; or pass --overwrite'
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator

#: A parameter named in a message: `` `name=` `` or `` `name=value` `` (a value without spaces).
PARAM_MARK = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)=([^`\s]*)`")


def named(param: str, value: object = "") -> str:
    """The mark by which a message names ``param``, with the value given or to pass, if any.

    A value with a space in it follows the mark.

    >>> named("out"), named("overwrite", True), named("variable", repr("lexrel")), named("task", repr("a b"))
    ('`out=`', '`overwrite=True`', "`variable='lexrel'`", "`task=` 'a b'")
    """
    text = str(value)
    return f"`{param}={text}`" if not re.search(r"[`\s]", text) else f"`{param}=` {text}"


class _Marked:
    """A message with parameter marks (:func:`named`): ``str()`` writes them ``name=value``, :meth:`render` any other way."""

    args: tuple

    @property
    def message(self) -> str:
        """The message with its parameter marks, as raised."""
        return str(self.args[0]) if self.args else ""

    @property
    def params(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m.group(1) for m in PARAM_MARK.finditer(self.message)))

    def render(self, spell: Callable[[str, str], str] | None = None) -> str:
        """The message with every marked parameter written as ``spell(param, value)`` (default ``param=value``)."""
        spell = spell or (lambda param, value: f"{param}={value}")
        return PARAM_MARK.sub(lambda m: spell(m.group(1), m.group(2)), self.message)

    def __str__(self) -> str:
        return self.render()


class InterpError(_Marked, Exception):
    """Base of every error `interp` raises on bad input or a bad environment.

    ``params`` are the parameters its message names, in order of first mention;
    :meth:`render` writes the message with another spelling of them.
    """


class DataError(InterpError):
    """A dataset file is missing, spoiled, or does not match its checksum.

    The message names the file and, where there is one, the line.
    """


class ModelError(InterpError):
    """A model name or directory cannot be resolved into a usable encoder classifier of a family interp covers."""


class ConfigError(InterpError, ValueError):
    """An argument or setting is invalid (the message names it); also a ``ValueError``, so code that catches one catches both."""


class OutputError(InterpError):
    """An output path cannot be written, or holds results that do not match the request."""


#: The renamings of the :func:`renamed` blocks the current code runs in, innermost last.
_RENAMINGS: ContextVar[tuple[dict[str, str], ...]] = ContextVar("interp_renamings", default=())


def _rename(message: str, names: dict[str, str]) -> str:
    return PARAM_MARK.sub(lambda m: f"`{names.get(m.group(1), m.group(1))}={m.group(2)}`", message)


@contextmanager
def renamed(**names: str) -> Iterator[None]:
    """Inside it, an :class:`InterpError` (or a :func:`warn`) whose message names a parameter of ``names`` (a
    callee's) names the caller's parameter that holds the value instead; an error is raised again, of the same
    class. Each function names its own parameters, and a caller that passes its own under another name says so
    where it calls.

    >>> with renamed(path="load"):
    ...     raise DataError("`path=` runs/x: cannot read")
    Traceback (most recent call last):
    ...
    interp.core.errors.DataError: load= runs/x: cannot read
    """
    token = _RENAMINGS.set((*_RENAMINGS.get(), names))
    try:
        yield
    except InterpError as exc:
        if not set(exc.params) & set(names):
            raise
        raise type(exc)(_rename(exc.message, names)) from exc.__cause__
    finally:
        _RENAMINGS.reset(token)


class InterpWarning(_Marked, UserWarning):
    """A result that stands but should not be read at face value: a model at chance on a split it is analysed on, a
    learned intervention that does not clear its untrained baseline. The CLI prints it as one line on stderr, naming
    parameters as its flags (as errors do)."""


def warn(message: str) -> None:
    """Issue an :class:`InterpWarning` (parameter marks written as in errors), pointed at the first caller outside ``interp``."""
    import os
    import sys
    import warnings

    for names in reversed(_RENAMINGS.get()):  # the innermost block's names first, as an error meets them
        message = _rename(message, names)
    package, level, frame = os.path.dirname(os.path.dirname(__file__)), 2, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(package):
        level, frame = level + 1, frame.f_back
    warnings.warn(InterpWarning(message), stacklevel=level)
