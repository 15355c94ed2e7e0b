"""`sgtrace fetch HOST...`: the sources of one or more hosts fetched over SSH into the cache
(asyncssh loads; the engine does not)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tracer.cli import presets
from tracer.cli.common import PACKAGE, FetchProgress, Trees, add_common, say
from tracer.errors import SgtraceError, printable
from tracer.sources.remote import parse_remote
from tracer.views.schemas import FETCH
from tracer.views.terminal import json_text

if TYPE_CHECKING:
    from tracer.sources.fetch import FetchResult


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "fetch", help="fetch the sources from one or more hosts over SSH into the cache"
    )
    parser.add_argument(
        "hosts", nargs="+", help="host, user@host, host:/path or ssh://user@host:port/path"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="one JSON document: every host's facts, in the order given",
    )
    add_common(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, trees: Trees) -> int:
    from tracer.sources.fetch import fetch_many  # asyncssh loads only when a host is asked

    specs = []
    for text in args.hosts:
        spec = parse_remote(text, bare_host=True)
        if spec is None:
            raise SgtraceError(f"{text!r} is not a host", "write host, user@host or host:/path")
        specs.append(spec)
    progress = FetchProgress(trees.show_progress and not args.json, lines=len(specs) > 1)
    results = fetch_many(specs, trees.ssh, progress, PACKAGE)
    failed = 0
    hosts: list[dict[str, object]] = []
    for spec, result in zip(specs, results, strict=True):
        if isinstance(result, SgtraceError):
            failed += 1
            say(f"sgtrace: error: {spec.text}: {result}", err=True)
            hosts.append({"source": spec.text, "error": str(result)})
            continue
        hosts.append(result.facts())
        if not args.json and not args.quiet:
            say(fetch_summary(result))
        if args.warnings:  # each file skipped, and why, after the results
            trees.warnings[spec.text] = list(result.snapshot.warnings)
    # One document for every host, the failed ones with their error; none when every host
    # failed (each said why on stderr).
    if args.json and failed < len(specs):
        print(json_text({"schema": FETCH, "hosts": hosts}))
    return 2 if failed else 0


def fetch_summary(result: FetchResult) -> str:
    """For people: what the host holds, each path or name on one line (`printable`)."""
    facts = result.facts()
    lines = [
        f"{facts['host']}: {facts['files']} files under {printable(str(facts['root']))} "
        f"({presets.PACKAGE} {printable(str(facts['version'])) or 'version unknown'}); fetched "
        f"{facts['fetched_files']} files, {int(facts['fetched_bytes']) / (1 << 20):.1f} MB "
        f"in {facts['seconds']} s"
    ]
    skipped = len(result.snapshot.warnings)
    if skipped:
        lines[0] += f"; skipped {skipped} (--warnings lists them)"
    if facts["git_commit"]:
        modified = len(facts["git_modified"])  # type: ignore[arg-type]
        state = f"{modified} modified file(s)" if modified else "clean"
        lines.append(f"  git checkout at {str(facts['git_commit'])[:12]}, {state}")
    if facts["chosen_because"]:
        lines.append(f"  chosen: {printable(str(facts['chosen_because']))}")
        for other in facts["other_candidates"]:  # type: ignore[attr-defined]
            lines.append(f"  also found: {printable(other)}")
    return "\n".join(lines)
