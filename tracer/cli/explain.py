"""`sgtrace explain SOURCE --log FILE`: a server's log bound to the traced formula, which is
evaluated with the logged values."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

from tracer.cli import presets
from tracer.cli.common import Trees, add_common, add_source
from tracer.cli.logs import read_log_text
from tracer.errors import SgtraceError

MAX_GIVEN = 1e15


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "explain", help="bind a server's log to the traced formula and evaluate it"
    )
    add_source(parser)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--log", metavar="FILE", help="the server's log; - reads standard input")
    where.add_argument(
        "--journal", metavar="UNIT", help="read UNIT's journal on the source's host (journalctl)"
    )
    parser.add_argument(
        "--param",
        default=presets.EXPLAIN_PARAMETER,
        help=f"the parameter whose formula is explained (default {presets.EXPLAIN_PARAMETER})",
    )
    parser.add_argument(
        "--to", action="append", metavar="NAME", help="end the spine where this name is bound"
    )
    parser.add_argument("--rank", help="the rank to explain, as the log tags it: TP3, DP0 TP1")
    parser.add_argument(
        "--start",
        type=int,
        metavar="N",
        help="the server start to explain, 1 for the log's first (default: the last)",
    )
    parser.add_argument(
        "--tokens", type=int, help="also say which value of the parameter gives this many tokens"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a value the log does not show (e.g. --set mem_fraction_static=0.88)",
    )
    parser.add_argument("--json", action="store_true", help="the explanation as JSON")
    add_common(parser)
    parser.set_defaults(func=run)


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


def run(args: argparse.Namespace, trees: Trees) -> int:
    from tracer.analyses.explain.check import verdict
    from tracer.analyses.explain.explain import explain
    from tracer.views.explain_report import explanation_json, explanation_text

    if args.tokens is not None and args.tokens <= 0:
        raise SgtraceError(
            f"--tokens {args.tokens}: a token count is positive", "e.g. --tokens 200000"
        )
    given = given_values(args.set)
    log_text = read_log_text(args, trees.ssh)
    session = trees.session(args.source)
    explanation = explain(
        session,
        log_text,
        args.param,
        args.to or presets.SINKS,
        rank=args.rank,
        tokens=args.tokens,
        given=given,
        start=args.start,
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
    # 0 when the explanation reproduces the logged number, 1 when not (its first line says
    # where it parts from the log); bad input is an SgtraceError, 2.
    return 0 if verdict(explanation).reproduced else 1
