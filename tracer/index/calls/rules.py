"""What one call runs: the rules `sgtrace callgraph` and `export --scope calls` share.

Names are dotted from the source root (`pkg.mod.Class.method`, `mod.<lambda1>`,
`<builtin>.len`, `numpy.zeros`); a module's own code calls as the module, a class body's as
the function or module around it (calls are made in functions, not in classes).

Precision before recall, as PyCG-style benchmarks reward it: a resolver target is kept when
its confidence is at least `MIN_CONFIDENCE` = 0.8 (the types say so, or it is a subclass
override reached through a typed receiver). Where the resolver finds none, what can be named
without guessing is kept, at confidence 1.0: calls out of the tree (`<builtin>.len`,
`numpy.zeros`), methods and `__init__` inherited from a base class outside the tree
(`torch.nn.Module.__init__`), a name bound in its scope to a lambda, to a function or to what
a called function returns, a method of an instance made at module level (`a = A(); a.f()`,
`a = ext.Cls(); a.fun()` -> `ext.Cls.fun`), `x.attr()` where the classes of x's family store
a function in `attr`, and `f()` where `for f in obj` and obj's `__next__` returns functions.
Where that finds nothing either, the rule's output is the resolver's name-only guesses
(confidence below `MIN_CONFIDENCE`, down to `MIN_GUESS` = 0.5; name matches among several
methods, 0.25, are dropped): the call graph leaves them out, the export draws them dashed.

Besides calls: a decorator `@dec` naming a function of the tree is called where the
definition is made, and `for x in obj` over an object of a class of the tree calls its
`__iter__` and `__next__`. Functions passed as values (through parameters, decorators that
return a wrapper) are tracer/index/calls/values.py's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from tracer.extract.facts import MODULE_SCOPE, Assign, Call, Value
from tracer.index.index import Index
from tracer.index.resolve import GUESS, OVERRIDE, CallTarget, Resolver
from tracer.store.facts import Facts

MIN_CONFIDENCE = OVERRIDE  # a callee at or above this is in the call graph
MIN_GUESS = GUESS  # a guess below this (a name shared by several methods) is not reported


@dataclass(frozen=True, slots=True)
class Callee:
    """A function one call or definition runs, and how sure the rules are of it."""

    name: str
    confidence: float

    @property
    def kept(self) -> bool:
        """Is it in the call graph (else a guess, which only the export draws)?"""
        return self.confidence >= MIN_CONFIDENCE


class CallRules:
    """What one call runs; caches what classes inherit from outside the tree."""

    def __init__(self, index: Index, facts: Facts, resolver: Resolver) -> None:
        self.index = index
        self.facts = facts
        self.resolver = resolver
        self.external_bases: dict[str, str | None] = {}
        self.attributes_of: dict[str, set[str]] = {}
        self.last_assignments: tuple[tuple[str, str, str], list[Assign] | None] = (
            ("", "", ""),
            None,
        )

    # -- one call ----------------------------------------------------------------------------

    def runs(self, path: str, call: Call) -> list[Callee]:
        """What CALL runs, sorted by name: the resolver's confident targets, else what can
        be named without a guess (outside the tree, or through a name bound in the caller's
        scope), else the resolver's guesses. A call of a parameter runs nothing here (what
        the callers pass is FunctionValues.passed's)."""
        if not call.callee:
            return []  # `f()()`, `xs[0]()`: nothing names the callee
        if "." not in call.callee and self.assignments(path, call.scope, call.callee) is None:
            return []  # a parameter, whatever global shares its name
        targets = self.resolver.resolve_call(path, call)
        confident = [t for t in targets if t.confidence >= MIN_CONFIDENCE]
        if confident:
            return callees_of(confident, self.target_name)
        outside = self.outside(path, call, inherited=not targets)
        if outside is not None:
            return [Callee(outside, 1.0)]
        named = self.named(path, call.scope, call.callee)
        if named:
            return [Callee(name, 1.0) for name in sorted(named)]
        return callees_of([t for t in targets if t.confidence >= MIN_GUESS], self.target_name)

    def named(self, path: str, scope: str, callee: str) -> set[str]:
        """What a call of CALLEE in SCOPE runs through the names bound around it, certain
        (`bound`, `stored_methods`, `iterated_functions`); nothing when none names it."""
        return (
            self.bound(path, scope, callee)
            or self.stored_methods(path, scope, callee)
            or self.iterated_functions(path, scope, callee)
        )

    # -- what the chains take a call to run ------------------------------------------------------

    def call_targets(self, path: str, scope: str, callee: str, line: int = 0) -> list[CallTarget]:
        """What a call of CALLEE in SCOPE of PATH (at LINE) runs, as the chains take it: the
        resolver's targets, unless they are name-only guesses: then what the names bound around
        the call name (`named`, certain), nothing when the callee is an object from outside the
        tree, else the guesses the call graph's export draws (at least `MIN_GUESS`; a name
        shared by several methods is none), as `runs` takes them."""
        return self.refined(path, scope, callee, self.resolver.targets(path, scope, callee, line))

    def call_targets_of_id(self, path: str, call_id: int) -> list[CallTarget]:
        """`call_targets` of PATH's call CALL_ID, read from the rows' columns."""
        scope, callee = self.facts.rows(path).call_head(call_id)
        return self.refined(path, scope, callee, self.resolver.resolve_call_id(path, call_id))

    def refined(
        self, path: str, scope: str, callee: str, found: list[CallTarget]
    ) -> list[CallTarget]:
        if not found or max(t.confidence for t in found) >= MIN_CONFIDENCE:
            return found
        named = self.named(path, scope, callee)
        if named:
            tree = sorted(named & self.index.functions.keys())
            return [named_target(self.index, name, callee) for name in tree]
        if self.imported(path, callee) is not None:
            return []  # `logger.info(...)` of an imported or library object: no guess of ours
        return [t for t in found if t.confidence >= MIN_GUESS]  # as `runs`: 0.25 is no guess

    def imported(self, path: str, callee: str) -> str | None:
        """The name outside the tree CALLEE resolves to in PATH's module, if it does."""
        symbol = self.index.resolve(self.index.module_of[path], callee)
        return symbol.name if symbol is not None and symbol.kind == "external" else None

    def target_name(self, target: CallTarget) -> str | None:
        """The function a target runs; a constructor without an `__init__` in the tree runs
        the one of its first base class outside the tree, if any (a dataclass's is made)."""
        if target.function is not None or target.klass is None:
            return target.function
        mro = self.index.mro(target.klass)
        if any(self.index.is_record(klass) for klass in mro):
            return None
        return self.inherited(target.klass, "__init__")

    def outside(self, path: str, call: Call, inherited: bool) -> str | None:
        """A callee outside the tree: a builtin or imported name, or (when INHERITED is
        allowed) a method the receiver's class takes from a base class outside the tree."""
        module = self.index.module_of[path]
        symbol = self.index.resolve(module, call.callee)
        if symbol is not None:
            return symbol.name if symbol.kind == "external" else None
        head, _, method = call.callee.rpartition(".")
        if not (head and inherited):
            return None
        # Only receivers whose class is certain: types inferred for other names may come
        # from a guessed call's return annotation.
        if head in ("self", "cls", "super()"):
            klass = self.resolver.self_class(path, call.scope)
        else:
            symbol = self.index.resolve(module, head)
            klass = symbol.name if symbol is not None and symbol.kind == "class" else None
        return self.inherited(klass, method) if klass is not None else None

    def inherited(self, klass: str, method: str) -> str | None:
        """`base.METHOD` for the first base outside the tree along KLASS's MRO, unless
        METHOD is an attribute the tree sets (`self.mlp = MLP()`, then `self.mlp(x)`)."""
        if klass not in self.external_bases:
            self.external_bases[klass] = self.first_external_base(klass)
        base = self.external_bases[klass]
        if base is None or method == "__class__" or method in self.attributes(klass):
            return None
        return f"{base}.{method}"

    def attributes(self, klass: str) -> set[str]:
        """Names KLASS and its ancestors bind on the class or on `self`."""
        found: set[str] = set()
        for owner in self.index.mro(klass):
            found |= self.own_attributes(owner)
        return found

    def own_attributes(self, klass: str) -> set[str]:
        """Names KLASS binds on the class (its fields) or on `self` in its methods."""
        found = self.attributes_of.get(klass)
        if found is None:
            path, definition = self.index.classes[klass]
            found = {field.name for field in definition.fields}
            prefix = definition.qualname + "."
            for scope in self.facts.rows(path).assigns_by_scope:
                if scope.startswith(prefix):
                    targets = self.resolver.assigns(path, scope)
                    found.update(t[5:] for t in targets if t.startswith("self."))
            self.attributes_of[klass] = found
        return found

    def first_external_base(self, klass: str) -> str | None:
        """The first base class outside the tree (`torch.nn.Module`) along KLASS's MRO."""
        for owner in self.index.mro(klass):
            path, definition = self.index.classes[owner]
            for base in definition.bases:
                symbol = self.index.resolve(self.index.module_of[path], base)
                if symbol is not None and symbol.kind == "external" and not builtin(symbol.name):
                    return symbol.name
        return None

    # -- names bound in the caller's scope ---------------------------------------------------

    def bound(self, path: str, scope: str, callee: str) -> set[str]:
        """Callees through a local or global name: `f = lambda: ...; f()`, `g = make(); g()`
        where `make` returns a function, `a = A(); a.f()`, `a = ext.Cls(); a.fun()`."""
        head, _, name = callee.rpartition(".")
        if "." in head or head == "super()" or not name:
            return set()
        found: set[str] = set()
        for assign in self.assignments(path, scope, head or name) or ():
            if head:
                method = self.instance_method(path, assign, name)
                if method is not None:
                    found.add(method)
            else:
                found |= self.assigned_functions(path, assign)
        return found

    def stored_methods(self, path: str, scope: str, callee: str) -> set[str]:
        """`x.attr()` where no class of x's family has a method `attr` but one of them stores
        a function in it: `self.attr = self.method` (that class's method), or a function."""
        head, _, name = callee.rpartition(".")
        if not head or "." in head or head == "super()":
            return set()
        klass = self.instance_class(path, scope, head)
        if klass is None or self.index.method(klass, name) is not None:
            return set()
        found: set[str] = set()
        for member in self.index.family(klass):
            member_path, definition = self.index.classes[member]
            for assign in self.resolver.self_writes(member_path, name):
                value = assign.value
                in_class = assign.scope.startswith(definition.qualname + ".")
                if not in_class or value.calls or len(value.refs) != 1:
                    continue
                owner, _, method = value.refs[0].rpartition(".")
                if owner == "self":
                    stored = self.index.method(member, method)
                else:
                    stored = self.function_named(member_path, assign.scope, value.refs[0])
                if stored is not None:
                    found.add(stored)
        return found

    def iterated_class(self, path: str, assign: Assign) -> str | None:
        """The class of the tree whose instance `for x in ...` (ASSIGN) iterates over."""
        if assign.op != "for":
            return None
        value = assign.value
        if len(value.refs) == 1 and not value.calls:
            return self.instance_class(path, assign.scope, value.refs[0])
        return self.constructed_class(path, assign)

    def iteration(self, path: str, assign: Assign) -> list[str]:
        """`for x in Cls()`: the loop calls `Cls.__iter__`, then `__next__`."""
        klass = self.iterated_class(path, assign)
        if klass is None:
            return []
        methods = (self.index.method(klass, name) for name in ("__iter__", "__next__"))
        return [method for method in methods if method is not None]

    def iterated_functions(self, path: str, scope: str, callee: str) -> set[str]:
        """`for f in Cls(): f()`: the functions `Cls.__next__` returns."""
        found: set[str] = set()
        for index in self.resolver.assigns(path, scope).get(callee, ()):
            assign = self.facts.flows(path).assigns[index]
            klass = self.iterated_class(path, assign) if len(assign.targets) == 1 else None
            following = self.index.method(klass, "__next__") if klass is not None else None
            if following is not None:
                found |= self.returned_functions(following)
        return found

    def instance_class(self, path: str, scope: str, name: str) -> str | None:
        """The class of NAME in SCOPE: typed by the resolver, or an instance made there
        (`a = A()` at module level, which the resolver leaves untyped)."""
        klass = self.resolver.ref_type(path, scope, name)
        if klass is not None:
            return klass
        for assign in self.assignments(path, scope, name) or ():
            klass = self.constructed_class(path, assign)
            if klass is not None:
                return klass
        return None

    def instance_method(self, path: str, assign: Assign, name: str) -> str | None:
        """Method NAME of the instance ASSIGN binds by calling a class: `a = A(); a.f()`
        (the resolver types names only inside functions, and also from guessed calls)."""
        klass = self.constructed_class(path, assign)
        if klass is not None:
            return self.index.method(klass, name) or self.inherited(klass, name)
        outside = self.outside_class(path, assign)
        return f"{outside}.{name}" if outside is not None else None

    def assignments(self, path: str, scope: str, name: str) -> list[Assign] | None:
        """Plain `NAME = value` in the nearest scope that binds NAME (SCOPE, a function
        around it, the module); None when that binding is a parameter never assigned in its
        function, whose value comes from the callers alone."""
        # One call asks for its callee's name up to three times in a row (is it bound, to
        # what, an instance of what class): the last answer is kept.
        key = (path, scope, name)
        if self.last_assignments[0] != key:
            self.last_assignments = (key, self.find_assignments(path, scope, name))
        return self.last_assignments[1]

    def find_assignments(self, path: str, scope: str, name: str) -> list[Assign] | None:
        module = self.index.module_of[path]
        while True:
            function = self.resolver.function(path, scope)
            found = self.resolver.assigns(path, scope).get(name)
            if function is not None and any(p.name == name for p in function[1].params):
                if not found:
                    return None
                # `f = f or default`: assigned again in the function, as well as given
                assigns = [self.facts.flows(path).assigns[i] for i in found]
                return [one for a in assigns if (one := binding_of(a, name)) is not None]
            if found or scope == MODULE_SCOPE:
                assigns = [self.facts.flows(path).assigns[i] for i in found or ()]
                return [one for a in assigns if (one := binding_of(a, name)) is not None]
            scope = self.enclosing_scope(module, scope)

    def constructed_class(self, path: str, assign: Assign) -> str | None:
        """The class of the tree that ASSIGN's value `Cls(...)` constructs, if certain."""
        value = assign.value
        if len(value.calls) != 1 or value.refs:
            return None
        call = self.facts.flows(path).calls[value.calls[0]]
        targets = self.resolver.resolve_call(path, call)
        return next((t.klass for t in targets if t.klass and t.confidence == 1.0), None)

    def assigned_functions(self, path: str, assign: Assign) -> set[str]:
        """Functions ASSIGN binds: a name, a lambda, or what a called function returns."""
        value = assign.value
        if len(value.calls) == 1 and not value.refs:
            call = self.facts.flows(path).calls[value.calls[0]]
            targets = self.resolver.resolve_call(path, call)
            return {
                name
                for t in targets
                if t.function is not None and t.confidence >= MIN_CONFIDENCE
                for name in self.returned_functions(t.function)
            }
        return self.functions_of(path, assign.scope, value, (assign.line, assign.end_line))

    def returned_functions(self, function: str) -> set[str]:
        """Functions and lambdas that FUNCTION returns by name."""
        path, definition = self.index.functions[function]
        returns = self.facts.flows(path).returns
        found: set[str] = set()
        for index in self.facts.rows(path).returns_by_scope.get(definition.qualname, ()):
            ret = returns[index]
            found |= self.functions_of(path, ret.scope, ret.value, (ret.line, ret.end_line))
        return found

    def functions_of(self, path: str, scope: str, value: Value, lines: tuple[int, int]) -> set[str]:
        """The function VALUE (written on LINES in SCOPE) denotes: a name or a lambda."""
        if value.calls or len(value.refs) > 1:
            return set()
        if value.refs:
            function = self.function_named(path, scope, value.refs[0])
            return {function} if function is not None else set()
        module = self.index.module_of[path]
        lambdas = [
            f"{module}.{f.qualname}"
            for f in self.index.summaries[path].functions
            if f.is_lambda
            and lines[0] <= f.line <= lines[1]
            and self.enclosing_scope(module, f.qualname) == scope
        ]
        return set(lambdas) if len(lambdas) == 1 else set()

    def function_named(self, path: str, scope: str, name: str) -> str | None:
        """The function NAME denotes in SCOPE: a closure, a module function, an import, a
        method of a typed object or of an instance made in the scope (`a.func2`)."""
        local = self.resolver.local_function(path, scope, name)
        if local is not None:
            return local
        symbol = self.index.resolve(self.index.module_of[path], name)
        if symbol is not None:
            return symbol.name if symbol.kind == "function" else None
        head, _, method = name.rpartition(".")
        if not head or "." in head:
            return None
        klass = self.instance_class(path, scope, head)
        return self.index.method(klass, method) if klass is not None else None

    def outside_class(self, path: str, assign: Assign) -> str | None:
        """`ext.Cls` when ASSIGN binds the result of calling a class outside the tree (named
        in CapWords, as classes are; the result of an outside function is unknown)."""
        value = assign.value
        if len(value.calls) != 1 or value.refs:
            return None
        call = self.facts.flows(path).calls[value.calls[0]]
        symbol = self.index.resolve(self.index.module_of[path], call.callee)
        if symbol is None or symbol.kind != "external":
            return None
        return symbol.name if symbol.name.rpartition(".")[2][:1].isupper() else None

    # -- definitions ---------------------------------------------------------------------------

    def decorations(self, path: str) -> list[tuple[str, str, int]]:
        """(caller, decorator, line) for each decorator naming a function of the tree:
        applying it is a call made where the decorated function or class is defined (on
        the line of its `def` or `class`)."""
        module = self.index.module_of[path]
        summary = self.index.summaries[path]
        found = []
        for definition in (*summary.functions, *summary.classes):
            scope = self.enclosing_scope(module, definition.qualname)
            for decorator in definition.decorators:
                function = self.function_named(path, scope, decorator)
                if function is not None:
                    found.append((caller_name(module, scope), function, definition.line))
        return found

    def enclosing_scope(self, module: str, qualname: str) -> str:
        """The innermost function around QUALNAME (class bodies are not scopes of calls)."""
        outer = qualname.rpartition(".")[0]
        while outer and f"{module}.{outer}" not in self.index.functions:
            outer = outer.rpartition(".")[0]
        return outer or MODULE_SCOPE


def caller_name(module: str, scope: str) -> str:
    """The call graph's name for the code of SCOPE in MODULE: the module for its own code."""
    return module if scope == MODULE_SCOPE else f"{module}.{scope}"


def callees_of(
    targets: list[CallTarget], name_of: Callable[[CallTarget], str | None]
) -> list[Callee]:
    """One Callee per function TARGETS run (the highest confidence of each), sorted."""
    best: dict[str, float] = {}
    for target in targets:
        name = name_of(target)
        if name is not None:
            best[name] = max(best.get(name, 0.0), target.confidence)
    return [Callee(name, best[name]) for name in sorted(best)]


def named_target(index: Index, function: str, callee: str) -> CallTarget:
    """FUNCTION run by a call of CALLEE that names it through a binding: a method reached
    through an instance (`a.f()`, or `g = a.f; g()`) is bound to it."""
    defined = index.functions.get(function)
    method = defined is not None and defined[1].class_qualname is not None
    bound = "." in callee or (method and not defined[1].is_static)
    return CallTarget(function, None, 1.0, bound)


def binding_of(assign: Assign, name: str) -> Assign | None:
    """ASSIGN as a plain `NAME = value`: itself (a `case` binding too), or the element of a
    tuple unpacking that goes to NAME (`a, b = f, g` binds a to f); None for `+=`, `for`,
    `with`, or unpacking of a value that is no tuple written out."""
    if assign.op not in ("=", "case"):
        return None
    if len(assign.targets) == 1 and assign.targets[0].index is None:
        return assign
    if len(assign.items) != len(assign.targets):  # `a, *b, c = ...`: positions shift
        return None
    for target in assign.targets:
        if target.path == name and target.index is not None:
            return replace(assign, targets=(target,), value=assign.items[target.index], items=())
    return None


def builtin(name: str) -> bool:
    """`<builtin>.object`, `<builtin>.dict`: bases that have nothing to name."""
    return name.startswith("<builtin>.")
