"""Indexing warnings as one line for people: the CLI prints it after a command's output, the
walk shows it as a notification."""

from __future__ import annotations

from tracer.views.terminal import visible


def partly_indexed(warnings: list[str]) -> str:
    """`N file(s) had problems and were indexed in part: a.py, b.py and 3 more`, naming the
    first two files (a warning is `path: what`); `visible`."""
    paths = list(dict.fromkeys(w.partition(": ")[0] for w in warnings))
    if len(paths) <= 2:
        named = " and ".join(paths)
    else:
        named = f"{paths[0]}, {paths[1]} and {len(paths) - 2} more"
    return visible(f"{len(paths)} file(s) had problems and were indexed in part: {named}")
