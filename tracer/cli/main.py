"""`sgtrace`: one entry point, a subcommand per job. Errors print as one line with the fix."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from tracer.cli import presets
from tracer.errors import SgtraceError
from tracer.sources.remote import SshOptions, parse_remote
from tracer.trace.depths import DEFAULT_BRANCH_DEPTH, DEFAULT_DEPTH, ONE_WAY_BRANCH_DEPTH

if TYPE_CHECKING:  # each command loads what it uses: `fetch` needs neither engine nor graph
    import networkx as nx

    from tracer.session import Session
    from tracer.sources.fetch import FetchResult
    from tracer.sources.snapshot import Snapshot
    from tracer.trace.chains import Chain


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

    fetching = commands.add_parser(
        "fetch", help="fetch the sources from one or more hosts over SSH into the cache"
    )
    fetching.add_argument(
        "hosts", nargs="+", help="host, user@host, host:/path or ssh://user@host:port/path"
    )
    fetching.add_argument("--json", action="store_true", help="one JSON object per host")
    add_common(fetching)

    walking = commands.add_parser("walk", help="walk the chain of a parameter in a terminal UI")
    walking.add_argument("source", help="a folder, a .py file, pypi:NAME==VERSION or host:/path")
    walking.add_argument(
        "name", nargs="?", help="the parameter to trace (without one, / asks for it)"
    )
    walking.add_argument("--direction", choices=("forward", "backward", "both"), default="both")
    walking.add_argument(
        "--log", metavar="FILE", help="a server log: its values shown beside the formula's steps"
    )
    add_common(walking)

    exporting = commands.add_parser("export", help="the chain as a graph: DOT, GraphML, SVG...")
    exporting.add_argument("source", help="a folder, a .py file, pypi:NAME==VERSION or host:/path")
    exporting.add_argument("name", help="the parameter to trace, as for trace")
    exporting.add_argument(
        "-f", "--format", required=True, choices=("dot", "graphml", "json", "mermaid", "svg", "png")
    )
    exporting.add_argument(
        "-o", "--output", type=Path, help="file to write (default stdout; required for svg, png)"
    )
    exporting.add_argument("--direction", choices=("forward", "backward", "both"), default="both")
    exporting.add_argument(
        "--to", action="append", metavar="NAME", help="end the spine where this name is bound"
    )
    exporting.add_argument(
        "--scope",
        choices=("chain", "spine", "calls", "file"),
        default="chain",
        help="what to draw: the chain (default), its spine alone, the call graph around it "
        "(the functions its steps live in, their callers and callees), or a whole file's "
        "dataflow graph (the file where the spine first binds NAME, or --file)",
    )
    exporting.add_argument(
        "--depth",
        type=int,
        help="--scope calls: levels of callers and of callees drawn (default 1)",
    )
    exporting.add_argument(
        "--file",
        metavar="PATH",
        help="--scope file: this file (relative to the source root) instead of NAME's",
    )
    exporting.add_argument(
        "--max-nodes",
        type=int,
        help="--scope calls, file: draw at most this many nodes, those nearest the chain "
        "(default 150)",
    )
    add_common(exporting)

    add_audit_parser(commands)

    from tracer.cli.explain import add_explain_parser

    add_explain_parser(commands, add_common)

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
    ssh = parser.add_argument_group("remote sources (SSH)")
    ssh.add_argument(
        "--accept-new-host-key",
        action="store_true",
        help="trust and record the key of a host not yet in known_hosts (a changed key is "
        "always refused)",
    )
    ssh.add_argument(
        "--known-hosts", type=Path, help="known_hosts file (default ~/.ssh/known_hosts)"
    )
    ssh.add_argument("--ssh-config", type=Path, help="ssh config file (default ~/.ssh/config)")
    ssh.add_argument(
        "-i", "--identity", type=Path, action="append", default=[], help="private key file"
    )
    ssh.add_argument("--connect-timeout", type=float, default=15.0, help="seconds (default 15)")
    ssh.add_argument(
        "--no-host-key-check",
        action="store_true",
        help="do not verify host keys at all (insecure: only on networks you trust)",
    )


def ssh_options(args: argparse.Namespace) -> SshOptions:
    if args.no_host_key_check and not args.quiet:
        print("sgtrace: warning: host keys are not verified (--no-host-key-check)", file=sys.stderr)
    return SshOptions(
        known_hosts=args.known_hosts,
        config=args.ssh_config,
        identities=tuple(args.identity),
        accept_new_host_key=args.accept_new_host_key,
        check_host_key=not args.no_host_key_check,
        timeout=args.connect_timeout,
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "trace":
            return run_trace(args)
        if args.command == "callgraph":
            return run_callgraph(args)
        if args.command == "fetch":
            return run_fetch(args)
        if args.command == "walk":
            return run_walk(args)
        if args.command == "export":
            return run_export(args)
        if args.command == "audit":
            return run_audit(args)
        if args.command == "explain":
            from tracer.cli.explain import run_explain

            return run_explain(args, session_for, ssh_options(args))
    except SgtraceError as error:
        print(f"sgtrace: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sgtrace: interrupted", file=sys.stderr)
        return 130
    return 2


def session_for(args: argparse.Namespace) -> Session:
    from tracer.session import open_session  # the engine loads only for commands that index

    show = not args.quiet and sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if show and (done % 50 == 0 or done == total):
            print(f"\rindexing {done}/{total} files", end="", file=sys.stderr, flush=True)

    session = open_session(
        args.source,
        progress=progress,
        ssh_options=ssh_options(args),
        fetch_progress=FetchProgress(show),
    )
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
    from tracer.trace.chains import trace
    from tracer.views.chain_text import chain_text, dumps

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
    from tracer.analyses.callgraph import call_graph

    session = session_for(args)
    print(json.dumps(call_graph(session), indent=2, sort_keys=True))
    return 0


def run_walk(args: argparse.Namespace) -> int:
    from tui.app import WalkApp  # Textual loads only for the walk: the engine never needs it

    log_text = None
    if args.log == "-":
        raise SgtraceError("the walk reads its keys from the terminal", "give the log as a file")
    if args.log is not None:
        from tracer.cli.explain import read_log_text

        log_text = read_log_text(args, None)
    app = WalkApp(args.source, args.name, args.direction, ssh_options(args), log_text=log_text)
    app.run()
    # A trace still running in a worker thread cannot be interrupted: leave without waiting
    # for it (the cache is written atomically, so nothing is left half done).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(app.return_code or 0)


def run_export(args: argparse.Namespace) -> int:
    from tracer.cli.outputs import check_output, write_output
    from tracer.trace.chains import trace
    from tracer.views import (
        graph_formats as export,  # networkx and the writers load only for an export
    )
    from tracer.views import scopes as export_scopes

    binary = args.format in export.GRAPHVIZ_FORMATS
    if binary and args.output is None:
        raise SgtraceError(
            f"{args.format} is binary", f"write it to a file: -o chain.{args.format}"
        )
    if args.output is not None:
        check_output(args.output)  # before the indexing, not after
    # Options a scope does not use are refused, not ignored (before the indexing).
    given = {"--file": args.file, "--depth": args.depth, "--max-nodes": args.max_nodes}
    export_scopes.check_scope_options(args.scope, [o for o, v in given.items() if v is not None])
    if (args.depth is not None and args.depth < 1) or (
        args.max_nodes is not None and args.max_nodes < 1
    ):
        raise SgtraceError("--depth and --max-nodes count from 1", "give a positive number")
    session = session_for(args)
    chain = trace(
        session.graph, args.name, direction=args.direction, sinks=args.to or presets.SINKS
    )
    graph = export_graph(args, session, chain)
    if args.format == "json":
        data = (export.graph_to_json(graph) + "\n").encode()
    elif args.format == "graphml":
        data = export.graph_to_graphml(graph, "node_id" if args.scope == "calls" else "step_id")
        data = data.encode()
    elif args.format == "mermaid":
        data = export.graph_to_mermaid(graph).encode()
    elif binary:
        data = export.render_with_graphviz(export.graph_to_dot(graph), args.format)
    else:
        data = export.graph_to_dot(graph).encode()
    if args.output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        write_output(args.output, data)
    return 0


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
        print(
            f"sgtrace: drawing {drawing.graph.number_of_nodes()} of {total} {what}, those "
            f"nearest the chain (--max-nodes {total} draws them all)",
            file=sys.stderr,
        )
    return drawing.graph


def add_audit_parser(commands: argparse._SubParsersAction) -> None:
    auditing = commands.add_parser(
        "audit", help="what a patched tree changes in the chains of the traced parameters"
    )
    auditing.add_argument(
        "targets", nargs="+", help="host:/path, host (SGLang found there), a folder or pypi:"
    )
    auditing.add_argument(
        "--against",
        metavar="SOURCE",
        help="the reference (default: the commit a checkout is on, or the release a pip "
        "install's RECORD names)",
    )
    auditing.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME",
        help="trace this parameter too (default: " + ", ".join(presets.PARAMETERS) + ")",
    )
    auditing.add_argument(
        "--to", action="append", metavar="NAME", help="end the spines where this name is bound"
    )
    auditing.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    auditing.add_argument("-o", "--output", type=Path, help="write the report to FILE")
    add_common(auditing)


def run_audit(args: argparse.Namespace) -> int:
    """Exit 0: no traced chain changed; 1: one did; 2: a target could not be audited."""
    from tracer.analyses.audit import audit
    from tracer.cli.outputs import check_output, write_output
    from tracer.session import index_snapshot
    from tracer.sources.pristine import choose_references, snapshot_version
    from tracer.views.audit_report import report_json, report_text

    if args.output is not None:
        check_output(args.output)  # before the fetching and indexing, not after
    show = not args.quiet and sys.stderr.isatty()
    progress = FetchProgress(show, lines=len(args.targets) > 1)
    pairs = choose_references(args.targets, args.against, ssh_options(args), progress)
    sessions: dict[int, Session] = {}  # by snapshot, so a shared reference is indexed once

    def indexed(snapshot: Snapshot) -> Session:
        if id(snapshot) not in sessions:
            sessions[id(snapshot)] = index_snapshot(snapshot)
        return sessions[id(snapshot)]

    audits, failures = [], []
    for text, pair in zip(args.targets, pairs, strict=True):
        try:
            if isinstance(pair, SgtraceError):
                raise pair
            reference = indexed(pair.reference)
            # A clean tree is its own reference: indexed and traced once.
            same = pair.reference.files == pair.target.files
            audits.append(
                audit(
                    reference,
                    reference if same else indexed(pair.target),
                    presets.PARAMETERS,
                    sinks=args.to or presets.SINKS,
                    required=args.param,
                    how=pair.how,
                    labels=(pair.reference.label, pair.target.label),
                    versions=(snapshot_version(pair.reference), snapshot_version(pair.target)),
                )
            )
        except SgtraceError as error:
            print(f"sgtrace: error: {text}: {error}", file=sys.stderr)
            failures.append((text, str(error)))
    report_warnings(args, [w for s in sessions.values() for w in s.warnings()])
    if args.format == "json":
        report = report_json(audits, failures) + "\n"
    elif audits:
        report = report_text(audits, failures, markdown=args.format == "markdown")
    else:  # every target failed, and each said why on stderr
        report = ""
    if args.output is None:
        sys.stdout.write(report)
    else:
        write_output(args.output, report.encode())
    if failures:
        return 2
    return 1 if any(a.changed for a in audits) else 0


def report_warnings(args: argparse.Namespace, warnings: list[str]) -> None:
    """Indexing warnings: each with --warnings, else how many (nothing with --quiet)."""
    if args.warnings:
        for warning in dict.fromkeys(warnings):
            print(f"warning: {warning}", file=sys.stderr)
    elif warnings and not args.quiet:
        print(
            f"sgtrace: {len(set(warnings))} file(s) had problems and were indexed in part "
            "(--warnings lists them)",
            file=sys.stderr,
        )


def run_fetch(args: argparse.Namespace) -> int:
    from tracer.sources.fetch import fetch_many  # asyncssh loads only when a host is asked

    specs = []
    for text in args.hosts:
        spec = parse_remote(text, bare_host=True)
        if spec is None:
            raise SgtraceError(f"{text!r} is not a host", "write host, user@host or host:/path")
        specs.append(spec)
    show = not args.quiet and not args.json and sys.stderr.isatty()
    results = fetch_many(specs, ssh_options(args), FetchProgress(show, lines=len(specs) > 1))
    failed = 0
    for spec, result in zip(specs, results, strict=True):
        if isinstance(result, SgtraceError):
            failed += 1
            print(f"sgtrace: error: {spec.text}: {result}", file=sys.stderr)
            if args.json:
                print(json.dumps({"source": spec.text, "error": str(result)}))
            continue
        if args.json:
            print(json.dumps(result.facts()))
        elif not args.quiet:
            print(fetch_summary(result))
    return 2 if failed else 0


class FetchProgress:
    """Prints `host: N files, X MB, Y MB/s` while a fetch streams (to a terminal only); one
    line per update when several hosts fetch at once, else one line rewritten."""

    def __init__(self, show: bool, lines: bool = False) -> None:
        self.show = show
        self.lines = lines
        self.started = time.monotonic()

    def __call__(self, host: str, files: int, total: int, received: int) -> None:
        if not self.show:
            return
        rate = received / max(time.monotonic() - self.started, 1e-3) / (1 << 20)
        done = files == total
        text = f"{host}: {total} files, {received / (1 << 20):.1f} MB, {rate:.1f} MB/s"
        text += " done" if done else ""
        if self.lines:
            print(text, file=sys.stderr)
        else:
            print(f"\r{text}", end="\n" if done else "", file=sys.stderr, flush=True)


def fetch_summary(result: FetchResult) -> str:
    facts = result.facts()
    lines = [
        f"{facts['host']}: {facts['files']} files under {facts['root']} "
        f"({presets.PACKAGE} {facts['version'] or 'version unknown'}); fetched "
        f"{facts['fetched_files']} files, {int(facts['fetched_bytes']) / (1 << 20):.1f} MB "
        f"in {facts['seconds']} s"
    ]
    if facts["git_commit"]:
        modified = len(facts["git_modified"])  # type: ignore[arg-type]
        state = f"{modified} modified file(s)" if modified else "clean"
        lines.append(f"  git checkout at {str(facts['git_commit'])[:12]}, {state}")
    if facts["chosen_because"]:
        lines.append(f"  chosen: {facts['chosen_because']}")
        for other in facts["other_candidates"]:  # type: ignore[attr-defined]
            lines.append(f"  also found: {other}")
    return "\n".join(lines)


def entry() -> NoReturn:
    """The `sgtrace` script: main(), then out at once. What a command writes is flushed or
    closed by then (cache entries atomically), so the interpreter's teardown (freeing every
    module and, after a trace, a heap of facts) would only make the user wait."""
    try:
        code = main()
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        code = 0
    os._exit(code)


if __name__ == "__main__":
    entry()
