"""What a name holds, for the call graph's value follower (tracer/index/calls/
objects.py): a binding in the nearest scope that binds it (the assignments that reach the
read, a parameter: what its calls pass, the bindings of the functions that declare it
`global` or `nonlocal`), else what the index names (a function, a class, an
outside name), else the global of another module of the tree it is imported from (`from
registry import HANDLERS`: what any of its bindings there gives; `registry.HANDLERS` alike).

Order matters where it is certain: in one scope, a binding made at its top level (no branch or
loop around it; `FileFlows.straight`) before a read there hides what came before it, and at
that level a read does not see what is bound after it (Jarvis's flow sensitivity, within one
scope).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tracer.extract.facts import MODULE_SCOPE, Assign
from tracer.index.calls.answers import Answers
from tracer.index.calls.contents import Contents, contains
from tracer.index.calls.obj import NONE, UNKNOWN, Follower, Obj, Objs
from tracer.index.calls.rules import CallRules, binding_of
from tracer.index.calls.values import FunctionValues
from tracer.store.names import class_bodies


class Bindings:
    """What names hold, asked on demand and remembered in the follower's answers."""

    def __init__(
        self,
        follower: Follower,
        contents: Contents,
        rules: CallRules,
        values: FunctionValues,
        answers: Answers,
    ) -> None:
        self.follower = follower
        self.contents = contents
        self.rules = rules
        self.values = values
        self.index = rules.index
        self.facts = rules.facts
        self.resolver = rules.resolver
        self.answers = answers
        self.class_bodies: dict[str, Callable[[int], bool]] = {}  # path -> see class_bodies
        self.declaring: dict[str, dict[str, list[str]]] = {}  # path -> name -> functions

    def name(self, path: str, scope: str, name: str, line: int) -> Objs:
        """What NAME (dotted) may hold in SCOPE at LINE."""
        line = line if self.straight(path, line) else 0  # else the line changes nothing
        return self.answers.ask(
            ("name", path, scope, name, line), lambda: self.find_name(path, scope, name, line)
        )

    def find_name(self, path: str, scope: str, name: str, line: int) -> Iterable[Obj]:
        head, _, rest = name.partition(".")
        module = self.index.module_of[path]
        bound = self.binding_scope(path, scope, head)
        if head in ("self", "cls") and bound is not None:
            klass = self.resolver.self_class(path, scope)
            if klass is not None:
                held = self.own_class(path, bound, head, klass)
                if not rest:
                    return held
                instances = frozenset(Obj("instance", o.name, guess=o.guess) for o in held)
                return self.follower.attributes(instances, rest)
        # A local binding first: assignments or a parameter of the nearest scope binding it.
        if bound is not None:
            found = self.bound(path, bound, scope, head, line)
            return self.follower.attributes(found, rest) if rest else found
        # Then what the index names: a function, a class, a module, an outside name.
        symbol = self.index.resolve(module, name)
        if symbol is not None:
            if symbol.kind == "function":  # a decorated function's name holds the wrapper
                return {Obj("function", self.values.wrapper_of(symbol.name))}
            if symbol.kind == "class":
                return {Obj("class", symbol.name)}
            if symbol.kind == "external":
                return {Obj("function", symbol.name)}
            if symbol.kind == "module":
                return {Obj("module", symbol.name)}
        function = self.rules.function_named(path, scope, name)
        if function is not None:
            return {Obj("function", self.values.wrapper_of(function))}
        if rest:
            return self.follower.attributes(self.name(path, scope, head, line), rest)
        imported = self.imported_global(path, module, name)
        return {UNKNOWN} if imported is None else imported

    def global_name(self, module: str, name: str) -> Objs:
        """What NAME holds as a global of MODULE (a module of the tree) read from another
        scope (`registry.HANDLERS`): what any of its bindings there gives."""
        path = self.index.path_of.get(module)
        if path is None:
            return frozenset({UNKNOWN})
        return self.name(path, MODULE_SCOPE, name, 0)

    def imported_global(self, path: str, module: str, name: str) -> Objs | None:
        """What NAME holds when MODULE (in PATH) imports it from a module of the tree that
        binds it to no function, class or module (`from registry import HANDLERS`); None
        when it is imported from nowhere in the tree."""
        imp = self.index.namespace(module, path)[1].get(name)
        if imp is None or imp.name is None:
            return None
        source = self.index.absolute(imp.module, imp.level, module)
        if source not in self.index.path_of or f"{source}.{imp.name}" in self.index.path_of:
            return None
        return self.global_name(source, imp.name)

    def own_class(self, path: str, scope: str, head: str, klass: str) -> Objs:
        """What `self` (HEAD) or `cls` of a method of KLASS holds (SCOPE binds it): an
        instance of KLASS; for the first parameter of a classmethod, KLASS and the classes of
        its family the calls are made on (`HFLM.create()`: cls holds HFLM)."""
        if head == "self":
            return frozenset({Obj("instance", klass)})
        function = self.parameter_of(path, scope, head)
        definition = self.index.functions[function][1] if function is not None else None
        if definition is None or not definition.is_classmethod or definition.params[0].name != head:
            return frozenset({Obj("class", klass)})
        return frozenset({Obj("class", klass)}) | self.follower.parameter(function, head)

    def binding_scope(self, path: str, scope: str, name: str) -> str | None:
        """The nearest scope (SCOPE, a function around it, the module) that binds NAME by
        assignment or as a parameter; None when none does (a function, class or import)."""
        module = self.index.module_of[path]
        while True:
            word = self.declared(path, scope, name)
            if word == "global":
                return MODULE_SCOPE
            if word is None and (
                self.parameter_of(path, scope, name) is not None or self.binding(path, scope, name)
            ):
                return scope
            if scope == MODULE_SCOPE:  # a function may bind it there (`global NAME`)
                return MODULE_SCOPE if self.declarers(path, MODULE_SCOPE, name) else None
            scope = self.rules.enclosing_scope(module, scope)

    def declared(self, path: str, scope: str, name: str) -> str | None:
        """ "global" or "nonlocal" when the function SCOPE declares NAME so, else None."""
        function = self.resolver.function(path, scope)
        if function is not None:
            for declared, word in function[1].declared:
                if declared == name:
                    return word
        return None

    def declarers(self, path: str, scope: str, name: str) -> list[str]:
        """The functions of PATH that declare NAME `global` or `nonlocal` and whose variable
        of that name is SCOPE's: their bindings of it are SCOPE's too."""
        declaring = self.declaring.get(path)
        if declaring is None:
            declaring = self.declaring[path] = {}
            for f in self.facts.summaries[path].functions:
                for declared, _ in f.declared:
                    declaring.setdefault(declared, []).append(f.qualname)
        word = "global" if scope == MODULE_SCOPE else "nonlocal"  # a nonlocal is a function's
        return [
            function
            for function in declaring.get(name, ())
            if self.declared(path, function, name) == word
            and (word == "global" or self.binding_scope(path, function, name) == scope)
        ]

    def parameter_of(self, path: str, scope: str, name: str) -> str | None:
        """The function SCOPE is, if NAME is one of its parameters."""
        function = self.resolver.function(path, scope)
        if function is not None:
            for param in function[1].params:
                if param.name == name:
                    return function[0]
        return None

    def bound(self, path: str, scope: str, reader: str, name: str, line: int) -> Objs:
        """What NAME holds in SCOPE (which binds it), read from READER at LINE."""
        function = self.parameter_of(path, scope, name)
        found: set[Obj] = set()
        if function is not None:
            found |= self.follower.parameter(function, name)
        flows = self.facts.flows(path)
        indices = self.binding(path, scope, name)
        for index in self.reaching(path, scope, reader, indices, line):
            found |= self.assigned(path, index, flows.assigns[index], name)
        # A function that declares it `global` or `nonlocal` binds it too, whenever it runs.
        for function in self.declarers(path, scope, name):
            for index in self.binding(path, function, name):
                found |= self.assigned(path, index, flows.assigns[index], name)
        return frozenset(found)

    def binding(self, path: str, scope: str, name: str) -> list[int]:
        """The assignments of SCOPE that bind NAME (`d["k"] = v` stores into d, binds none; a
        class body's `NAME = v` binds the class's field, no name of the scope around it)."""
        indices = self.resolver.assigns(path, scope).get(name)
        if not indices:
            return []
        flows = self.facts.flows(path)
        patterns = flows.patterns
        bodies = self.class_bodies.get(path)
        if bodies is None:
            bodies = self.class_bodies[path] = class_bodies(self.facts.summaries[path])
        return [
            i
            for i in indices
            if (i not in patterns or contains(patterns[i], ("name", name)))
            and not bodies(flows.assigns[i].line)
        ]

    def reaching(
        self, path: str, scope: str, reader: str, indices: Iterable[int], line: int
    ) -> list[int]:
        """The assignments (INDICES, to one name in SCOPE) that may reach a read at LINE in
        READER: in the reader's own scope, read at its top level, none made after the read,
        and none before the last one made at the top level before it."""
        indices = list(indices)
        flows = self.facts.flows(path)
        if reader != scope or not self.straight(path, line):
            return indices
        before = [i for i in indices if flows.assigns[i].end_line < line]
        last = [i for i in before if self.straight(path, flows.assigns[i].line)]
        if last:
            start = flows.assigns[max(last, key=lambda i: flows.assigns[i].line)].line
            before = [i for i in before if flows.assigns[i].line >= start]
        return before

    def straight(self, path: str, line: int) -> bool:
        """Is the statement at LINE at the top level of its scope (no branch or loop)?"""
        return line in self.facts.flows(path).straight

    def assigned(self, path: str, index: int, assign: Assign, name: str) -> Objs:
        """What assignment INDEX gives NAME."""
        if assign.op == "for":
            elements = self.follower.value(path, assign.scope, assign.value, assign.line)
            if len(assign.targets) != 1:
                return NONE
            return self.contents.items(
                elements, frozenset({UNKNOWN}), (path, assign.scope, assign.line)
            )
        if assign.op not in ("=", ":=", "case"):
            return NONE
        pattern = self.facts.flows(path).patterns.get(index)
        if pattern is None:
            one = binding_of(assign, name)
            if one is None:
                return self.contents.unpacked_flat(path, assign, name)
            return self.follower.value(path, assign.scope, one.value, assign.line)
        value = self.follower.value(path, assign.scope, assign.value, assign.line)
        return frozenset(
            self.contents.unpack(value, pattern, ("name", name), (path, assign.scope, assign.line))
        )
