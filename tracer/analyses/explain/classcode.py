"""A file's class and functions as the interpreter reads them, parsed once: the class's
methods and fields (with their defaults' nodes), the module's functions and constants; and the
small readers of nodes it shares (a literal's value, a node's text on one line)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from tracer.extract.parse import parse, text


class Unknown:
    """A value the code computes from something the interpretation cannot know."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what

    def __repr__(self) -> str:
        return f"Unknown({self.what!r})"


@dataclass(frozen=True)
class Program:
    """One file's class and functions, parsed once for every run over it."""

    klass: str
    methods: dict[str, Node]
    functions: dict[str, Node]
    constants: dict[str, Node]  # module-level NAME = literal
    fields: dict[str, Node]  # class-body field -> its default's node (None: no default)
    source: bytes


def program(source: bytes, klass: str) -> Program | None:
    """KLASS of SOURCE, or None when the file defines no such class."""
    root = parse(source).tree.root_node
    methods: dict[str, Node] = {}
    functions: dict[str, Node] = {}
    constants: dict[str, Node] = {}
    fields: dict[str, Node] = {}
    found = False
    for node in root.named_children:
        node = definition(node)
        if node.type == "function_definition":
            functions[text(node.child_by_field_name("name"))] = node
        elif node.type == "class_definition":
            if text(node.child_by_field_name("name")) != klass:
                continue
            found = True
            for member in node.child_by_field_name("body").named_children:
                member = definition(member)
                if member.type == "function_definition":
                    methods[text(member.child_by_field_name("name"))] = member
                elif member.type == "expression_statement" and member.named_children:
                    assign = member.named_children[0]
                    left = (
                        assign.child_by_field_name("left") if assign.type == "assignment" else None
                    )
                    if left is not None and left.type == "identifier":
                        fields[text(left)] = assign.child_by_field_name("right")
        elif node.type == "expression_statement" and node.named_children:
            assign = node.named_children[0]
            left = assign.child_by_field_name("left") if assign.type == "assignment" else None
            right = assign.child_by_field_name("right") if left is not None else None
            if left is not None and left.type == "identifier" and right is not None:
                constants[text(left)] = right
    return Program(klass, methods, functions, constants, fields, source) if found else None


def definition(node: Node) -> Node:
    if node.type == "decorated_definition":
        inner = node.child_by_field_name("definition")
        return inner if inner is not None else node
    return node


def literal(node: Node | None) -> object:
    """The value of a literal default (`0.88`, `"auto"`, `None`, `-1`, `(1, 2)`), else
    Unknown."""
    if node is None:
        return Unknown("no default")
    kind = node.type
    if kind == "integer":
        return int(text(node).replace("_", ""), 0)
    if kind == "float":
        return float(text(node).replace("_", ""))
    if kind in ("true", "false"):
        return kind == "true"
    if kind == "none":
        return None
    if kind in ("string", "concatenated_string"):
        return string_value(node)
    if kind == "unary_operator" and text(node.children[0]) == "-":
        inner = literal(node.named_children[0])
        return -inner if isinstance(inner, int | float) else Unknown(text(node))
    if kind in ("tuple", "list"):
        items = [literal(child) for child in node.named_children]
        if any(isinstance(item, Unknown) for item in items):
            return Unknown(text(node))
        return tuple(items)
    return Unknown(text(node))


def string_value(node: Node) -> object:
    parts = [node] if node.type == "string" else list(node.named_children)
    out = []
    for part in parts:
        if any(child.type == "interpolation" for child in part.named_children):
            return Unknown(text(part))
        out.append("".join(text(c) for c in part.named_children if c.type == "string_content"))
    return "".join(out)


def flat(node: Node) -> str:
    """NODE's source on one line, without the parentheses around the whole of it."""
    while node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    return re.sub(r"([(\[]) | ([)\]])", lambda m: m[1] or m[2], " ".join(text(node).split()))


def callee(node: Node | None) -> str:
    """The function a value is the result of (`get_capacity` in `x = get_capacity(d)`), or ""."""
    if node is None or node.type != "call":
        return ""
    return text(node.child_by_field_name("function")).rsplit(".", 1)[-1]


def line_of(node: Node) -> int:
    return node.start_point[0] + 1


def walk(node: Node) -> list[Node]:
    out = [node]
    for child in node.named_children:
        out.extend(walk(child))
    return out
