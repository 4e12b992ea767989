"""The shape of the code: functions over 80 lines and public functions with ten or more parameters, in one count.

    .venv/bin/python benchmarks/code_shape.py                 # interp/ of this checkout
    .venv/bin/python benchmarks/code_shape.py --root /tmp/old/interp --list

A function is every ``def`` (methods and nested functions included); its length is its lines from ``def`` to its last
line, docstring included. Its parameters are the positional and keyword-only ones, ``self`` and ``cls`` left out, a
``*args`` or ``**kwargs`` counted as one each. Public: neither it nor a class or function it sits in starts with ``_``.
Not a speed figure: the count the refactors of the runner are judged by (fewer long functions, fewer long signatures).
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

LONG_LINES = 80
MANY_PARAMETERS = 10


def functions(root: Path) -> list[tuple[str, int, int, bool]]:
    """``(module:qualified name, lines, parameters, public)`` of every function under ``root``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts)

        def visit(node, prefix: str, public: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    args = child.args
                    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
                    count = len([n for n in names if n not in ("self", "cls")]) + (args.vararg is not None) + (args.kwarg is not None)
                    own = public and not child.name.startswith("_")
                    found.append((f"{module}:{prefix}{child.name}", child.end_lineno - child.lineno + 1, count, own))
                    visit(child, f"{prefix}{child.name}.", own)
                elif isinstance(child, ast.ClassDef):
                    visit(child, f"{prefix}{child.name}.", public and not child.name.startswith("_"))

        visit(ast.parse(path.read_text(encoding="utf-8")), "", not path.stem.startswith("_") or path.stem == "__init__")
    return found


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1] / "interp")
    parser.add_argument("--list", action="store_true", help="name each function counted")
    args = parser.parse_args(argv)
    found = functions(args.root)
    long = [f for f in found if f[1] > LONG_LINES]
    wide = [f for f in found if f[3] and f[2] >= MANY_PARAMETERS]
    print(f"{args.root}: {len(found)} functions; {len(long)} over {LONG_LINES} lines; {len(wide)} public with {MANY_PARAMETERS} or more parameters")
    if args.list:
        for name, lines, count, _ in sorted(long, key=lambda f: -f[1]):
            print(f"  long  {lines:4d} lines  {name}")
        for name, lines, count, _ in sorted(wide, key=lambda f: -f[2]):
            print(f"  wide  {count:4d} params {name}")


if __name__ == "__main__":
    sys.exit(main())
