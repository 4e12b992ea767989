"""Package faces that name their exports without importing them: ``from interp.tasks import Task`` imports
``interp.tasks.base`` when it is asked for, so a light module below a package (a command's options, its defaults)
does not pull torch in with the package (``interp --help`` stays fast).

Usage, at the end of a package's ``__init__.py``::

    __getattr__, __dir__ = lazy_exports(__name__, {"Task": "interp.tasks.base", ...})
"""

from __future__ import annotations

import importlib
import sys
from typing import Callable


def lazy_exports(package: str, table: dict[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """A module ``__getattr__`` and ``__dir__`` for ``package`` that import ``table[name]`` (a module path) on first use
    of ``name`` and keep the value (PEP 562).

    Raises (from the returned ``__getattr__``):
        AttributeError: a name the table does not hold, as for any module.
    """

    def __getattr__(name: str):
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *table})

    return __getattr__, __dir__
