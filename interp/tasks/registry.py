"""Turning ``--task`` into a :class:`~interp.tasks.base.Task`: a built-in name, or a user's ``file.py:function``.

Usage::

    resolve_task("monli", data_dir="path/to/monli")
    resolve_task("mqnli", data_file="runs/mqnli.jsonl")   # a file written by `interp mqnli`
    resolve_task("fragment:negation")                      # a semantic fragment, from $INTERP_FRAGMENTS_DIR
    resolve_task("ioi")                                    # indirect-object identification, generated here
    resolve_task("city-attributes")                        # RAVEL's country and continent of 102 cities (data_file=: a table of one's own)
    resolve_task("monotonicity-fragment", data_file="runs/mono.jsonl")  # written by `interp fragments generate`
    resolve_task("logic-fragment", data_file="runs/counting.jsonl")  # written by `interp fragments generate --fragment counting`
    resolve_task("monotonicity", data_file="runs/sys/productivity1.jsonl")  # written by `interp monotonicity generate`
    resolve_task("my_tasks/toy.py:make_task")     # a file: imported only because the user named it
    resolve_task("my_package.tasks:make_task")    # an importable module

A user's function is called with no arguments and must return a ``Task``.
No file ``interp`` writes ever names code to import: a task is imported only
when given here, by the user.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from interp.core.errors import ConfigError, DataError, named
from interp.tasks.base import Task
from interp.tasks.fragments.generated import NAME as GENERATED, generated_task
from interp.tasks.fragments.logic.task import NAME as LOGIC_GENERATED, logic_task
from interp.tasks.fragments.data import LOGIC, MONOTONICITY
from interp.tasks.fragments.task import ALL, FRAGMENTS, PREFIX, fragment_task
from interp.tasks.systematicity.task import NAME as SYSTEMATICITY, systematicity_task
from interp.tasks.ioi.task import NAME as IOI, ioi_task
from interp.tasks.cities.task import NAME as CITIES, city_task
from interp.tasks.monli.task import monli_task
from interp.tasks.mqnli.task import mqnli_task

BUILT_IN = ("monli", "mqnli", IOI, CITIES, GENERATED, LOGIC_GENERATED, SYSTEMATICITY, *(f"{PREFIX}{name}" for name in FRAGMENTS))
#: Tasks read from a generated file (--data-file); monli reads one too, a MoNLI-format file from `interp monli-generate`.
FILE_TASKS = ("mqnli", GENERATED, LOGIC_GENERATED, SYSTEMATICITY)
#: Tasks a data file may change (city attributes: a city table of one's own, ``city,country,continent``).
TABLE_TASKS = (CITIES,)


@dataclass(frozen=True)
class TaskGroup:
    """Several tasks scored together: each member's short name and its task spec, and the averages a table adds."""

    members: Mapping[str, str]
    averages: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # row name -> the members it averages


#: ``--task`` names that stand for several tasks: ``fragments``, the eight semantic fragments with the logic and
#: monotonicity averages of Richardson et al. (2020), Table 1.
TASK_GROUPS = {
    "fragments": TaskGroup(
        {name: f"{PREFIX}{name}" for name in FRAGMENTS}, {"logic average": LOGIC, "monotonicity average": MONOTONICITY}
    ),
}


def resolve_tasks(spec: str, **settings) -> tuple[dict[str, Task], TaskGroup | None]:
    """The tasks ``spec`` names: a group's members by short name (:data:`TASK_GROUPS`), else ``{spec: resolve_task(spec)}``; and the group.

    Raises:
        ConfigError: as :func:`resolve_task`.
    """
    group = TASK_GROUPS.get(spec)
    if group is None:
        return {spec: resolve_task(spec, **settings)}, None
    return {name: resolve_task(member, **settings) for name, member in group.members.items()}, group


def _load_module(spec: str):
    target, _, _ = spec.rpartition(":")
    if target.endswith(".py") or "/" in target:
        path = Path(target).expanduser()
        if not path.is_file():
            raise ConfigError(f"{named('task', repr(spec))}: file {path} does not exist")
        name = f"interp_user_task_{abs(hash(str(path.resolve())))}"
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:
            raise ConfigError(f"{named('task', repr(spec))}: {path} is not a Python file")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        try:
            module_spec.loader.exec_module(module)
        except Exception as exc:  # noqa: BLE001 - any failure of the user's file is reported as bad input
            sys.modules.pop(name, None)
            raise ConfigError(f"{named('task', repr(spec))}: {path} does not import ({type(exc).__name__}: {exc})") from None
        return module
    try:
        return importlib.import_module(target)
    except Exception as exc:  # noqa: BLE001
        raise ConfigError(f"{named('task', repr(spec))}: module {target!r} does not import ({type(exc).__name__}: {exc})") from None


def task_for_file(spec: str, data_file: str | None) -> str:
    """The task that reads ``data_file`` under ``spec``: ``mqnli`` for the default ``monli`` given a file that is not MoNLI-format
    (``interp train --data-file runs/mqnli.jsonl``, as before tasks existed), else ``spec``."""
    if spec == "monli" and data_file:
        from interp.tasks.own import data_file_kind

        kind = data_file_kind(data_file)  # a file that cannot be read, or of no kind, is named here, not taken for MQNLI
        if kind == "other":
            raise DataError(f"{data_file}: its first line has none of the fields that say a data file's kind (premise: "
                            f"examples of one's own; sentence1: MoNLI; premise_words: MQNLI); a generated fragment takes its {named('task')}")  # fmt: skip
        return "mqnli" if kind == "mqnli" else spec
    return spec


def resolve_task(
    spec: str, *, data_dir: str | None = None, verify_checksums: bool = True, data_file: str | None = None
) -> Task:
    """The task named by ``spec``.

    Args:
        spec: ``monli``, ``mqnli``, ``ioi`` (indirect-object identification, generated), ``city-attributes`` (a city table: the committed one, or ``data_file``), ``monotonicity-fragment`` or ``logic-fragment`` (a generated file), ``fragment:NAME`` (a semantic fragment), or
            ``path/to/file.py:function`` / ``package.module:function``.
        data_dir, verify_checksums: where MoNLI's (or the fragments') released files lie, and whether to check them.
        data_file: the generated file ``mqnli``, ``monotonicity-fragment``, ``logic-fragment`` or ``monli`` (from ``interp monli-generate``) reads;
            or, for any task, a JSON-lines file of one's own examples (:func:`interp.tasks.own.read_examples`), its one split ``own``.

    Raises:
        ConfigError: naming ``task=`` (the parameter of :func:`interp.api.loading.load_task` and :class:`~interp.api.specs.DataSpec` that holds ``spec``): an unknown name, ``mqnli`` or ``monotonicity-fragment`` without ``data_file`` (or another task with one), a file or module that does not import,
            no such function, or a function that fails or returns no ``Task``.
    """
    from interp.tasks.own import is_own_file, own_task

    if spec == CITIES:
        return city_task(data_file)
    if data_file and spec not in FILE_TASKS and is_own_file(data_file):  # a file of one's own examples, read by the task it names
        return own_task(resolve_task(spec, data_dir=data_dir, verify_checksums=verify_checksums), data_file)
    if data_file and spec == "monli":
        from interp.tasks.monli.data import is_monli_file

        if not is_monli_file(data_file):
            raise ConfigError(f"{named('task', 'monli')}: {data_file} is not a MoNLI-format file (interp monli-generate writes one); an MQNLI file takes `task=` mqnli")
        return monli_task(data_dir, verify_checksums, data_file)
    if data_file and spec not in FILE_TASKS:
        raise ConfigError(f"{named('task', repr(spec))}: a data file ({data_file}) is read only by the tasks {', '.join(FILE_TASKS + TABLE_TASKS)}")
    if spec == "monli":
        return monli_task(data_dir, verify_checksums)
    if spec == "mqnli":
        return mqnli_task(data_file)
    if spec == IOI:
        return ioi_task()
    if spec == GENERATED:
        return generated_task(data_file)
    if spec == LOGIC_GENERATED:
        return logic_task(data_file)
    if spec == SYSTEMATICITY:
        return systematicity_task(data_file)
    if spec.startswith(PREFIX):
        name = spec[len(PREFIX) :]
        if name not in FRAGMENTS and name != ALL:
            raise ConfigError(f"{named('task', repr(spec))}: no such semantic fragment; choose from {', '.join(FRAGMENTS)} (or {ALL}, the eight pooled)")
        return fragment_task(name, data_dir, verify_checksums)
    if ":" not in spec:
        raise ConfigError(
            f"{named('task', repr(spec))}: not a built-in task ({', '.join(BUILT_IN)}) nor a file.py:function or module:function"
        )
    module = _load_module(spec)
    function_name = spec.rpartition(":")[2]
    function = getattr(module, function_name, None)
    if not callable(function):
        raise ConfigError(f"{named('task', repr(spec))}: no function {function_name!r} there")
    try:
        task = function()
    except Exception as exc:  # noqa: BLE001
        raise ConfigError(f"{named('task', repr(spec))}: {function_name}() failed ({type(exc).__name__}: {exc})") from None
    if not isinstance(task, Task):
        raise ConfigError(f"{named('task', repr(spec))}: {function_name}() returned a {type(task).__name__}, not an interp Task")
    return task
