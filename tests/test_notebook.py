"""`examples/tour.ipynb` runs top to bottom (its last cells assert a non-empty clique and write the report), and is stored without outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "tour.ipynb"


def test_the_notebook_is_stored_without_outputs():
    import nbformat

    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.outputs == [] and c.execution_count is None for c in code)


def test_the_tour_runs_to_a_clique_and_a_report(monli_dir, tmp_path, monkeypatch):
    import nbclient
    import nbformat

    monkeypatch.setenv("INTERP_MONLI_DIR", str(monli_dir))
    monkeypatch.setenv("INTERP_TOUR_OUT", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    try:
        nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    except nbclient.exceptions.CellExecutionError as exc:
        pytest.fail(str(exc)[-3000:])
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "NMoNLI test accuracy" in text and "Cliques (Appendix A.3)" in text
    assert any(o.output_type == "display_data" and "image/png" in o.data for c in nb.cells for o in c.get("outputs", []))
    assert (tmp_path / "report" / "index.html").is_file() and (tmp_path / "cliques.json").is_file()
