"""Build the API reference from the docstrings with pdoc: ``python docs/build_api.py [OUT]`` (``make docs``: ``site/``).

Every module of ``interp`` gets a page (pdoc would otherwise follow only
what each package's ``__all__`` names). Docstrings are read as Google style,
whose reStructuredText roles (``:func:``, ``:class:``, ...) pdoc turns into
links. The build fails (exit 1) on any warning pdoc or an import raises and on
a raw role left in a page's text, naming the page.
"""

from __future__ import annotations

import pkgutil
import re
import sys
import warnings
from pathlib import Path

#: A reStructuredText role that reached the HTML unconverted, e.g. ``:func:`name```.
RAW_ROLE = re.compile(r":(?:py:)?[a-z]+:`")


def modules() -> list[str]:
    """Module specs that give every module of ``interp`` one page: pdoc follows a package's submodules unless
    its ``__all__`` leaves them out, so only the modules it would not reach are named (naming one twice warns)."""
    import interp
    from pdoc.extract import walk_specs

    specs = ["interp"]
    covered = set(walk_specs(specs))
    for name in sorted(m.name for m in pkgutil.walk_packages(interp.__path__, "interp.")):
        if name not in covered:
            specs.append(name)
            covered = set(walk_specs(specs))
    return specs


def raw_roles(html: str) -> list[str]:
    """The raw roles in a page's text (tags stripped)."""
    text = re.sub(r"<[^>]+>", "", html)
    return [text[max(m.start() - 30, 0) : m.end() + 30] for m in RAW_ROLE.finditer(text)]


def build(out: Path) -> list[str]:
    """Write the reference into ``out``; return the problems found (warnings, raw roles), empty when clean."""
    import pdoc
    import pdoc.render

    pdoc.render.configure(docformat="google", show_source=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        specs = modules()
        pdoc.pdoc(*specs, output_directory=out)
    problems = [f"warning: {w.category.__name__}: {w.message} ({w.filename}:{w.lineno})" for w in caught]
    for page in sorted(out.rglob("*.html")):
        problems += [f"{page.relative_to(out)}: raw role ...{snippet}..." for snippet in raw_roles(page.read_text(encoding="utf-8"))]
    return problems


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "site")
    found = build(target)
    for line in found:
        print(line, file=sys.stderr)
    print(f"{target}/index.html: {len(list(target.rglob('*.html')))} pages" + (f", {len(found)} problems" if found else ""))
    sys.exit(1 if found else 0)
