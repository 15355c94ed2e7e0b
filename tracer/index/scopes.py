"""The scopes of a file as resolution reads them: the function a scope is, the class `self`
stands for in it, its locals and the assignments to each, and the functions it can see.
Read from facts and rows alone: nothing here resolves a call or infers a type."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tracer.extract.facts import MODULE_SCOPE, Assign, FunctionDef
from tracer.index.index import Index
from tracer.store.facts import Facts

UNKNOWN: Any = object()  # not looked up yet (None is an answer)


class Scopes:
    """What the scopes of the tree's files bind, read once per scope."""

    def __init__(self, index: Index, facts: Facts) -> None:
        self.index = index
        self.facts = facts
        self.assigns_in_scope: dict[tuple[str, str], dict[str, list[int]]] = {}
        self.local_names: dict[tuple[str, str], frozenset[str]] = {}
        self.functions: dict[tuple[str, str], tuple[str, FunctionDef] | None] = {}

    def function(self, path: str, scope: str) -> tuple[str, FunctionDef] | None:
        """The function SCOPE of PATH is, with its full name; None for the module or a class
        body (asked again and again for the same scopes: kept)."""
        key = (path, scope)
        found = self.functions.get(key, UNKNOWN)
        if found is UNKNOWN:
            found = None
            if scope != MODULE_SCOPE:
                full = f"{self.index.module_of[path]}.{scope}"
                function = self.index.functions.get(full)
                found = (full, function[1]) if function else None
            self.functions[key] = found
        return found  # type: ignore[no-any-return]

    def self_class(self, path: str, scope: str) -> str | None:
        """The class `self` stands for in SCOPE: the annotation of the first parameter
        (`self: ModelRunner` in a mixin) wins over the class the method is written in."""
        module = self.index.module_of[path]
        while scope and scope != MODULE_SCOPE:
            found = self.function(path, scope)
            if found is not None and found[1].class_qualname is not None:
                function = found[1]
                if function.params and function.params[0].annotation:
                    annotated = self.index.annotation_class(module, function.params[0].annotation)
                    if annotated is not None:
                        return annotated
                return f"{module}.{function.class_qualname}"
            scope = scope.rpartition(".")[0]
        return None

    def assigns(self, path: str, scope: str) -> dict[str, list[int]]:
        """Target (a name or dotted path) -> the indices of SCOPE's assignments to it, read
        from rows: no fact is made."""
        key = (path, scope)
        table = self.assigns_in_scope.get(key)
        if table is None:
            table = self.assigns_in_scope[key] = self.facts.rows(path).scope_targets.get(scope, {})
        return table

    def locals_of(self, path: str, scope: str) -> frozenset[str]:
        """The parameters of the function SCOPE and what it assigns to (names and paths);
        none when SCOPE is no function."""
        key = (path, scope)
        found = self.local_names.get(key)
        if found is None:
            function = self.function(path, scope)
            found = frozenset()
            if function is not None:  # the module's and a class body's names are not locals
                params = {p.name for p in function[1].params}
                found = frozenset(params | self.assigns(path, scope).keys())
            self.local_names[key] = found
        return found

    def is_local(self, path: str, scope: str, name: str) -> bool:
        """Is NAME a parameter or an assigned local of the function SCOPE?"""
        return name in self.locals_of(path, scope)

    def lookup_scopes(self, path: str, scope: str) -> Iterator[tuple[str, bool]]:
        """The scopes Python looks a name read in SCOPE up in before the module's, innermost
        first, each with whether it is a class body: SCOPE itself, then the functions around
        it (a class body around a function is no scope of its names)."""
        module = self.index.module_of[path]
        first = True
        while scope and scope != MODULE_SCOPE:
            in_class = f"{module}.{scope}" in self.index.classes
            if first or not in_class:
                yield scope, in_class
            first = False
            scope = scope.rpartition(".")[0]

    def shadowed(self, path: str, scope: str, name: str) -> bool:
        """Is NAME, read in SCOPE, a parameter or local of SCOPE or of a function around it:
        no global of that name?"""
        return any(self.is_local(path, s, name) for s, _ in self.lookup_scopes(path, scope))

    def local_function(self, path: str, scope: str, name: str) -> str | None:
        """A function defined in SCOPE or an enclosing function (closures), as Python finds a
        name (`lookup_scopes`): a parameter or local of a function on the way shadows it (a
        method's `f()` never calls the class's `f`)."""
        if "." in name:
            return None
        module = self.index.module_of[path]
        for outer, in_class in self.lookup_scopes(path, scope):
            full = f"{module}.{outer}.{name}"
            if full in self.index.functions:
                return full
            if not in_class and self.is_local(path, outer, name):
                return None  # a parameter or local of its own shadows every outer one
        return None

    def self_writes(self, path: str, attr: str) -> list[Assign]:
        """The assignments `self.ATTR = ...` of a file (facts made for ATTR's alone)."""
        indices = self.facts.rows(path).self_writes.get(attr, ())
        if not indices:
            return []
        assigns = self.facts.flows(path).assigns
        return [assigns[index] for index in indices]
