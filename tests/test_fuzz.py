"""Property-based tests (Hypothesis) on every parser and loader: any input either loads or raises ``InterpError``.

The location grammar, the JSONL reader of every task, the user task loader
and ``Task`` itself, the HDF5 readers (caches and interventions files), and
the CLI's option parsing. Nothing but :class:`~interp.core.errors.InterpError`
may escape, and on the CLI any input ends in exit 2 with one line, or
reaches the library call with settings that validate.

The default profile keeps each property to a few seconds; ``make fuzz``
(``HYPOTHESIS_PROFILE=long``) runs each 25 times longer.
"""

from __future__ import annotations

import json
import shutil
from contextlib import ExitStack
from pathlib import Path
from unittest import mock

import h5py
import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from interp.cli import main
from interp.core.errors import InterpError

# The profiles (derandomized for `make test`, random for `make fuzz`) are registered in conftest.py.

LOCATION = "blocks.1.hook_resid_post@w_h"
#: Tokens that have broken parsers before: empty, signs, huge numbers, non-finite floats, separators, the grammar's own words.
TRICKY = ["", " ", "0", "-1", "1e400", "nan", "inf", "-inf", "9" * 5000, ",", ",,", "@", "@@", "+", "all", "aligned", "heads",
          "components", LOCATION, "blocks.99.hook_resid_post@w_h", "blocks.-1.hook_z@cls", "blocks.0.attn.hook_z.h9@cls",
          "w_h,cls", "0=entailment,1=neutral", "0=a,0=b", "=", "boundless", "\x00", "é", "../x", "🙂"]  # fmt: skip
text = st.one_of(st.sampled_from(TRICKY), st.text(max_size=30), st.integers(-(10**30), 10**30).map(str), st.floats().map(str))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


def loads_or_names(call, *args, **kwargs):
    """``call(*args, **kwargs)``; an ``InterpError`` is a fine answer, anything else escapes and fails the property."""
    try:
        return call(*args, **kwargs)
    except InterpError as exc:
        assert str(exc).strip() and "\n" not in str(exc).strip(), repr(exc)
        return None


# The location grammar.


@given(spec=st.one_of(text, st.lists(text, min_size=1, max_size=4).map(",".join)))
def test_any_location_text_parses_or_is_refused(spec):
    from interp.hooks.locations import Location, parse_locations

    loads_or_names(Location.parse, spec, 6, 12)
    for found in loads_or_names(parse_locations, spec, 6, ("cls", "w_p", "w_h"), (("w_h",), ("w_p", "w_h")), 12) or ():
        assert Location.parse(str(found), 6, 12) == found  # what parses prints back to itself


# The JSONL reader of every task.


@pytest.fixture(scope="module")
def task_files(monli_dir, fragments_dir, mqnli_file, tmp_path_factory):
    """One real file per JSONL reader: MoNLI's and a semantic fragment's released splits, and the three generators' outputs."""
    root = tmp_path_factory.mktemp("fuzz_files")
    (root / "fragments" / "negation").mkdir(parents=True)
    shutil.copy(Path(fragments_dir) / "negation" / "dev.json", root / "fragments" / "negation" / "dev.json")
    runner = CliRunner()
    for args in (["fragments", "generate", "--out", root / "mono.jsonl", "--n-train", "30", "--n-dev", "6", "--n-test", "6"],
                 ["fragments", "generate", "--fragment", "counting", "--out", root / "logic.jsonl", "--n-train", "30", "--n-dev", "6", "--n-test", "6"],
                 ["monotonicity", "generate", "--protocol", "predicate", "--out", root / "sys.jsonl"]):  # fmt: skip
        result = runner.invoke(main, [str(a) for a in args])
        assert result.exit_code == 0, result.output
    return {"monli": Path(monli_dir) / "nmonli_test.jsonl", "fragment:negation": root / "fragments" / "negation" / "dev.json", "mqnli": mqnli_file, "monotonicity-fragment": root / "mono.jsonl",
            "logic-fragment": root / "logic.jsonl", "monotonicity": root / "sys.jsonl"}  # fmt: skip


def _reader(name: str):
    if name == "monli":
        from interp.tasks.monli.data import read_split

        return lambda path: read_split(path, "nmonli_test")
    if name == "fragment:negation":
        from interp.tasks.fragments.data import load_fragment

        return lambda path: load_fragment("negation", ("dev",), data_dir=path.parent.parent, verify_checksums=False)
    if name == "mqnli":
        from interp.tasks.mqnli.files import read_mqnli

        return read_mqnli
    if name == "monotonicity-fragment":
        from interp.tasks.fragments.generated import read_generated

        return lambda path: read_generated(path, ("train", "dev", "test", "lexical_train", "lexical_dev", "lexical_test"))
    if name == "logic-fragment":
        from interp.tasks.fragments.logic.task import read_logic

        return read_logic
    from interp.tasks.systematicity.task import read_systematicity

    return lambda path: read_systematicity(path, ("train", "test"))


@st.composite
def spoiled_lines(draw, line: str):
    """``line`` (a JSON object) with one field replaced or dropped, a field added, or the line replaced by any text."""
    record = json.loads(line)
    how = draw(st.sampled_from(["replace", "drop", "add", "text"]))
    if how == "text":
        return draw(text)
    key = draw(st.sampled_from(sorted(record)))
    if how == "drop":
        record.pop(key)
    elif how == "add":
        record[draw(st.text(max_size=8))] = draw(json_values)
    else:
        record[key] = draw(st.one_of(json_values, st.just(int("9" * 30))))
    return json.dumps(record)


@pytest.mark.parametrize("task", ["monli", "fragment:negation", "mqnli", "monotonicity-fragment", "logic-fragment", "monotonicity"])
def test_any_spoiled_line_of_a_tasks_file_loads_or_is_named(task, task_files, tmp_path_factory):
    lines = task_files[task].read_text(encoding="utf-8").splitlines()[:40]
    path = tmp_path_factory.mktemp("spoiled") / "fragments" / "negation" / task_files[task].name
    path.parent.mkdir(parents=True)
    read = _reader(task)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert read(path)  # the null: the unspoiled lines load

    @given(st.data())
    def check(data):
        where = data.draw(st.integers(0, len(lines) - 1))
        spoiled = [*lines[:where], data.draw(spoiled_lines(lines[where])), *lines[where + 1 :]]
        path.write_text("\n".join(spoiled) + "\n", encoding="utf-8")
        loads_or_names(read, path)

    check()


# The user task loader, and Task itself.


names = st.text(alphabet=st.characters(codec="utf-8"), max_size=10)


@given(spec=st.one_of(text, st.tuples(text, text).map(":".join), st.sampled_from(["os:getcwd", "json:loads", "interp:Task", "x.py:make_task"])))
def test_any_task_spec_resolves_or_is_refused(spec):
    from interp.tasks import resolve_task

    loads_or_names(resolve_task, spec)


RETURNS = ["42", "None", "Task", "make_task", "1 / 0", "Task(name='t', labels=(), splits=(), load=list, roles=())",
           "Task(name='t', labels=('entailment',), splits=('a',), load=lambda s: [1, 2], roles=('cls',))",
           "Task(name='t', labels=('entailment',), splits=('a',), load=lambda s: 1 / 0, roles=('cls',))",
           "Task(name='t', labels=('entailment',), splits=('a',), load=lambda s: None, roles=('cls', 'w_h'))"]  # fmt: skip


@given(body=st.sampled_from(RETURNS), function=st.sampled_from(["make_task", "other"]))
def test_any_users_task_file_loads_or_is_refused(body, function, tmp_path_factory):
    """A task file whose function returns anything or raises, and whose examples are anything: named, never a traceback."""
    from interp.tasks import resolve_task

    path = tmp_path_factory.mktemp("user") / "task.py"
    path.write_text(f"from interp.tasks import Task\n\ndef make_task():\n    return {body}\n")
    task = loads_or_names(resolve_task, f"{path}:{function}")
    if task is not None:
        loads_or_names(task.examples, ())


@given(name=names, labels=st.lists(names, max_size=3), roles=st.lists(names, max_size=3), aligned=st.dictionaries(names, st.lists(names, max_size=2), max_size=2),
       optional=st.lists(names, max_size=2), mapping=st.dictionaries(names, names, max_size=2))  # fmt: skip
def test_any_task_declaration_builds_or_is_refused(name, labels, roles, aligned, optional, mapping):
    from interp.tasks import Task

    loads_or_names(Task, name=name, labels=tuple(labels), splits=("a",), load=lambda s: [], roles=tuple(roles),
                   alignment={k: tuple(v) for k, v in aligned.items()}, optional_roles=tuple(optional), label_mapping=mapping)  # fmt: skip


# The HDF5 readers.


@pytest.fixture(scope="module")
def h5_files(tiny_classifier_dir, monli_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz_h5")
    runner = CliRunner()
    for args in (["cache", "--model", tiny_classifier_dir, "--splits", "nmonli_test", "--out", root / "act.h5", "--data-dir", monli_dir, "--quiet"],
                 ["intervene", "--model", tiny_classifier_dir, "--max-examples", "8", "--locations", LOCATION, "--out", root / "iv.h5", "--data-dir", monli_dir, "--quiet"]):  # fmt: skip
        result = runner.invoke(main, [str(a) for a in args])
        assert result.exit_code == 0, result.output
    return {"cache": root / "act.h5", "interventions": root / "iv.h5"}


def _datasets(path: Path) -> list[str]:
    found: list[str] = []
    with h5py.File(path, "r") as handle:
        handle.visititems(lambda name, obj: found.append(name) if isinstance(obj, h5py.Dataset) else None)
    return sorted(found)


arrays = st.one_of(
    st.tuples(st.sampled_from(["f4", "f8", "i1", "i8", "u1"]), st.lists(st.integers(0, 5), max_size=3)).map(lambda t: np.ones(t[1], dtype=t[0])),
    st.lists(st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=5), max_size=4).map(lambda xs: np.array(xs, dtype=h5py.string_dtype())),
    st.just(np.array([np.nan, np.inf], dtype="f4")),
)


#: What an HDF5 attribute can hold (64-bit integers, finite or not floats, text without NUL), and JSON text of any value:
#: the property edits the file, so a value the format refuses would fail the test, not the code under test.
attr_values = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.floats(),
    st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12),
    json_values.map(json.dumps),
)


def _read_everything(kind: str, path: Path) -> None:
    if kind == "cache":
        from interp.files.activations import open_cache

        with open_cache(path) as cache:
            for location in cache.meta.get("locations", [])[:4]:
                cache.vectors(str(location))
            cache.alignment
    else:
        from interp.files.interventions import open_interventions

        with open_interventions(path) as found:
            for variable in found.variables:
                found.values(variable)
                for location in found.locations:
                    found.matrix("model_pred", location, variable)
                    found.matrix("causal_pred", location, variable)


@pytest.mark.parametrize("kind", ["cache", "interventions"])
def test_any_edited_hdf5_file_reads_or_is_named(kind, h5_files, tmp_path_factory):
    original = h5_files[kind]
    names_in = _datasets(original)
    copy = tmp_path_factory.mktemp("edited") / original.name
    _read_everything(kind, original)  # the null: the untouched file reads

    drawn: list[tuple] = []

    @given(name=st.sampled_from(names_in), how=st.sampled_from(["replace", "delete", "attr"]), array=arrays, value=attr_values)
    def check(name, how, array, value):
        drawn.append((name, how, array.tolist(), value))
        shutil.copy(original, copy)
        with h5py.File(copy, "a") as handle:
            if how == "attr":
                handle.attrs[name.split("/")[0]] = value
            else:
                del handle[name]
                if how == "replace":
                    handle[name] = array
        loads_or_names(_read_everything, kind, copy)

    check()
    if settings().derandomize:  # `make test`: a second run draws the very same files, so a failure is the code's, every run
        first, drawn[:] = list(drawn), []
        check()
        assert repr(drawn) == repr(first)


# The CLI's option parsing: each heavy command's library call is replaced by a stand-in that validates its settings.


class Reached(Exception):
    """The command parsed its flags into settings that validate, and called the library."""


def _stand_in(config, *args, **kwargs):
    getattr(config, "validate", lambda: None)()
    raise Reached


CALLS = {"das": ["interp.jobs.das.run_das", "interp.jobs.das.score_saved", "interp.jobs.joint_das.run_joint_das"],
         "intervene": ["interp.jobs.intervene.run_interventions", "interp.jobs.joint.run_joint"], "path-sweep": ["interp.jobs.paths.run_path_sweep"],
         "cache": ["interp.jobs.cache.build_cache"], "probe": ["interp.jobs.probe_sweep.run_probe_sweep"],
         "location-sweep": ["interp.jobs.location_sweep.run_location_sweep"], "head-sweep": ["interp.jobs.head_sweep.run_head_sweep"],
         "train": ["interp.jobs.train.train", "interp.jobs.iit.train_iit"], "demo": ["interp.jobs.demo.run_demo"],
         "inoculate": ["interp.jobs.inoculate.run_inoculation"], "evaluate": ["interp.jobs.evaluate.run_evaluate"]}  # fmt: skip


@pytest.mark.parametrize("command", sorted(CALLS))
def test_any_flags_give_exit_2_and_one_line_or_settings_that_validate(command, tiny_classifier_dir, monli_dir, tmp_path_factory):
    import importlib

    for target in CALLS[command]:
        importlib.import_module(target.rsplit(".", 1)[0])
    params = [p for p in main.commands[command].params if p.name not in ("help",) and p.opts[0] not in ("--model", "--out", "--data-dir", "--cache")]
    out = tmp_path_factory.mktemp("cli") / "out"
    good = {"--model": tiny_classifier_dir, "--out": out, "--data-dir": monli_dir, "--cache": out / "missing.h5", "--locations": LOCATION,
            "--original": "monli:pmonli", "--challenge": "monli:nmonli_train"}  # fmt: skip
    given_always = ("--model", "--out", "--data-dir", *(("--locations",) if command == "intervene" else ()))  # or --alignment, never both
    base = [str(a) for p in main.commands[command].params if p.opts[0] in good and (p.required or p.opts[0] in given_always)
            for a in (p.opts[0], good[p.opts[0]])]  # fmt: skip

    seen = {"reached": 0, "refused": 0}

    @given(chosen=st.lists(st.sampled_from(params), max_size=4, unique_by=lambda p: p.name), values=st.lists(text, min_size=4, max_size=4))
    def check(chosen, values):
        args = [*base]
        for param, value in zip(chosen, values):
            args += [param.opts[0]] if getattr(param, "is_flag", False) else [param.opts[0], value]
        assume("--help" not in args and "--version" not in args)
        with ExitStack() as stack:
            for target in CALLS[command]:
                stack.enter_context(mock.patch(target, _stand_in))
            result = CliRunner().invoke(main, [command, *args])
        if isinstance(result.exception, Reached):
            seen["reached"] += 1
            return
        seen["refused"] += 1
        assert result.exit_code == 2, (args, result.output, result.exc_info)
        assert result.stderr.startswith("interp: error: ") and result.stderr.count("\n") == 1, (args, result.stderr)

    check()
    assert seen["reached"] and seen["refused"], seen  # both ends were met: flags that validate, and flags refused
