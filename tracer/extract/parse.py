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
# How deep a tree is read: a statement nested deeper is read as `0`, so every walk over a
# tree may take a frame a level. CPython refuses 200 nested brackets; the deepest file of
# SGLang 0.5.12 is 33 levels, of a venv's site-packages 88 (idna's 82 tables added up).
MAX_DEPTH = 200
# What a statement is a child of: a statement is what is blanked when too deep.
BODIES = frozenset({"module", "block"})
# Every byte but a line break, as a blank.
BLANKS = bytes(b if b in b"\r\n" else 0x20 for b in range(256))
Span = tuple[int, int, int]  # a statement's start and end bytes, and its first line


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
    deep = too_deep(tree.root_node)
    if deep:
        source = blanked(source, deep)
        tree = parser().parse(source)
        if too_deep(tree.root_node):  # what error recovery made of the rest: none of it read
            source = blanked(source, [(0, len(source), 1)], stand_in=b"")
            tree = parser().parse(source)
            deep = []
        warnings.append(nested_warning([line for _, _, line in deep]))
    if tree.root_node.has_error:
        line = first_error_line(tree.root_node)
        warnings.append(f"syntax error near line {line}; the rest of the file was indexed")
    return Parsed(tree, source, tuple(warnings))


def too_deep(root: Node) -> list[Span]:
    """The statements of ROOT's tree that hold a node more than MAX_DEPTH levels down (each
    outermost such statement at most MAX_DEPTH - 1 deep, so its stand-in is not), in order.
    A subtree with too few nodes to reach that deep is not entered, which makes the search
    cost about 2% of the parse."""
    found: list[Span] = []
    cursor = root.walk()
    depth = 0
    while True:
        if depth > MAX_DEPTH:
            # Up to the statement that holds the node, shallow enough to be replaced.
            while depth >= MAX_DEPTH or not holds_statements(cursor.node.parent):
                if not cursor.goto_parent():
                    break
                depth -= 1
            node = cursor.node
            found.append((node.start_byte, node.end_byte, node.start_point[0] + 1))
        elif cursor.node.descendant_count > MAX_DEPTH - depth and cursor.goto_first_child():
            depth += 1
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return found
            depth -= 1


def holds_statements(node: Node | None) -> bool:
    return node is None or node.type in BODIES


def blanked(source: bytes, spans: list[Span], stand_in: bytes = b"0") -> bytes:
    """SOURCE with each span blanked but for its line breaks (every other byte and line stays
    where it was) and STAND_IN at its start: a statement there that does nothing (a block
    left empty would be a syntax error)."""
    out = bytearray(source)
    for start, end, _ in spans:
        out[start:end] = source[start:end].translate(BLANKS)
        out[start : start + len(stand_in)] = stand_in
    return bytes(out)


def nested_warning(lines: list[int]) -> str:
    """The warning for statements nested too deep at LINES (none: the whole file)."""
    past = f"nested more than {MAX_DEPTH} levels deep"
    rest = "the rest of the file was indexed"
    if not lines:
        return f"{past}; skipped"
    if len(lines) == 1:
        return f"{past} at line {lines[0]}; that statement was skipped, {rest}"
    shown = f"{lines[0]}, {lines[1]}" + (f" and {len(lines) - 2} more" if len(lines) > 2 else "")
    return f"{past} at lines {shown}; those statements were skipped, {rest}"


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
