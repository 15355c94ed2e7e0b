"""`sgtrace callgraph SOURCE`: the call graph, in PyCG's JSON format."""

from __future__ import annotations

import argparse

from tracer.cli.common import Trees, add_common, add_source, say
from tracer.views.terminal import json_text


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("callgraph", help="the call graph, in PyCG's JSON format")
    add_source(parser)
    parser.add_argument(
        "--json", action="store_true", help="accepted for symmetry; JSON is the output"
    )
    add_common(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, trees: Trees) -> int:
    from tracer.analyses.callgraph import call_graph

    session = trees.session(args.source)
    say(json_text(call_graph(session), indent=2, sort_keys=True))
    return 0
