"""A class's own construction read statement by statement: `__post_init__` (else `__init__`)
interpreted over its tree-sitter tree, with the fields' starting values given, the methods
of the class and the functions of its module it calls followed in, and what cannot be known
without running the code (a device query, a model's config) left `Unknown`. Assignments,
if/elif/else, returns and raises are read here, expressions by `expressions.py`; loops are not
run (what they assign becomes unknown). Never `eval`: the code is only read."""

from __future__ import annotations

from tree_sitter import Node

from tracer.analyses.explain.classcode import Program, Unknown, callee, flat, line_of, walk
from tracer.analyses.explain.expressions import ExpressionReader
from tracer.analyses.explain.interpvalues import (
    Decision,
    External,
    Fit,
    Raised,
    Returned,
    Run,
    Surroundings,
    TooLong,
    Val,
    Write,
)
from tracer.extract.parse import text

MAX_DEPTH = 12  # calls followed into one another
MAX_STATEMENTS = 50_000  # statements read in one construction
ENTRIES = ("__post_init__", "__init__")


class Construction(ExpressionReader):
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
