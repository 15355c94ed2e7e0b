"""`sgtrace`: one entry point, a subcommand per job. Errors print as one line with the fix."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from tracer import presets
from tracer.errors import SgtraceError
from tracer.render import chain_text, dumps
from tracer.session import Session, open_session
from tracer.trace import DEFAULT_BRANCH_DEPTH, DEFAULT_DEPTH, ONE_WAY_BRANCH_DEPTH, trace


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sgtrace",
        description="Where does a parameter come from, where does it go, and why?",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    tracing = commands.add_parser("trace", help="the provenance chain of a parameter")
    tracing.add_argument("source", help="a folder, a .py file, or pypi:NAME==VERSION")
    tracing.add_argument(
        "name", help="mem_fraction_static, ServerArgs.mem_fraction_static, Class.method.param"
    )
    tracing.add_argument("--direction", choices=("forward", "backward", "both"), default="both")
    tracing.add_argument("--json", action="store_true", help="the chain as JSON (DESIGN.md)")
    tracing.add_argument(
        "--max-depth", type=int, default=DEFAULT_DEPTH, help="steps searched from the name"
    )
    tracing.add_argument(
        "--branch-depth",
        type=int,
        default=None,
        help=f"steps shown around the spine (default {DEFAULT_BRANCH_DEPTH}, "
        f"{ONE_WAY_BRANCH_DEPTH} with --direction forward or backward)",
    )
    tracing.add_argument(
        "--to",
        action="append",
        metavar="NAME",
        help="end the spine where this name is bound (default: " + ", ".join(presets.SINKS) + ")",
    )
    tracing.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    add_common(tracing)

    calls = commands.add_parser("callgraph", help="the call graph, in PyCG's JSON format")
    calls.add_argument("source", help="a folder, a .py file, or pypi:NAME==VERSION")
    calls.add_argument(
        "--json", action="store_true", help="accepted for symmetry; JSON is the output"
    )
    add_common(calls)
    return parser


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quiet", action="store_true", help="no progress or warning summary")
    parser.add_argument("--warnings", action="store_true", help="list every indexing warning")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "trace":
            return run_trace(args)
        if args.command == "callgraph":
            return run_callgraph(args)
    except SgtraceError as error:
        print(f"sgtrace: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sgtrace: interrupted", file=sys.stderr)
        return 130
    return 2


def session_for(args: argparse.Namespace) -> Session:
    show = not args.quiet and sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if show and (done % 50 == 0 or done == total):
            print(f"\rindexing {done}/{total} files", end="", file=sys.stderr, flush=True)

    session = open_session(args.source, progress=progress)
    if show and session.facts.parsed_files:
        print(file=sys.stderr)
    warnings = session.warnings()
    if args.warnings:
        for warning in warnings:
            print(f"warning: {warning}", file=sys.stderr)
    elif warnings and not args.quiet:
        print(
            f"sgtrace: {len(warnings)} file(s) had problems and were indexed in part "
            "(--warnings lists them)",
            file=sys.stderr,
        )
    return session


def run_trace(args: argparse.Namespace) -> int:
    session = session_for(args)
    sinks = args.to if args.to else presets.SINKS
    chain = trace(
        session.graph,
        args.name,
        direction=args.direction,
        max_depth=args.max_depth,
        sinks=sinks,
        branch_depth=args.branch_depth,
    )
    if args.json:
        print(dumps(chain, args.source))
    else:
        print(chain_text(chain, args.source, colour=use_colour(args.color)))
    return 0


def use_colour(choice: str) -> bool:
    if choice != "auto":
        return choice == "always"
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def run_callgraph(args: argparse.Namespace) -> int:
    from tracer.callgraph import call_graph

    session = session_for(args)
    print(json.dumps(call_graph(session), indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
