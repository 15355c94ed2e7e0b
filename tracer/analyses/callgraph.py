"""The call graph in PyCG's interchange format: `{"caller": ["callee", ...]}`.

Keys are every module (its module-level code is the caller), every function and lambda of
the tree, and every callee; names are dotted from the source root (`pkg.mod.Class.method`,
`mod.<lambda1>`, `<builtin>.len`, `numpy.zeros`).

Precision before recall, as PyCG-style benchmarks reward it: a resolver target is kept when
its confidence is at least `MIN_CONFIDENCE` = 0.8 (the types say so, or it is a subclass
override reached through a typed receiver); name-only guesses (0.5 and below) are left
out. Where the resolver finds nothing, this module adds what it can name without guessing:
calls out of the tree (`<builtin>.len`, `numpy.zeros`), methods and `__init__` inherited
from a base class outside the tree (`torch.nn.Module.__init__`), a name bound in its scope
to a lambda, to a function or to what a called function returns, a method of an instance
made at module level (`a = A(); a.f()`, `a = ext.Cls(); a.fun()` -> `ext.Cls.fun`), and a
decorator `@dec`, which is a call of `dec` where the definition is made.

Functions as values: one passed as an argument runs where the parameter is called (also when
passed on through another parameter); a call of a decorated function runs the wrapper its
decorator returns (`inner`), which runs the function, when the decorator returns that one
nested function and nothing else (a factory `@dec(...)` is not followed: the decorator's
arguments are not kept); a name bound by unpacking `f, g` calls its element; `x.attr()` runs
what the classes of x's family store in `attr`; `for x in obj` calls obj's `__iter__` and
`__next__`, and `x()` what `__next__` returns.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property

from tracer.extract.facts import MODULE_SCOPE, Assign, Call, FunctionDef, Value
from tracer.index.resolve import OVERRIDE, CallTarget
from tracer.session import Session

MIN_CONFIDENCE = OVERRIDE


def call_graph(session: Session) -> dict[str, list[str]]:
    """Every module, function, lambda and callee as a key, with its callees sorted, unique."""
    return CallGraph(session).build()


class CallGraph:
    """One pass over the calls of every file; caches what classes inherit from outside."""

    def __init__(self, session: Session) -> None:
        self.index = session.index
        self.facts = session.facts
        self.resolver = session.graph.resolver
        self.external_bases: dict[str, str | None] = {}
        self.attributes_of: dict[str, set[str]] = {}
        self.wrapped: dict[str, str] = {}  # decorated function -> the wrapper its name holds
        self.decorated: dict[str, list[str]] = {}  # decorator -> what it is applied to

    def build(self) -> dict[str, list[str]]:
        edges: dict[str, set[str]] = {name: set() for name in self.index.functions}
        sites: dict[str, list[tuple[str, Call]]] = {}  # function -> the calls that run it
        # `f(...)` where f is a parameter, with the function whose parameter it is.
        through_parameters: list[tuple[str, Call, str]] = []
        self.read_decorators()
        for path, module in sorted(self.index.module_of.items()):
            edges.setdefault(module, set())
            for call in self.facts.flows(path).calls:
                found = {self.wrapped.get(name, name) for name in self.callees(path, call)}
                edges.setdefault(self.caller(module, call.scope), set()).update(found)
                for callee in found:
                    sites.setdefault(callee, []).append((path, call))
                owner = self.parameter_owner(path, call) if "." not in call.callee else None
                if owner is not None:
                    through_parameters.append((path, call, owner))
            for caller, callee in self.decorations(path):
                edges.setdefault(caller, set()).add(callee)
            for assign in self.facts.flows(path).assigns:
                for callee in self.iteration(path, assign):
                    edges.setdefault(self.caller(module, assign.scope), set()).add(callee)
        # A function passed as an argument runs where the parameter is called; what a call
        # through a parameter runs may itself be called with functions: until nothing is new.
        new = True
        while new:
            new = False
            for path, call, owner in through_parameters:
                caller = edges[self.caller(self.index.module_of[path], call.scope)]
                passed = self.passed(owner, call.callee, sites, frozenset())
                for callee in passed - caller:
                    caller.add(callee)
                    sites.setdefault(callee, []).append((path, call))
                    new = True
        callees = set().union(*edges.values())
        return {name: sorted(edges.get(name, ())) for name in edges.keys() | callees}

    # -- functions passed as values ----------------------------------------------------------

    def parameter_owner(self, path: str, call: Call) -> str | None:
        """The function whose parameter CALL's callee is: the nearest one around the call
        that binds the name, if it binds it as a parameter (`f` of a decorator, called by its
        wrapper)."""
        module = self.index.module_of[path]
        scope = call.scope
        while scope != MODULE_SCOPE:
            found = self.resolver.function(path, scope)
            if found is not None and any(p.name == call.callee for p in found[1].params):
                return found[0]
            if call.callee in self.resolver.assigns(path, scope):
                return None
            scope = self.enclosing_scope(module, scope)
        return None

    def passed(
        self,
        function: str,
        parameter: str,
        sites: dict[str, list[tuple[str, Call]]],
        seen: frozenset[tuple[str, str]],
    ) -> set[str]:
        """The functions the calls of FUNCTION pass for PARAMETER (by position or by keyword):
        names, bound methods (`a.func2`), lambdas written as the argument, and what the
        caller's own parameter of that name was passed in turn."""
        if (function, parameter) in seen:
            return set()
        seen |= {(function, parameter)}
        definition = self.index.functions[function][1]
        index = next(i for i, p in enumerate(definition.params) if p.name == parameter)
        if definition.params[index].kind not in ("positional", "keyword_only"):
            return set()
        # A decorator is given what it decorates, as its first argument.
        found: set[str] = set(self.decorated.get(function, ())) if index == 0 else set()
        for site_path, site in sites.get(function, ()):
            position = index - (1 if self.binds_self(site_path, site, definition) else 0)
            lambdas = self.lambda_arguments(site_path, site)
            for i, arg in enumerate(site.args):
                if arg.star or not (arg.keyword == parameter or arg.position == position):
                    continue
                if i in lambdas:
                    found.add(lambdas[i])
                elif len(arg.value.refs) == 1 and not arg.value.calls:
                    found |= self.function_value(
                        site_path, site.scope, arg.value.refs[0], sites, seen
                    )
        return found

    def function_value(
        self,
        path: str,
        scope: str,
        name: str,
        sites: dict[str, list[tuple[str, Call]]],
        seen: frozenset[tuple[str, str]],
    ) -> set[str]:
        """The functions NAME stands for in SCOPE: the one it names, or, for a parameter of
        the function SCOPE, those its callers pass."""
        enclosing = self.resolver.function(path, scope)
        if enclosing is not None and any(p.name == name for p in enclosing[1].params):
            return self.passed(enclosing[0], name, sites, seen)
        function = self.function_named(path, scope, name) or self.outside_method(path, scope, name)
        return {function} if function is not None else set()

    def outside_method(self, path: str, scope: str, name: str) -> str | None:
        """`ext.Cls.fun` for `a.fun` where `a = ext.Cls()` in SCOPE (a class outside the tree)."""
        head, _, method = name.rpartition(".")
        if not head or "." in head:
            return None
        for assign in self.assignments(path, scope, head) or ():
            outside = self.outside_class(path, assign)
            if outside is not None:
                return f"{outside}.{method}"
        return None

    def binds_self(self, path: str, call: Call, definition: FunctionDef) -> bool:
        """Does CALL fill the method DEFINITION's first parameter with its receiver? A method
        called by a bare name was passed as a value: a bound method (`a.func2`)."""
        if definition.class_qualname is None or definition.is_static:
            return False
        head = call.callee.rpartition(".")[0]
        if not head:
            return True
        symbol = self.index.resolve(self.index.module_of[path], head)
        return definition.is_classmethod or symbol is None or symbol.kind != "class"

    def lambda_arguments(self, path: str, call: Call) -> dict[int, str]:
        """Argument index -> the lambda written as that argument of CALL: the lambdas written
        within the call, in order, to the arguments that read nothing, in order, when they
        are as many."""
        module = self.index.module_of[path]
        lambdas = sorted(
            (f.start_byte, f"{module}.{f.qualname}")
            for f in self.index.summaries[path].functions
            if f.is_lambda
            and call.line <= f.line <= call.end_line
            and self.enclosing_scope(module, f.qualname) == call.scope
        )
        empty = [i for i, a in enumerate(call.args) if not a.value.refs and not a.value.calls]
        if not lambdas or len(lambdas) != len(empty):
            return {}
        return {i: name for i, (_, name) in zip(empty, lambdas, strict=True)}

    # -- one call ----------------------------------------------------------------------------

    def callees(self, path: str, call: Call) -> set[str]:
        """What CALL runs: the resolver's confident targets, else what can be named without
        a guess (outside the tree, or through a name bound in the caller's scope)."""
        if not call.callee:
            return set()  # `f()()`, `xs[0]()`: nothing names the callee
        if "." not in call.callee and self.assignments(path, call.scope, call.callee) is None:
            return set()  # a parameter, whatever global shares its name
        targets = self.resolver.resolve_call(path, call)
        confident = [t for t in targets if t.confidence >= MIN_CONFIDENCE]
        if confident:
            return {name for t in confident if (name := self.target_name(t)) is not None}
        outside = self.outside(path, call, inherited=not targets)
        if outside is not None:
            return {outside}
        return (
            self.bound(path, call)
            or self.stored_methods(path, call)
            or self.iterated_functions(path, call)
        )

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
        found = self.attributes_of.get(klass)
        if found is None:
            found = set()
            for owner in self.index.mro(klass):
                path, definition = self.index.classes[owner]
                found.update(field.name for field in definition.fields)
                prefix = definition.qualname + "."
                for assign in self.facts.flows(path).assigns:
                    if assign.scope.startswith(prefix):
                        found.update(
                            t.path[5:] for t in assign.targets if t.path.startswith("self.")
                        )
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

    def bound(self, path: str, call: Call) -> set[str]:
        """Callees through a local or global name: `f = lambda: ...; f()`, `g = make(); g()`
        where `make` returns a function, `a = A(); a.f()`, `a = ext.Cls(); a.fun()`."""
        head, _, name = call.callee.rpartition(".")
        if "." in head or head == "super()" or not name:
            return set()
        found: set[str] = set()
        for assign in self.assignments(path, call.scope, head or name) or ():
            if head:
                method = self.instance_method(path, assign, name)
                if method is not None:
                    found.add(method)
            else:
                found |= self.assigned_functions(path, assign)
        return found

    def stored_methods(self, path: str, call: Call) -> set[str]:
        """`x.attr()` where no class of x's family has a method `attr` but one of them stores
        a function in it: `self.attr = self.method` (that class's method), or a function."""
        head, _, name = call.callee.rpartition(".")
        if not head or "." in head or head == "super()":
            return set()
        klass = self.instance_class(path, call.scope, head)
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

    def iterated_functions(self, path: str, call: Call) -> set[str]:
        """`for f in Cls(): f()`: the functions `Cls.__next__` returns."""
        found: set[str] = set()
        for index in self.resolver.assigns(path, call.scope).get(call.callee, ()):
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
        around it, the module); None when that binding is a parameter, whose value comes
        from the callers."""
        module = self.index.module_of[path]
        while True:
            function = self.resolver.function(path, scope)
            if function is not None and any(p.name == name for p in function[1].params):
                return None
            found = self.resolver.assigns(path, scope).get(name)
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
        found: set[str] = set()
        for ret in self.facts.flows(path).returns:
            if ret.scope == definition.qualname:
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

    def read_decorators(self) -> None:
        """What each decorator of the tree is applied to, and the wrapper a decorated
        function's name then holds: `@dec def f` binds f to the one nested function `dec`
        returns (`inner`), which is given f; decorators apply from the innermost out."""
        for path, module in self.index.module_of.items():
            for definition in self.index.summaries[path].functions:
                if not definition.decorators:
                    continue
                full = f"{module}.{definition.qualname}"
                scope = self.enclosing_scope(module, definition.qualname)
                value = full
                for decorator in reversed(definition.decorators):
                    function = self.function_named(path, scope, decorator)
                    if function is None:
                        continue  # outside the tree: taken to give back what it is given
                    wrapper = self.sole_wrapper(function)
                    if wrapper is None:
                        continue
                    self.decorated.setdefault(function, []).append(value)
                    value = wrapper
                if value != full:
                    self.wrapped[full] = value

    def sole_wrapper(self, decorator: str) -> str | None:
        """The function nested in DECORATOR that each of its returns gives back (`return
        inner`), if that is all it returns; None for a factory used as `@dec(...)` (its
        wrapper returns a function in turn; the decorator's arguments are not kept), a lambda,
        or a decorator that may return something else."""
        path, definition = self.index.functions[decorator]
        returned = [
            self.functions_of(path, ret.scope, ret.value, (ret.line, ret.end_line))
            for ret in self.facts.flows(path).returns
            if ret.scope == definition.qualname
        ]
        if not returned or any(len(functions) != 1 for functions in returned):
            return None
        wrappers = set().union(*returned)
        wrapper = wrappers.pop()
        nested = wrapper.startswith(decorator + ".")
        if wrappers or not nested or self.index.functions[wrapper][1].is_lambda:
            return None
        return None if self.makes_decorator(wrapper) else wrapper

    def makes_decorator(self, function: str) -> bool:
        """Does FUNCTION look like a decorator itself (then its maker was a factory, written
        `@dec(...)`): it returns a function, or it takes one argument and defines a function
        in its body (`def decorator(func): @wraps(func) def wrapper(...)`)?"""
        if self.returned_functions(function):
            return True
        params = [p for p in self.index.functions[function][1].params if p.kind == "positional"]
        return len(params) == 1 and function in self.defining

    @cached_property
    def defining(self) -> set[str]:
        """Functions and classes with a function defined in their body."""
        return {name.rpartition(".")[0] for name in self.index.functions}

    def decorations(self, path: str) -> list[tuple[str, str]]:
        """(caller, decorator) for each decorator naming a function of the tree: applying
        it is a call made where the decorated function or class is defined."""
        module = self.index.module_of[path]
        summary = self.index.summaries[path]
        found = []
        for definition in (*summary.functions, *summary.classes):
            scope = self.enclosing_scope(module, definition.qualname)
            for decorator in definition.decorators:
                function = self.function_named(path, scope, decorator)
                if function is not None:
                    found.append((self.caller(module, scope), function))
        return found

    def enclosing_scope(self, module: str, qualname: str) -> str:
        """The innermost function around QUALNAME (class bodies are not scopes of calls)."""
        outer = qualname.rpartition(".")[0]
        while outer and f"{module}.{outer}" not in self.index.functions:
            outer = outer.rpartition(".")[0]
        return outer or MODULE_SCOPE

    @staticmethod
    def caller(module: str, scope: str) -> str:
        return module if scope == MODULE_SCOPE else f"{module}.{scope}"


def binding_of(assign: Assign, name: str) -> Assign | None:
    """ASSIGN as a plain `NAME = value`: itself, or the element of a tuple unpacking that
    goes to NAME (`a, b = f, g` binds a to f); None for `+=`, `for`, `with`, or unpacking
    of a value that is no tuple written out."""
    if assign.op != "=":
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
