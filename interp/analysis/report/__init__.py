"""`interp report RUN_DIR`: one self-contained HTML page of a run folder (:mod:`interp.analysis.report.collect` gathers, :mod:`interp.analysis.report.page` writes)."""

from interp.analysis.report.collect import collect_run
from interp.analysis.report.page import ReportConfig, write_report

__all__ = ["ReportConfig", "collect_run", "write_report"]
