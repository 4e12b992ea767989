"""`make docs`: the API reference builds from the docstrings with no warning and no raw reStructuredText role."""

from __future__ import annotations

import importlib.util
import pkgutil
import subprocess
import sys
from pathlib import Path

import interp

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("build_api", REPO / "docs" / "build_api.py")
build_api = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build_api)


def test_the_reference_builds_clean_with_a_page_per_module(tmp_path):
    out = tmp_path / "site"
    result = subprocess.run([sys.executable, str(REPO / "docs" / "build_api.py"), str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    modules = ["interp"] + [m.name for m in pkgutil.walk_packages(interp.__path__, "interp.")]
    missing = [m for m in modules if not (out / (m.replace(".", "/") + ".html")).is_file()]
    assert missing == []
    # Sphinx-style roles became links: the demo's page links the behavioral job's.
    demo = (out / "interp" / "jobs" / "demo.html").read_text(encoding="utf-8")
    assert 'href="behavioral.html"' in demo and ":mod:`" not in demo


def test_a_raw_role_would_be_reported():
    """The null for the check above: a role pdoc leaves as text is found, one in a tag's attribute is not text."""
    assert build_api.raw_roles("<p>see :ref:`the guide` here</p>") and build_api.raw_roles("<p>:py:func:`f`</p>")
    assert build_api.raw_roles('<p title="x">plain `code`</p>') == []


def public_objects():
    """Every public function and class that a module of ``interp`` defines (not ones it imports)."""
    import importlib
    import inspect

    for info in pkgutil.walk_packages(interp.__path__, "interp."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == info.name:
                yield f"{info.name}.{name}", obj


def test_every_public_function_and_class_has_a_docstring():
    import inspect

    found = dict(public_objects())
    assert len(found) > 150  # the walk reaches the whole package
    assert [name for name, obj in found.items() if not (obj.__doc__ or "").strip() or not inspect.getdoc(obj)] == []


def test_public_tensor_signatures_say_their_shapes():
    """A function whose signature takes or returns a tensor declares its shape with jaxtyping or names it in its docstring."""
    import inspect

    unshaped = []
    for name, obj in public_objects():
        if not inspect.isfunction(obj):
            continue
        annotations = " ".join(str(a) for a in obj.__annotations__.values())
        if "Tensor" in annotations and "Float[" not in annotations and "Int[" not in annotations and "Bool[" not in annotations:
            doc = inspect.getdoc(obj) or ""
            if not any(mark in doc for mark in ("[", "shape")):
                unshaped.append(name)
    assert unshaped == []
