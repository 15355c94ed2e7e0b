"""A class's own construction read statement by statement: `__post_init__` (else `__init__`)
interpreted over its tree-sitter tree, with the fields' starting values given, the methods
of the class and the functions of its module it calls followed in, and what cannot be known
without running the code (a device query, a model's config) left `Unknown`. Assignments,
if/elif/else, `and`/`or`/`not`, comparisons, arithmetic and a few pure builtins are read;
loops are not run (what they assign becomes unknown). Never `eval`: the code is only read."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Node

from tracer.analyses.explain.classcode import (
    Program,
    Unknown,
    callee,
    flat,
    line_of,
    literal,
    walk,
)
from tracer.extract.parse import text

MAX_DEPTH = 12  # calls followed into one another
MAX_STATEMENTS = 50_000  # statements read in one construction
ENTRIES = ("__post_init__", "__init__")


@dataclass(frozen=True, slots=True)
class Val:
    value: object  # int, float, str, bool, None, a tuple of them, or Unknown
    deps: frozenset[str] = frozenset()  # the inputs it is computed from

    @property
    def known(self) -> bool:
        return not isinstance(self.value, Unknown)


@dataclass(frozen=True, slots=True)
class Decision:
    """A condition that chose the branch a statement is on: it gave TAKEN (an `else` is on
    its chain's last condition being false)."""

    line: int
    condition: str
    taken: bool


@dataclass(frozen=True, slots=True)
class Write:
    field: str
    value: Val
    line: int
    function: str  # Class.method
    code: str  # the right side
    branch: tuple[Decision, ...]


@dataclass(frozen=True, slots=True)
class Assumed:
    """A condition read from something unknown: taken as false unless flipped."""

    key: int  # its start byte in the file
    line: int
    condition: str
    unknown: str


@dataclass
class Run:
    fields: dict[str, Val]
    writes: dict[str, Write] = field(default_factory=dict)  # the last write of each field
    history: list[Write] = field(default_factory=list)  # every write, in order
    assumed: dict[int, Assumed] = field(default_factory=dict)
    statements: int = 0
    complete: bool = True  # False: stopped at MAX_STATEMENTS


# What a local assigned by a call is worth when the code cannot know it: (name, call) -> value.
External = Callable[[str, str, int], Val | None]


class Returned(Exception):
    def __init__(self, value: Val) -> None:
        self.value = value


class Raised(Exception):
    pass


class TooLong(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Fit:
    """A value the log prints by name (`max_cache_size: 85292`), taken where the code's
    expression for it reads an unknown (UNKNOWN, which the value lets one solve)."""

    name: str
    line: int
    expression: Node
    local: dict[str, Val]
    value: Val
    unknown: str


SETTINGS = Val(Unknown("the settings object"))  # what `self.server_args` holds, in a method


def nothing_logged(name: str) -> Val | None:
    return None


@dataclass
class Surroundings:
    """What a method sees beyond its own class: the settings object by the name the code
    gives it (`server_args` for ServerArgs), with its fields' values; the values the log
    prints by name; values given for unknown expressions (by their text)."""

    bag_name: str = ""
    bag: dict[str, Val] = field(default_factory=dict)
    logged: Callable[[str], Val | None] = nothing_logged
    overrides: dict[str, object] = field(default_factory=dict)
    fits: list[Fit] = field(default_factory=list)


class Construction:
    """One run of a class's construction (see `construct`), or of one of its methods."""

    def __init__(
        self,
        prog: Program,
        fields: dict[str, Val],
        external: External,
        flips: frozenset[int],
        around: Surroundings | None = None,
    ) -> None:
        self.prog = prog
        self.run = Run(dict(fields))
        self.external = external
        self.flips = flips
        self.around = around or Surroundings()
        self.control: list[tuple[Decision, frozenset[str]]] = []
        self.stack: list[str] = []

    # -- functions ---------------------------------------------------------------------------

    def call_function(self, node: Node, owner: str, args: list[Val], kwargs: dict[str, Val]) -> Val:
        name = text(node.child_by_field_name("name"))
        qualified = f"{owner}.{name}" if owner else name
        if len(self.stack) >= MAX_DEPTH or qualified in self.stack:
            return Val(Unknown(f"{qualified}() (not followed further)"))
        local: dict[str, Val] = {}
        params = [p for p in node.child_by_field_name("parameters").named_children]
        if owner:
            params = params[1:]  # self
        queue = list(args)
        for param in params:
            pname = text(param.child_by_field_name("name") or param)
            if param.type in ("list_splat_pattern", "dictionary_splat_pattern"):
                local[pname.lstrip("*")] = Val(Unknown(pname))
                continue
            if queue:
                local[pname] = queue.pop(0)
            elif pname in kwargs:
                local[pname] = kwargs[pname]
            else:
                default = param.child_by_field_name("value")
                local[pname] = self.value(default, {}) if default else Val(Unknown(pname))
        self.stack.append(qualified)
        saved, self.control = self.control, []
        try:
            self.block(node.child_by_field_name("body"), local)
            result = Val(None)
        except Returned as returned:
            result = returned.value
        except Raised:
            result = Val(Unknown(f"{qualified}() raises"))
        finally:
            self.stack.pop()
            self.control = saved
        return result

    # -- statements --------------------------------------------------------------------------

    def block(self, node: Node | None, local: dict[str, Val]) -> None:
        if node is None:
            return
        for child in node.named_children:
            self.statement(child, local)

    def statement(self, node: Node, local: dict[str, Val]) -> None:
        self.run.statements += 1
        if self.run.statements > MAX_STATEMENTS:
            raise TooLong
        handler = getattr(self, f"s_{node.type}", None)
        if handler is not None:
            handler(node, local)
        elif node.type in LOOPS:
            self.havoc(node, local, f"set in the loop at line {line_of(node)}")

    def s_expression_statement(self, node: Node, local: dict[str, Val]) -> None:
        inner = node.named_children[0] if node.named_children else None
        if inner is None:
            return
        if inner.type == "assignment":
            self.assignment(inner, local)
        elif inner.type == "augmented_assignment":
            left = inner.child_by_field_name("left")
            operator = text(inner.children[1])[:-1]
            combined = self.operate(
                operator,
                self.value(left, local),
                self.value(inner.child_by_field_name("right"), local),
            )
            self.store(left, combined, local, inner)
        elif inner.type == "call":
            self.value(inner, local)

    def assignment(self, node: Node, local: dict[str, Val]) -> None:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        if right is None:
            return
        if right.type == "assignment":  # a = b = value
            self.assignment(right, local)
            right = right.child_by_field_name("right")
        if left.type == "identifier":
            given = self.external(text(left), callee(right), line_of(node))
            if given is not None:
                local[text(left)] = given
                return
        value = self.value(right, local)
        if not value.known and left.type in ("identifier", "attribute"):
            value = self.fitted(left, right, local, value)
        if left.type == "identifier" and right.type == "call" and not value.known:
            assert isinstance(value.value, Unknown)
            value = Val(Unknown(f"{text(left)} = {value.value.what}"), value.deps)
        if left.type in ("pattern_list", "tuple_pattern"):
            targets = left.named_children
            items = value.value if isinstance(value.value, tuple) else None
            for index, target in enumerate(targets):
                part = (
                    Val(items[index], value.deps)
                    if items is not None and len(items) == len(targets)
                    else Val(Unknown(text(right)), value.deps)
                )
                self.store(target, part, local, node)
            return
        self.store(left, value, local, node)

    def fitted(self, left: Node, right: Node, local: dict[str, Val], value: Val) -> Val:
        """An unknown value the log prints by its name: the logged value, kept as a Fit."""
        name = text(left.child_by_field_name("attribute") if left.type == "attribute" else left)
        logged = self.around.logged(name)
        if logged is None:
            return value
        assert isinstance(value.value, Unknown)
        self.around.fits.append(
            Fit(name, line_of(left), right, dict(local), logged, value.value.what)
        )
        return Val(logged.value, logged.deps | value.deps)

    def store(self, target: Node, value: Val, local: dict[str, Val], at: Node) -> None:
        deps = value.deps.union(*(d for _, d in self.control))
        value = Val(value.value, deps)
        if target.type == "identifier":
            local[text(target)] = value
        elif target.type == "attribute" and self.in_bag(target, local):
            self.around.bag[text(target.child_by_field_name("attribute"))] = value
        elif target.type == "attribute" and text(target.child_by_field_name("object")) == "self":
            name = text(target.child_by_field_name("attribute"))
            self.run.fields[name] = value
            right = at.child_by_field_name("right")
            self.run.writes[name] = Write(
                name,
                value,
                line_of(at),
                self.stack[-1] if self.stack else "",
                flat(right) if right is not None else flat(at),
                tuple(d for d, _ in self.control),
            )
            self.run.history.append(self.run.writes[name])

    def s_if_statement(self, node: Node, local: dict[str, Val]) -> None:
        clauses: list[tuple[Node | None, Node | None]] = [
            (node.child_by_field_name("condition"), node.child_by_field_name("consequence"))
        ]
        for clause in node.children_by_field_name("alternative"):
            if clause.type == "elif_clause":
                clauses.append(
                    (
                        clause.child_by_field_name("condition"),
                        clause.child_by_field_name("consequence"),
                    )
                )
            else:
                clauses.append((None, clause.child_by_field_name("body")))
        before: frozenset[str] = frozenset()
        last: Decision | None = None
        for condition, body in clauses:
            if condition is None:  # else
                decision = last if last is not None else Decision(line_of(node), "", False)
                self.branch(decision, before, body, local)
                return
            value = self.value(condition, local)
            truth = self.truth(value, condition)
            before = before | value.deps
            last = Decision(line_of(condition), " ".join(text(condition).split()), truth)
            if truth:
                self.branch(last, before, body, local)
                return

    def branch(
        self, decision: Decision, deps: frozenset[str], body: Node | None, local: dict[str, Val]
    ) -> None:
        self.control.append((decision, deps))
        try:
            self.block(body, local)
        finally:
            self.control.pop()

    def truth(self, value: Val, condition: Node) -> bool:
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

    def s_return_statement(self, node: Node, local: dict[str, Val]) -> None:
        value = self.value(node.named_children[0], local) if node.named_children else Val(None)
        raise Returned(value)

    def s_raise_statement(self, node: Node, local: dict[str, Val]) -> None:
        raise Raised

    def s_with_statement(self, node: Node, local: dict[str, Val]) -> None:
        self.block(node.child_by_field_name("body"), local)

    def s_try_statement(self, node: Node, local: dict[str, Val]) -> None:
        self.block(node.child_by_field_name("body"), local)

    def havoc(self, node: Node, local: dict[str, Val], why: str) -> None:
        """What NODE may assign becomes unknown (a loop that is not run)."""
        for found in walk(node):
            if found.type not in ("assignment", "augmented_assignment"):
                continue
            left = found.child_by_field_name("left")
            targets = (
                left.named_children if left.type in ("pattern_list", "tuple_pattern") else [left]
            )
            for target in targets:
                self.store(target, Val(Unknown(why)), local, found)

    # -- expressions -------------------------------------------------------------------------

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


def construct(
    prog: Program, fields: dict[str, Val], external: External, flips: frozenset[int] = frozenset()
) -> Run:
    """The fields of PROG's class after its construction, from FIELDS (each field's starting
    value); EXTERNAL gives a local assigned from something the code cannot know; a condition
    that reads an unknown value is taken as false, or true when its key is in FLIPS."""
    entry = next((prog.methods[name] for name in ENTRIES if name in prog.methods), None)
    run = Construction(prog, fields, external, flips)
    if entry is None:
        return run.run
    try:
        run.call_function(entry, prog.klass, [], {})
    except TooLong:
        run.run.complete = False
    return run.run


LOOPS = frozenset({"for_statement", "while_statement", "match_statement"})
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
