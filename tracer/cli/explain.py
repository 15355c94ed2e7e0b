"""`sgtrace explain`: the command line of the explain view (cli.py stays a dispatcher)."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tracer.cli import presets
from tracer.errors import SgtraceError

if TYPE_CHECKING:
    from tracer.session import Session
    from tracer.sources.remote import SshOptions

MAX_GIVEN = 1e15
MAX_LOG_BYTES = 256 << 20  # a longer log is read from its end: the newest start is there


class LogUnreadable(SgtraceError):
    pass


def add_explain_parser(
    commands: argparse._SubParsersAction, add_common: Callable[[argparse.ArgumentParser], None]
) -> None:
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
            number = float(value)
            if not math.isfinite(number) or abs(number) > MAX_GIVEN:
                raise ValueError
            given[name.strip()] = number
        except ValueError:
            raise SgtraceError(
                f"--set {pair!r} is not NAME=NUMBER", "write it as --set mem_fraction_static=0.88"
            ) from None
    return given


def read_log_text(args: argparse.Namespace, ssh_options: SshOptions | None) -> str:
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
        return log_text(data, args.log)
    from tracer.sources.journal import read_journal
    from tracer.sources.remote import parse_remote

    remote = None if Path(args.source).expanduser().exists() else parse_remote(args.source)
    from tracer.sources.remote import SshOptions

    return read_journal(args.journal, remote, ssh_options or SshOptions())


def log_text(data: bytes, name: str) -> str:
    """DATA as text; a compressed or binary file is one clear error, UTF-16 is read as such."""
    if data[:2] == b"\x1f\x8b" or data[:4] == b"\x28\xb5\x2f\xfd":
        raise LogUnreadable(
            f"the log {name} is compressed",
            f"decompress it into standard input: zcat {name} | sgtrace explain SOURCE --log -",
        )
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16", "replace")
    if data.count(b"\0") > len(data) // 100:
        raise LogUnreadable(f"the log {name} is not text", "give the server's log as text")
    return data.decode("utf-8", "replace")


def run_explain(
    args: argparse.Namespace,
    session_for: Callable[[argparse.Namespace], Session],
    ssh_options: SshOptions,
) -> int:
    from tracer.analyses.explain.explain import explain
    from tracer.views.explain_report import explanation_json, explanation_text

    if args.tokens is not None and args.tokens <= 0:
        raise SgtraceError(
            f"--tokens {args.tokens}: a token count is positive", "e.g. --tokens 200000"
        )
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
    text = (
        json.dumps(explanation_json(explanation), indent=2)
        if args.json
        else explanation_text(explanation)
    )
    try:
        print(text, flush=True)
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (stdout is closed at exit)
    return 0
