"""The command line is thin: it imports no torch until a command runs, and no command takes more than a dozen parameters."""

from __future__ import annotations

import inspect
import subprocess
import sys

import click
import pytest

from interp.cli import main

#: The most parameters a command's function may take: the rest come in option groups (data, sample, run, output, settings).
MOST = 12


def commands(group: click.Group = main, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    found = []
    for name, command in sorted(group.commands.items()):
        found += commands(command, (*prefix, name)) if isinstance(command, click.Group) else [((*prefix, name), command)]
    return found


def test_no_command_takes_more_than_a_dozen_parameters():
    wide = {" ".join(name): len(inspect.signature(command.callback).parameters) for name, command in commands()}
    assert len(wide) >= 20 and {k: n for k, n in wide.items() if n > MOST} == {}
    # the null: the widest command has more click options than parameters, because groups gather them
    train = dict(commands())["train",]
    assert len(train.params) > MOST >= len(inspect.signature(train.callback).parameters)


HEAVY = ("torch", "transformers")


def imported_by(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint('imported:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("imported:")]
    return set(filter(None, line.removeprefix("imported:").split(",")))


@pytest.mark.parametrize("args", [["--help"], ["train", "--help"], ["intervene", "--help"], ["das", "--help"], ["fragments", "check", "--help"]])
def test_help_imports_neither_torch_nor_transformers(args):
    code = f"from interp.cli import main\ntry:\n    main({args!r})\nexcept SystemExit:\n    pass"
    assert imported_by(code) == set()


def test_the_import_check_would_see_torch():
    """The null: a command that runs imports torch, and the check sees it."""
    assert imported_by("import interp.jobs.train") >= {"torch"}
