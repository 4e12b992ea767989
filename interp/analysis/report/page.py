"""The report page: one self-contained HTML file (data, styles and scripts inline) that opens from disk with no network.

Plots and the graph are drawn by plotly.js (MIT licence), the copy that the
``plotly`` Python package ships (``plotly.offline.get_plotlyjs``), inlined,
so nothing is fetched when the page opens; its SVG output lets a test count
the nodes drawn. The page's own script (``assets/report.js``) only arranges
the collected data (:mod:`interp.analysis.report.collect`) into plotly's
figures and handles clicks.

Usage::

    from interp.analysis.report import ReportConfig, write_report
    write_report(ReportConfig(run_dir="runs/demo"))   # -> runs/demo/report/index.html
"""

from __future__ import annotations

import datetime
import html
import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from interp.core.errors import warn
from interp.core.outputs import OutputSet, write_bytes_atomic
from interp.analysis.report.collect import collect_run

PAGE = "index.html"


@dataclass(frozen=True)
class ReportConfig:
    """Which run folder to report on, and where the page goes (``None``: ``<run_dir>/report``)."""

    run_dir: str
    out: str | None = None

    @property
    def folder(self) -> Path:
        """Where the page goes: ``out``, else ``<run_dir>/report``."""
        return Path(self.out) if self.out is not None else Path(self.run_dir) / "report"


def _asset(name: str) -> str:
    return resources.files("interp.analysis.report").joinpath("assets", name).read_text(encoding="utf-8")


def _inline_json(data: dict) -> str:
    """JSON safe inside a ``<script>`` element: no ``</`` can close it early."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/").replace("<!--", "<\\!--")


def render_page(data: dict) -> str:
    """The whole page as one string: the template with the styles, plotly.js, the data and the page script inlined.

    The template's ``{{name}}`` slots are filled in one pass over the
    template alone, so a slot's name inside the data (a premise that reads
    ``{{script}}``) or inside plotly.js is never taken for a slot.
    """
    from plotly.offline import get_plotlyjs

    parts = {
        "title": html.escape(f"interp report: {data['run_dir']}"),
        "style": _asset("report.css"),
        "plotly": get_plotlyjs().replace("</script", "<\\/script"),
        "data": _inline_json(data),
        "script": _asset("report.js"),
    }
    return re.sub(r"\{\{(\w+)\}\}", lambda m: parts[m.group(1)], _asset("template.html"))


def write_report(config: ReportConfig) -> tuple[Path, dict]:
    """Collect ``config.run_dir`` and write ``index.html`` (with ``report.manifest.json``) into ``config.folder``.

    Sections whose files the run lacks are left out. Each warning the page
    shows at its top (a model at chance on a split it analyses, a file no
    manifest lists) is also issued as an :class:`~interp.core.errors.InterpWarning`.
    Returns the page's path and the data it shows.

    Raises:
        ConfigError: ``run_dir`` is not a run folder, or a manifest lists a missing or unreadable file.
        OutputError: ``out`` (the folder) cannot be written (nothing half-written is left).
    """
    data = collect_run(config.run_dir)
    for message in data["warnings"]:  # what the page shows at its top: a model at chance, a file left out
        warn(message)
    data["generated"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    page = render_page(data)
    with OutputSet(config.folder, "report") as outputs:
        write_bytes_atomic(outputs.path(PAGE), page.encode("utf-8"))
    return config.folder / PAGE, data


def summary(data: dict) -> str:
    """One line per section: what the page shows."""
    graphs = ", ".join(f"{len(g['nodes'])} nodes / {len(g['cliques'])} cliques" for g in data["graphs"]) or "none"
    return (
        f"seed tables {len(data.get('seeds', []))}, behavioral tables {len(data['behavioral'])}, probe cells {sum(len(p['records']) for p in data['probes'])}, "
        f"IIA cells {sum(len(s['records']) for s in data['iia'])}, graphs: {graphs}; manifests {len(data['manifests'])}"
    )
