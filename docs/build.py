"""Build the documentation site: ``python docs/build.py [OUT]`` (``make docs``: ``site/``; open ``site/index.html``).

Sphinx (configuration and the reasons for it in ``docs/conf.py``) with
``-W --keep-going``: any warning fails the build (exit 1) after all of them
are reported, a broken internal link or anchor included. The notebooks are
executed unless ``INTERP_DOCS_EXECUTE=off``; their results are cached under
``build/jupyter_cache``, so an unchanged notebook is not run again.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent


def sphinx_args(out: Path, doctrees: Path | None = None, source: Path = DOCS) -> list[str]:
    """The arguments of ``sphinx-build``: HTML into ``out``, warnings as errors, every one reported."""
    doctrees = doctrees or DOCS.parent / "build" / "doctrees"
    return ["-b", "html", "-W", "--keep-going", "-q", "-d", str(doctrees), str(source), str(out)]


def build(out: Path, doctrees: Path | None = None, source: Path = DOCS) -> int:
    """Build the site into ``out``; the exit status of Sphinx (0 when clean)."""
    from sphinx.cmd.build import build_main

    return build_main(sphinx_args(out, doctrees, source))


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "site").resolve()
    status = build(target)
    if status == 0:
        print(f"{target}/index.html: {len(list(target.rglob('*.html')))} pages")
    sys.exit(status)
