"""A small evaluator for the arithmetic of a formula step, over its tree-sitter expression:
numbers, names bound to values, + - * / // % ** << >>, unary minus, parentheses and a few
pure builtins (int, float, round, min, max, abs). Never `eval`: anything else is Unbound."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from tree_sitter import Node

from tracer.extract.parse import parse, text

BUILTINS: dict[str, Callable[..., float]] = {
    "int": lambda x: float(math.floor(x) if x >= 0 else math.ceil(x)),
    "float": float,
    "round": lambda x, n=0: float(round(x, int(n))),
    "min": min,
    "max": max,
    "abs": abs,
}
OPERATORS: dict[str, Callable[[float, float], float]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "//": lambda a, b: float(a // b),
    "%": lambda a, b: a % b,
    "**": lambda a, b: a**b,
    "<<": lambda a, b: float(int(a) << int(b)),
    ">>": lambda a, b: float(int(a) >> int(b)),
}
MAX_EXPONENT = 64


class Unbound(Exception):
    """The expression reads something that has no value (a name, a call, a subscript)."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


@dataclass(frozen=True, slots=True)
class Evaluated:
    value: float
    shown: str  # the expression with every bound name replaced by its value


Lookup = Callable[[str, Node], float | None]  # (text of a name or call) -> value or None


@lru_cache(maxsize=4096)
def first_statement(code: str) -> Node | None:
    """The first statement of CODE, parsed once: a solve evaluates the same steps hundreds of
    times."""
    root = parse(code.encode()).tree.root_node
    return root.named_children[0] if root.named_children else None


def statement_value(code: str) -> Node | None:
    """The expression whose value a statement produces: the right side of an assignment, the
    value of a return, the value of `name=value`, or the expression itself."""
    node = first_statement(code)
    if node is None:
        return None
    if node.type == "return_statement":
        return node.named_children[0] if node.named_children else None
    if node.type == "expression_statement":
        node = node.named_children[0]
    while node.type in ("assignment", "augmented_assignment"):
        right = node.child_by_field_name("right")
        if right is None:  # an annotation without a value
            return None
        if node.type == "augmented_assignment":
            return node
        node = right
    return node


def statement_target(code: str) -> str:
    """The name a statement binds (`rest_memory`, `self.max_total_num_tokens`), or ""."""
    node = first_statement(code)
    if node is None:
        return ""
    if node.type == "expression_statement":
        node = node.named_children[0]
    if node.type in ("assignment", "augmented_assignment"):
        return text(node.child_by_field_name("left"))
    return ""


def evaluate(node: Node, lookup: Lookup) -> Evaluated:
    """Value of NODE; names and calls that are not builtins are asked of LOOKUP."""
    kind = node.type
    if kind in ("integer", "float"):
        literal = text(node).replace("_", "").lower()
        value = float(int(literal, 0)) if kind == "integer" else float(literal)
        return Evaluated(value, text(node))
    if kind in ("identifier", "attribute", "subscript"):
        return bound(node, lookup)
    if kind == "parenthesized_expression":
        inner = evaluate(node.named_children[0], lookup)
        return Evaluated(inner.value, f"({inner.shown})")
    if kind == "unary_operator":
        operand = evaluate(node.named_children[0], lookup)
        sign = text(node.children[0])
        if sign == "-":
            return Evaluated(-operand.value, f"-{operand.shown}")
        if sign == "+":
            return operand
        raise Unbound(text(node))
    if kind == "binary_operator":
        operator = text(node.children[1])
        function = OPERATORS.get(operator)
        if function is None:
            raise Unbound(text(node))
        left = evaluate(node.children[0], lookup)
        right = evaluate(node.children[2], lookup)
        if operator == "**" and abs(right.value) > MAX_EXPONENT:
            raise Unbound(text(node))
        try:
            value = function(left.value, right.value)
        except (ZeroDivisionError, OverflowError, ValueError) as exc:
            raise Unbound(f"{text(node)} ({exc})") from exc
        return Evaluated(value, f"{left.shown} {operator} {right.shown}")
    if kind == "augmented_assignment":
        target = node.child_by_field_name("left")
        operator = text(node.children[1])[:-1]
        left = bound(target, lookup)
        right = evaluate(node.child_by_field_name("right"), lookup)
        function = OPERATORS.get(operator)
        if function is None:
            raise Unbound(text(node))
        return Evaluated(
            function(left.value, right.value), f"{left.shown} {operator} {right.shown}"
        )
    if kind == "call":
        return call(node, lookup)
    if kind == "conditional_expression":
        return conditional(node, lookup)
    raise Unbound(text(node))


def bound(node: Node, lookup: Lookup) -> Evaluated:
    value = lookup(text(node), node)
    if value is None:
        raise Unbound(text(node))
    return Evaluated(value, number(value))


def call(node: Node, lookup: Lookup) -> Evaluated:
    value = lookup(text(node), node)  # a call whose result is known (a step before)
    if value is not None:
        return Evaluated(value, number(value))
    function = text(node.child_by_field_name("function"))
    builtin = BUILTINS.get(function)
    if builtin is None:
        raise Unbound(text(node))
    args = [a for a in node.child_by_field_name("arguments").named_children]
    if any(a.type in ("keyword_argument", "list_splat", "dictionary_splat") for a in args):
        raise Unbound(text(node))
    values: list[Evaluated | None] = []
    for arg in args:
        try:
            values.append(evaluate(arg, lookup))
        except Unbound:
            if function not in ("min", "max"):
                raise
            values.append(None)  # a bound the log does not show is taken as absent
    known = [v for v in values if v is not None]
    if not known:
        raise Unbound(text(node))
    numbers = [v.value for v in known]
    result = numbers[0] if len(numbers) == 1 and function in ("min", "max") else builtin(*numbers)
    shown = ", ".join(v.shown if v else f"{text(a)}?" for v, a in zip(values, args, strict=True))
    return Evaluated(float(result), f"{function}({shown})")


def conditional(node: Node, lookup: Lookup) -> Evaluated:
    body, condition, other = node.named_children[:3]
    try:
        chosen = body if evaluate(condition, lookup).value else other
    except Unbound:
        chosen = body  # an unknown guard: take the branch that computes
    return evaluate(chosen, lookup)


def number(value: float) -> str:
    """A value as a person reads it: integers without a fraction, others to 4 significant
    decimals at most (values bound from a log keep their printed digits)."""
    if not math.isfinite(value) or abs(value) >= 1e15:
        return f"{value:g}"
    if value == int(value):
        return str(int(value))
    return f"{value:.4f}".rstrip("0").rstrip(".")


def solve(
    function: Callable[[float], float], target: float, low: float, high: float
) -> float | None:
    """X in [LOW, HIGH] with FUNCTION(X) closest to TARGET, by bisection (FUNCTION monotonic
    on the interval, as a formula of one unknown is); None if TARGET is out of its range."""
    f_low, f_high = function(low) - target, function(high) - target
    if f_low == 0:
        return low
    if f_high == 0:
        return high
    if (f_low > 0) == (f_high > 0):
        return None
    for _ in range(200):
        middle = (low + high) / 2
        f_middle = function(middle) - target
        if f_middle == 0 or high - low < 1e-12 * max(1.0, abs(middle)):
            return middle
        if (f_middle > 0) == (f_low > 0):
            low, f_low = middle, f_middle
        else:
            high = middle
    return (low + high) / 2
