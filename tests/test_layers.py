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
