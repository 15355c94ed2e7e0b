"""`sgtrace explain`: the command line of the explain view (cli.py stays a dispatcher)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tracer import presets
from tracer.errors import SgtraceError

MAX_LOG_BYTES = 256 << 20  # a longer log is read from its end: the newest start is there


class LogUnreadable(SgtraceError):
    pass


def add_explain_parser(commands: argparse._SubParsersAction, add_common) -> None:  # noqa: ANN001
    explaining = commands.add_parser(
        "explain", help="bind a server's log to the traced formula and evaluate it"
    )
    explaining.add_argument("source", help="a folder, pypi:NAME==VERSION or host:/path")
    where = explaining.add_mutually_exclusive_group(required=True)
    where.add_argument("--log", metavar="FILE", help="the server's log; - reads standard input")
    where.add_argument(
        "--journal", metavar="UNIT", help="read UNIT's journal on the source's host (journalctl)"
    )
    explaining.add_argument(
        "--param",
        default=presets.EXPLAIN_PARAMETER,
        help=f"the parameter whose formula is explained (default {presets.EXPLAIN_PARAMETER})",
    )
    explaining.add_argument(
        "--to", action="append", metavar="NAME", help="end the spine where this name is bound"
    )
    explaining.add_argument("--rank", help="the rank to explain, as the log tags it: TP3, DP0 TP1")
    explaining.add_argument(
        "--tokens", type=int, help="also say which value of the parameter gives this many tokens"
    )
    explaining.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a value the log does not show (e.g. --set mem_fraction_static=0.88)",
    )
    explaining.add_argument("--json", action="store_true", help="the explanation as JSON")
    add_common(explaining)


def given_values(pairs: list[str]) -> dict[str, float]:
    given: dict[str, float] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            given[name.strip()] = float(value)
        except ValueError:
            raise SgtraceError(
                f"--set {pair!r} is not NAME=NUMBER", "write it as --set mem_fraction_static=0.88"
            ) from None
    return given


def read_log_text(args: argparse.Namespace, ssh_options) -> str:  # noqa: ANN001
    if args.log == "-":
        return sys.stdin.read()
    if args.log is not None:
        path = Path(args.log).expanduser()
        try:
            with path.open("rb") as handle:
                size = path.stat().st_size
                if size > MAX_LOG_BYTES:
                    handle.seek(size - MAX_LOG_BYTES)
                data = handle.read()
        except OSError as exc:
            raise LogUnreadable(
                f"cannot read the log {args.log}: {exc.strerror or exc}",
                "give the server's log file, or - to read it from standard input",
            ) from None
        return data.decode("utf-8", "replace")
    from tracer.sources.journal import read_journal
    from tracer.sources.remote import parse_remote

    remote = None if Path(args.source).expanduser().exists() else parse_remote(args.source)
    return read_journal(args.journal, remote, ssh_options)


def run_explain(args: argparse.Namespace, session_for, ssh_options) -> int:  # noqa: ANN001
    from tracer.explain import explain
    from tracer.explain_render import explanation_json, explanation_text

    given = given_values(args.set)
    log_text = read_log_text(args, ssh_options)
    session = session_for(args)
    explanation = explain(
        session,
        log_text,
        args.param,
        args.to or presets.SINKS,
        rank=args.rank,
        tokens=args.tokens,
        given=given,
    )
    if args.json:
        print(json.dumps(explanation_json(explanation), indent=2))
    else:
        print(explanation_text(explanation))
    return 0
