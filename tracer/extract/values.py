"""Expression -> Value: the references an expression reads and the calls it takes results from."""

from __future__ import annotations

from tree_sitter import Node

from tracer.extract.facts import Value

ARITHMETIC = frozenset({"+", "-", "*", "/", "//", "%", "**", "@"})
# Nodes whose value is fixed by the source: nothing to trace inside.
CONSTANTS = frozenset({"integer", "float", "true", "false", "none", "ellipsis", "comment"})
CallIds = dict[tuple[int, int], int]
NOTHING = Value(refs=(), calls=())


def dotted(node: Node | None) -> str | None:
    """`a.b.c` for a pure name/attribute chain, `super().f` for a super call, else None."""
    parts: list[str] = []
    while node is not None and node.type == "attribute":
        parts.append(node.child_by_field_name("attribute").text.decode("utf-8", "replace"))
        node = node.child_by_field_name("object")
    if node is None:
        return None
    if node.type == "identifier":
        parts.append(node.text.decode("utf-8", "replace"))
    elif node.type == "call" and node.child_by_field_name("function").text == b"super":
        parts.append("super()")
    else:
        return None
    return ".".join(reversed(parts))


def value_of(node: Node | None, call_ids: CallIds | None = None) -> Value:
    """What NODE reads. With CALL_IDS, a call contributes its id, not its arguments;
    without, arguments are read through (for defaults, where calls are not tracked)."""
    refs: list[str] = []
    calls: list[int] = []
    arithmetic = collect(node, call_ids, refs, calls) if node is not None else False
    literal = string_literal(node)
    if not refs and not calls and literal is None:
        return NOTHING  # most arguments are constants: one shared object pickles smaller
    return Value(
        refs=tuple(dict.fromkeys(refs)),
        calls=tuple(calls),
        arithmetic=arithmetic,
        literal=literal,
    )


def collect(node: Node, call_ids: CallIds | None, refs: list[str], calls: list[int]) -> bool:
    """Append what NODE reads to REFS and CALLS; True if an arithmetic operator combines values."""
    kind = node.type
    if kind in CONSTANTS:
        return False
    if kind == "identifier":
        refs.append(node.text.decode("utf-8", "replace"))
        return False
    if kind == "attribute":
        path = dotted(node)
        if path is not None:
            refs.append(path)
            return False
        # `f().x`: the attribute of a call's result, typed later by what f returns.
        attrs = []
        base = node
        while base.type == "attribute":
            attrs.append(base.child_by_field_name("attribute").text.decode("utf-8", "replace"))
            base = base.child_by_field_name("object")
        call_id = call_ids.get((base.start_byte, base.end_byte)) if call_ids else None
        if base.type == "call" and call_id is not None:
            refs.append(".".join([call_ref(call_id), *reversed(attrs)]))
            return False
        return collect(node.child_by_field_name("object"), call_ids, refs, calls)
    if kind == "call" and call_ids is not None:
        call_id = call_ids.get((node.start_byte, node.end_byte))
        if call_id is not None:
            calls.append(call_id)
            return False
    if kind == "subscript":  # the container's value, not the index
        return collect(node.child_by_field_name("value"), call_ids, refs, calls)
    if kind == "keyword_argument":
        return collect(node.child_by_field_name("value"), call_ids, refs, calls)
    if kind in ("lambda", "string_content", "escape_sequence"):
        return False
    arithmetic = False
    if kind == "binary_operator":
        operator = node.child_by_field_name("operator")
        arithmetic = operator is not None and operator.type in ARITHMETIC
    elif kind == "augmented_assignment":
        arithmetic = True
    for child in node.named_children:
        arithmetic = collect(child, call_ids, refs, calls) or arithmetic
    return arithmetic


def call_ref(call_id: int) -> str:
    """The name a call's result goes by in a reference: `<call7>.x` reads x of call 7's result."""
    return f"<call{call_id}>"


def call_of_ref(head: str) -> int | None:
    if head.startswith("<call") and head.endswith(">"):
        return int(head[5:-1])
    return None


def string_literal(node: Node | None) -> str | None:
    """The text of a plain string literal (no interpolation), else None."""
    if node is None:
        return None
    if node.type == "concatenated_string":
        pieces = [string_literal(child) for child in node.named_children]
        return None if None in pieces else "".join(pieces)  # type: ignore[arg-type]
    if node.type != "string":
        return None
    parts = []
    for child in node.named_children:
        if child.type == "interpolation":
            return None
        if child.type == "string_content":
            parts.append(child.text.decode("utf-8", "replace"))
    return "".join(parts)
