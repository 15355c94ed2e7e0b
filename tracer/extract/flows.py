"""File -> FileFlows: calls, assignments, returns and reads, each tied to its scope."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import replace

from tree_sitter import Node

from tracer.extract.cases import case_bindings
from tracer.extract.facts import (
    MODULE_SCOPE,
    Arg,
    Assign,
    Call,
    FileFlows,
    FileSummary,
    Raise,
    Return,
    Shape,
    Target,
    Use,
    Value,
)
from tracer.extract.parse import Match, Parsed, matches_by_concern
from tracer.extract.values import (
    NOTHING,
    CallIds,
    constant_attribute,
    dotted,
    part_shape,
    value_of,
)

TUPLES = frozenset({"expression_list", "tuple", "pattern_list", "tuple_pattern", "list_pattern"})


class Scopes:
    """Innermost enclosing function of a byte offset."""

    def __init__(self, summary: FileSummary) -> None:
        functions = sorted(summary.functions, key=lambda f: f.start_byte)
        self.starts = [f.start_byte for f in functions]
        self.functions = functions

    def at(self, byte: int) -> str:
        # The latest-starting function that still contains BYTE is the innermost one.
        for i in range(bisect_right(self.starts, byte) - 1, -1, -1):
            function = self.functions[i]
            if function.end_byte > byte and function.start_byte < byte:
                return function.qualname
        return MODULE_SCOPE


def extract_flows(parsed: Parsed, summary: FileSummary) -> FileFlows:
    by_concern = matches_by_concern(FLOW_QUERIES, parsed.tree.root_node, CONCERNS)
    scopes = Scopes(summary)
    call_nodes = sorted(
        (m["reference.call"][0] for m in by_concern["calls"]), key=lambda n: n.start_byte
    )
    call_ids: CallIds = {(n.start_byte, n.end_byte): i for i, n in enumerate(call_nodes)}
    calls = tuple(call_fact(i, node, scopes, call_ids) for i, node in enumerate(call_nodes))
    returned = by_concern["returns"]
    setattrs = [n for n in call_nodes if constant_setattr(n) is not None]
    assigns, patterns = assignments(by_concern["assignments"], scopes, call_ids, setattrs)
    return FileFlows(
        calls=calls,
        assigns=tuple(assigns),
        returns=tuple(returns(returned, scopes, call_ids)),
        uses=tuple(uses(by_concern["conditions"], scopes, call_ids)),
        patterns=patterns,
        yields=frozenset(i for i, m in enumerate(returned) if m["return"][0].type == "yield"),
        raises=tuple(raises(by_concern["raises"], scopes, call_ids)),
        straight=frozenset(
            m["order.straight"][0].start_point[0] + 1 for m in by_concern["straight"]
        ),
    )


FLOW_QUERIES = ("calls", "assignments", "returns", "conditions", "raises")
CONCERNS = {
    "reference.call": "calls",
    "assign": "assignments",
    "assign.augmented": "assignments",
    "assign.for": "assignments",
    "assign.with": "assignments",
    "assign.walrus": "assignments",
    "assign.case": "assignments",
    "return": "returns",
    "use.condition": "conditions",
    "use.assert": "conditions",
    "raise": "raises",
    "order.straight": "straight",
}


def call_fact(index: int, node: Node, scopes: Scopes, call_ids: CallIds) -> Call:
    function = node.child_by_field_name("function")
    args: list[Arg] = []
    position = 0
    arguments = node.child_by_field_name("arguments")
    # `f(x for x in xs)`: the generator, unparenthesized, is the call's one argument.
    given = (
        [arguments]
        if arguments is not None and arguments.type == "generator_expression"
        else (arguments.named_children if arguments is not None else ())
    )
    for child in given:
        if child.type == "comment":
            continue
        keyword = None
        star = 0
        expr: Node | None = child
        if child.type == "keyword_argument":
            keyword = child.child_by_field_name("name").text.decode("utf-8", "replace")
            expr = child.child_by_field_name("value")
        elif child.type == "list_splat":
            star, expr = 1, child.named_children[0] if child.named_children else None
        elif child.type == "dictionary_splat":
            star, expr = 2, child.named_children[0] if child.named_children else None
        args.append(
            Arg(
                keyword=keyword,
                position=position if keyword is None and star == 0 else None,
                star=star,
                value=value_of(expr, call_ids),
                line=child.start_point[0] + 1,
                end_line=child.end_point[0] + 1,
            )
        )
        if keyword is None and star == 0:
            position += 1
    parent = node.parent
    callee = dotted(function) or ""
    receiver = NOTHING
    if not callee and function is not None and function.type == "attribute":
        receiver = value_of(function.child_by_field_name("object"), call_ids)
    if not callee:
        receiver = replace(receiver, shape=part_shape(function, call_ids))
    return Call(
        id=index,
        scope=scopes.at(node.start_byte),
        callee=callee,
        receiver=receiver,
        args=tuple(args),
        discarded=parent is not None and parent.type == "expression_statement",
        line=node.start_point[0] + 1,
        end_line=node.end_point[0] + 1,
    )


def targets(node: Node) -> list[Target]:
    """Assignment targets; tuple patterns give one target per position."""
    if node.type in TUPLES:
        elements = [c for c in node.named_children if c.type != "comment"]
        result = []
        for i, element in enumerate(elements):
            if element.type == "list_splat_pattern" and element.named_children:
                element = element.named_children[0]
            result.extend(Target(t.path, i) for t in targets(element))
        return result
    if node.type == "subscript":  # d[k] = v stores into d
        path = dotted(node.child_by_field_name("value"))
        return [Target(path, None)] if path else []
    path = dotted(node)
    return [Target(path, None)] if path else []


def items(node: Node, call_ids: CallIds) -> tuple[Value, ...]:
    if node.type not in ("expression_list", "tuple"):
        return ()
    return tuple(value_of(c, call_ids) for c in node.named_children if c.type != "comment")


def assignments(
    matched: list[Match], scopes: Scopes, call_ids: CallIds, setattrs: list[Node] = ()
) -> tuple[list[Assign], dict[int, Shape]]:
    """The assignments, in source order (a `case` gives one per name it binds; a statement
    `setattr(o, "x", v)` is `o.x = v`), and by index the whole target of those that store into
    more than names and one flat tuple of them (`a, (b, c) = ...`, `a, *b = ...`, `d["k"] =
    ...`)."""
    found: list[Assign] = []
    shapes: dict[int, Shape] = {}
    stores = sorted(
        [(statement_start(m), 0, m) for m in matched] + [(n.start_byte, 1, n) for n in setattrs],
        key=lambda item: item[:2],
    )
    for _, is_setattr, match in stores:
        if is_setattr:
            found.append(setattr_assignment(match, scopes, call_ids))  # type: ignore[arg-type]
            continue
        if "assign.case" in match:
            clause = match["assign.case"][0]
            found.extend(case_bindings(clause, scopes.at(clause.start_byte), call_ids))
            continue
        shape = pattern(match["assign.target"][0], call_ids)
        if shape is not None:
            shapes[len(found)] = shape
        found.append(assignment(match, scopes, call_ids))
    return found, shapes


def statement_start(match: Match) -> int:
    """Where the assignment (or `case` clause) MATCH starts."""
    if "assign.case" in match:
        return match["assign.case"][0].start_byte
    return next(match[k][0] for k in ASSIGN_OPS if k in match).start_byte


def constant_setattr(node: Node) -> tuple[str, Node] | None:
    """A statement `setattr(o, "x", v)`, O a dotted name and "x" a constant name: the
    attribute it stores into (`o.x`) and the value's node; None for any other call."""
    parent = node.parent
    if parent is None or parent.type != "expression_statement":
        return None
    found = constant_attribute(node, b"setattr", (3,))
    return (found[0], found[1][0]) if found is not None else None


def setattr_assignment(node: Node, scopes: Scopes, call_ids: CallIds) -> Assign:
    """`setattr(o, "x", v)` as the assignment `o.x = v` it is."""
    found = constant_setattr(node)
    assert found is not None
    target, value = found
    return Assign(
        scope=scopes.at(node.start_byte),
        targets=(Target(target, None),),
        value=value_of(value, call_ids),
        items=(),
        op="=",
        annotation=None,
        line=node.start_point[0] + 1,
        end_line=node.end_point[0] + 1,
    )


def assignment(match: Match, scopes: Scopes, call_ids: CallIds) -> Assign:
    statement = next(match[k][0] for k in ASSIGN_OPS if k in match)
    op = ASSIGN_OPS[next(k for k in ASSIGN_OPS if k in match)]
    value = match["assign.value"][0]
    while value.type == "assignment" and value.child_by_field_name("right") is not None:
        value = value.child_by_field_name("right")  # a = b = v: both take v
    if op == "+=":
        operator = statement.child_by_field_name("operator")
        op = operator.text.decode() if operator is not None else op
    return Assign(
        scope=scopes.at(statement.start_byte),
        targets=tuple(targets(match["assign.target"][0])),
        value=value_of(value, call_ids),
        items=items(value, call_ids),
        op=op,
        annotation=annotation_text(statement),
        line=statement.start_point[0] + 1,
        # A loop or `with` binds in its header: the span ends with the value.
        end_line=(statement if op not in ("for", "with") else value).end_point[0] + 1,
    )


def pattern(target: Node, call_ids: CallIds) -> Shape | None:
    """TARGET as a pattern (see `pattern_of`) where it is more than a name or a flat tuple of
    names and attributes; else None."""
    if target.type in TUPLES:
        if all(c.type in ("identifier", "attribute") for c in target.named_children):
            return None
    elif target.type != "subscript":
        return None
    return pattern_of(target, call_ids)


def pattern_of(node: Node, call_ids: CallIds) -> Shape | None:
    """What NODE, an assignment target, stores into, as a shape (see `Shape`)."""
    if node.type in TUPLES:
        parts = tuple(pattern_of(c, call_ids) for c in node.named_children if c.type != "comment")
        return ("tuple", parts)
    if node.type in ("list_splat_pattern", "list_splat") and node.named_children:
        return ("star", pattern_of(node.named_children[0], call_ids))
    return part_shape(node, call_ids)


def raises(matched: list[Match], scopes: Scopes, call_ids: CallIds) -> list[Raise]:
    found = []
    for match in matched:
        statement = match["raise"][0]
        found.append(
            Raise(
                scope=scopes.at(statement.start_byte),
                value=value_of(match["raise.value"][0], call_ids),
                line=statement.start_point[0] + 1,
            )
        )
    return found


def annotation_text(statement: Node) -> str | None:
    if statement.type != "assignment":
        return None
    type_node = statement.child_by_field_name("type")
    return type_node.text.decode("utf-8", "replace") if type_node is not None else None


ASSIGN_OPS = {
    "assign": "=",
    "assign.augmented": "+=",
    "assign.for": "for",
    "assign.with": "with",
    "assign.walrus": ":=",
}


def returns(matched: list[Match], scopes: Scopes, call_ids: CallIds) -> list[Return]:
    found = []
    for match in matched:
        statement = match["return"][0]
        value = match["return.value"][0]
        found.append(
            Return(
                scope=scopes.at(value.start_byte),  # a lambda's own, for its body
                value=value_of(value, call_ids),
                items=items(value, call_ids),
                line=statement.start_point[0] + 1,
                end_line=statement.end_point[0] + 1,
            )
        )
    return found


def uses(matched: list[Match], scopes: Scopes, call_ids: CallIds) -> list[Use]:
    nodes = sorted((next(iter(m.values()))[0] for m in matched), key=lambda n: n.start_byte)
    return [
        Use(
            scope=scopes.at(node.start_byte),
            value=value_of(node, call_ids),
            line=node.start_point[0] + 1,
            end_line=node.end_point[0] + 1,
        )
        for node in nodes
    ]
