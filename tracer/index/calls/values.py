"""Functions as values in the call graph: what a call of a parameter runs, and the wrapper a
decorated function's name holds.

A function passed as an argument runs where the parameter is called (also when passed on
through another parameter): a name, a bound method (`a.func2`), a lambda written as the
argument, a method of an object of an outside class (`session.get`). A call of a decorated
function runs the wrapper its decorator returns (`inner`), which runs the function, when the
decorator returns that one nested function and nothing else; one that returns no such
wrapper (`@register`) is given the function or class, and taken to give it back. A factory
`@dec(...)` (a decorator whose call is written above the definition: the decorator's text
leaves out its arguments) wraps nothing here; the function the factory returns is given the
definition (tracer/index/calls/chosen.py). Decorators apply from the innermost out.

What a parameter holds depends on the calls of its function (its *sites*); the caller of
`passed` says where they come from: the whole tree's, found until nothing is new
(tracer/analyses/callgraph.py), or those a query finds by name (tracer/analyses/calls/
queries.py).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable
from functools import cached_property

from tracer.extract.facts import MODULE_SCOPE, Call, ClassDef, FunctionDef
from tracer.index.calls.rules import CallRules

# A function's call sites: (path, call) for each call that runs it.
Sites = Callable[[str], Iterable[tuple[str, Call]]]


class FunctionValues:
    """Decorators and parameters; WHOLE reads every decorator of the tree at once (the call
    graph needs them all), else each on demand."""

    def __init__(self, rules: CallRules, whole: bool) -> None:
        self.rules = rules
        self.index = rules.index
        self.facts = rules.facts
        self.resolver = rules.resolver
        self.wrapped: dict[str, str] = {}  # decorated function -> the wrapper its name holds
        self.decorated: dict[str, list[str]] = {}  # decorator -> what it is applied to
        self.decorated_classes: dict[str, list[str]] = {}  # decorator -> the classes
        self.wrappers: dict[str, str | None] = {}  # decorator -> its sole wrapper
        # file -> its calls of decorators' names, the lines of its definitions
        self.decorating_calls: dict[str, tuple[dict[str, list[Call]], list[int]]] = {}
        self.whole = whole
        if whole:
            self.read_decorators(self.index.module_of)

    # -- decorators ----------------------------------------------------------------------------

    def wrapper_of(self, function: str) -> str:
        """What a call of FUNCTION runs: the wrapper its decorators return, else itself."""
        found = self.wrapped.get(function)
        if found is not None or self.whole or function not in self.index.functions:
            return found or function
        path, definition = self.index.functions[function]
        found = self.applied(path, definition)[1] if definition.decorators else function
        self.wrapped[function] = found
        return found

    def decorated_by(self, decorator: str) -> list[str]:
        """What DECORATOR is given, as its first argument, where it decorates a definition:
        the function, or the wrapper an inner decorator returned for it."""
        found = self.decorated.get(decorator)
        if found is None and not self.whole:
            name = self.index.functions[decorator][1].name
            self.read_decorators(self.facts.mentioning(name), only=decorator)
            found = self.decorated.setdefault(decorator, [])
        return found or []

    def classes_decorated_by(self, decorator: str) -> list[str]:
        """The classes DECORATOR decorates (`@register class A`, written without a call):
        each is what it is given there."""
        self.decorated_by(decorator)  # reads where DECORATOR is applied, if not read yet
        return self.decorated_classes.get(decorator, [])

    def read_decorators(self, paths: Iterable[str], only: str | None = None) -> None:
        """Read the decorated definitions of PATHS: what each decorator (ONLY, if given) is
        applied to (a function, or a class), and the wrapper each decorated function's name
        then holds."""
        for path in paths:
            module = self.index.module_of[path]
            for definition in self.index.summaries[path].functions:
                if not definition.decorators:
                    continue
                full = f"{module}.{definition.qualname}"
                applied, value = self.applied(path, definition)
                for function, given in applied:
                    if only is None or function == only:
                        self.decorated.setdefault(function, []).append(given)
                if value != full:
                    self.wrapped[full] = value
            for klass in self.index.summaries[path].classes:
                for function in self.class_decorators(path, klass):
                    if only is None or function == only:
                        given = f"{module}.{klass.qualname}"
                        self.decorated_classes.setdefault(function, []).append(given)

    def class_decorators(self, path: str, klass: ClassDef) -> Iterable[str]:
        """The decorators of the tree KLASS is written with (not as calls)."""
        scope = self.rules.enclosing_scope(self.index.module_of[path], klass.qualname)
        for decorator in klass.decorators:
            function = self.rules.function_named(path, scope, decorator)
            if function is not None and not self.decorator_call(path, klass, (decorator,)):
                yield function

    def applied(self, path: str, definition: FunctionDef) -> tuple[list[tuple[str, str]], str]:
        """The decorators of the tree DEFINITION is written with (not as calls), each with
        what it is given, innermost first; and the wrapper the name finally holds (the
        function, if none): `@dec def f` binds f to the one nested function `dec` returns
        (`inner`); a decorator that returns no such wrapper gives back what it is given."""
        module = self.index.module_of[path]
        scope = self.rules.enclosing_scope(module, definition.qualname)
        value = f"{module}.{definition.qualname}"
        applied = []
        for decorator in reversed(definition.decorators):
            function = self.rules.function_named(path, scope, decorator)
            if function is None:
                continue  # outside the tree: taken to give back what it is given
            if self.decorator_call(path, definition, (decorator,)):
                continue  # `@dec(...)`: what the call returns decorates (calls/chosen.py)
            applied.append((function, value))
            wrapper = self.sole_wrapper(function)
            if wrapper is not None:
                value = wrapper
        return applied, value

    def decorator_call(
        self, path: str, definition: FunctionDef | ClassDef, decorators: Iterable[str]
    ) -> Call | None:
        """The call of one of DECORATORS written above DEFINITION (`@register("a")`, with no
        other definition between), if one of them is written as a call: the decorator's
        text leaves its arguments out."""
        calls, lines = self.decorator_calls(path)
        module = self.index.module_of[path]
        scope = self.rules.enclosing_scope(module, definition.qualname)
        found = [
            call
            for name in decorators
            for call in calls.get(name, ())
            if call.scope == scope and call.end_line < definition.line
        ]
        if not found:
            return None
        call = max(found, key=lambda c: c.line)
        after = bisect_right(lines, call.end_line)
        between = after < len(lines) and lines[after] < definition.line
        return None if between else call

    def decorator_calls(self, path: str) -> tuple[dict[str, list[Call]], list[int]]:
        """PATH's calls of names its definitions are decorated with, by name; the lines of
        its definitions, sorted."""
        found = self.decorating_calls.get(path)
        if found is None:
            summary = self.index.summaries[path]
            definitions = (*summary.functions, *summary.classes)
            names = {name for d in definitions for name in d.decorators}
            calls: dict[str, list[Call]] = {}
            for call in self.facts.flows(path).calls if names else ():
                if call.callee in names:
                    calls.setdefault(call.callee, []).append(call)
            found = calls, sorted(d.line for d in definitions)
            self.decorating_calls[path] = found
        return found

    def sole_wrapper(self, decorator: str) -> str | None:
        """The function nested in DECORATOR that each of its returns gives back (`return
        inner`), if that is all it returns; None for a factory used as `@dec(...)` (its
        wrapper returns a function in turn; the decorator's arguments are not kept), a lambda,
        or a decorator that may return something else."""
        if decorator not in self.wrappers:
            self.wrappers[decorator] = self.find_sole_wrapper(decorator)
        return self.wrappers[decorator]

    def find_sole_wrapper(self, decorator: str) -> str | None:
        path, definition = self.index.functions[decorator]
        returned = [
            self.rules.functions_of(path, ret.scope, ret.value, (ret.line, ret.end_line))
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
        if self.rules.returned_functions(function):
            return True
        params = [p for p in self.index.functions[function][1].params if p.kind == "positional"]
        return len(params) == 1 and function in self.defining

    @cached_property
    def defining(self) -> set[str]:
        """Functions and classes with a function defined in their body."""
        return {name.rpartition(".")[0] for name in self.index.functions}

    # -- parameters ----------------------------------------------------------------------------

    def parameter_owner(self, path: str, call: Call) -> str | None:
        """The function whose parameter CALL's callee is: the nearest one around the call
        that binds the name, if it binds it as a parameter (`f` of a decorator, called by its
        wrapper)."""
        if "." in call.callee:
            return None
        module = self.index.module_of[path]
        scope = call.scope
        while scope != MODULE_SCOPE:
            found = self.resolver.function(path, scope)
            if found is not None and any(p.name == call.callee for p in found[1].params):
                return found[0]
            if call.callee in self.resolver.assigns(path, scope):
                return None
            scope = self.rules.enclosing_scope(module, scope)
        return None

    def passed(
        self, function: str, parameter: str, sites: Sites, seen: frozenset[tuple[str, str]]
    ) -> set[str]:
        """The functions the calls of FUNCTION (its SITES) pass for PARAMETER (by position or
        by keyword): names, bound methods (`a.func2`), lambdas written as the argument, and
        what the caller's own parameter of that name was passed in turn."""
        if (function, parameter) in seen:
            return set()
        seen |= {(function, parameter)}
        definition = self.index.functions[function][1]
        index = next(i for i, p in enumerate(definition.params) if p.name == parameter)
        if definition.params[index].kind not in ("positional", "keyword_only"):
            return set()
        # A decorator is given what it decorates, as its first argument.
        found: set[str] = set(self.decorated_by(function)) if index == 0 else set()
        for site_path, site in sites(function):
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
        self, path: str, scope: str, name: str, sites: Sites, seen: frozenset[tuple[str, str]]
    ) -> set[str]:
        """The functions NAME stands for in SCOPE: the one it names, or, for a parameter of
        the function SCOPE, those its callers pass."""
        enclosing = self.resolver.function(path, scope)
        if enclosing is not None and any(p.name == name for p in enclosing[1].params):
            return self.passed(enclosing[0], name, sites, seen)
        function = self.rules.function_named(path, scope, name) or self.outside_method(
            path, scope, name
        )
        return {function} if function is not None else set()

    def outside_method(self, path: str, scope: str, name: str) -> str | None:
        """`ext.Cls.fun` for `a.fun` where `a = ext.Cls()` in SCOPE (a class outside the tree)."""
        head, _, method = name.rpartition(".")
        if not head or "." in head:
            return None
        for assign in self.rules.assignments(path, scope, head) or ():
            outside = self.rules.outside_class(path, assign)
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
            and self.rules.enclosing_scope(module, f.qualname) == call.scope
        )
        empty = [i for i, a in enumerate(call.args) if not a.value.refs and not a.value.calls]
        if not lambdas or len(lambdas) != len(empty):
            return {}
        return {i: name for i, (_, name) in zip(empty, lambdas, strict=True)}
