"""Resolution over facts: the class of `self`, of locals and attributes, and the targets of calls.

Only flows of the files that a question reaches are read (through `Facts.flows`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tracer.extract.facts import MODULE_SCOPE, Assign, Call, FunctionDef, ImportDef
from tracer.extract.values import call_of_ref
from tracer.index.index import Index, Symbol
from tracer.index.library import LAUNCHERS, Launcher
from tracer.store.facts import Facts
from tracer.store.rows import TARGETS, row_at

GUESS = 0.5  # confidence of a step found by name only
MAX_GUESSES = 3  # a name-only call matching more methods than this is not followed
DYNAMIC = 0.4  # a declared field read through an object that binds no such attribute
NAMED_DYNAMIC = 0.8  # ... through one whose accessor names the field's class (get_schedule)
OPAQUE = 0.7  # a value read only as an argument of a call outside the tree
OVERRIDE = 0.8  # confidence of a subclass override reached through a base-class receiver
MAX_OVERRIDES = 8


@dataclass(frozen=True, slots=True)
class CallTarget:
    function: str | None  # full name of the function called, None for a synthesized __init__
    klass: str | None  # the class constructed, for constructor calls
    confidence: float
    bound: bool  # the first parameter (self/cls) is filled by the receiver
    # Where a factory's result is the receiver: the branch of the factory that makes its class.
    why: str = ""


class Resolver:
    def __init__(self, index: Index, facts: Facts) -> None:
        self.index = index
        self.facts = facts
        self.attr_types: dict[tuple[str, str], str | None] = {}
        self.name_types: dict[tuple[str, str, str], str | None] = {}
        self.returned: dict[str, str | None] = {}
        self.factories: dict[tuple[str, str, str], list[str]] = {}
        self.assigns_in_scope: dict[tuple[str, str], dict[str, list[int]]] = {}
        self.local_names: dict[tuple[str, str], frozenset[str]] = {}
        self.methods_by_name: dict[str, list[str]] = {}
        # Targets of each callee text as written in a scope of a file, once resolved outside
        # any type inference: a query meets one call twice or more (ruling a caller in, then
        # building its steps), and a function calls one callee several times.
        self.call_targets: dict[tuple[str, str, str, int], list[CallTarget]] = {}
        self.inferring = 0  # types being inferred: what is found meanwhile may be partial
        for full, (_, function) in index.functions.items():
            if function.class_qualname is not None:
                self.methods_by_name.setdefault(function.name, []).append(full)
        # A call whose last name is none of these cannot run code of this tree.
        self.known_names = {f.name for _, f in index.functions.values()}
        self.known_names |= {c.name for _, c in index.classes.values()}
        self.known_names |= {a.name for s in index.summaries.values() for a in s.aliases}
        self.known_names |= {i.alias for s in index.summaries.values() for i in s.imports}

    # -- scopes ----------------------------------------------------------------------------

    def function(self, path: str, scope: str) -> tuple[str, FunctionDef] | None:
        if scope == MODULE_SCOPE:
            return None
        full = f"{self.index.module_of[path]}.{scope}"
        found = self.index.functions.get(full)
        return (full, found[1]) if found else None

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
            table = self.assigns_in_scope[key] = {}
            rows = self.facts.flows(path).assigns
            for index in self.scopes_of(path).get(scope, ()):
                for target in row_at(rows, index)[TARGETS]:
                    table.setdefault(target[0], []).append(index)
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

    def scopes_of(self, path: str) -> dict[str, tuple[int, ...]]:
        """The indices of PATH's assignments, by scope (no row is read)."""
        return self.facts.rows(path).assigns_by_scope

    # -- types -----------------------------------------------------------------------------

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
        return self.inferred(
            self.name_types, (path, scope, name), lambda: self.infer_name(path, scope, name)
        )

    def inferred(
        self, table: dict[Any, str | None], key: Any, infer: Callable[[], str | None]
    ) -> str | None:
        """TABLE[KEY], inferred once by INFER; while it runs, KEY reads as unknown (so a
        cycle ends), and what the resolver finds meanwhile is not kept as final."""
        if key in table:
            return table[key]
        table[key] = None
        self.inferring += 1
        try:
            found = infer()
        finally:
            self.inferring -= 1
        table[key] = found
        return found

    def infer_name(self, path: str, scope: str, name: str) -> str | None:
        module = self.index.module_of[path]
        call_id = call_of_ref(name)
        if call_id is not None:  # the result of a call: what its target returns
            return self.result_class(path, self.facts.flows(path).calls[call_id])
        found = self.function(path, scope)
        if found is not None:
            function = found[1]
            for i, param in enumerate(function.params):
                if param.name != name:
                    continue
                if i == 0 and function.class_qualname is not None and not function.is_static:
                    return self.self_class(path, scope)
                return self.index.annotation_class(module, param.annotation)
        assigns = self.facts.flows(path).assigns
        for index in self.assigns(path, scope).get(name, ()):
            klass = self.assigned_type(path, scope, assigns[index])
            if klass is not None:
                return klass
        symbol = self.index.resolve(module, name)
        if symbol is not None and symbol.kind == "class":
            return symbol.name  # Class.attr reads the class attribute
        return None

    def assigned_type(self, path: str, scope: str, assign: Assign) -> str | None:
        module = self.index.module_of[path]
        if assign.annotation:
            klass = self.index.annotation_class(module, assign.annotation)
            if klass is not None:
                return klass
        if len(assign.targets) != 1 or assign.op != "=":
            return None
        value = assign.value
        if len(value.calls) == 1 and not value.refs:
            return self.result_class(path, self.facts.flows(path).calls[value.calls[0]])
        if len(value.refs) == 1 and not value.calls and value.refs[0] != assign.targets[0].path:
            return self.ref_type(path, scope, value.refs[0])
        return None

    def result_class(self, path: str, call: Call) -> str | None:
        """The class of CALL's result, when a certain target says it."""
        for target in self.resolve_call(path, call):
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
        made = self.constructed(f"{self.index.module_of[path]}.{function.qualname}")
        return made[0] if len(made) == 1 else None

    def class_parameter(self, path: str, scope: str, name: str) -> str | None:
        """The class NAME stands for when it is the first parameter of a classmethod (`cls`)
        of SCOPE, else None."""
        found = self.function(path, scope)
        if found is None or "." in name:
            return None
        function = found[1]
        if not function.is_classmethod or not function.params or function.params[0].name != name:
            return None
        return self.self_class(path, scope)

    def class_values(self, path: str, scope: str, name: str) -> list[str]:
        """The classes the local NAME of SCOPE may be when every assignment of it names
        classes only (`X = A`, `X = A if c else B`; no call): all of them, in order."""
        module = self.index.module_of[path]
        flows = self.facts.flows(path)
        found: dict[str, None] = {}
        for index in self.assigns(path, scope).get(name, ()):
            value = flows.assigns[index].value
            if value.calls:
                return []
            named = [
                symbol.name
                for ref in value.refs
                if (symbol := self.index.resolve(module, ref)) is not None
                and symbol.kind == "class"
            ]
            if not named:
                return []
            found.update(dict.fromkeys(named))
        return list(found)

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
        indices = self.assigns(path, scope).get(name, ())
        if not indices:
            return []
        flows = self.facts.flows(path)
        classes: dict[str, None] = {}
        for index in indices:
            assign = flows.assigns[index]
            value = assign.value
            if len(assign.targets) != 1 or len(value.calls) != 1 or value.refs:
                return []
            targets = self.resolve_call(path, flows.calls[value.calls[0]])
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
        flows = self.facts.flows(path)
        for index in self.assigns(path, scope).get(name, ()):
            value = flows.assigns[index].value
            if len(value.calls) != 1:
                continue
            for target in self.resolve_call(path, flows.calls[value.calls[0]]):
                if target.function is not None and klass in self.constructed(target.function):
                    branch = self.return_branch(target.function, klass)
                    short = klass.rpartition(".")[2]
                    return f"{name} is a {short} {branch}" if branch else ""
        return ""

    def return_branch(self, function_name: str, klass: str) -> str:
        """The condition that leads to FUNCTION_NAME's return constructing KLASS, as written
        ("when `if backend == 'mlx':`"), or "by default" when no branch guards it."""
        path, function = self.index.functions[function_name]
        flows = self.facts.flows(path)
        for i in self.facts.rows(path).returns_by_scope.get(function.qualname, ()):
            ret = flows.returns[i]
            if len(ret.value.calls) != 1:
                continue
            made = self.resolve_call(path, flows.calls[ret.value.calls[0]])
            if not any(t.klass == klass for t in made):
                continue
            if ret.line in flows.straight:
                return "by default"
            headers = enclosing_branch(self.facts.source(path), ret.line, function.line)
            return f"when {headers}" if headers else ""
        return ""

    def constructed(self, function_name: str) -> list[str]:
        """The classes FUNCTION_NAME's returns construct, when each of them constructs one:
        the one it returns when no condition holds (a return at the top of its body, the
        factory's default) first, then the others in the order written."""
        path, function = self.index.functions[function_name]
        flows = self.facts.flows(path)
        found: dict[str, None] = {}
        indices = self.facts.rows(path).returns_by_scope.get(function.qualname, ())
        straight = flows.straight
        by_default = sorted(indices, key=lambda i: flows.returns[i].line not in straight)
        for i in by_default:
            ret = flows.returns[i]
            if len(ret.value.calls) != 1 or ret.value.refs:
                return []
            targets = [
                t
                for t in self.resolve_call(path, flows.calls[ret.value.calls[0]])
                if t.confidence == 1.0 and t.klass is not None
            ]
            if len(targets) != 1:
                return []
            found[targets[0].klass] = None  # type: ignore[index]
        return list(found)

    def self_writes(self, path: str, attr: str) -> list[Assign]:
        """The assignments `self.ATTR = ...` of a file (facts made for ATTR's alone)."""
        assigns = self.facts.flows(path).assigns
        return [assigns[index] for index in self.facts.rows(path).self_writes.get(attr, ())]

    def attr_type(self, klass: str, attr: str) -> str | None:
        """The class of attribute ATTR on instances of KLASS: a field annotation, or what
        `self.ATTR = ...` assigns in the methods of KLASS and its ancestors."""
        return self.inferred(self.attr_types, (klass, attr), lambda: self.infer_attr(klass, attr))

    def infer_attr(self, klass: str, attr: str) -> str | None:
        found = None
        for owner in self.index.mro(klass):
            path, definition = self.index.classes[owner]
            module = self.index.module_of[path]
            for field in definition.fields:
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
            for assign in self.self_writes(path, attr):
                if assign.scope.startswith(qual):
                    found = self.assigned_type(path, assign.scope, assign)
                    if found:
                        break
            if found:
                break
        return found

    # -- calls -----------------------------------------------------------------------------

    def resolve_call(self, path: str, call: Call) -> list[CallTarget]:
        """What CALL may run; confidence 1.0 when the types say so, lower for name guesses."""
        return self.targets(path, call.scope, call.callee, call.line)

    def targets(self, path: str, scope: str, callee: str, line: int = 0) -> list[CallTarget]:
        """`resolve_call` of a call of PATH, in SCOPE, to CALLEE (as its row has them: no
        fact is made), at LINE: a name the function imported more than once is the one its
        last import before the call binds."""
        imp = self.import_before(path, scope, callee, line) if line else None
        key = (path, scope, callee, imp.line if imp is not None else 0)
        found = self.call_targets.get(key)
        if found is None:
            if imp is None:
                found = self.call_targets_of(path, scope, callee)
            else:
                found = self.symbol_targets(self.imported_member(path, imp, callee))
            if not self.inferring:
                self.call_targets[key] = found
        return found

    def import_before(self, path: str, scope: str, callee: str, line: int) -> ImportDef | None:
        """The import that binds CALLEE's first name at LINE of the function SCOPE, when the
        file imports that name from more than one place and the function's own imports
        before LINE say which (else None: the module's first import, as everywhere)."""
        head = callee.partition(".")[0]
        again = self.index.imports_again(path).get(head)
        if not again or scope == MODULE_SCOPE:
            return None
        found = self.function(path, scope)
        if found is None or self.is_local(path, scope, head):
            return None
        start = found[1].line
        inside = [imp for imp in again if start <= imp.line <= line]
        return inside[-1] if inside else None

    def imported_member(self, path: str, imp: ImportDef, dotted: str) -> Symbol | None:
        """What DOTTED means when its first name is bound by the import IMP."""
        symbol = self.index.imported(self.index.module_of[path], imp)
        for part in dotted.split(".")[1:]:
            if symbol is None:
                return None
            symbol = self.index.member(symbol, part)
        return symbol

    def symbol_targets(self, symbol: Symbol | None) -> list[CallTarget]:
        """What calling SYMBOL runs: the function, or the class's constructor."""
        if symbol is None:
            return []
        if symbol.kind == "function":
            function = self.index.functions[symbol.name][1]
            bound = function.class_qualname is not None and function.is_classmethod
            return [CallTarget(symbol.name, None, 1.0, bound)]
        if symbol.kind == "class":
            return self.constructor(symbol.name)
        return []

    def call_targets_of(self, path: str, scope: str, callee: str) -> list[CallTarget]:
        if not callee:
            return []
        made = self.class_parameter(path, scope, callee)
        if made is not None:  # `cls(...)` in a classmethod makes an object of its class
            return self.constructor(made)
        if "." not in callee and self.is_local(path, scope, callee):
            # A local bound to a class (`Worker = TpModelWorkerClient if overlap else
            # TpModelWorker`), then called: each class it may be constructs.
            classes = self.class_values(path, scope, callee)
            if classes:
                return [t for klass in classes for t in self.constructor(klass)]
        if callee.rpartition(".")[2] not in self.known_names:
            return []
        module = self.index.module_of[path]
        head, _, method = callee.rpartition(".")
        if head == "super()":
            klass = self.self_class(path, scope)
            if klass is None:
                return []
            for owner in self.index.mro(klass)[1:]:
                full = f"{owner}.{method}"
                if full in self.index.functions:
                    return [CallTarget(full, None, 1.0, True)]
            return self.constructor_of(self.index.mro(klass)[1:], method)
        if head:
            made = self.factory_classes(path, scope, head)
            if made:
                # A factory's result: the method of each class it may make, surely, with the
                # branch of the factory that makes it.
                found = {}
                for klass in made:
                    full = self.index.method(klass, method)
                    if full is not None:
                        function = self.index.functions[full][1]
                        why = self.factory_branch(path, scope, head, klass)
                        found[full] = CallTarget(full, None, 1.0, not function.is_static, why)
                if found:
                    return list(found.values())
            receiver = self.ref_type(path, scope, head)
            if receiver is not None:
                full = self.index.method(receiver, method)
                if full is not None:
                    function = self.index.functions[full][1]
                    through_class = self.names_class(path, scope, head)
                    bound = function.is_classmethod or not through_class
                    found = [CallTarget(full, None, 1.0, bound and not function.is_static)]
                    # The receiver may be any subclass (factories): their overrides run too.
                    return found + self.overrides(receiver, method, OVERRIDE)
                return self.overrides(receiver, method, GUESS)
        local = self.local_function(path, scope, callee)
        if local is not None:
            return [CallTarget(local, None, 1.0, False)]
        if self.is_local(path, scope, callee.partition(".")[0]):
            # A parameter or local that shadows a global: only its type could tell.
            return self.guess_method(method) if head else []
        symbol = self.index.resolve(module, callee)
        if symbol is not None:
            return self.symbol_targets(symbol)
        if head and method:
            return self.guess_method(method)
        return []

    def launcher(self, path: str, scope: str, callee: str) -> Launcher | None:
        """What CALLEE is, when it names a callable outside the tree that runs a function it
        is given (`multiprocessing.Process`, `threading.Thread`): see `library.py`."""
        if self.is_local(path, scope, callee.partition(".")[0]):
            return None
        symbol = self.index.resolve(self.index.module_of[path], callee)
        if symbol is None or symbol.kind != "external":
            return None
        return LAUNCHERS.get(symbol.name)

    def names_class(self, path: str, scope: str, dotted: str) -> bool:
        """Does DOTTED name a class itself (`Config.load`), rather than an instance?"""
        if self.is_local(path, scope, dotted.partition(".")[0]):
            return False
        symbol = self.index.resolve(self.index.module_of[path], dotted)
        return symbol is not None and symbol.kind == "class"

    def is_local(self, path: str, scope: str, name: str) -> bool:
        """Is NAME a parameter or an assigned local of the function SCOPE?"""
        return name in self.locals_of(path, scope)

    def local_function(self, path: str, scope: str, name: str) -> str | None:
        """A function defined in SCOPE or an enclosing function (closures)."""
        if "." in name:
            return None
        module = self.index.module_of[path]
        while scope and scope != MODULE_SCOPE:
            full = f"{module}.{scope}.{name}"
            if full in self.index.functions:
                return full
            scope = scope.rpartition(".")[0]
        return None

    def constructor(self, klass: str) -> list[CallTarget]:
        """`Klass(...)`: the first `__init__` along the MRO, or the one a dataclass-like
        class synthesizes from its fields (function None)."""
        for owner in self.index.mro(klass):
            init = f"{owner}.__init__"
            if init in self.index.functions:
                return [CallTarget(init, klass, 1.0, True)]
            if self.index.is_record(owner):
                break
        return [CallTarget(None, klass, 1.0, True)]

    def constructor_of(self, classes: list[str], method: str) -> list[CallTarget]:
        if method == "__init__" and classes:
            return self.constructor(classes[0])
        return []

    def overrides(self, klass: str, method: str, confidence: float) -> list[CallTarget]:
        """Implementations of METHOD in the subclasses of KLASS (a receiver typed by a base
        class may be any of them); none when there are too many to be a useful answer."""
        found = [
            f"{child}.{method}"
            for child in self.index.descendants(klass)
            if f"{child}.{method}" in self.index.functions
        ]
        if len(found) > MAX_OVERRIDES:
            return []
        return [CallTarget(full, None, confidence, True) for full in found]

    def guess_method(self, method: str) -> list[CallTarget]:
        candidates = self.methods_by_name.get(method, [])
        if not candidates or len(candidates) > MAX_GUESSES or method.startswith("__"):
            return []
        confidence = GUESS if len(candidates) == 1 else GUESS / 2
        return [CallTarget(full, None, confidence, True) for full in candidates]


PROPERTIES = frozenset({"property", "cached_property"})


def is_property(function: FunctionDef) -> bool:
    """Is FUNCTION read as an attribute (`@property`, `@functools.cached_property`)?"""
    return any(d.rpartition(".")[2] in PROPERTIES for d in function.decorators)


BRANCH = re.compile(rb"^\s*(if|elif|else|case|match|try|except|with|for|while)\b")


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
        if keyword is None or keyword.group(1) not in (b"if", b"elif", b"else", b"case"):
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
