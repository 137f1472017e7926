"""``privacct report``: build every row, draw the figures, write report.json / report.md / report.html
(the same :class:`.document.Document` rendered twice) and print the summary table.

Outputs in ``--out DIR``: ``report.json`` (the results schema, privacct/schemas/results.schema.json:
``{"kind": "report", "rows": [...], ...}``), ``report.md``, ``report.html`` (figures embedded, one
self-contained file), ``regret-<family>.png``, ``sandwich.png``, ``readings.png`` and each row's
mechanism logs under ``logs/`` (docs/report.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

from privacct.errors import PrivacctError, check_count
from privacct.outputs import Outputs

from . import figures as F
from .build import document, terminal_table
from .regret import RegretRuns
from .render import to_html, to_markdown, to_text_table
from .rows import ReportScale, build_row, paper_configs

#: Version of the results schema the JSON documents follow (privacct/schemas/results.schema.json).
RESULTS_SCHEMA_VERSION = 1


#: The most processes ``--workers`` may ask for.
MAX_WORKERS = 64
#: Bytes one worker may need: the serial ``--full`` report peaked at 1.0 GB resident (2026-11-28, this machine),
#: rounded up; :func:`report_workers` starts no more workers than the memory available holds.
WORKER_BYTES = 1200 << 20
#: What the rows' worker processes read (set before the pool forks them; a module global because the progress
#: callable does not pickle): (configs, scale, seed, out_dir, progress, shown_dir).
_JOB: dict[str, Any] = {}


def report_workers(workers: int | None, groups: int) -> int:
    """Processes for the report's rows: ``workers`` (an integer in [1, :data:`MAX_WORKERS`]) or, when None, the CPUs
    this process may use (at most 8); never more than the learners (``groups``: a learner's rows run in one process,
    sharing its regret runs) nor than the memory available holds (:data:`WORKER_BYTES` each); 1 on a connected
    cluster (which runs the rows' seeds and audits itself)."""
    from privacct.algorithms.scaleout import active_client
    from privacct.resources import available_bytes

    if workers is None:
        try:
            workers = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            workers = os.cpu_count() or 1
        workers = min(8, workers)
    else:
        workers = check_count("workers", workers, maximum=MAX_WORKERS)
    if active_client() is not None:
        return 1
    room = available_bytes()
    n = max(1, min(workers, groups))
    return n if room is None else max(1, min(n, room // WORKER_BYTES))


def _learner_rows(indices: list[int]) -> list:
    """The rows ``indices`` of :data:`_JOB` (one learner's settings), built in order with one shared
    :class:`RegretRuns` (its non-private baseline runs once): a process pool's task (module level)."""
    job = _JOB
    configs, scale, seed, out, progress, shown = (job[k] for k in ("configs", "scale", "seed", "out", "progress", "shown"))
    runs = RegretRuns(scale.seeds, seed)
    rows = []
    for i in indices:
        spec, setting = configs[i]
        tag = f"[{i + 1}/{len(configs)}] {spec.name} {setting.privacy} eps={setting.epsilon:g}"
        say = (lambda msg, tag=tag: progress(f"{tag}: {msg}")) if progress else (lambda msg: None)
        rows.append(build_row(spec, setting, scale, seed=seed, out_dir=out, runs=runs, say=say, shown_dir=shown))
    return rows


def make_report(out_dir: str | Path, *, scale: ReportScale, scale_name: str = "default", seed: int = 0,
                only: list[str] | None = None, command: str = "privacct report",
                progress: Callable[[str], None] | None = None, shown_dir: str | Path | None = None,
                workers: int | None = 1) -> dict[str, Any]:
    """Build every row, write the documents and figures into ``out_dir``; return report.json's content.
    ``shown_dir``: the directory named in the documents (default ``out_dir``; the command writes into a
    staging directory that is renamed into ``--out``). ``workers``: processes for the rows (:func:`report_workers`;
    None: the CPUs). A learner's rows run in one process in order; the rows do not depend on ``workers`` (each
    run and audit has its own seed; tested), only the rows' ``seconds`` and the total do."""
    out = Path(out_dir)
    configs = paper_configs(only)
    if not configs:
        raise PrivacctError("no private learner is registered (privacct.algorithms.registry is empty)")
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    groups: dict[str, list[int]] = {}
    for i, (spec, _setting) in enumerate(configs):
        groups.setdefault(spec.name, []).append(i)
    n = report_workers(workers, len(groups))
    _JOB.update(configs=configs, scale=scale, seed=seed, out=out, progress=progress,
                shown=None if shown_dir is None else Path(shown_dir))
    try:
        if n > 1:
            from privacct.executors import map_tasks

            parts = map_tasks(_learner_rows, [(ix,) for ix in groups.values()], "processes", workers=n)
        else:
            parts = [_learner_rows(ix) for ix in groups.values()]
    finally:
        _JOB.clear()
    by_index = {i: row for ix, part in zip(groups.values(), parts, strict=True) for i, row in zip(ix, part, strict=True)}
    rows = [by_index[i] for i in range(len(configs))]
    figs: list[tuple[str, str]] = []
    for family in sorted({r.family for r in rows}):
        name = f"regret-{family}.png"
        F.plot_regret(rows, family, out / name)
        figs.append((name, f"{family}: cumulative regret, printed vs tight noise, beside the non-private learner and the "
                           "uniform policy (legends: accounted eps and delta)"))
    F.plot_sandwich(rows, out / "sandwich.png")
    figs.append(("sandwich.png", "audit lower bound <= accounted eps of the same audit configuration, the accounted eps at "
                                 "the setting's K and the claim (zeros annotated on the floor line)"))
    if F.plot_readings(rows, out / "readings.png"):
        figs.append(("readings.png", "accounted eps of every reading of an ambiguous printed setting, against the claim"))
    meta = {"generated": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "command": command,
            "scale_name": scale_name, "scale": scale.to_dict(spec for spec, _ in configs), "seed": seed,
            "seconds": time.perf_counter() - t0}
    doc = document(rows, meta, figs)
    data = {"kind": "report", "schema_version": RESULTS_SCHEMA_VERSION, **meta,
            "rows": [r.to_dict() for r in rows], "figures": [f for f, _ in figs]}
    (out / "report.json").write_text(json.dumps(data, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    (out / "report.md").write_text(to_markdown(doc), encoding="utf-8")
    (out / "report.html").write_text(to_html(doc, out), encoding="utf-8")
    data["_document"] = doc
    data["_rows"] = rows
    data["_terminal"] = to_text_table(terminal_table(rows))
    return data


#: What ``privacct report`` writes: only files its own manifest lists count as its own.
REPORT_OUTPUTS = Outputs("privacct report", ())


def register_report(subparsers) -> argparse.ArgumentParser:
    from privacct.cli import add_quiet, integer_arg

    p = subparsers.add_parser("report", help="verify every seed algorithm's claim, side by side with its regret")
    p.add_argument("--out", default="privacct-report",
                   help="output directory: new, empty, or one `privacct report` wrote before (default: privacct-report)")
    p.add_argument("--full", action="store_true", help="the settings' K, one-run audits at the papers' K (about 11 minutes on 2 CPUs), not the default minute")
    p.add_argument("--seed", type=integer_arg("--seed"), default=0,
                   help="root seed >= 0 of every run and audit (default 0); the same seed gives the same rows")
    p.add_argument("--only", nargs="+", metavar="ALGORITHM", help="only these learners")
    p.add_argument("--json", action="store_true", help="print report.json's rows as strict JSON instead of the table")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="Dask scheduler address (e.g. tcp://10.0.0.5:8786): run the rows' seed chunks and audits on "
                        "that cluster, with the same results as locally (needs pip install 'privacct[dask]')")
    p.add_argument("--workers", type=integer_arg("--workers"), default=None, metavar="N",
                   help="processes for the rows, an integer in [1, 64]; without --workers the machine's CPUs, at most 8 "
                        "(a learner's rows run in one process; the rows are the same for every N)")
    add_quiet(p)
    p.set_defaults(func=cmd_report)
    return p


def cmd_report(args) -> int:
    from privacct.algorithms.scaleout import check_scheduler, connect
    from privacct.outputs import OutputSet, check_out, wrote_line
    from privacct.progress import heartbeat, note

    check_count("--seed", args.seed, minimum=0)
    scale = ReportScale.full() if args.full else ReportScale.default()
    if not paper_configs(args.only):  # validates --only before anything is written
        raise PrivacctError("no private learner is registered")
    check_out(args.out, REPORT_OUTPUTS)
    if args.scheduler is not None:
        check_scheduler(args.scheduler)
    if args.workers is not None:
        check_count("--workers", args.workers, maximum=MAX_WORKERS)
        if args.scheduler is not None:
            raise PrivacctError("--workers does not apply with --scheduler (the cluster runs the rows' seed chunks and "
                                "audits): give one of them")
    command = ("privacct report " + " ".join(sys.argv[2:])) if sys.argv[1:2] == ["report"] else "privacct report"
    with connect(args.scheduler), OutputSet(args.out, REPORT_OUTPUTS) as o, heartbeat("report", quiet=args.quiet):
        data = make_report(o.staging, scale=scale, scale_name="full" if args.full else "default", seed=args.seed,
                           only=args.only, command=command.strip(), progress=lambda m: note(m, quiet=args.quiet),
                           shown_dir=args.out, workers=args.workers)
        files = o.commit()
    from privacct.cli import emit, emit_json, write

    if args.json:
        emit_json(data["rows"])
        write(sys.stderr, wrote_line(o.final, files) + "\n")   # stdout holds only the JSON
    else:
        emit(data["_terminal"])
        emit("(eps/delta: printed by the paper or chosen by the toolkit; accounted eps: under the reading the paper's proof "
             "supports, [range over readings]; holds (repaired): for the algorithm with a named repair; holds trivially: "
             "eps = 0 at the claimed delta; causes in report.md)")
        emit(wrote_line(o.final, files))
    return 0


__all__ = ["MAX_WORKERS", "RESULTS_SCHEMA_VERSION", "cmd_report", "make_report", "register_report", "report_workers"]
