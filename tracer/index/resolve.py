"""Call resolution over facts: what a call may run (a function, a class's constructor, the
overrides a receiver's subclasses bring, name-only guesses), with how sure that is. The
resolver asks its collaborators for the rest: `scopes.py` (what a scope binds), `types.py`
(the class of a value), `factories.py` (the classes a factory's result may be).

Only flows of the files that a question reaches are read (through `Facts.flows`).
"""

from __future__ import annotations

from tracer.extract.facts import MODULE_SCOPE, Assign, Call, FunctionDef, ImportDef
from tracer.index.factories import Factories
from tracer.index.index import Index, Symbol
from tracer.index.library import CONTEXTS, LAUNCHERS, Launcher
from tracer.index.scopes import Scopes
from tracer.index.targets import CallTarget
from tracer.index.types import ASSIGN_ROWS, Types
from tracer.store.facts import Facts
from tracer.store.rows import ASSIGN_VALUE, VALUE_CALLS, VALUE_REFS

GUESS = 0.5  # confidence of a step found by name only
MAX_GUESSES = 3  # a name-only call matching more methods than this is not followed
DYNAMIC = 0.4  # a declared field read through an object that binds no such attribute
# (the one such field a flag sets is a policy: tracer/graph/policies.py's FLAGGED)
OPAQUE = 0.7  # a value read only as an argument of a call outside the tree
OVERRIDE = 0.8  # confidence of a subclass override reached through a base-class receiver
MAX_OVERRIDES = 8


class Resolver:
    """What calls run, over one index and its facts."""

    def __init__(self, index: Index, facts: Facts) -> None:
        self.index = index
        self.facts = facts
        self.scopes = Scopes(index, facts)
        self.factories = Factories(index, facts, self.scopes, self)
        self.types = Types(index, facts, self.scopes, self.factories, self)
        self.methods_by_name: dict[str, list[str]] = {}
        # Targets of each callee text as written in a scope of a file, once resolved outside
        # any type inference: a query meets one call twice or more (ruling a caller in, then
        # building its steps), and a function calls one callee several times.
        self.call_targets: dict[tuple[str, str, str, int], list[CallTarget]] = {}
        for full, (_, function) in index.functions.items():
            if function.class_qualname is not None:
                self.methods_by_name.setdefault(function.name, []).append(full)
        # The last names of the tree's functions and classes.
        self.member_names = frozenset(
            [f.name for _, f in index.functions.values()]
            + [c.name for _, c in index.classes.values()]
        )
        # A call whose last name is none of these cannot run code of this tree.
        self.known_names = set(self.member_names)
        self.known_names |= {a.name for s in index.summaries.values() for a in s.aliases}
        self.known_names |= {i.alias for s in index.summaries.values() for i in s.imports}

    # -- what the graph asks of scopes and types ---------------------------------------------

    def function(self, path: str, scope: str) -> tuple[str, FunctionDef] | None:
        """The function SCOPE of PATH is, with its full name; None for the module."""
        return self.scopes.function(path, scope)

    def self_class(self, path: str, scope: str) -> str | None:
        """The class `self` stands for in SCOPE (see `Scopes.self_class`)."""
        return self.scopes.self_class(path, scope)

    def assigns(self, path: str, scope: str) -> dict[str, list[int]]:
        """Target -> the indices of SCOPE's assignments to it (see `Scopes.assigns`)."""
        return self.scopes.assigns(path, scope)

    def is_local(self, path: str, scope: str, name: str) -> bool:
        """Is NAME a parameter or an assigned local of the function SCOPE?"""
        return self.scopes.is_local(path, scope, name)

    def local_function(self, path: str, scope: str, name: str) -> str | None:
        """A function defined in SCOPE or an enclosing function (closures)."""
        return self.scopes.local_function(path, scope, name)

    def self_writes(self, path: str, attr: str) -> list[Assign]:
        """The assignments `self.ATTR = ...` of a file."""
        return self.scopes.self_writes(path, attr)

    def ref_type(self, path: str, scope: str, dotted: str) -> str | None:
        """The known class of the value DOTTED names in SCOPE, or None."""
        return self.types.ref_type(path, scope, dotted)

    def class_values(self, path: str, scope: str, name: str) -> list[str]:
        """The classes the local NAME of SCOPE may be (see `Types.class_values`)."""
        return self.types.class_values(path, scope, name)

    # -- calls -----------------------------------------------------------------------------

    def resolve_call(self, path: str, call: Call) -> list[CallTarget]:
        """What CALL may run; confidence 1.0 when the types say so, lower for name guesses."""
        return self.targets(path, call.scope, call.callee, call.line)

    def resolve_call_id(self, path: str, call_id: int) -> list[CallTarget]:
        """`resolve_call` of PATH's call CALL_ID, read from the rows' columns (no fact is
        made); its line (its unit's rows) read only when its import depends on the line."""
        rows = self.facts.rows(path)
        scope, callee = rows.call_head(call_id)
        again = self.index.imports_again(path)
        if scope != MODULE_SCOPE and callee.partition(".")[0] in again:
            return self.targets(path, scope, callee, rows.call_line(call_id))
        return self.targets(path, scope, callee)  # (the line would change nothing)

    def targets(self, path: str, scope: str, callee: str, line: int = 0) -> list[CallTarget]:
        """`resolve_call` of a call of PATH, in SCOPE, to CALLEE (as its row has them: no
        fact is made), at LINE: a name the function imported more than once is the one its
        last import before the call binds."""
        # (Most files import each name once: no import depends on the line.)
        again = line and self.index.imports_again(path)
        imp = self.import_before(path, scope, callee, line) if again else None
        key = (path, scope, callee, imp.line if imp is not None else 0)
        found = self.call_targets.get(key)
        if found is None:
            if imp is None:
                found = self.call_targets_of(path, scope, callee)
            else:
                found = self.symbol_targets(self.imported_member(path, imp, callee))
            if not self.types.inferring:
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
        found = self.scopes.function(path, scope)
        if found is None or self.scopes.is_local(path, scope, head):
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
        made = self.types.class_parameter(path, scope, callee)
        if made is not None:  # `cls(...)` in a classmethod makes an object of its class
            return self.constructor(made)
        if "." not in callee and self.scopes.is_local(path, scope, callee):
            # A local bound to a class (`Worker = TpModelWorkerClient if overlap else
            # TpModelWorker`), then called: each class it may be constructs.
            classes = self.types.class_values(path, scope, callee)
            if classes:
                return [t for klass in classes for t in self.constructor(klass)]
        if callee.rpartition(".")[2] not in self.known_names:
            return []
        module = self.index.module_of[path]
        head, _, method = callee.rpartition(".")
        if head == "super()":
            klass = self.scopes.self_class(path, scope)
            if klass is None:
                return []
            for owner in self.index.mro(klass)[1:]:
                full = f"{owner}.{method}"
                if full in self.index.functions:
                    return [CallTarget(full, None, 1.0, True)]
            return self.constructor_of(self.index.mro(klass)[1:], method)
        if head:
            made = self.factories.factory_classes(path, scope, head)
            if made:
                # A factory's result: the method of each class it may make, surely, with the
                # branch of the factory that makes it.
                found = {}
                for klass in made:
                    full = self.index.method(klass, method)
                    if full is not None:
                        function = self.index.functions[full][1]
                        why = self.factories.factory_branch(path, scope, head, klass)
                        found[full] = CallTarget(full, None, 1.0, not function.is_static, why)
                if found:
                    return list(found.values())
            receiver = self.types.ref_type(path, scope, head)
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
        local = self.scopes.local_function(path, scope, callee)
        if local is not None:
            return [CallTarget(local, None, 1.0, False)]
        if self.scopes.shadowed(path, scope, callee.partition(".")[0]):
            # A parameter or local (of this function or one around it) that shadows a global:
            # only its type could tell.
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
        head, _, attr = callee.rpartition(".")
        if self.scopes.is_local(path, scope, callee.partition(".")[0]):
            # `ctx = multiprocessing.get_context("spawn"); ctx.Process(...)`, or through a
            # function of the tree that returns such a context.
            module = self.context_module(path, scope, head, 2) if "." not in head else None
            return LAUNCHERS.get(f"{module}.{attr}") if module and head else None
        symbol = self.index.resolve(self.index.module_of[path], callee)
        if symbol is None or symbol.kind != "external":
            return None
        return LAUNCHERS.get(symbol.name)

    def context_module(self, path: str, scope: str, name: str, depth: int) -> str | None:
        """The module outside the tree whose context the local NAME of SCOPE holds, when every
        assignment of it is one call of a function `CONTEXTS` names, or of a function of the
        tree that returns one (DEPTH functions deep)."""
        rows = self.facts.rows(path)
        found = set()
        for index in self.scopes.assigns(path, scope).get(name, ()):
            value = rows.row(ASSIGN_ROWS, index)[ASSIGN_VALUE]
            calls = value[VALUE_CALLS]
            if len(calls) != 1 or value[VALUE_REFS]:
                return None
            found.add(self.call_context(path, calls[0], depth))
        return found.pop() if len(found) == 1 else None

    def call_context(self, path: str, call_id: int, depth: int) -> str | None:
        """The module whose context call CALL_ID of PATH returns (see `context_module`)."""
        scope, callee = self.facts.rows(path).call_head(call_id)
        symbol = self.index.resolve(self.index.module_of[path], callee)
        if symbol is not None and symbol.kind == "external":
            return CONTEXTS.get(symbol.name)
        if symbol is None or symbol.kind != "function" or depth <= 1:
            return None
        home, function = self.index.functions[symbol.name]
        flows = self.facts.flows(home)
        found = set()
        for index in self.facts.rows(home).returns_by_scope.get(function.qualname, ()):
            value = flows.returns[index].value
            if len(value.calls) != 1 or value.refs:
                return None
            found.add(self.call_context(home, value.calls[0], depth - 1))
        return found.pop() if len(found) == 1 else None

    def names_class(self, path: str, scope: str, dotted: str) -> bool:
        """Does DOTTED name a class itself (`Config.load`), rather than an instance?"""
        if self.scopes.is_local(path, scope, dotted.partition(".")[0]):
            return False
        symbol = self.index.resolve(self.index.module_of[path], dotted)
        return symbol is not None and symbol.kind == "class"

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
