"""`sgtrace audit TARGET... [--against SOURCE]`: what a patched tree changes in the chains of
the traced parameters, against the reference it is chosen (or told) to be compared with."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tracer.cli import presets
from tracer.cli.common import PACKAGE, REMOTE_FORMS, Trees, add_common, say
from tracer.errors import SgtraceError

if TYPE_CHECKING:
    from tracer.session import Session
    from tracer.sources.snapshot import Snapshot


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "audit", help="what a patched tree changes in the chains of the traced parameters"
    )
    parser.add_argument(
        "targets",
        metavar="TARGET",
        nargs="+",
        help=f"a tree to audit: a host ({presets.PACKAGE} found there), {REMOTE_FORMS}, a "
        "folder or pypi:NAME==VERSION",
    )
    parser.add_argument(
        "--against",
        metavar="SOURCE",
        help="the reference: a SOURCE as trace takes it, or `release` (the release the "
        "target's own version names); default: the commit a checkout is on (a host's or a "
        "local folder's), or the release a pip install's RECORD names",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME",
        help="trace this parameter too (default: " + ", ".join(presets.PARAMETERS) + ")",
    )
    parser.add_argument(
        "--to",
        action="append",
        metavar="NAME",
        help="end the spines where this name is bound (stderr says which never get there)",
    )
    parser.add_argument(
        "--files",
        action="store_true",
        help="list the files and the hunks that touch no chain one by one, not by folder",
    )
    parser.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    parser.add_argument("-o", "--output", type=Path, help="write the report to FILE")
    add_common(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, trees: Trees) -> int:
    """Exit 0: no traced chain changed; 1: one did; 2: a target could not be audited."""
    from tracer.analyses.audit import audit
    from tracer.cli.outputs import check_output, write_output
    from tracer.sources.pristine import choose_references, snapshot_version
    from tracer.views.audit_report import report_json, report_text
    from tracer.views.chain_text import unreached

    if args.output is not None:
        check_output(args.output)  # before the fetching and indexing, not after
    progress = trees.fetch_progress(lines=len(args.targets) > 1)
    pairs = choose_references(args.targets, args.against, trees.ssh, progress, PACKAGE)
    sessions: dict[int, Session] = {}  # by snapshot, so a shared reference is indexed once

    def indexed(snapshot: Snapshot, made_for: Snapshot | None = None) -> Session:
        if id(snapshot) not in sessions:
            sessions[id(snapshot)] = trees.index(snapshot, made_for)
        return sessions[id(snapshot)]

    audits, failures = [], []
    for text, pair in zip(args.targets, pairs, strict=True):
        try:
            if isinstance(pair, SgtraceError):
                raise pair
            # A reference sgtrace made from the target does not tell the target's warnings.
            reference = indexed(pair.reference, None if args.against else pair.target)
            # A clean tree is its own reference: indexed and traced once.
            same = pair.reference.files == pair.target.files
            audits.append(
                audit(
                    reference,
                    reference if same else indexed(pair.target),
                    presets.PARAMETERS,
                    sinks=args.to or (),
                    hints=() if args.to else presets.SINKS,
                    required=args.param,
                    how=pair.how,
                    labels=(pair.reference.label, pair.target.label),
                    versions=(
                        snapshot_version(pair.reference, PACKAGE),
                        snapshot_version(pair.target, PACKAGE),
                    ),
                )
            )
        except SgtraceError as error:
            say(f"sgtrace: error: {text}: {error}", err=True)
            failures.append((text, str(error)))
    for one in audits:
        for diff in one.params:
            if diff.target is not None and (missed := unreached(diff.target)) is not None:
                say(f"sgtrace: {one.target}: {missed}", err=True)
    if not audits:  # every target failed, and each said why on stderr
        report = ""
    elif args.format == "json":
        report = report_json(audits, failures) + "\n"
    else:
        report = report_text(audits, failures, markdown=args.format == "markdown", files=args.files)
    if args.output is None:
        sys.stdout.write(report)  # made `visible` by its view
    else:
        write_output(args.output, report.encode())
    if failures:
        return 2
    return 1 if any(a.changed for a in audits) else 0
