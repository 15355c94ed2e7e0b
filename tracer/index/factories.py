"""Factories: the classes a function's returns construct (`return DefaultPoolConfigurator(kvc)`
in one branch, another class in another), the classes a local holding such a function's result
may be, and the branch of the factory that makes each (`if not hybrid:`), read from the source."""

from __future__ import annotations

import re

from tracer.extract.values import call_of_ref
from tracer.index.index import Index
from tracer.index.scopes import Scopes
from tracer.index.targets import BY_DEFAULT, CallResolver
from tracer.store.facts import Facts
from tracer.store.rows import ASSIGN_VALUE, TARGETS, VALUE_CALLS, VALUE_REFS
from tracer.store.units import ROW_KINDS

ASSIGN_ROWS, RETURN_ROWS = ROW_KINDS.index("assigns"), ROW_KINDS.index("returns")
RETURN_VALUE, RETURN_LINE = 1, 3  # of a Return's row


class Factories:
    """The classes factories make, for a `CallResolver` that resolves their calls."""

    def __init__(self, index: Index, facts: Facts, scopes: Scopes, calls: CallResolver) -> None:
        self.index = index
        self.facts = facts
        self.scopes = scopes
        self.calls = calls
        self.factories: dict[tuple[str, str, str], list[str]] = {}

    def factory_classes(self, path: str, scope: str, name: str) -> list[str]:
        """The classes a local NAME of SCOPE may hold when every assignment of it takes the
        result of a function of the tree each of whose returns constructs a class (`return
        DefaultPoolConfigurator(kvc)` or another): all of them, in the order written.
        Empty when NAME is not such a local (or is being asked about already: `x =
        x.next()` types itself)."""
        if "." in name or call_of_ref(name) is not None:
            return []
        key = (path, scope, name)
        found = self.factories.get(key)
        if found is None:
            self.factories[key] = []  # while it is worked out, a cycle reads "none"
            found = self.factories[key] = self.infer_factory(path, scope, name)
        return found

    def infer_factory(self, path: str, scope: str, name: str) -> list[str]:
        indices = self.scopes.assigns(path, scope).get(name, ())
        if not indices:
            return []
        row = self.facts.rows(path).row  # the assignments' rows: no fact is made
        classes: dict[str, None] = {}
        for index in indices:
            assign = row(ASSIGN_ROWS, index)
            value = assign[ASSIGN_VALUE]
            if len(assign[TARGETS]) != 1 or len(value[VALUE_CALLS]) != 1 or value[VALUE_REFS]:
                return []
            targets = self.calls.resolve_call_id(path, value[VALUE_CALLS][0])
            functions = [t.function for t in targets if t.confidence == 1.0 and t.klass is None]
            if len(functions) != 1 or functions[0] is None:
                return []
            made = self.constructed(functions[0])
            if len(made) < 2:
                return []  # one class: the type says it already
            classes.update(dict.fromkeys(made))
        return list(classes)

    def factory_branch(self, path: str, scope: str, name: str, klass: str) -> str:
        """Where the local NAME of SCOPE holds a factory's result: when the factory makes
        KLASS (`if not hybrid:` around its `return`, or "by default" for a return no
        condition guards), said as "NAME is a Klass when ..."."""
        row = self.facts.rows(path).row
        for index in self.scopes.assigns(path, scope).get(name, ()):
            value = row(ASSIGN_ROWS, index)[ASSIGN_VALUE]
            if len(value[VALUE_CALLS]) != 1:
                continue
            for target in self.calls.resolve_call_id(path, value[VALUE_CALLS][0]):
                if target.function is not None and klass in self.constructed(target.function):
                    branch = self.return_branch(target.function, klass)
                    short = klass.rpartition(".")[2]
                    return f"{name} is a {short} {branch}" if branch else ""
        return ""

    def return_branch(self, function_name: str, klass: str) -> str:
        """The condition that leads to FUNCTION_NAME's return constructing KLASS, as written
        ("when `if backend == 'mlx':`"), or "by default" when no branch guards it."""
        path, function = self.index.functions[function_name]
        rows = self.facts.rows(path)
        for i in rows.returns_by_scope.get(function.qualname, ()):
            _, value, _, line, _ = rows.row(RETURN_ROWS, i)
            if len(value[VALUE_CALLS]) != 1:
                continue
            made = self.calls.resolve_call_id(path, value[VALUE_CALLS][0])
            if not any(t.klass == klass for t in made):
                continue
            if line in rows.straight:
                return BY_DEFAULT
            headers = enclosing_branch(self.facts.source(path), line, function.line)
            return f"when {headers}" if headers else ""
        return ""

    def constructed(self, function_name: str) -> list[str]:
        """The classes FUNCTION_NAME's returns construct, when each of them constructs one:
        the one it returns when no condition holds (a return at the top of its body, the
        factory's default) first, then the others in the order written."""
        path, function = self.index.functions[function_name]
        rows = self.facts.rows(path)
        found: dict[str, None] = {}
        indices = rows.returns_by_scope.get(function.qualname, ())
        if not indices:
            return []
        returns = {i: rows.row(RETURN_ROWS, i) for i in indices}  # no fact is made
        straight = rows.straight
        by_default = sorted(indices, key=lambda i: returns[i][RETURN_LINE] not in straight)
        for i in by_default:
            value = returns[i][RETURN_VALUE]
            if len(value[VALUE_CALLS]) != 1 or value[VALUE_REFS]:
                return []
            targets = [
                t
                for t in self.calls.resolve_call_id(path, value[VALUE_CALLS][0])
                if t.confidence == 1.0 and t.klass is not None
            ]
            if len(targets) != 1:
                return []
            found[targets[0].klass] = None  # type: ignore[index]
        return list(found)


BRANCH = re.compile(rb"^\s*(if|elif|else|case)\b")


def enclosing_branch(source: bytes, line: int, start: int) -> str:
    """The headers of the `if`/`elif`/`else` (or `case`) blocks holding LINE (1-based) of
    SOURCE, innermost first, looking no higher than the line START (an `else:` is said with
    its `if`): "`if b:` inside `if a:`"."""
    lines = source.splitlines()
    if not 0 < line <= len(lines):
        return ""
    headers = []
    indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    for number in range(line - 1, max(start, 1) - 1, -1):
        text = lines[number - 1]
        stripped = text.lstrip()
        if not stripped or stripped.startswith(b"#"):
            continue
        depth = len(text) - len(stripped)
        if depth >= indent:
            continue
        indent = depth
        if stripped.startswith((b"def ", b"async def ", b"class ")):
            break
        keyword = BRANCH.match(text)
        if keyword is None:
            continue
        header = stripped.decode("utf-8", "replace").strip()
        if keyword.group(1) == b"else":
            opening = enclosing_if(lines, number, depth, start)
            header = f"{header} (not {opening})" if opening else header
        headers.append(f"`{header}`")
    return " inside ".join(headers)


def enclosing_if(lines: list[bytes], line: int, depth: int, start: int) -> str:
    """The `if` header an `else:` at LINE (and DEPTH) belongs to."""
    for number in range(line - 1, max(start, 1) - 1, -1):
        text = lines[number - 1]
        stripped = text.lstrip()
        if stripped and len(text) - len(stripped) == depth and stripped.startswith(b"if "):
            return stripped.decode("utf-8", "replace").strip()
        if stripped and len(text) - len(stripped) < depth:
            return ""
    return ""
