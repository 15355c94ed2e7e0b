"""`match` statements (PEP 634): what each case's patterns bind, as assignments of the parts of
the subject they capture. `case {"k": [a, *rest]}:` over the subject s binds a as
`a = s["k"][0]` and rest as `rest = [*s["k"][1:]]` (but for the keys its siblings take), so
the flows follow them as they follow any assignment of an item."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tree_sitter import Node

from tracer.extract.facts import Assign, Shape, Target, Value
from tracer.extract.values import (
    NOTHING,
    CallIds,
    call_ref,
    part_shape,
    string_literal,
    value_of,
)

# An access into the subject, outermost first: ("key", K) an item (K a key's shape, None
# when not known); ("attr", NAME) an attribute (NAME None: one not known); ("tail", N, KEYS)
# what a `*rest` after N elements holds; ("rest", KEYS) what a `**rest` holds (the subject
# but for KEYS, the constant keys its siblings name).
Access = tuple[Any, ...]
Path = tuple[Access, ...]
# Builtin classes whose one positional pattern matches the subject itself (`case str(s):`).
SELF_MATCHING = frozenset(
    {
        "bool",
        "bytearray",
        "bytes",
        "dict",
        "float",
        "frozenset",
        "int",
        "list",
        "set",
        "str",
        "tuple",
    }
)


def case_bindings(clause: Node, scope: str, call_ids: CallIds) -> list[Assign]:
    """One assignment per name CLAUSE (a `case_clause`) binds, in source order, each of the
    part of its match statement's subject the name captures (op "case"). The span is the
    clause's header: `case PATTERN if GUARD:`."""
    statement = clause.parent.parent if clause.parent is not None else None
    if statement is None or statement.type != "match_statement":
        return []
    subject, shape = subject_of(statement.children_by_field_name("subject"), call_ids)
    patterns = [c for c in clause.named_children if c.type == "case_pattern"]
    if len(patterns) > 1:  # `case a, b:`: an open sequence pattern
        bound = sequence(patterns, ())
    else:
        bound = [found for p in patterns for found in captures(p, ())]
    header = [c for c in clause.children if c.type not in ("block", "comment")]
    end_line = max(c.end_point[0] for c in header) + 1 if header else clause.end_point[0] + 1
    return [
        Assign(
            scope=scope,
            targets=(Target(name, None),),
            value=bound_value(subject, shape, path),
            items=(),
            op="case",
            annotation=None,
            line=clause.start_point[0] + 1,
            end_line=end_line,
        )
        for name, path in bound
        if name.isidentifier()  # a name the parser's recovery left out is none
    ]


def subject_of(nodes: list[Node], call_ids: CallIds) -> tuple[Value, Shape | None]:
    """What the subject reads and its shape; `match a, b:` matches the tuple (a, b)."""
    if len(nodes) == 1:
        return value_of(nodes[0], call_ids), part_shape(nodes[0], call_ids)
    values = [value_of(n, call_ids) for n in nodes]
    refs = tuple(dict.fromkeys(ref for v in values for ref in v.refs))
    calls = tuple(call for v in values for call in v.calls)
    shape = ("tuple", tuple(part_shape(n, call_ids) for n in nodes))
    return Value(refs=refs, calls=calls, shape=shape), shape


def captures(node: Node, path: Path) -> Iterator[tuple[str, Path]]:
    """Each name the pattern NODE binds, with where in the subject (at PATH) it takes its
    value from."""
    kind = node.type
    if kind == "case_pattern":
        for child in node.named_children:
            yield from captures(child, path)
    elif kind == "dotted_name":
        if node.named_child_count == 1:  # a capture; `a.b` is a value pattern
            yield text(node), path
    elif kind == "as_pattern":
        for child in node.named_children:
            if child.type == "identifier":
                yield text(child), path
            else:
                yield from captures(child, path)
    elif kind == "union_pattern":  # each alternative binds the same names
        for child in node.named_children:
            yield from captures(child, path)
    elif kind in ("tuple_pattern", "list_pattern"):
        elements = [c for c in node.named_children if c.type != "comment"]
        grouped = kind == "tuple_pattern" and len(elements) == 1 and not has_comma(node)
        if grouped:  # `(p)` is p
            yield from captures(elements[0], path)
        else:
            yield from sequence(elements, path)
    elif kind == "dict_pattern":
        yield from mapping(node, path)
    elif kind == "class_pattern" and node.named_children:
        yield from class_captures(node, path)
    elif kind == "keyword_pattern" and node.named_children:
        name, *rest = node.named_children
        for child in rest:
            yield from captures(child, (*path, ("attr", text(name))))


def sequence(elements: list[Node], path: Path) -> list[tuple[str, Path]]:
    """`[a, b, *rest, c]`: each element at its index (after a star, at one not known), the
    star's name the elements after those before it."""
    found: list[tuple[str, Path]] = []
    star = next((i for i, e in enumerate(elements) if splat(e) is not None), None)
    for i, element in enumerate(elements):
        name = splat(element)
        if name is not None:
            if name.type == "identifier":
                before = tuple(range(i))
                found.append((text(name), (*path, ("tail", i, before))))
            continue
        key = ("const", i) if star is None or i < star else None
        found.extend(captures(element, (*path, ("key", key))))
    return found


def mapping(node: Node, path: Path) -> Iterator[tuple[str, Path]]:
    """`{"k": v, **rest}`: v at the key k, rest the subject but for the constant keys named."""
    keys: list[Shape | None] = []
    key_nodes: list[Node] = []
    for i, child in enumerate(node.children):
        field = node.field_name_for_child(i)
        if field == "key":
            key_nodes.append(child)
        elif field == "value":
            key = key_shape(key_nodes)
            keys.append(key)
            key_nodes = []
            yield from captures(child, (*path, ("key", key)))
        elif child.type == "splat_pattern":
            name = child.named_children[0] if child.named_children else None
            if name is not None and name.type == "identifier":
                named = tuple(k[1] for k in keys if k is not None)
                yield text(name), (*path, ("rest", named))


def class_captures(node: Node, path: Path) -> Iterator[tuple[str, Path]]:
    """`Point(x=a)` binds a to the subject's attribute x; `str(s)` binds s to the subject;
    another positional pattern binds to the attribute the class's `__match_args__` names,
    which another file may declare: one not known here."""
    klass, *arguments = node.named_children
    positional = [a for a in arguments if not keyword(a)]
    for argument in arguments:
        if keyword(argument) or (text(klass) in SELF_MATCHING and len(positional) == 1):
            yield from captures(argument, path)
        else:
            yield from captures(argument, (*path, ("attr", None)))


def keyword(argument: Node) -> bool:
    """Is ARGUMENT of a class pattern a keyword pattern (`x=p`)?"""
    inner = argument.named_children[0] if argument.named_children else argument
    return "keyword_pattern" in (argument.type, inner.type)


def splat(node: Node) -> Node | None:
    """The name (or `_`) a `*name` element of a sequence pattern binds; None for others."""
    if node.type == "case_pattern" and node.named_children:
        node = node.named_children[0]
    if node.type != "splat_pattern" or not node.children:
        return None
    return node.children[-1]


def key_shape(nodes: list[Node]) -> Shape | None:
    """A mapping pattern's key as a constant's shape (a string or an integer, `-1` too);
    None for a key not known (a value pattern, `None`, a float)."""
    if len(nodes) == 1 and nodes[0].type in ("string", "concatenated_string"):
        literal = string_literal(nodes[0])
        return ("const", literal) if literal is not None else None
    digits = nodes[-1].text if nodes and nodes[-1].type == "integer" else b""
    if digits.isdigit() and [n.type for n in nodes[:-1]] in ([], ["-"]):
        return ("const", -int(digits) if len(nodes) == 2 else int(digits))
    return None


def bound_value(subject: Value, shape: Shape | None, path: Path) -> Value:
    """What a name bound at PATH of the subject reads, as `value_of` reads the expression
    that takes it out (`s["k"][0]`, `s.x`, `s.x["k"]`): the subject whole where its shape is
    not known."""
    if ("attr", None) in path:
        return NOTHING  # bound, to a value nothing here names
    if not path or shape is None:
        return subject
    refs = subject.refs
    attrs = 0
    while attrs < len(path) and path[attrs][0] == "attr":
        attrs += 1
    names = [access[1] for access in path[:attrs]]
    if attrs and shape[0] == "name":  # `s.x.y` is a name, as an expression it is one
        shape = ("name", ".".join((shape[1], *names)))
        refs, path = (shape[1],), path[attrs:]
        if not path:
            return Value(refs=refs, calls=())
    elif attrs == len(path) and shape[0] == "call":  # `f().x`
        return Value(refs=(".".join((call_ref(shape[1]), *names)),), calls=())
    for access in path:
        shape = accessed(shape, access)
    if shape[0] == "attr":  # as `s["k"].x` reads: the item it is an attribute of
        while shape[0] == "attr":
            shape = shape[1]
        shape = ("parts", (shape,)) if shape[0] == "item" else None
    return Value(refs, subject.calls, subject.arithmetic, shape=shape)


def accessed(shape: Shape, access: Access) -> Shape:
    """The shape of what ACCESS takes out of SHAPE."""
    if access[0] == "key":
        return ("item", shape, access[1])
    if access[0] == "attr":
        return ("attr", shape, access[1])
    if access[0] == "tail":  # `[*s[n:]]` but for the indices before n
        _, start, before = access
        return ("list", (("star", ("item", ("except", shape, before), ("slice", start, None))),))
    return ("except", shape, access[1])


def has_comma(node: Node) -> bool:
    return any(child.type == "," for child in node.children)


def text(node: Node) -> str:
    return node.text.decode("utf-8", "replace")
