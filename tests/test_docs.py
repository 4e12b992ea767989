"""`make docs`: the site builds with no warning, with a page per module and every command's help; a broken link fails it."""

from __future__ import annotations

import importlib.util
import pkgutil
from pathlib import Path

import pytest

import interp

pytestmark = pytest.mark.slow(seconds=110)

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("build_docs", REPO / "docs" / "build.py")
build_docs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build_docs)


@pytest.fixture(scope="module")
def site(tmp_path_factory, monkeypatch_module):
    """The site as ``make docs`` builds it, the notebooks rendered unexecuted (tests/test_notebook.py runs them)."""
    monkeypatch_module.setenv("INTERP_DOCS_EXECUTE", "off")
    out = tmp_path_factory.mktemp("site")
    assert build_docs.build(out, tmp_path_factory.mktemp("doctrees")) == 0
    return out


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def test_the_site_builds_clean_with_a_page_per_module(site):
    modules = ["interp"] + [m.name for m in pkgutil.walk_packages(interp.__path__, "interp.") if not m.name.endswith(".__main__")]  # an entry point, not API
    assert [m for m in modules if not (site / "reference" / "api" / f"{m}.html").is_file()] == []
    # reST roles in docstrings became links: the demo job's page links the behavioral job's.
    demo = (site / "reference" / "api" / "interp.jobs.demo.html").read_text(encoding="utf-8")
    assert 'href="interp.jobs.behavioral.html' in demo and ":mod:`" not in demo


def test_the_sidebar_goes_down_to_the_apis_layers_not_to_every_module(site):
    """docs/conf.py caps furo's navigation tree (rendered on every page) at the API's layers, and renders it once for the
    module pages that show the same tree: each module's sidebar marks its own layer current."""
    import re

    def sidebar(module: str) -> str:
        page = (site / "reference" / "api" / f"{module}.html").read_text(encoding="utf-8")
        return page[page.index('<div class="sidebar-tree">') : page.index("</div>", page.index('<div class="sidebar-tree">'))]

    def current(module: str) -> list[str]:
        return re.findall(r'class="toctree-l3 current current-page"><a class="reference internal" href="([^"]+)"', sidebar(module))

    assert current("interp.analysis.das") == current("interp.analysis.cliques.search") == ["interp.analysis.html"]
    assert current("interp.engine.rows") == ["interp.engine.html"] and current("interp.api.das") == ["interp.api.html"]
    assert "toctree-l4" not in sidebar("interp.analysis.das") and 'href="interp.engine.html"' in sidebar("interp.analysis.das")
    layer = (site / "reference" / "api" / "interp.analysis.html").read_text(encoding="utf-8")
    assert 'href="interp.analysis.das.html' in layer.split("<article", 1)[1]  # the module, from its layer's page


def test_the_site_has_the_guides_results_tutorials_and_every_command(site):
    from interp.cli import main

    pages = [p.relative_to(REPO / "docs").with_suffix(".html") for p in (REPO / "docs").rglob("*.md") if "reference/api" not in str(p)]
    assert len(pages) >= 20 and [p for p in pages if not (site / p).is_file()] == []
    assert (site / "tutorials" / "tour.html").is_file() and (site / "tutorials" / "das.html").is_file()
    cli = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    commands = list(main.commands) + [f"{name}-{sub}" for name, group in main.commands.items() for sub in getattr(group, "commands", {})]
    assert len(commands) > 15 and [c for c in commands if f'id="interp-{c}"' not in cli] == []


def test_a_broken_link_or_anchor_fails_the_build(tmp_path, capsys):
    """The null for the builds above: the same configuration and flags fail on a link to a missing page or heading."""
    source = tmp_path / "docs"
    source.mkdir()
    (source / "conf.py").write_text((REPO / "docs" / "conf.py").read_text(encoding="utf-8").replace("_copy_notebooks()\n", ""))
    (source / "index.md").write_text("# Home\n\n```{toctree}\npage\n```\n")
    (source / "page.md").write_text("# Page\n\n## A heading\n\nSee [it](page.md#a-heading).\n")
    assert build_docs.build(tmp_path / "ok", tmp_path / "dt1", source) == 0
    for broken in ("[gone](missing.md)", "[gone](page.md#no-such-heading)"):
        (source / "page.md").write_text(f"# Page\n\n## A heading\n\nSee {broken}.\n")
        assert build_docs.build(tmp_path / "bad", tmp_path / "dt2", source) != 0
        assert "myst.xref_missing" in capsys.readouterr().err


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


def _prose(html: str) -> str:
    """A built page's text outside code, preformatted blocks and rendered math (what a reader sees as prose)."""
    import re

    for pattern in (r"<pre.*?</pre>", r"<code.*?</code>", r'<span class="math[^"]*">.*?</span>', r'<div class="math[^"]*">.*?</div>',
                    r"<script.*?</script>", r"<style.*?</style>"):  # fmt: skip
        html = re.sub(pattern, "", html, flags=re.S)
    return re.sub(r"<[^>]+>", "", html)


def test_no_page_shows_raw_tex_or_a_machine_path(site):
    pages = [p for p in site.rglob("*.html") if "_static" not in p.parts and "reference" not in p.parts]
    assert len(pages) >= 20
    offences = {}
    for page in pages:
        text = _prose(page.read_text(encoding="utf-8"))
        found = [s for s in ("^{", "_{", "/tmp/", "TqdmWarning") if s in text]
        if found:
            offences[str(page.relative_to(site))] = found
    assert offences == {}
    assert _prose('<p>BERT^3_{w_h}</p><code>a_{b}</code><span class="math notranslate nohighlight">\\(x^{2}\\)</span>') == "BERT^3_{w_h}"  # the null


def test_the_api_landing_page_lists_every_public_name_at_its_definition():
    """docs/reference/api.md has one row per name of ``interp.__all__``, each pointing where the name is defined."""
    import importlib
    import re

    rows = re.findall(r"^   ~(interp[\w.]+)\.(\w+)$", (REPO / "docs" / "reference" / "api.md").read_text(encoding="utf-8"), re.M)
    public = {name: getattr(interp, name) for name in interp.__all__ if name != "__version__"}
    shown = [getattr(importlib.import_module(m), n) for m, n in rows]
    assert len(shown) == len(public) and [name for name, obj in public.items() if not any(obj is x for x in shown)] == []


def test_the_benchmark_summary_names_each_machine_and_its_commands_wrap(site):
    page = (site / "benchmarks.html").read_text(encoding="utf-8")
    assert '<th class="head"><p>machine</p></th>' in page and "NVIDIA H200" in page and "2 vCPU, AVX-512 Xeon" in page
    css = (site / "_static" / "tables.css").read_text(encoding="utf-8")
    assert "_static/tables.css" in page and "white-space: normal" in css  # a long command in a cell wraps
