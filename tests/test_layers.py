"""The package's folders are layers, and imports run only downward (DESIGN.md, "Layers")."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "interp"

#: Lowest first. A module may import from its own layer or any layer before it.
LAYERS = ("core", "causal", "natural_logic", "hooks", "models", "engine", "backends", "files", "analysis", "tasks", "api", "face", "jobs", "cli")


def layer_of(module: str) -> int:
    parts = module.split(".")
    if parts[0] != "interp":
        raise ValueError(module)
    if len(parts) == 1:  # interp/__init__.py: the public face, above everything it re-exports
        return LAYERS.index("face")
    return LAYERS.index(parts[1])


def imports(source: Path) -> list[tuple[int, str]]:
    tree = ast.parse(source.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "interp":
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "interp"]
    return found


def test_every_module_lives_in_a_layer():
    stray = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if p.parent == PACKAGE and p.stem != "__init__"]
    assert stray == []
    assert sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__") == sorted(set(LAYERS) - {"face"})


def test_imports_run_only_downward():
    upward = []
    for source in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(source.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        own = layer_of(module)
        for line, target in imports(source):
            if layer_of(target) > own:
                upward.append(f"{source.relative_to(PACKAGE.parent)}:{line} ({LAYERS[own]}) imports {target}")
    assert upward == []


def test_the_check_would_catch_an_upward_import(tmp_path):
    """The null: an engine module importing a job is reported."""
    source = tmp_path / "x.py"
    source.write_text("from interp.jobs.intervene import run_interventions\n")
    assert [layer_of(t) for _, t in imports(source)] == [LAYERS.index("jobs")] and LAYERS.index("jobs") > LAYERS.index("engine")


#: Layers that know no task: they import nothing from ``interp.tasks`` at all (it sits above them).
GENERIC = ("core", "causal", "natural_logic", "hooks", "models", "engine", "backends", "files", "analysis")


def test_generic_layers_know_no_task():
    """Nothing in the generic layers imports from ``interp.tasks`` (DESIGN: generic pieces know nothing of MoNLI; tasks sit above them)."""
    found = []
    for source in sorted(PACKAGE.rglob("*.py")):
        if source.relative_to(PACKAGE).parts[0] not in GENERIC:
            continue
        for line, target in imports(source):
            if target == "interp.tasks" or target.startswith("interp.tasks."):
                found.append(f"{source.relative_to(PACKAGE.parent)}:{line} imports {target}")
    assert found == []


def face_targets() -> list[str]:
    """The modules ``interp/__init__.py`` imports, eagerly or through its lazy ``_EXPORTS`` table."""
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    table = next(n.value for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "_EXPORTS")
    lazy = [v if isinstance(v, str) else v[0] for v in ast.literal_eval(table).values()]
    return [t for _, t in imports(PACKAGE / "__init__.py")] + lazy


def test_the_face_imports_nothing_from_jobs():
    """``import interp`` is the library: it re-exports the layers below the jobs, never a job or the CLI."""
    targets = face_targets()
    assert "interp.api.intervenable" in targets and not [t for t in targets if t.startswith(("interp.jobs", "interp.cli"))]


#: What a job may import: ``api`` (the floor it stands on), ``files`` (what it writes and reads back), ``core``,
#: ``analysis`` (figures, tables and their intervals) and other jobs; never the mechanics beneath ``api`` (hooks, models,
#: the engine, backends, causal models, tasks), and not the public face that re-exports them.
JOB_FLOOR = ("core", "files", "analysis", "api", "jobs")


def job_reaches_below_api(source: Path) -> list[str]:
    return [f"{source.name}:{line} imports {target}" for line, target in imports(source) if LAYERS[layer_of(target)] not in JOB_FLOOR]


def test_jobs_stand_on_api():
    """A job is settings, files and resuming around calls of ``interp.api``: what it runs is what a notebook runs."""
    found = [hit for source in sorted((PACKAGE / "jobs").rglob("*.py")) for hit in job_reaches_below_api(source)]
    assert found == []


def test_the_job_rule_would_catch_a_job_reaching_below_api(tmp_path):
    """The null: a job importing the engine, a hook or the face is reported; one importing api and files is not."""
    source = tmp_path / "job.py"
    source.write_text("from interp.engine.pair_suffix import PairSuffix\nimport interp.hooks\nimport interp\n"
                      "from interp.api.das import train\nfrom interp.files.subspaces import save_intervention\n")
    assert [hit.rsplit(" ", 1)[1] for hit in job_reaches_below_api(source)] == ["interp.engine.pair_suffix", "interp.hooks", "interp"]


def test_no_job_imports_a_tasks_folder():
    """Jobs reach tasks through ``interp.tasks`` (the registry, ``Task`` and the stages a task declares), never a task's own folder:
    what differs between tasks (MoNLI's Table 1, its demo plan) is the task's data (issue #29, item 4)."""
    folders = {p.name for p in (PACKAGE / "tasks").iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert {"monli", "mqnli"} <= folders
    found = []
    for source in sorted((PACKAGE / "jobs").rglob("*.py")):
        for line, target in imports(source):
            if target.startswith("interp.tasks.") and target.split(".")[2] in folders:
                found.append(f"{source.relative_to(PACKAGE.parent)}:{line} imports {target}")
    assert found == []


def code_lines(source: Path) -> int:
    """Lines of code in ``source``: neither blank, nor a comment, nor part of a docstring."""
    text = source.read_text(encoding="utf-8")
    docs = set()
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                docs.update(range(first.lineno, first.end_lineno + 1))
    return sum(1 for n, line in enumerate(text.splitlines(), 1) if line.strip() and not line.strip().startswith("#") and n not in docs)


def test_the_face_holds_no_run_path():
    """``IntervenableModel`` asks its runner (``interp.backends``) and its example set: it imports nothing from the engine
    and stays a thin face (it held 310 lines of code, docstrings aside, when it ran the model itself)."""
    source = PACKAGE / "api" / "intervenable.py"
    assert [target for _, target in imports(source) if target.startswith("interp.engine")] == []
    assert code_lines(source) <= 180


#: What ``api/`` may take from the engine: its objects (interventions and featurizers, which a user holds) and its pure
#: helpers; every run goes through a runner (``interp.backends``), so a backend chosen by name runs all of it.
ENGINE_FOR_API = {"interp.engine.interventions": None, "interp.engine.featurizers": None, "interp.engine.batched": {"PRECISIONS"},
                  "interp.engine.rows": {"joint_batches", "length_groups"}}  # fmt: skip


def engine_imports(source: Path) -> list[str]:
    """``module:name`` for each name ``source`` imports from ``interp.engine`` beyond :data:`ENGINE_FOR_API`."""
    found = []
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("interp.engine"):
            allowed = ENGINE_FOR_API.get(node.module, set())
            found += [f"{node.module}:{a.name}" for a in node.names if allowed is not None and a.name not in allowed]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("interp.engine")]
    return found


def test_api_runs_nothing_through_the_engine_itself(tmp_path):
    """No module of ``api/`` imports an engine run function (joint runs, joint DAS and path patching go through the
    runner's write plan); and the check would catch one."""
    assert {p.name: engine_imports(p) for p in (PACKAGE / "api").glob("*.py") if engine_imports(p)} == {}
    planted = tmp_path / "planted.py"
    planted.write_text("from interp.engine.interventions import Interchange\nfrom interp.engine.joint import joint_logits\n")
    assert engine_imports(planted) == ["interp.engine.joint:joint_logits"]


def import_graph(package: Path = PACKAGE):
    """Module -> the modules of ``package`` it imports anywhere in its text (inside functions and ``TYPE_CHECKING`` blocks
    too), a name imported from a package counted as its submodule where it is one; a package's ``__init__`` importing its
    own modules (re-exporting them) is left out."""
    import networkx as nx

    names = {".".join(p.relative_to(package.parent).with_suffix("").parts).removesuffix(".__init__"): p for p in package.rglob("*.py")}
    graph = nx.DiGraph()
    for name, path in names.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == package.name:
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in names else node.module for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                own = path.name == "__init__.py" and target.startswith(name + ".")
                if target in names and target != name and not own:
                    graph.add_edge(name, target)
    return graph


def test_no_import_circle():
    """No module of ``interp`` imports, through any chain, one that imports it back (type-only imports included)."""
    import networkx as nx

    assert list(nx.simple_cycles(import_graph())) == []


def test_the_circle_check_would_catch_one(tmp_path):
    """The null: two modules importing each other inside a function are found."""
    import networkx as nx

    package = tmp_path / "interp"
    (package / "a").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a" / "__init__.py").write_text("from interp.a.one import f\n")
    (package / "a" / "one.py").write_text("def f():\n    from interp.a.two import g\n")
    (package / "a" / "two.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from interp.a import one\n")
    assert [sorted(c) for c in nx.simple_cycles(import_graph(package))] == [["interp.a.one", "interp.a.two"]]


def repeated_blocks(package: Path = PACKAGE, size: int = 10) -> list[str]:
    """Every run of ``size`` lines of code (blank and comment lines skipped, indentation ignored) found twice in ``package``."""
    seen: dict[tuple, str] = {}
    found = []
    for path in sorted(package.rglob("*.py")):
        lines = [(n, line.strip()) for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if line.strip() and not line.strip().startswith("#")]  # fmt: skip
        for i in range(len(lines) - size + 1):
            key = tuple(text for _, text in lines[i : i + size])
            where = f"{path.relative_to(package.parent)}:{lines[i][0]}"
            if key in seen and not seen[key].startswith(f"{path.relative_to(package.parent)}:"):
                found.append(f"{where} repeats {seen[key]}")
            seen.setdefault(key, where)
    return found


def test_no_block_of_ten_lines_is_written_twice():
    assert repeated_blocks() == []


def test_the_repeat_check_would_catch_a_copied_block(tmp_path):
    package = tmp_path / "interp"
    package.mkdir()
    block = "\n".join(f"x{i} = {i}" for i in range(10)) + "\n"
    (package / "a.py").write_text(block)
    (package / "b.py").write_text("# a copy\n" + block)
    assert repeated_blocks(package) == ["interp/b.py:2 repeats interp/a.py:1"]
