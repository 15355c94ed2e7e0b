"""`sgtrace export SOURCE NAME -f FORMAT`: the chain, or the call graph or file around it, as
a graph in DOT, GraphML, JSON, Mermaid, SVG or PNG."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tracer.cli import presets
from tracer.cli.common import Trees, add_common, add_source, say
from tracer.cli.trace import DIRECTIONS
from tracer.errors import SgtraceError

if TYPE_CHECKING:  # networkx and the writers load only for an export
    import networkx as nx

    from tracer.session import Session
    from tracer.trace.chains import Chain

FORMATS = ("dot", "graphml", "json", "mermaid", "svg", "png")


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("export", help="the chain as a graph: DOT, GraphML, SVG...")
    add_source(parser)
    parser.add_argument("name", metavar="NAME", help="the parameter to trace, as for trace")
    parser.add_argument("-f", "--format", required=True, choices=FORMATS)
    parser.add_argument(
        "-o", "--output", type=Path, help="file to write (default stdout; required for png)"
    )
    parser.add_argument("--direction", choices=DIRECTIONS, default="both")
    parser.add_argument(
        "--to",
        action="append",
        metavar="NAME",
        help="end the spine where this name is bound; exit 1 when the value never gets there",
    )
    parser.add_argument(
        "--scope",
        choices=("chain", "spine", "calls", "file"),
        default="chain",
        help="what to draw: the chain (default), its spine alone, the call graph around it "
        "(the functions its steps live in, their callers and callees), or a whole file's "
        "dataflow graph (the file where the spine first binds NAME, or --file)",
    )
    parser.add_argument(
        "--depth",
        type=int,
        help="--scope calls: levels of callers and of callees drawn (default 1)",
    )
    parser.add_argument(
        "--file",
        metavar="PATH",
        help="--scope file: this file (relative to the source root) instead of NAME's",
    )
    parser.add_argument(
        "--max-nodes",
        type=int,
        help="--scope calls, file: draw at most this many nodes, those nearest the chain "
        "(default 150)",
    )
    add_common(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, trees: Trees) -> int:
    from tracer.cli.outputs import write_output
    from tracer.trace.chains import trace
    from tracer.views import graph_formats as export
    from tracer.views.chain_text import unreached

    check_before_indexing(args)
    session = trees.session(args.source)
    chain = trace(
        session.graph,
        args.name,
        direction=args.direction,
        sinks=args.to or (),
        hints=() if args.to else presets.SINKS,
    )
    graph = export_graph(args, session, chain)
    if args.format == "json":
        data = (export.graph_to_json(graph) + "\n").encode()
    elif args.format == "graphml":
        data = export.graph_to_graphml(graph, "node_id" if args.scope == "calls" else "step_id")
        data = data.encode()
    elif args.format == "mermaid":
        data = export.graph_to_mermaid(graph).encode()
    elif args.format in export.GRAPHVIZ_FORMATS:
        data = export.render_with_graphviz(export.graph_to_dot(graph), args.format)
    else:
        data = export.graph_to_dot(graph).encode()
    if args.output is None:  # each writer made the tree's text in DATA `visible`
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        write_output(args.output, data)
    missed = unreached(chain)
    if missed is not None:  # drawn all the same: the chain the value has
        say(f"sgtrace: {missed}", err=True)
        return 1
    return 0


def check_before_indexing(args: argparse.Namespace) -> None:
    """What can be refused without the tree is refused before the indexing, not after."""
    from tracer.cli.outputs import check_output
    from tracer.views import graph_formats as export
    from tracer.views import scopes as export_scopes

    if args.format in export.BINARY_FORMATS and args.output is None:
        raise SgtraceError(
            f"{args.format} is binary", f"write it to a file: -o chain.{args.format}"
        )
    if args.format in export.GRAPHVIZ_FORMATS:
        export.graphviz_program(args.format)
    if args.output is not None:
        check_output(args.output)
    # Options a scope does not use are refused, not ignored.
    given = {"--file": args.file, "--depth": args.depth, "--max-nodes": args.max_nodes}
    export_scopes.check_scope_options(args.scope, [o for o, v in given.items() if v is not None])
    if (args.depth is not None and args.depth < 1) or (
        args.max_nodes is not None and args.max_nodes < 1
    ):
        raise SgtraceError("--depth and --max-nodes count from 1", "give a positive number")


def export_graph(args: argparse.Namespace, session: Session, chain: Chain) -> nx.MultiDiGraph:
    """The drawing graph --scope asks for; what the node cap leaves out is said on stderr."""
    from tracer.trace.chains import spine_only
    from tracer.views import graph_formats as export
    from tracer.views import scopes as export_scopes

    if args.scope in ("chain", "spine"):
        return export.chain_graph(
            chain if args.scope == "chain" else spine_only(chain), args.source
        )
    max_nodes = args.max_nodes or export_scopes.DEFAULT_MAX_NODES
    if args.scope == "calls":
        drawing = export_scopes.calls_around(session, chain, args.depth or 1, max_nodes)
        what = "functions"
    else:
        path = args.file or export_scopes.chain_file(chain)
        drawing = export_scopes.file_graph(session, chain, path, max_nodes)
        what = f"steps of {path}"
    drawing.graph.graph["source"] = args.source
    if drawing.left_out and not args.quiet:
        total = drawing.graph.number_of_nodes() + drawing.left_out
        say(
            f"sgtrace: drawing {drawing.graph.number_of_nodes()} of {total} {what}, those "
            f"nearest the chain (--max-nodes {total} draws them all)",
            err=True,
        )
    return drawing.graph
