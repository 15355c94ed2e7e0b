"""Which bindings always run before a later line of their function. A plain assignment (not a
`for`, `with` or `except` target, not a walrus) runs before every later line of the block it
is written in: the lines up to where its block ends (the first line indented less), so a
read there takes it and never an earlier binding of the same name. At the top level of a
function body that is the rest of the function; in a branch of an `if` it is the rest of
that branch (a binding in one branch never reaches a read in its sibling `else`). A name a
`case` pattern binds runs before every line of that case's body (the lines up to the first
one indented as much as the `case`), never before another case's. An `if` with an `else` each
of whose branches binds the name in its own body runs a binding before every line after it in
its block: the bindings before the `if` are overwritten there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracer.store import step_ids
from tracer.store.rows import ASSIGN_OP, row_at

if TYPE_CHECKING:
    from tracer.graph.file_steps import FileTables

# Statements whose targets are bound only if their body runs, or only in part of them.
# (The source is read as bytes: indentation and the keywords that open a statement are ASCII.)
NOT_PLAIN = (
    b"for ", b"async ", b"with ", b"except", b"if ", b"elif ", b"while ", b"case ", b"match "
)  # fmt: skip


def dominates(tables: FileTables, def_id: str, line: int) -> bool:
    """Does the binding DEF_ID always run before LINE, a later line of its function?"""
    step = tables.steps[def_id]
    return runs_before(tables, step.line, step.end_line, line, binds_case(tables, def_id))


def runs_before(tables: FileTables, first: int, last: int, line: int, case: bool = False) -> bool:
    """Does the statement at lines FIRST..LAST (the header of a CASE) always run before LINE,
    a later line of its function? A read in the statement itself runs before it."""
    if line <= last:
        return False
    if first in tables.flows.straight:
        return True
    end = block_end(tables, first, last, case)
    return end is not None and line < end


def in_own_body(tables: FileTables, line: int) -> bool:
    """Is the statement at LINE one of its function's own body, in no branch, loop, `with` or
    `try` (the first line above it indented less is a `def`)?"""
    raw = tables.lines.raw()
    if not 0 < line <= len(raw) or tables.lines.indent(line - 1) < 0:
        return False
    header = tables.lines.parent(line - 1)
    return header >= 0 and raw[header].lstrip().startswith((b"def ", b"async def "))


def binds_case(tables: FileTables, def_id: str) -> bool:
    """Is DEF_ID a name a `case` pattern binds?"""
    where = step_ids.address(def_id)
    return where.kind == "a" and row_at(tables.flows.assigns, where.number)[ASSIGN_OP] == "case"


def block_end(tables: FileTables, first: int, last: int, case: bool = False) -> int | None:
    """The first line after the statement at lines FIRST..LAST indented less than its first
    line (where its block ends; a very large number at the end of the file); None when the
    statement binds only in part (see NOT_PLAIN) or its text cannot be read. For the header
    of a CASE (FIRST..LAST), the first line after it indented as much as the `case` or less:
    the end of its body."""
    ends = tables.block_ends
    if (first, case) in ends:
        return ends[first, case]
    found: int | None = None
    lines = tables.lines
    raw = lines.raw()
    if 0 < first <= len(raw):
        text = raw[first - 1]
        stripped = text.lstrip()
        indent = len(text) - len(stripped) + case  # a case's body is indented more than it
        if case or (not stripped.startswith(NOT_PLAIN) and b":=" not in stripped):
            found = 1 << 30
            for number in range(last + 1, len(raw) + 1):
                if 0 <= lines.indent(number - 1) < indent:
                    found = number
                    break
    ends[first, case] = found
    return found


def reaching(tables: FileTables, scope: str, defs: list[str], line: int) -> list[str]:
    """Of DEFS (bindings of a name in SCOPE before a read of it there at LINE, in order),
    those that may reach the read: one followed by a binding that always runs before the
    read (see tracer.graph.blocks) is overwritten, and a store at a constant key by a later
    store at that key that always runs before the read."""
    last = -1
    for d in defs:
        step = tables.steps[d]
        if (
            not step_ids.is_param(d)
            and tables.scope_of[d] == scope
            and step.line > last
            and rebinds(tables, d)
            and dominates(tables, d, line)
        ):
            last = step.line
    # An `if`/`else` binding in each branch overwrites what came before it.
    own = [d for d in defs if not step_ids.is_param(d) and tables.scope_of[d] == scope]
    last = max(last, covered_before(tables, own, line))
    kept = [d for d in defs if tables.steps[d].line >= last]
    # A store at a constant key is overwritten by a later store at that key (`d["k"] = b`).
    return [
        d
        for d in kept
        if (key := stored_key(tables, d)) is None
        or not any(
            stored_key(tables, e) == key
            and tables.steps[e].line > tables.steps[d].line
            and tables.scope_of[e] == scope
            and dominates(tables, e, line)
            for e in kept
        )
    ]


def covered_before(tables: FileTables, defs: list[str], line: int) -> int:
    """The first line of the latest `if` statement before LINE whose every branch (an `else`
    among them) binds in its own body one of DEFS (plain assignments replacing what the name
    held), when LINE comes after the whole statement and in the block that holds it: every
    binding before that line is overwritten for LINE. 0 when there is none."""
    branches: dict[int, set[int]] = {}  # an `if`'s first line -> its branches that bind
    for d in defs:
        step = tables.steps[d]
        if step.line >= line or not rebinds(tables, d) or binds_case(tables, d):
            continue
        if block_end(tables, step.line, step.end_line) is None:
            continue  # not a plain assignment
        own = indent_at(tables, step.line)
        if own is None or own[1].startswith(HEADERS):
            continue  # `else: x = v` on one line: in no branch's own body below its header
        found = branch_of(tables, step.line)
        if found is not None:
            branches.setdefault(found[0], set()).add(found[1])
    best = 0
    for first, binding in branches.items():
        chain = if_chain(tables, first)
        if chain is None or first <= best:
            continue
        headers, end, enclosing = chain
        if set(headers) <= binding and end <= line < enclosing:
            best = first
    return best


HEADERS = (b"if ", b"elif ", b"else", b"try", b"finally", b"except", b"for ", b"while ", b"with ")


def indent_at(tables: FileTables, number: int) -> tuple[int, bytes] | None:
    """The indentation and the bytes (stripped) of line NUMBER; None past the end."""
    raw = tables.lines.raw()
    if not 0 < number <= len(raw):
        return None
    text = raw[number - 1]
    body = text.lstrip()
    return len(text) - len(body), body


def branch_of(tables: FileTables, line: int) -> tuple[int, int] | None:
    """For a statement at LINE in the body of a branch of an `if` (not nested deeper): the
    first line of the `if` statement and of the branch's header."""
    if indent_at(tables, line) is None:
        return None
    number = header = tables.lines.parent(line - 1) + 1  # the header of its block
    above = indent_at(tables, header) if header else None
    if above is None:
        return None
    level, body = above
    if not body.startswith((b"if ", b"elif ", b"else:")):
        return None
    while not body.startswith(b"if "):
        found = indent_at(tables, number := number - 1)
        if found is None:
            return None
        upper, body = found
        if body and not body.startswith(b"#") and upper < level:
            return None
        if upper != level or not body:
            continue
        if not body.startswith((b"if ", b"elif ", b"else:")):
            return None
    return number, header


def if_chain(tables: FileTables, first: int) -> tuple[list[int], int, int] | None:
    """The headers of the `if` statement at line FIRST (`if`, each `elif`, the `else`), the
    first line after the statement, and the first line after the block holding it; None when
    it has no `else` (a path binds nothing)."""
    found = indent_at(tables, first)
    if found is None:
        return None
    level = found[0]
    headers = [first]
    number = first
    while (below := indent_at(tables, number := number + 1)) is not None:
        indent, body = below
        if not body or body.startswith(b"#") or indent > level:
            continue
        if indent == level and body.startswith((b"elif ", b"else:")):
            headers.append(number)
            continue
        break
    end = number  # the first line after the statement (or past the file's end)
    last = indent_at(tables, headers[-1])
    if last is None or not last[1].startswith(b"else:"):
        return None
    enclosing = end
    while (below := indent_at(tables, enclosing)) is not None:
        indent, body = below
        if body and not body.startswith(b"#") and indent < level:
            break
        enclosing += 1
    else:
        enclosing = 1 << 30
    return headers, end, enclosing


def rebinds(tables: FileTables, step_id: str) -> bool:
    """Does the binding STEP_ID replace what its name held? `d["k"] = v` keeps the rest of d."""
    where = step_ids.address(step_id)
    return where.kind != "a" or tables.flows.patterns.get(where.number, ("",))[0] != "item"


def stored_key(tables: FileTables, step_id: str) -> str | int | None:
    """The constant key the item store STEP_ID (`d["k"] = v`) puts its value at, else None."""
    where = step_ids.address(step_id)
    if where.kind != "a":
        return None
    pattern = tables.flows.patterns.get(where.number)
    if pattern is None or pattern[0] != "item":
        return None
    key = pattern[2]
    if isinstance(key, tuple) and key[:1] == ("const",) and isinstance(key[1], str | int):
        return key[1]
    return None
