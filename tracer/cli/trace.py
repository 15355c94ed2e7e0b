"""`sgtrace trace SOURCE NAME`: the provenance chain of a parameter, as text or JSON."""

from __future__ import annotations

import argparse
import os
import sys

from tracer.cli import presets
from tracer.cli.common import Trees, add_common, add_source, say
from tracer.trace.depths import DEFAULT_BRANCH_DEPTH, DEFAULT_DEPTH, ONE_WAY_BRANCH_DEPTH

DIRECTIONS = ("forward", "backward", "both")
NAME_FORMS = "mem_fraction_static, ServerArgs.mem_fraction_static, Class.method.param"


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("trace", help="the provenance chain of a parameter")
    add_source(parser)
    parser.add_argument("name", metavar="NAME", help=NAME_FORMS)
    parser.add_argument("--direction", choices=DIRECTIONS, default="both")
    parser.add_argument(
        "--json", action="store_true", help="the chain as JSON (the contract in docs/DESIGN.md)"
    )
    parser.add_argument(
        "--max-depth", type=int, default=DEFAULT_DEPTH, help="steps searched from the name"
    )
    parser.add_argument(
        "--branch-depth",
        type=int,
        default=None,
        help=f"steps shown around the spine (default {DEFAULT_BRANCH_DEPTH}, "
        f"{ONE_WAY_BRANCH_DEPTH} with --direction forward or backward)",
    )
    parser.add_argument(
        "--to",
        action="append",
        metavar="NAME",
        help="end the spine where this name is bound; exit 1 when the value never gets "
        "there (default: where the value ends up; a route to "
        + ", ".join(presets.SINKS)
        + " is listed among the others)",
    )
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    add_common(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, trees: Trees) -> int:
    """Exit 0 with the chain; 1 when --to names a binding the value never reaches (the chain
    it has is printed all the same, and stderr says so)."""
    from tracer.trace.chains import trace
    from tracer.views.chain_text import chain_text, dumps, unreached

    session = trees.session(args.source)
    chain = trace(
        session.graph,
        args.name,
        direction=args.direction,
        max_depth=args.max_depth,
        sinks=args.to or (),
        branch_depth=args.branch_depth,
        hints=() if args.to else presets.SINKS,
    )
    if args.json:
        print(dumps(chain, args.source))
    else:  # made `visible` by the view before its colours (which `say` would show) are added
        print(chain_text(chain, args.source, colour=use_colour(args.color)))
    missed = unreached(chain)
    if missed is not None:
        say(f"sgtrace: {missed}", err=True)
        return 1
    return 0


def use_colour(choice: str) -> bool:
    if choice != "auto":
        return choice == "always"
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ
