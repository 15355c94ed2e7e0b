"""tree-sitter set-up: the Python language, the parser, and the queries in `queries/python/`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from textwrap import dedent

import tree_sitter_python
from tree_sitter import Language, Node, Parser, Query, QueryCursor, Tree

PYTHON = Language(tree_sitter_python.language())
BOM = b"\xef\xbb\xbf"
MAX_CODE_LINES = 12


@cache
def parser() -> Parser:
    return Parser(PYTHON)


@cache
def query(*names: str) -> Query:
    """The queries `queries/python/NAME.scm` compiled together, so one pass over a tree runs
    them all (a pass costs about as much as one query). Capture names must not clash."""
    folder = files("tracer.queries").joinpath("python")
    text = "\n".join(folder.joinpath(f"{name}.scm").read_text("utf-8") for name in names)
    return Query(PYTHON, text)


def matches(names: tuple[str, ...], node: Node) -> list[dict[str, list[Node]]]:
    """Capture dicts of the queries NAMES over NODE, one per match, in source order."""
    found = QueryCursor(query(*names)).matches(node)
    return [captures for _, captures in found]


Match = dict[str, list[Node]]


def matches_by_concern(
    names: tuple[str, ...], node: Node, concerns: dict[str, str]
) -> dict[str, list[Match]]:
    """Run the queries NAMES over NODE in one pass and sort the matches by concern: CONCERNS
    maps the capture that marks a pattern to the concern it serves."""
    grouped: dict[str, list[Match]] = {concern: [] for concern in concerns.values()}
    for match in matches(names, node):
        grouped[next(concerns[key] for key in concerns if key in match)].append(match)
    return grouped


def captures(names: tuple[str, ...], node: Node) -> dict[str, list[Node]]:
    """Captures of the queries NAMES over NODE by capture name, each list in source order."""
    found = QueryCursor(query(*names)).captures(node)
    for nodes in found.values():
        nodes.sort(key=lambda n: n.start_byte)
    return found


@dataclass(frozen=True, slots=True)
class Parsed:
    tree: Tree
    source: bytes
    warnings: tuple[str, ...]


def parse(source: bytes) -> Parsed:
    """Parse SOURCE bytes; problems that leave part of the file unreadable become warnings."""
    warnings: list[str] = []
    if source.startswith(BOM):
        # Keep byte offsets of the file: blank the BOM instead of cutting it.
        source = b"   " + source[len(BOM) :]
    if b"\x00" in source:
        warnings.append("contains NUL bytes; they were read as spaces")
        source = source.replace(b"\x00", b" ")
    try:
        source.decode("utf-8")
    except UnicodeDecodeError as exc:
        warnings.append(f"not valid UTF-8 at byte {exc.start}; undecodable bytes shown as U+FFFD")
    tree = parser().parse(source)
    if tree.root_node.has_error:
        line = first_error_line(tree.root_node)
        warnings.append(f"syntax error near line {line}; the rest of the file was indexed")
    return Parsed(tree, source, tuple(warnings))


def first_error_line(root: Node) -> int:
    """Line of the first ERROR or MISSING node, found by descending into erroneous children."""
    node = root
    while node.type != "ERROR" and not node.is_missing:
        bad = [c for c in node.children if c.has_error or c.is_missing or c.type == "ERROR"]
        if not bad:
            break
        node = bad[0]
    return node.start_point[0] + 1


class SourceLines:
    """A file's text by line, to show the code a step stands for."""

    def __init__(self, source: bytes) -> None:
        if source.startswith(BOM):
            source = source[len(BOM) :]
        self.lines = source.decode("utf-8", "replace").split("\n")

    def span(self, line: int, end_line: int) -> str:
        """Lines LINE..END_LINE (1-based, inclusive), dedented, at most MAX_CODE_LINES."""
        chunk = self.lines[line - 1 : min(end_line, line + MAX_CODE_LINES - 1)]
        return dedent("\n".join(chunk)).strip()


def text(node: Node | None) -> str:
    if node is None:
        return ""
    return node.text.decode("utf-8", "replace")
