"""``privacct report``, split by job (docs/report.md):

* :mod:`.rows` -- one row per private learner and paper setting (accounting, readings, audit);
* :mod:`.regret` -- the regret column (printed / tight noise, non-private, uniform policy);
* :mod:`.figures` -- the figures, through :mod:`privacct.plotting`;
* :mod:`.document`, :mod:`.build`, :mod:`.render` -- one document model, its text, and its
  Markdown / HTML / terminal renderings (the same content in each);
* :mod:`.command` -- ``make_report`` and the command line.
"""

from .command import RESULTS_SCHEMA_VERSION, cmd_report, make_report, register_report
from .rows import ReportRow, ReportScale, build_row, paper_configs

__all__ = ["RESULTS_SCHEMA_VERSION", "ReportRow", "ReportScale", "build_row", "cmd_report", "make_report", "paper_configs",
           "register_report"]
