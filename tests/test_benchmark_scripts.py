"""Every script in `benchmarks/` imports against today's library, so a moved or renamed name fails here, not on the
day someone reruns a benchmark (the scripts' own runs are not tests: they time things; `gpu.py --smoke` is)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPTS = sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("*.py"))


def test_the_benchmark_scripts_are_found():
    assert {"das.py", "gpu.py", "interventions.py", "scale.py"} <= {p.name for p in SCRIPTS}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_a_benchmark_script_imports_and_has_a_main(script):
    spec = importlib.util.spec_from_file_location(f"benchmark_{script.stem}", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # its imports of interp run here; main() does not
    assert callable(getattr(module, "main", None))
