"""`sgtrace`: one entry point, a subcommand per job, each in its own module (its arguments and
its `run`). Errors print as one line with the fix."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any, NoReturn

from tracer.cli import audit, callgraph, explain, export, fetch, trace, walk
from tracer.cli.common import Trees, say
from tracer.errors import NameNotFound, SgtraceError

COMMANDS = (trace, fetch, walk, export, audit, explain, callgraph)  # in the order --help lists


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sgtrace",
        description="Where does a parameter come from, where does it go, and why?",
    )
    parser.add_argument("--version", action=ShowVersion)
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(commands)
    return parser


class ShowVersion(argparse.Action):
    """`--version`: `sgtrace 0.1.0`, read from the package's metadata only when asked."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> NoReturn:
        print(f"sgtrace {version()}")
        parser.exit()


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    from tracer.cli import __version__

    try:
        return installed("sgtrace")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return __version__


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ARGV names. The indexing warnings of the trees it opened come after
    its result, once each; a failed command prints its error and only the warnings asked
    for (--warnings), except when the error is that a name is bound nowhere: it may be bound
    in one of the files indexed in part."""
    args = build_parser().parse_args(argv)
    trees = Trees(args)
    try:
        code = args.func(args, trees)
    except SgtraceError as error:
        say(f"sgtrace: error: {error}", err=True)
        trees.tell_warnings(listed_only=not isinstance(error, NameNotFound))
        return 2
    except KeyboardInterrupt:
        print("sgtrace: interrupted", file=sys.stderr)
        return 130
    trees.tell_warnings()
    return code


def quiet_dependencies(options: Sequence[str]) -> None:
    """Warnings from other packages' code (a library deprecating what another one uses) are
    not the user's to act on: only those raised from sgtrace's own modules are shown, unless
    the user asked for warnings (OPTIONS: `python -W`, PYTHONWARNINGS)."""
    if options:
        return
    # Every module but sgtrace's own; those keep Python's default filters.
    warnings.filterwarnings("ignore", module=r"(?!(?:tracer|tui)(?:\.|$))")


def entry() -> NoReturn:
    """The `sgtrace` script: main(), then out at once. What a command writes is flushed or
    closed by then (cache entries atomically), so the interpreter's teardown (freeing every
    module and, after a trace, a heap of facts) would only make the user wait."""
    quiet_dependencies(sys.warnoptions)
    try:
        code = main()
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        code = 0
    os._exit(code)


if __name__ == "__main__":
    entry()
