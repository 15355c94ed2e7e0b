"""Expression -> Value: the references an expression reads and the calls it takes results from."""

from __future__ import annotations

from tree_sitter import Node

from tracer.extract.facts import Shape, Value

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
    shape = shape_of(node, call_ids) if call_ids is not None else None
    if shape is None and refs and call_ids is not None and node is not None:
        shape = parts_of(node, call_ids)
    if not refs and not calls and literal is None and shape is None:
        return NOTHING  # most arguments are constants: one shared object pickles smaller
    return Value(
        refs=tuple(dict.fromkeys(refs)),
        calls=tuple(calls),
        arithmetic=arithmetic,
        literal=literal,
        shape=shape,
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
    if kind == "call" and (read := constant_getattr(node)) is not None:
        refs.append(read[0])  # `getattr(o, "x")` reads `o.x` (or its default)
        return collect(read[1], call_ids, refs, calls) if read[1] is not None else False
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
    if kind == "conditional_expression" and (branch := live_branch(node)) is not None:
        return collect(branch, call_ids, refs, calls)
    arithmetic = False
    if kind == "binary_operator":
        operator = node.child_by_field_name("operator")
        arithmetic = operator is not None and operator.type in ARITHMETIC
    elif kind == "augmented_assignment":
        arithmetic = True
    for child in node.named_children:
        arithmetic = collect(child, call_ids, refs, calls) or arithmetic
    return arithmetic


def constant_getattr(node: Node) -> tuple[str, Node | None] | None:
    """`getattr(o, "x")` and `getattr(o, "x", default)`, O a dotted name and "x" a constant
    name: the attribute it reads (`o.x`) and the default's node; None for any other call."""
    found = constant_attribute(node, b"getattr", (2, 3))
    if found is None:
        return None
    attribute, rest = found
    return attribute, rest[0] if rest else None


def constant_attribute(
    node: Node, function_name: bytes, counts: tuple[int, ...]
) -> tuple[str, list[Node]] | None:
    """A call `FUNCTION_NAME(o, "x", ...)` given COUNTS positional arguments (no keyword, no
    splat), O a dotted name and "x" a constant name: the attribute `o.x` and the arguments
    after the name; None for any other call."""
    function = node.child_by_field_name("function")
    arguments = node.child_by_field_name("arguments")
    if function is None or function.text != function_name or arguments is None:
        return None
    given = [c for c in arguments.named_children if c.type != "comment"]
    if len(given) not in counts or any(
        c.type in ("keyword_argument", "list_splat", "dictionary_splat") for c in given
    ):
        return None
    base, name = dotted(given[0]), string_literal(given[1])
    if base is None or name is None or not name.isidentifier():
        return None
    return f"{base}.{name}", given[2:]


def live_branch(node: Node) -> Node | None:
    """The branch a conditional expression `a if C else b` takes when C is a constant whose
    truth Python knows without running anything (`True`, `None`, a number, a string
    literal); None otherwise."""
    parts = [child for child in node.named_children if child.type != "comment"]
    if len(parts) != 3:
        return None
    body, condition, alternative = parts
    while condition.type == "parenthesized_expression" and condition.named_children:
        condition = condition.named_children[0]
    truth = constant_truth(condition)
    if truth is None:
        return None
    return body if truth else alternative


def constant_truth(node: Node) -> bool | None:
    """The truth of a constant expression NODE, None when it is no constant."""
    kind, text = node.type, node.text.replace(b"_", b"")
    if kind in ("true", "false", "none"):
        return kind == "true"
    try:
        if kind == "integer":
            return int(text, 0) != 0
        if kind == "float":
            return float(text) != 0
    except ValueError:
        return None
    literal = string_literal(node) if kind == "string" else None
    return None if literal is None else bool(literal)


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


# Expressions whose structure a Value keeps as its shape (see `Shape`); what other
# expressions hold is told by their references and calls alone.
COMPREHENSIONS = frozenset({"list_comprehension", "set_comprehension", "generator_expression"})
SHAPED = frozenset(
    {"dictionary", "list", "tuple", "expression_list", "set", "subscript", "lambda", "integer"}
    | {"binary_operator"}  # a dict union: see dict_union
    | COMPREHENSIONS
    | {"dictionary_comprehension"}
)


def shape_of(node: Node | None, call_ids: CallIds) -> Shape | None:
    """NODE's shape when it is a display, a subscript, a lambda or an integer (else None:
    its references and calls say what it holds)."""
    while node is not None and node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    if node is not None and node.type == "conditional_expression":
        node = live_branch(node)
    if node is None or node.type not in SHAPED:
        return None
    return part_shape(node, call_ids)


def part_shape(node: Node | None, call_ids: CallIds) -> Shape | None:
    """The shape of NODE within a shaped expression: a dotted name, a call's result, a
    constant, a display, an item or attribute of another shape, a lambda; None for the rest."""
    while node is not None and node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    if node is None:
        return None
    kind = node.type
    path = dotted(node) if kind in ("identifier", "attribute") else None
    if path is not None:
        return ("name", path)
    if kind == "call":
        call_id = call_ids.get((node.start_byte, node.end_byte))
        return ("call", call_id) if call_id is not None else None
    if kind == "integer" or (kind == "unary_operator" and node.text[:1] == b"-"):
        text = node.text.decode("ascii", "replace").replace(" ", "")
        digits = text.removeprefix("-")
        return ("const", int(text)) if digits.isdigit() else None
    literal = string_literal(node)
    if literal is not None:
        return ("const", literal)
    if kind == "dictionary":
        entries = []
        for child in node.named_children:
            if child.type == "pair":
                key = part_shape(child.child_by_field_name("key"), call_ids)
                entries.append((key, part_shape(child.child_by_field_name("value"), call_ids)))
            elif child.type == "dictionary_splat" and child.named_children:
                entries.append((None, ("star", part_shape(child.named_children[0], call_ids))))
        return ("dict", tuple(entries))
    if kind in ("list", "tuple", "expression_list", "set"):
        elements = tuple(
            ("star", part_shape(c.named_children[0], call_ids))
            if c.type == "list_splat" and c.named_children
            else part_shape(c, call_ids)
            for c in node.named_children
            if c.type != "comment"
        )
        return ("tuple" if kind == "expression_list" else kind, elements)
    if kind == "subscript":
        container = part_shape(node.child_by_field_name("value"), call_ids)
        key = node.child_by_field_name("subscript")
        return ("item", container, slice_shape(key) or part_shape(key, call_ids))
    if kind == "attribute":
        obj = part_shape(node.child_by_field_name("object"), call_ids)
        name = node.child_by_field_name("attribute").text.decode("utf-8", "replace")
        return ("attr", obj, name)
    if kind == "lambda":
        return ("lambda", node.start_byte)
    if kind == "binary_operator":
        return dict_union(node, call_ids)
    if kind in COMPREHENSIONS:
        element = part_shape(node.child_by_field_name("body"), call_ids)
        return ("each", element) if element is not None and element[0] != "name" else None
    if kind == "dictionary_comprehension":
        return attributes_by_name(node)
    return None


def dict_union(node: Node, call_ids: CallIds) -> Shape | None:
    """`a | {"k": v}` where a side is a dict display (or such a union): the dict `{**a, "k":
    v}` it makes (PEP 584), the right side's entries after the left's; None for any other
    binary operator (`|` of two names may be of sets, or of numbers' bits)."""
    operator = node.child_by_field_name("operator")
    if operator is None or operator.type != "|":
        return None
    sides = [part_shape(node.child_by_field_name(f), call_ids) for f in ("left", "right")]
    if not any(side is not None and side[0] == "dict" for side in sides):
        return None
    entries: list[tuple[Shape | None, Shape | None]] = []
    for side in sides:
        if side is not None and side[0] == "dict":
            entries += side[1]
        else:
            entries.append((None, ("star", side)))
    return ("dict", tuple(entries))


def attributes_by_name(node: Node) -> Shape | None:
    """`{k: getattr(o, k) for k in names}` (a default beside or not, conditions after): each
    attribute of O at the key of its own name, as `vars(o)` has them: ("as_keys", O's shape);
    None for another dict comprehension."""
    pair = node.child_by_field_name("body")
    if pair is None or pair.type != "pair":
        return None
    key, value = pair.child_by_field_name("key"), pair.child_by_field_name("value")
    if key is None or key.type != "identifier" or value is None or value.type != "call":
        return None
    function = value.child_by_field_name("function")
    arguments = value.child_by_field_name("arguments")
    if function is None or function.text != b"getattr" or arguments is None:
        return None
    given = [c for c in arguments.named_children if c.type != "comment"]
    if len(given) not in (2, 3) or given[1].type != "identifier" or given[1].text != key.text:
        return None
    base = dotted(given[0])
    loops = [c for c in node.named_children if c.type == "for_in_clause"]
    targets = [c.child_by_field_name("left") for c in loops]
    if base is None or not any(t is not None and t.text == key.text for t in targets):
        return None
    return ("as_keys", ("name", base))


def parts_of(node: Node, call_ids: CallIds) -> Shape | None:
    """("parts", items) for an expression that is no display (`conf["fraction"] * 100`):
    the items it reads out of names at constant keys or indices (`conf["fraction"]`), each as
    its shape, of the names it reads only so; None when there are none."""
    items: list[Shape] = []
    whole: set[str] = set()
    pending = [node]
    while pending:
        part = pending.pop()
        kind = part.type
        if kind in CONSTANTS or kind in ("lambda", "string", "concatenated_string"):
            continue
        if kind in ("identifier", "attribute"):
            path = dotted(part)
            if path is not None:
                whole.add(path)
                continue
        if kind == "call" and (part.start_byte, part.end_byte) in call_ids:
            continue
        if kind == "conditional_expression" and (branch := live_branch(part)) is not None:
            pending.append(branch)
            continue
        if kind == "subscript":
            shape = part_shape(part, call_ids)
            root = shape
            while root is not None and root[0] == "item":
                root = root[1]
            if root is not None and root[0] == "name":
                items.append(shape)  # type: ignore[arg-type]
                continue
        pending.extend(part.named_children)
    kept = tuple(item for item in items if item_root(item) not in whole)
    return ("parts", kept) if kept else None


def item_root(shape: Shape) -> str:
    """The name an item shape (`d["a"]["b"]`) reads its items out of."""
    while shape[0] == "item":
        shape = shape[1]
    return shape[1]


def slice_shape(node: Node | None) -> Shape | None:
    """`[lo:hi]` with constant bounds as ("slice", lo, hi) (None for a bound left out)."""
    if node is None or node.type != "slice":
        return None
    bounds: list[int | None] = [None, None]
    at = 0
    for child in node.children:
        if child.type == ":":
            at += 1
        elif child.type == "integer" and at < 2 and child.text.isdigit():
            bounds[at] = int(child.text)
        elif child.is_named:
            return None
    return ("slice", bounds[0], bounds[1])
