"""The README, the docs, the dataset cards and the notebooks speak of the project alone, and the first command needs no root.

Phrases that belong to no user (how the project was built, where its authors kept their files) fail here, as does an
`apt-get` on the way to `make demo`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: Exact phrases (case-insensitive) a user's documentation never holds.
PHRASES = ("this session", "this workplace", "project's workplace", "issue #", "the issue asked", "the issue says", "the seeds print",
           "the seeds'", "DESIGN.md", "../shared", "shared/datasets", "shared/seeds")  # fmt: skip


def documents() -> list[Path]:
    """The README, BENCHMARKS.md (the site includes it), every Markdown page of the docs (not the generated API stubs), the dataset cards, the notebooks."""
    found = [REPO / "README.md", REPO / "benchmarks" / "BENCHMARKS.md", *sorted((REPO / "datasets").rglob("*.md")),
             *sorted((REPO / "examples").rglob("*.ipynb"))]  # fmt: skip
    found += sorted(p for p in (REPO / "docs").rglob("*.md") if "reference/api" not in p.as_posix())
    return found


def offences(text: str) -> list[str]:
    lower = text.lower()
    return [phrase for phrase in PHRASES if phrase.lower() in lower]


def test_the_phrase_list_catches_what_it_names():
    """The null: each phrase, put in a sentence, is found; a plain sentence is not."""
    for phrase in PHRASES:
        assert offences(f"As {phrase.upper()} said, it works.") == [phrase]
    assert offences("MoNLI is read from INTERP_MONLI_DIR.") == []


@pytest.mark.parametrize("path", documents(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_the_documents_speak_of_the_project_alone(path):
    assert offences(path.read_text(encoding="utf-8")) == []


def _recipe(makefile: str, target: str) -> tuple[list[str], list[str]]:
    """A target's prerequisites and recipe lines (the Makefile's own syntax: ``target: prerequisites`` then tab-indented lines)."""
    match = re.search(rf"^{re.escape(target)}:([^\n=]*)\n((?:\t[^\n]*\n)*)", makefile, re.M)
    assert match, target
    return match.group(1).split(), [line.strip() for line in match.group(2).splitlines()]


def test_make_demo_calls_no_apt_get():
    """`make demo` runs for a user without root: neither its recipe nor any prerequisite's calls apt-get."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    todo, seen, lines = ["demo"], set(), []
    while todo:
        target = todo.pop()
        if target in seen or not re.search(rf"^{re.escape(target)}:", makefile, re.M):
            continue  # a file prerequisite or a variable
        seen.add(target)
        prerequisites, recipe = _recipe(makefile, target)
        todo += prerequisites  # as written: targets are named the same way ($(VENV)/.installed)
        lines += recipe
    assert {"setup", "$(VENV)/.installed"} <= seen and lines and not any("apt-get" in line for line in lines), lines
    assert any("apt-get" in line for line in _recipe(makefile, "wordnet")[1])  # the null: the search does see a recipe's apt-get


def test_every_install_in_the_makefile_tries_again_when_a_download_breaks():
    """A registry that cuts a download off half-way fails the set-up only after pip has resumed it and the whole install
    has been tried three times (``pip_install``); apt-get retries likewise. Every recipe line that installs goes that way."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    definition = re.search(r"^pip_install = (?:.*\\\n)*.*", makefile, re.M)  # continued lines, then the last
    helper = definition.group(0)
    recipes = [line.strip() for line in makefile.replace(helper, "").splitlines() if line.startswith("\t")]
    installs = [line for line in recipes if "pip install" in line or "pip_install" in line]
    assert len(installs) >= 6 and all(line.startswith("$(call pip_install,") for line in installs), installs
    assert "for attempt in 1 2 3" in helper and "&& break" in helper and "exit 1" in helper
    assert re.search(r"^export PIP_RESUME_RETRIES = \d+$", makefile, re.M)
    apt = [line for line in recipes if "apt-get" in line]
    assert apt and all(line.count("Acquire::Retries") == 2 for line in apt), apt
    assert not all(line.startswith("$(call pip_install,") for line in recipes)  # the null: not every recipe line matches
