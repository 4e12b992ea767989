"""Every `interp` command the README and the docs show parses: each subcommand exists and takes the options written.

The commands are read from code (fenced blocks and indented blocks), continuation lines joined and comments
dropped, and parsed by the command's own click parser (option names and arity; values are not checked, nothing runs).
Getting started and the command reference also read only what a command above them wrote.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from interp.cli import main

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted(
    p.relative_to(REPO).as_posix()
    for p in [REPO / "README.md", *REPO.glob("datasets/*/README.md"), *(REPO / "docs").rglob("*.md")]
    if "reference/api" not in p.as_posix()
)


def code_commands(text: str) -> list[list[str]]:
    """The arguments (after ``interp``) of every command in the page's code blocks, in order."""
    code = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced or line.startswith("    "):
            code.append(line.strip())
    joined = re.sub(r"\\\n\s*", " ", "\n".join(code))
    return [shlex.split(line, comments=True)[1:] for line in joined.splitlines() if line.startswith("interp ")]


def parse(args: list[str]) -> tuple[dict, list[str]]:
    """``interp ARGS`` as the CLI's parser reads it: (options, positional arguments).

    Raises:
        click.UsageError: an unknown command or option, or an option without its value.
    """
    command, rest, ctx = main, list(args), click.Context(main, info_name="interp")
    name = "interp"
    while isinstance(command, click.Group):
        if not rest:
            raise click.UsageError(f"{name}: no subcommand")
        name, rest = rest[0], rest[1:]
        found = command.get_command(ctx, name)
        if found is None:
            raise click.UsageError(f"no command {name!r}")
        command, ctx = found, click.Context(found, info_name=name, parent=ctx)
    options, positional, _ = command.make_parser(ctx).parse_args(rest)
    return options, positional


def test_the_parser_refuses_what_the_cli_refuses():
    """The null: a wrong command, an unknown option and a missing value fail here as they fail on the command line."""
    for wrong in (["nope"], ["fragments", "nope"], ["train", "--nope", "1"], ["evaluate", "--model"]):
        with pytest.raises(click.UsageError):
            parse(wrong)
    assert parse(["evaluate", "--model", "runs/m", "--fold-labels"])[0] == {"model": "runs/m", "fold_labels": True}
    assert code_commands("prose that says\ninterp file, an example\n\n    interp report runs/x \\\n        # a comment\n") == [["report", "runs/x"]]


@pytest.mark.parametrize("page", PAGES)
def test_every_command_shown_parses(page):
    for args in code_commands((REPO / page).read_text(encoding="utf-8")):
        try:
            parse(args)
        except click.UsageError as exc:
            pytest.fail(f"{page}: interp {shlex.join(args)}: {exc}")


READS = ("model", "cache", "interventions", "data_file", "load", "source")  # a file or checkpoint a command reads


@pytest.mark.parametrize("page", ["docs/getting-started.md", "docs/reference/cli.md"])
def test_each_command_reads_only_what_a_command_above_it_wrote(page):
    made: list[str] = []

    def written(path: str, folder: bool = False) -> bool:
        """``path`` was written above, or lies in what was; a run folder (``report``) may be the folder that holds it."""
        return any(path == m or path.startswith(m.rstrip("/") + "/") or (folder and m.startswith(path.rstrip("/") + "/")) for m in made)

    commands = code_commands((REPO / page).read_text(encoding="utf-8"))
    assert len(commands) >= 3
    for args in commands:
        options, _ = parse(args)
        local = [(options[k], False) for k in READS if isinstance(options.get(k), str) and options[k].startswith("runs/")]
        local += [(d, True) for d in (options.get("run_dir"), *options.get("run_dirs", ())) if d]
        missing = [path for path, folder in local if not written(path, folder)]
        assert missing == [], f"{page}: interp {shlex.join(args)} reads {missing}, which no command above it wrote"
        if isinstance(options.get("out"), str):
            made.append(options["out"])
    assert made  # the null: a page whose commands write nothing would pass vacuously
