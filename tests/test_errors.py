"""Library errors name parameters; the CLI writes them as its flags from one table.

The library's messages mark a parameter as `` `name=` `` (``interp.core.errors``);
``str()`` of an error shows ``name=``, the CLI ``--name``. These tests read
every string the library holds: none may name one of the CLI's flags, and
every parameter a job's message names must be a flag of the CLI once mapped.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import interp
from interp.cli import main
from interp.cli.base import flag as _flag
from interp.core.errors import PARAM_MARK, ConfigError, OutputError, named

ROOT = Path(interp.__file__).parent
#: Parameters the library takes and the CLI does not offer (fixed there at the library's default).
LIBRARY_ONLY = {"bases", "sources", "intervention", "pairs", "tokenizer", "k", "max_iter", "warmup_ratio", "weight_decay", "base_groups", "source_groups",
                "labels", "reading"}
#: Flags of other programs that library messages may quote (how to install a package).
OTHER_PROGRAMS = {"--no-deps"}


def cli_flags(command: click.Command = main) -> set[str]:
    flags = {opt for p in command.params for opt in (*p.opts, *getattr(p, "secondary_opts", ())) if opt.startswith("--")}  # --no-compile too
    for sub in getattr(command, "commands", {}).values():
        flags |= cli_flags(sub)
    return flags


def library_strings() -> list[tuple[str, int, str]]:
    """Every string literal in the library but the CLI, docstrings left out: (file, line, text)."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.parent == ROOT / "cli":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
        }  # fmt: skip
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                found.append((str(path.relative_to(ROOT.parent)), node.lineno, node.value))
    return found


def test_bad_input_raises_the_librarys_errors_not_bare_builtins():
    """No library code raises a bare ``ValueError`` or ``TypeError``: a caller catching ``InterpError`` would miss it.
    (``ConfigError`` is also a ``ValueError``, so a caller catching that still does.)"""
    bare = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and isinstance(node.exc.func, ast.Name):
                if node.exc.func.id in ("ValueError", "TypeError"):
                    bare.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}: {node.exc.func.id}")
    assert not bare, "raise an InterpError subclass instead:\n" + "\n".join(bare)
    assert issubclass(ConfigError, ValueError) and issubclass(ConfigError, interp.InterpError)


def test_no_library_string_names_a_cli_flag():
    flags = cli_flags() - OTHER_PROGRAMS
    assert len(flags) > 50  # the walk found the commands' options
    offending = [
        f"{file}:{line}: {flag}"
        for file, line, text in library_strings()
        for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text)
        if flag in flags
    ]
    assert not offending, "library messages name CLI flags:\n" + "\n".join(offending)


def test_every_parameter_a_job_names_is_one_of_the_clis_flags():
    flags = cli_flags()
    marks = {
        (file, m.group(1), m.group(2))
        for file, _, text in library_strings()
        if not file.startswith("interp/api/")
        for m in PARAM_MARK.finditer(text)
    }
    assert len(marks) > 40
    unmapped = sorted(f"{file}: {param}= -> {_flag(param, value)}" for file, param, value in marks
                      if _flag(param, value).split()[0] not in flags and param not in LIBRARY_ONLY)  # fmt: skip
    assert not unmapped, "no CLI flag for:\n" + "\n".join(unmapped)


def test_an_error_names_its_parameters_for_python_and_for_the_cli():
    error = OutputError(f"{named('out')} runs/x holds another run; pass {named('overwrite', True)} or set {named('verify_checksums', False)}")
    assert str(error) == "out= runs/x holds another run; pass overwrite=True or set verify_checksums=False"
    assert error.params == ("out", "overwrite", "verify_checksums")
    assert error.render(_flag) == "--out runs/x holds another run; pass --overwrite or set --skip-checksums"
    assert ConfigError("plain").params == () and str(ConfigError("plain")) == "plain"


def test_a_caller_renames_what_a_callee_names_in_its_errors_and_warnings():
    """A function names its own parameter; a caller passing its own under another name renames it (errors and warnings,
    innermost block first); a message naming none of them passes through as it was raised."""
    from interp.core.errors import DataError, InterpWarning, renamed, warn

    with pytest.raises(DataError) as caught:
        with renamed(out="path"):
            with renamed(path="out", n_pairs="test_pairs"):
                raise DataError(f"{named('path', 'x.json')} and {named('n_pairs', 3)}; {named('seed', 1)}")
    assert str(caught.value) == "path=x.json and test_pairs=3; seed=1"  # path -> out (inner) -> path (outer)
    untouched = ConfigError(f"{named('batch_size')} must be at least 1")
    with pytest.raises(ConfigError) as caught, renamed(path="load"):
        raise untouched
    assert caught.value is untouched
    with pytest.warns(InterpWarning, match=r"^test_pairs=32: only 4"), renamed(n_pairs="test_pairs"):
        warn(f"{named('n_pairs', 32)}: only 4")
    with pytest.warns(InterpWarning, match=r"^n_pairs=32: only 4"):  # outside the block, as raised
        warn(f"{named('n_pairs', 32)}: only 4")


def test_a_library_call_names_the_parameter_and_the_cli_its_flag(tiny_classifier_dir, tmp_path):
    from interp.jobs.das import DasConfig

    with pytest.raises(ConfigError) as caught:
        DasConfig(model=str(tiny_classifier_dir), out=str(tmp_path / "d"), train_pairs=1).validate()
    assert caught.value.params == ("train_pairs",) and str(caught.value).startswith("train_pairs= must be at least 2")
    result = CliRunner().invoke(main, ["das", "--model", str(tiny_classifier_dir), "--out", str(tmp_path / "d"), "--train-pairs", "1"])
    assert result.exit_code == 2
    assert "interp: error: --train-pairs must be at least 2" in result.stderr and "train_pairs=" not in result.stderr
    assert not (tmp_path / "d").exists()


def test_the_generators_errors_reach_the_cli_as_flags(tmp_path):
    out = tmp_path / "g.jsonl"
    result = CliRunner().invoke(main, ["monotonicity", "generate", "--protocol", "predicate", "--step", "9", "--out", str(out)])
    assert result.exit_code == 2 and "interp: error: --step 9:" in result.stderr, result.stderr
    result = CliRunner().invoke(main, ["fragments", "generate", "--n-train", "0", "--n-dev", "0", "--n-test", "0", "--out", str(out)])
    assert result.exit_code == 2 and "--n-train, --n-dev and --n-test are all 0" in result.stderr, result.stderr
    assert not out.exists()
