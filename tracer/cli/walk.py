"""`sgtrace walk SOURCE [NAME]`: the chain of a parameter in a terminal UI (Textual loads
for this command alone)."""

from __future__ import annotations

import argparse
import os
import sys

from tracer.cli import presets
from tracer.cli.common import PACKAGE, Trees, add_common, add_source
from tracer.cli.trace import DIRECTIONS
from tracer.errors import SgtraceError


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("walk", help="walk the chain of a parameter in a terminal UI")
    add_source(parser)
    parser.add_argument(
        "name",
        metavar="NAME",
        nargs="?",
        help="the parameter to trace (without one, / asks for it)",
    )
    parser.add_argument("--direction", choices=DIRECTIONS, default="both")
    parser.add_argument(
        "--log", metavar="FILE", help="a server log: its values shown beside the formula's steps"
    )
    add_common(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, trees: Trees) -> int:
    from tui.app import WalkApp  # Textual loads only for the walk: the engine never needs it

    log_text = None
    if args.log == "-":
        raise SgtraceError("the walk reads its keys from the terminal", "give the log as a file")
    if args.log is not None:
        from tracer.cli.logs import read_log_text

        log_text = read_log_text(args, None)
    app = WalkApp(
        args.source,
        args.name,
        args.direction,
        trees.ssh,
        log_text=log_text,
        sinks=presets.SINKS,
        explained=presets.EXPLAIN_PARAMETER,
        hint=PACKAGE,
    )
    app.run()
    # A trace still running in a worker thread cannot be interrupted: leave without waiting
    # for it (the cache is written atomically, so nothing is left half done).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(app.return_code or 0)
