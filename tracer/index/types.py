"""Type inference over facts: the class of the value a name, a dotted path or an attribute
holds (annotations, `self`, what is assigned to it, what a call returns), and the classes a
local bound to classes may be. A type found while another is being inferred may be partial:
`inferring` says when that is so."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tracer.extract.facts import MODULE_SCOPE, FunctionDef
from tracer.extract.values import call_of_ref
from tracer.index.factories import Factories
from tracer.index.index import Index
from tracer.index.scopes import Scopes
from tracer.index.targets import CallResolver
from tracer.store.facts import Facts
from tracer.store.rows import ASSIGN_VALUE, SCOPE, VALUE_CALLS, VALUE_REFS, Row
from tracer.store.units import ROW_KINDS

ASSIGN_ROWS = ROW_KINDS.index("assigns")


class Types:
    """The classes of values, inferred once each, for a `CallResolver`."""

    def __init__(
        self, index: Index, facts: Facts, scopes: Scopes, factories: Factories, calls: CallResolver
    ) -> None:
        self.index = index
        self.facts = facts
        self.scopes = scopes
        self.factories = factories
        self.calls = calls
        self.attr_types: dict[tuple[str, str], str | None] = {}
        self.name_types: dict[tuple[str, str, str], str | None] = {}
        self.returned: dict[str, str | None] = {}
        # The types being inferred (table, key) -> their depth; for each, the lowest depth
        # of one being inferred it read (its own when none).
        self.busy: dict[tuple[int, Any], int] = {}
        self.lows: list[int] = []

    @property
    def inferring(self) -> int:
        """How many types are being inferred: what is found meanwhile may be partial."""
        return len(self.lows)

    def ref_type(self, path: str, scope: str, dotted: str) -> str | None:
        """The known class of the value DOTTED names in SCOPE, or None."""
        head, *attrs = dotted.split(".")
        klass = self.name_type(path, scope, head)
        for attr in attrs:
            if klass is None:
                return None
            klass = self.attr_type(klass, attr)
        return klass

    def name_type(self, path: str, scope: str, name: str) -> str | None:
        # A name typed through itself (x = x.f()) stays unknown.
        key = (path, scope, name)
        if key in self.name_types:  # most are asked again: no closure made for them
            return self.name_types[key]
        return self.inferred(self.name_types, key, lambda: self.infer_name(path, scope, name))

    def inferred(
        self, table: dict[Any, str | None], key: Any, infer: Callable[[], str | None]
    ) -> str | None:
        """TABLE[KEY], inferred by INFER; while it runs, KEY reads as unknown (so a cycle
        ends), and what the resolver finds meanwhile is not kept as final. Kept only when it
        read no type being inferred but its own: one inferred while another it reads was
        still being inferred would be another answer asked first, so it is inferred again
        where it is asked (what a type is does not depend on what was asked before)."""
        if key in table:
            return table[key]
        mark = (id(table), key)
        depth = self.busy.get(mark)
        if depth is not None:  # met again while being inferred: unknown, and not kept
            if self.lows:
                self.lows[-1] = min(self.lows[-1], depth)
            return None
        depth = len(self.lows)
        self.busy[mark] = depth
        self.lows.append(depth)
        try:
            found = infer()
        finally:
            del self.busy[mark]
            low = self.lows.pop()
        if low >= depth:
            table[key] = found
        elif self.lows:
            self.lows[-1] = min(self.lows[-1], low)
        return found

    def infer_name(self, path: str, scope: str, name: str) -> str | None:
        module = self.index.module_of[path]
        call_id = call_of_ref(name)
        if call_id is not None:  # the result of a call: what its target returns
            return self.result_class(path, call_id)
        found = self.scopes.function(path, scope)
        if found is not None:
            function = found[1]
            for i, param in enumerate(function.params):
                if param.name != name:
                    continue
                if i == 0 and function.class_qualname is not None and not function.is_static:
                    return self.scopes.self_class(path, scope)
                if param.annotation is None and param.kind == "positional":
                    return self.passed_class(path, found[0], function, i)
                return self.index.annotation_class(module, param.annotation)
        row = self.facts.rows(path).row  # the assignments' rows: no fact is made
        for index in self.scopes.assigns(path, scope).get(name, ()):
            klass = self.assigned_type(path, scope, row(ASSIGN_ROWS, index))
            if klass is not None:
                return klass
        if scope != MODULE_SCOPE and not self.scopes.is_local(path, scope, name):
            # A module-level name a function reads (a settings holder, `_CONTEXT =
            # RuntimeContext()`): what the module binds it to.
            for index in self.scopes.assigns(path, MODULE_SCOPE).get(name, ()):
                klass = self.assigned_type(path, MODULE_SCOPE, row(ASSIGN_ROWS, index))
                if klass is not None:
                    return klass
        symbol = self.index.resolve(module, name)
        if symbol is not None and symbol.kind == "class":
            return symbol.name  # Class.attr reads the class attribute
        return None

    def passed_class(self, path: str, full: str, function: FunctionDef, index: int) -> str | None:
        """The class of what the calls of FULL in its own file pass to its unannotated
        parameter number INDEX, when they all pass one class (a module's helper handed its
        settings holder: `_configure(_CONTEXT, ...)`); None when one passes something else,
        or no call there passes it."""
        param = function.params[index].name
        flows = self.facts.flows(path)
        found: set[str | None] = set()
        for call_id in self.facts.rows(path).callees.get(function.name, ()):
            call = flows.calls[call_id]
            target = next(
                (t for t in self.calls.resolve_call(path, call) if t.function == full), None
            )
            if target is None or target.confidence < 1.0:
                continue
            position = index - (1 if target.bound else 0)
            for arg in call.args:
                if arg.star or not (arg.keyword == param or arg.position == position):
                    continue
                value = arg.value
                if len(value.refs) == 1 and not value.calls:
                    found.add(self.ref_type(path, call.scope, value.refs[0]))
                elif len(value.calls) == 1 and not value.refs:
                    found.add(self.result_class(path, value.calls[0]))
                else:
                    found.add(None)
        return found.pop() if len(found) == 1 else None

    def assigned_type(self, path: str, scope: str, assign: Row) -> str | None:
        """The class of what the assignment ASSIGN (its row) binds its one target to: its
        annotation, the class of its one call's result or of the one name it reads."""
        _, targets, value, _, op, annotation, _, _ = assign
        if annotation:
            klass = self.index.annotation_class(self.index.module_of[path], annotation)
            if klass is not None:
                return klass
        if len(targets) != 1 or op not in ("=", "case"):
            return None
        refs, calls = value[VALUE_REFS], value[VALUE_CALLS]
        if len(calls) == 1 and not refs:
            return self.result_class(path, calls[0])
        if len(refs) == 1 and not calls and refs[0] != targets[0][0]:
            return self.ref_type(path, scope, refs[0])
        return None

    def result_class(self, path: str, call_id: int) -> str | None:
        """The class of the result of PATH's call CALL_ID, when a certain target says it."""
        for target in self.calls.resolve_call_id(path, call_id):
            if target.confidence < 1.0:
                continue
            if target.klass is not None:
                return target.klass
            if target.function is not None:
                returned = self.returned_class(target.function)
                if returned is not None:
                    return returned
        return None

    def returned_class(self, function_name: str) -> str | None:
        """The class FUNCTION_NAME returns: its annotation, else the class every one of its
        `return Klass(...)` statements constructs."""
        path, function = self.index.functions[function_name]
        module = self.index.module_of[path]
        annotated = self.index.annotation_class(module, function.returns)
        if annotated is not None or function.returns:
            return annotated
        return self.inferred(
            self.returned, function_name, lambda: self.class_returned(path, function)
        )

    def class_returned(self, path: str, function: FunctionDef) -> str | None:
        made = self.factories.constructed(f"{self.index.module_of[path]}.{function.qualname}")
        return made[0] if len(made) == 1 else None

    def class_parameter(self, path: str, scope: str, name: str) -> str | None:
        """The class NAME stands for when it is the first parameter of a classmethod (`cls`)
        of SCOPE, or a parameter of SCOPE annotated as a class (`pool_class: type[Pool]`:
        that class, or one of its subclasses); else None."""
        found = self.scopes.function(path, scope)
        if found is None or "." in name:
            return None
        function = found[1]
        if function.is_classmethod and function.params and function.params[0].name == name:
            return self.scopes.self_class(path, scope)
        for param in function.params:
            if param.name == name and param.annotation and CLASS_TYPE.search(param.annotation):
                return self.index.annotation_class(self.index.module_of[path], param.annotation)
        return None

    def class_values(self, path: str, scope: str, name: str) -> list[str]:
        """The classes the local NAME of SCOPE may be when every assignment of it names
        classes only (`X = A`, `X = A if c else B`; no call): all of them, in order."""
        module = self.index.module_of[path]
        rows = self.facts.rows(path)  # the values' rows: no fact is made
        found: dict[str, None] = {}
        for index in self.scopes.assigns(path, scope).get(name, ()):
            value = rows.row(ASSIGN_ROWS, index)[ASSIGN_VALUE]
            if value[VALUE_CALLS]:
                return []
            named = [
                symbol.name
                for ref in value[VALUE_REFS]
                if (symbol := self.index.resolve(module, ref)) is not None
                and symbol.kind == "class"
            ]
            if not named:
                return []
            found.update(dict.fromkeys(named))
        return list(found)

    def attr_type(self, klass: str, attr: str) -> str | None:
        """The class of attribute ATTR on instances of KLASS: a class defined in its body (a
        nested class), a field annotation or one declared in a method (`self.ATTR: T`), or
        what `self.ATTR = ...` assigns in the methods of KLASS and its ancestors."""
        key = (klass, attr)
        if key in self.attr_types:
            return self.attr_types[key]
        return self.inferred(self.attr_types, key, lambda: self.infer_attr(klass, attr))

    def infer_attr(self, klass: str, attr: str) -> str | None:
        found = None
        for owner in self.index.mro(klass):
            if f"{owner}.{attr}" in self.index.classes:
                return f"{owner}.{attr}"  # a class defined in the body: that class
            path, definition = self.index.classes[owner]
            module = self.index.module_of[path]
            for field in (*definition.fields, *definition.declared):
                if field.name == attr and field.annotation:
                    found = self.index.annotation_class(module, field.annotation)
                    if found:
                        break
            if found:
                break
            # A property reads as an attribute: its return annotation types it.
            method = self.index.functions.get(f"{owner}.{attr}")
            if method is not None and method[1].returns and is_property(method[1]):
                found = self.index.annotation_class(module, method[1].returns)
                if found:
                    break
            qual = definition.qualname + "."
            if not self.facts.has_flows(path) and attr not in self.facts.names(path).self_attrs:
                continue  # no `self.ATTR = ...` in that file: its flows are not needed
            rows = self.facts.rows(path)
            for index in rows.self_writes.get(attr, ()):
                assign = rows.row(ASSIGN_ROWS, index)
                if assign[SCOPE].startswith(qual):
                    found = self.assigned_type(path, assign[SCOPE], assign)
                    if found:
                        break
            if found:
                break
        return found


PROPERTIES = frozenset({"property", "cached_property"})
# An annotation naming a class itself, not an instance of it (`type[X]`, `typing.Type[X]`).
CLASS_TYPE = re.compile(r"^(?:Optional\[)?\s*(?:typing\.)?[Tt]ype\[")


def is_property(function: FunctionDef) -> bool:
    """Is FUNCTION read as an attribute (`@property`, `@functools.cached_property`)?"""
    return any(d.rpartition(".")[2] in PROPERTIES for d in function.decorators)
