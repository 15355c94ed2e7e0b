"""Expressions of a class's construction, read over their tree-sitter nodes (the statements
are `interpret.py`'s): names, the fields of `self` and of the settings object, `and`/`or`/`not`,
comparisons, arithmetic, conditional expressions, calls of the class's methods and the module's
functions, a few pure builtins and string methods. What cannot be known without running the code
is `Unknown`. Never `eval`: the code is only read."""

from __future__ import annotations

import math
from collections.abc import Callable

from tree_sitter import Node

from tracer.analyses.explain.classcode import Program, Unknown, line_of, literal
from tracer.analyses.explain.interpvalues import SETTINGS, Assumed, Run, Surroundings, Val
from tracer.extract.parse import text


class ExpressionReader:
    """The expressions' part of a construction's reader (`interpret.Construction`): what it
    holds that they read, and the call of a function, which runs statements."""

    prog: Program
    run: Run
    flips: frozenset[int]
    around: Surroundings

    def call_function(self, node: Node, owner: str, args: list[Val], kwargs: dict[str, Val]) -> Val:
        """The value a call of the function defined at NODE returns (`Construction`'s)."""
        raise NotImplementedError

    def truth(self, value: Val, condition: Node) -> bool:
        """VALUE as a condition: one read from something unknown is recorded as assumed and
        taken as false, or true when its key is in the flips."""
        if isinstance(value.value, Unknown):
            key = condition.start_byte
            self.run.assumed.setdefault(
                key,
                Assumed(
                    key, line_of(condition), " ".join(text(condition).split()), value.value.what
                ),
            )
            return key in self.flips
        return bool(value.value)

    def value(self, node: Node | None, local: dict[str, Val]) -> Val:
        if node is None:
            return Val(Unknown("nothing"))
        kind = node.type
        handler = getattr(self, f"e_{kind}", None)
        if handler is not None:
            return handler(node, local)
        found = literal(node)
        return Val(found)

    def in_bag(self, node: Node, local: dict[str, Val]) -> bool:
        """NODE reads or writes a field of the settings object: `server_args.x`, or `args.x`
        after `args = self.server_args`."""
        receiver = node.child_by_field_name("object")
        named = text(receiver).rsplit(".", 1)[-1] == self.around.bag_name
        held = (
            receiver.type == "identifier"
            and text(receiver) in local
            and (local[text(receiver)].value is SETTINGS.value)
        )
        name = text(node.child_by_field_name("attribute"))
        return bool(self.around.bag_name) and (named or held) and name in self.around.bag

    def e_identifier(self, node: Node, local: dict[str, Val]) -> Val:
        name = text(node)
        if name in self.around.overrides:
            return Val(self.around.overrides[name], frozenset({name}))
        if name in local:
            return local[name]
        constant = self.prog.constants.get(name)
        if constant is not None:
            return Val(literal(constant))
        return Val(Unknown(name))

    def e_attribute(self, node: Node, local: dict[str, Val]) -> Val:
        receiver = node.child_by_field_name("object")
        name = text(node.child_by_field_name("attribute"))
        whole = " ".join(text(node).split())
        if whole in self.around.overrides:
            return Val(self.around.overrides[whole], frozenset({whole}))
        if self.in_bag(node, local):
            found = self.around.bag[name]
            return Val(found.value, found.deps | {name})
        if self.around.bag_name and " ".join(text(node).split()) in (
            f"self.{self.around.bag_name}",
        ):
            return SETTINGS
        if text(receiver) == "self":
            if name in self.run.writes:  # computed here: its name marks the way it came
                found = self.run.fields[name]
                return Val(found.value, found.deps | {name})
            if name in self.run.fields:
                return self.run.fields[name]
            return Val(Unknown(f"self.{name}"))
        if text(receiver) == self.prog.klass and name in self.prog.fields:
            return Val(literal(self.prog.fields[name]))
        base = self.value(receiver, local)
        return Val(Unknown(" ".join(text(node).split())), base.deps)

    def e_parenthesized_expression(self, node: Node, local: dict[str, Val]) -> Val:
        return self.value(node.named_children[0], local)

    def e_not_operator(self, node: Node, local: dict[str, Val]) -> Val:
        inner = self.value(node.child_by_field_name("argument"), local)
        if isinstance(inner.value, Unknown):
            return inner
        return Val(not inner.value, inner.deps)

    def e_boolean_operator(self, node: Node, local: dict[str, Val]) -> Val:
        left = self.value(node.child_by_field_name("left"), local)
        operator = text(node.child_by_field_name("operator"))
        decided = (not left.value) if operator == "and" else bool(left.value)
        if not isinstance(left.value, Unknown) and decided:
            return left  # short-circuit: `False and x`, `True or x`
        right = self.value(node.child_by_field_name("right"), local)
        deps = left.deps | right.deps
        if not isinstance(left.value, Unknown):
            return Val(right.value, deps)
        # Unknown on the left: the right alone decides `x and False`, `x or True`.
        if not isinstance(right.value, Unknown) and (
            (operator == "and" and not right.value) or (operator == "or" and right.value)
        ):
            return Val(right.value, right.deps)
        return Val(left.value, deps)

    def e_unary_operator(self, node: Node, local: dict[str, Val]) -> Val:
        inner = self.value(node.named_children[0], local)
        sign = text(node.children[0])
        if isinstance(inner.value, Unknown) or not isinstance(inner.value, int | float):
            return inner if isinstance(inner.value, Unknown) else Val(Unknown(text(node)))
        return Val(-inner.value if sign == "-" else inner.value, inner.deps)

    def e_binary_operator(self, node: Node, local: dict[str, Val]) -> Val:
        left = self.value(node.child_by_field_name("left"), local)
        right = self.value(node.child_by_field_name("right"), local)
        return self.operate(text(node.child_by_field_name("operator")), left, right)

    def operate(self, operator: str, left: Val, right: Val) -> Val:
        deps = left.deps | right.deps
        for side in (left, right):
            if isinstance(side.value, Unknown):
                return Val(side.value, deps)
        function = OPERATORS.get(operator)
        if function is None:
            return Val(Unknown(operator), deps)
        try:
            return Val(function(left.value, right.value), deps)
        except (ArithmeticError, TypeError, ValueError):
            return Val(Unknown(f"{left.value!r} {operator} {right.value!r}"), deps)

    def e_comparison_operator(self, node: Node, local: dict[str, Val]) -> Val:
        operands = [self.value(child, local) for child in node.named_children]
        operators = [text(c) for c in node.children if not c.is_named]
        deps = frozenset().union(*(o.deps for o in operands))
        result = True
        for operator, left, right in zip(operators, operands, operands[1:], strict=False):
            if isinstance(left.value, Unknown) or isinstance(right.value, Unknown):
                unknown = left.value if isinstance(left.value, Unknown) else right.value
                return Val(unknown, deps)
            try:
                result = COMPARISONS[" ".join(operator.split())](left.value, right.value)
            except (TypeError, KeyError):
                return Val(Unknown(" ".join(text(node).split())), deps)
            if not result:
                return Val(False, deps)
        return Val(result, deps)

    def e_conditional_expression(self, node: Node, local: dict[str, Val]) -> Val:
        body, condition, other = node.named_children[:3]
        test = self.value(condition, local)
        chosen = body if self.truth(test, condition) else other
        value = self.value(chosen, local)
        return Val(value.value, value.deps | test.deps)

    def e_list(self, node: Node, local: dict[str, Val]) -> Val:
        items = [self.value(child, local) for child in node.named_children]
        deps = frozenset().union(*(i.deps for i in items))
        unknown = next((i.value for i in items if isinstance(i.value, Unknown)), None)
        return Val(unknown if unknown is not None else tuple(i.value for i in items), deps)

    e_tuple = e_list
    e_set = e_list

    def e_call(self, node: Node, local: dict[str, Val]) -> Val:
        function = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        args: list[Val] = []
        kwargs: dict[str, Val] = {}
        for arg in arguments.named_children if arguments is not None else []:
            if arg.type == "keyword_argument":
                kwargs[text(arg.child_by_field_name("name"))] = self.value(
                    arg.child_by_field_name("value"), local
                )
            elif arg.type in ("list_splat", "dictionary_splat"):
                args.append(Val(Unknown(text(arg))))
            else:
                args.append(self.value(arg, local))
        name = text(function)
        if function.type == "attribute":
            receiver = function.child_by_field_name("object")
            method = text(function.child_by_field_name("attribute"))
            if text(receiver) in ("self", self.prog.klass) and method in self.prog.methods:
                return self.call_function(self.prog.methods[method], self.prog.klass, args, kwargs)
            base = self.value(receiver, local)
            if isinstance(base.value, str) and method in STRING_METHODS and not kwargs:
                known = [a.value for a in args]
                if not any(isinstance(a, Unknown) for a in known):
                    return Val(STRING_METHODS[method](base.value, *known), base.deps)
            return Val(Unknown(f"{' '.join(text(node).split())} (line {line_of(node)})"), base.deps)
        if name in BUILTINS and not kwargs:
            return builtin(name, args, node)
        if name in self.prog.functions:
            return self.call_function(self.prog.functions[name], "", args, kwargs)
        return Val(Unknown(f"{' '.join(text(node).split())} (line {line_of(node)})"))


def builtin(name: str, args: list[Val], node: Node) -> Val:
    deps = frozenset().union(*(a.deps for a in args))
    values = [a.value for a in args]
    unknown = next((v for v in values if isinstance(v, Unknown)), None)
    if unknown is not None:
        return Val(unknown, deps)
    if name in ("min", "max") and len(values) == 1 and isinstance(values[0], tuple):
        values = list(values[0])
    try:
        return Val(BUILTINS[name](*values), deps)
    except (ArithmeticError, TypeError, ValueError):
        return Val(Unknown(" ".join(text(node).split())), deps)


OPERATORS: dict[str, Callable[[object, object], object]] = {
    "+": lambda a, b: a + b,  # type: ignore[operator]
    "-": lambda a, b: a - b,  # type: ignore[operator]
    "*": lambda a, b: a * b,  # type: ignore[operator]
    "/": lambda a, b: a / b,  # type: ignore[operator]
    "//": lambda a, b: a // b,  # type: ignore[operator]
    "%": lambda a, b: a % b,  # type: ignore[operator]
    "**": lambda a, b: a**b if abs(b) <= 64 else math.nan,  # type: ignore[operator,arg-type]
    "<<": lambda a, b: int(a) << int(b),  # type: ignore[call-overload]
    ">>": lambda a, b: int(a) >> int(b),  # type: ignore[call-overload]
}
COMPARISONS: dict[str, Callable[[object, object], bool]] = {
    "<": lambda a, b: a < b,  # type: ignore[operator]
    "<=": lambda a, b: a <= b,  # type: ignore[operator]
    ">": lambda a, b: a > b,  # type: ignore[operator]
    ">=": lambda a, b: a >= b,  # type: ignore[operator]
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "is": lambda a, b: a is b if a is None or b is None else a == b,
    "is not": lambda a, b: a is not b if a is None or b is None else a != b,
    "in": lambda a, b: a in b,  # type: ignore[operator]
    "not in": lambda a, b: a not in b,  # type: ignore[operator]
}
BUILTINS: dict[str, Callable[..., object]] = {
    "int": int,
    "float": float,
    "round": round,
    "min": min,
    "max": max,
    "abs": abs,
    "len": len,
    "bool": bool,
}
STRING_METHODS: dict[str, Callable[..., object]] = {
    "lower": str.lower,
    "upper": str.upper,
    "strip": str.strip,
    "startswith": str.startswith,
    "endswith": str.endswith,
}
