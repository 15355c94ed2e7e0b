"""Log line templates read from the logging calls of a source: what each `logger.info(...)`
prints, as literal text and holes (the expressions whose values fill the line), so a log from
any release is read with that release's own formats instead of a hand-written regex."""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import lru_cache

from tree_sitter import Node

from tracer.extract.parse import matches, parse, text

NUMBER = r"[-+]?(?:\d[\d_,]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan"
NUMERIC_SPEC = re.compile(r"[-+ ]?#?0?\d*[,_]?(?:\.\d+)?[bdeEfFgGnoxX%]$")
PERCENT_FIELD = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?"
    r"(?P<conv>[diouxXeEfFgGcrsa%])"
)
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0"}
MAX_PARTS = 80


@dataclass(frozen=True, slots=True)
class Hole:
    expr: str  # the printed expression, as written: "k_size / GB", "self.max_total_num_tokens"
    spec: str  # its format spec: ".2f", "d", "" (printed with str())
    names: tuple[str, ...]  # dotted names it reads: ("k_size", "GB")
    measured_by: tuple[str, ...]  # functions whose result it prints (directly or via a local)
    simple: bool  # a name, an attribute or a call: the value is printed as it is
    # When the value is a difference `a - b` (written so, or assigned so in the function):
    minuend: str = ""
    subtrahend: str = ""
    minuend_measured_by: tuple[str, ...] = ()

    @property
    def numeric(self) -> bool:
        return bool(NUMERIC_SPEC.match(self.spec))


Part = str | tuple[str, ...] | Hole  # literal text, one of several literals, or a hole


@dataclass(frozen=True, slots=True)
class Template:
    file: str
    line: int
    symbol: str  # the function that logs: "ModelRunner.load_model"
    level: str
    parts: tuple[Part, ...]

    @property
    def holes(self) -> tuple[Hole, ...]:
        return tuple(p for p in self.parts if isinstance(p, Hole))

    @property
    def literal(self) -> str:
        """The longest literal piece: what a grep for this line looks for."""
        pieces = [p for p in self.parts if isinstance(p, str)]
        return max(pieces, key=len, default="")

    @property
    def pattern(self) -> re.Pattern[str]:
        return compile_parts(self.parts)

    def render(self, values: dict[str, object]) -> str:
        """The line this call prints when its holes hold VALUES (by expression); for tests and
        for showing a template. Literal alternatives print their first choice."""
        out: list[str] = []
        for part in self.parts:
            if isinstance(part, Hole):
                out.append(format(values[part.expr], part.spec))
            elif isinstance(part, tuple):
                out.append(part[0])
            else:
                out.append(part)
        return "".join(out)


@lru_cache(maxsize=4096)
def compile_parts(parts: tuple[Part, ...]) -> re.Pattern[str]:
    regex: list[str] = []
    for index, part in enumerate(parts):
        if isinstance(part, Hole):
            last = index == len(parts) - 1
            # A width in the spec pads a number with spaces (`{x:9.2f}`).
            body = rf"\s*(?:{NUMBER})" if part.numeric else (".*" if last else ".*?")
            regex.append(f"(?P<h{index}>{body})")
        elif isinstance(part, tuple):
            regex.append("(?:" + "|".join(re.escape(p) for p in part) + ")")
        else:
            # A line is matched stripped: so are the ends of its message.
            if index == 0:
                part = part.lstrip()
            if index == len(parts) - 1:
                part = part.rstrip()
            regex.append(re.escape(part))
    return re.compile("".join(regex), re.S)


# -- reading the templates of a file ------------------------------------------------------


def file_templates(path: str, source: bytes) -> list[Template]:
    """Every logging call of the file whose message can be read as a template."""
    root = parse(source).tree.root_node
    locals_cache: dict[int, Locals] = {}
    found: list[Template] = []
    for match in matches(("views/logging",), root):
        call = match["log.call"][0]
        message = match["log.message"][0]
        if message.type in ("keyword_argument", "list_splat", "dictionary_splat"):
            continue
        function = enclosing(call, "function_definition")
        assigned, differences = (
            local_calls(function, locals_cache) if function is not None else ({}, {})
        )
        reader = MessageReader(assigned, differences)
        parts = reader.read(message)
        if parts is None:
            continue
        extra = [a for a in call.child_by_field_name("arguments").named_children[1:]]
        extra = [a for a in extra if a.type not in ("keyword_argument", "dictionary_splat")]
        if extra and match["log.level"][0].text != b"print":
            parts = reader.percent(parts, extra)
        parts = merge(parts)
        if not parts or not any(isinstance(p, str) and p.strip() for p in parts):
            continue
        if len(parts) > MAX_PARTS:
            continue
        found.append(
            Template(
                file=path,
                line=call.start_point[0] + 1,
                symbol=symbol_of(call),
                level=text(match["log.level"][0]),
                parts=tuple(parts),
            )
        )
    return found


class MessageReader:
    """Turns a message expression into parts; None when it is not made of literals and
    holes (a message held in a variable, built by a call, ...)."""

    def __init__(
        self, assigned: dict[str, tuple[str, ...]], differences: dict[str, tuple[str, str]]
    ) -> None:
        self.assigned = assigned
        self.differences = differences

    def read(self, node: Node) -> list[Part] | None:
        handler = getattr(self, node.type, None)
        return handler(node) if handler is not None else None

    def parenthesized_expression(self, node: Node) -> list[Part] | None:
        inner = node.named_children
        return self.read(inner[0]) if len(inner) == 1 else None

    def concatenated_string(self, node: Node) -> list[Part] | None:
        parts: list[Part] = []
        for child in node.named_children:
            piece = self.read(child)
            if piece is None:
                return None
            parts.extend(piece)
        return parts

    def binary_operator(self, node: Node) -> list[Part] | None:
        left, operator, right = node.children[0], node.children[1], node.children[2]
        if operator.type == "+":
            a, b = self.read(left), self.read(right)
            return None if a is None or b is None else a + b
        if operator.type == "%":
            base = self.read(left)
            if base is None:
                return None
            values = right.named_children if right.type == "tuple" else [right]
            return self.percent(base, values)
        return None

    def conditional_expression(self, node: Node) -> list[Part] | None:
        choices = [self.read(c) for c in (node.named_children[0], node.named_children[2])]
        literals = []
        for choice in choices:
            if choice is None or any(not isinstance(p, str) for p in choice):
                return None
            literals.append("".join(choice))  # type: ignore[arg-type]
        return [tuple(dict.fromkeys(literals))]

    def call(self, node: Node) -> list[Part] | None:
        # "...{}...".format(a, b)
        function = node.child_by_field_name("function")
        if function is None or function.type != "attribute":
            return None
        if text(function.child_by_field_name("attribute")) != "format":
            return None
        base = self.read(function.child_by_field_name("object"))
        if base is None or any(not isinstance(p, str) for p in base):
            return None
        args = node.child_by_field_name("arguments").named_children
        positional = [a for a in args if a.type != "keyword_argument"]
        keywords = {
            text(a.child_by_field_name("name")): a.child_by_field_name("value")
            for a in args
            if a.type == "keyword_argument"
        }
        parts: list[Part] = []
        auto = 0
        try:
            fields = list(string.Formatter().parse("".join(base)))  # type: ignore[arg-type]
        except ValueError:
            return None
        for literal, field, spec, _ in fields:
            parts.append(literal)
            if field is None:
                continue
            if field == "":
                field = str(auto)
                auto += 1
            value = positional[int(field)] if field.isdigit() else keywords.get(field)
            if value is None or (field.isdigit() and int(field) >= len(positional)):
                return None
            parts.append(self.hole(value, spec or ""))
        return parts

    def string(self, node: Node) -> list[Part] | None:
        prefix = text(node.children[0]).lower() if node.children else ""
        formatted = "f" in prefix
        raw = "r" in prefix
        parts: list[Part] = []
        for child in node.children:
            if child.type == "string_content":
                parts.append(decode_content(child, formatted, raw))
            elif child.type == "interpolation":
                parts.extend(self.interpolation(child))
        return parts

    def interpolation(self, node: Node) -> list[Part]:
        expression = node.named_children[0]
        spec = ""
        documented = any(c.type == "=" for c in node.children)
        conversion = ""
        for child in node.children:
            if child.type == "format_specifier":
                spec = text(child)[1:]
            elif child.type == "type_conversion":
                conversion = text(child)
        if expression.type == "conditional_expression" and not documented and not conversion:
            choices = self.conditional_expression(expression)
            if choices is not None:
                return choices  # one of two literals: matched as either
        parts: list[Part] = []
        if documented:
            # {x=} prints "x=" then the repr of x (unless a spec or conversion says otherwise)
            between = node.text.decode("utf-8", "replace")[1:]
            parts.append(between[: between.index("=") + 1].lstrip())
        if conversion:
            spec = ""  # a converted value is printed as a string
        parts.append(self.hole(expression, spec))
        return parts

    def percent(self, base: list[Part], values: list[Node]) -> list[Part]:
        """Fill the %-fields of BASE's literals with holes for VALUES, in order."""
        parts: list[Part] = []
        queue = list(values)
        for part in base:
            if not isinstance(part, str):
                parts.append(part)
                continue
            last = 0
            for field in PERCENT_FIELD.finditer(part):
                parts.append(part[last : field.start()])
                last = field.end()
                if field["conv"] == "%":
                    parts.append("%")
                    continue
                value = queue.pop(0) if queue else None
                if value is None:
                    parts.append(field[0])
                    continue
                conv = field["conv"]
                precision = re.search(r"\.(\d+)", field[0])
                spec = ""
                if conv in "diu":
                    spec = "d"
                elif conv in "eEfFgG":
                    spec = (f".{precision[1]}" if precision else ".6") + conv
                parts.append(self.hole(value, spec))
            parts.append(part[last:])
        return parts

    def hole(self, node: Node, spec: str) -> Hole:
        names = tuple(dict.fromkeys(dotted_names(node)))
        simple = node.type in ("identifier", "attribute", "call")
        measured: list[str] = []
        for call in calls_in(node):
            measured.append(call)
        for name in names:
            measured.extend(self.assigned.get(name, ()))
        minuend, subtrahend = difference(node) or self.differences.get(text(node), ("", ""))
        return Hole(
            expr=text(node),
            spec=spec,
            names=names,
            measured_by=tuple(dict.fromkeys(measured)),
            simple=simple,
            minuend=minuend,
            subtrahend=subtrahend,
            minuend_measured_by=self.assigned.get(minuend, ()),
        )


def decode_content(node: Node, formatted: bool, raw: bool) -> str:
    value = text(node)
    if formatted:
        value = value.replace("{{", "{").replace("}}", "}")
    if raw:
        return value
    return re.sub(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)", unescape, value, flags=re.S)


def unescape(found: re.Match[str]) -> str:
    code = found[1]
    if code[0] in "xu" and len(code) > 1:
        return chr(int(code[1:], 16))
    if code == "\n":
        return ""  # a backslash-newline continues the string
    return ESCAPES.get(code, "\\" + code)


def merge(parts: list[Part]) -> list[Part]:
    """Adjacent literals joined, empty ones dropped."""
    out: list[Part] = []
    for part in parts:
        if isinstance(part, str):
            if not part:
                continue
            if out and isinstance(out[-1], str):
                out[-1] = out[-1] + part
                continue
        out.append(part)
    return out


def dotted_names(node: Node) -> list[str]:
    """Names and attribute chains the expression reads (`self.x`, `k_size`), outermost
    first; the function of a call is not a value read."""
    if node.type == "identifier":
        return [text(node)]
    if node.type == "attribute" and plain_attribute(node):
        return [text(node)]
    found: list[str] = []
    for child in node.named_children:
        if node.type == "call" and child == node.child_by_field_name("function"):
            obj = child.child_by_field_name("object") if child.type == "attribute" else None
            if obj is not None:
                found.extend(dotted_names(obj))
            continue
        if node.type == "keyword_argument" and child == node.child_by_field_name("name"):
            continue
        found.extend(dotted_names(child))
    return found


def plain_attribute(node: Node) -> bool:
    while node.type == "attribute":
        node = node.child_by_field_name("object")
    return node.type == "identifier"


def calls_in(node: Node) -> list[str]:
    """Last names of the functions called in NODE (`get_available_gpu_memory`)."""
    found: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "call":
            function = current.child_by_field_name("function")
            name = (
                function.child_by_field_name("attribute")
                if function.type == "attribute"
                else function
            )
            if name is not None and name.type == "identifier":
                found.append(text(name))
        stack.extend(current.named_children)
    return found


Locals = tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, str]]]


def difference(node: Node) -> tuple[str, str] | None:
    """(a, b) when NODE is `a - b` of two names or attributes, in parentheses or not."""
    while node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    if node.type != "binary_operator" or text(node.children[1]) != "-":
        return None
    left, right = node.children[0], node.children[2]
    if left.type in ("identifier", "attribute") and right.type in ("identifier", "attribute"):
        return text(left), text(right)
    return None


def local_calls(function: Node, cache: dict[int, Locals]) -> Locals:
    """In FUNCTION: NAME -> functions whose results NAME is assigned from (`after = f(...)`),
    and NAME -> (a, b) for `NAME = a - b`."""
    key = function.id
    if key in cache:
        return cache[key]
    assigned: dict[str, list[str]] = {}
    differences: dict[str, tuple[str, str]] = {}
    stack = [function.child_by_field_name("body")]
    while stack:
        current = stack.pop()
        if current is None or current.type in ("function_definition", "class_definition"):
            continue
        if current.type == "assignment":
            left = current.child_by_field_name("left")
            right = current.child_by_field_name("right")
            if left is not None and right is not None and left.type in ("identifier", "attribute"):
                if right.type == "call":
                    assigned.setdefault(text(left), []).extend(calls_in(right))
                elif (parts := difference(right)) is not None:
                    differences[text(left)] = parts
        stack.extend(current.named_children)
    result = ({name: tuple(dict.fromkeys(c)) for name, c in assigned.items()}, differences)
    cache[key] = result
    return result


def enclosing(node: Node, kind: str) -> Node | None:
    current = node.parent
    while current is not None and current.type != kind:
        current = current.parent
    return current


def symbol_of(node: Node) -> str:
    """`Class.method` (or `function`, or `<module>`) around NODE."""
    names: list[str] = []
    current = node.parent
    while current is not None:
        if current.type in ("function_definition", "class_definition"):
            names.append(text(current.child_by_field_name("name")))
        current = current.parent
    return ".".join(reversed(names)) or "<module>"
