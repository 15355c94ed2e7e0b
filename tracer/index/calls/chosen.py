"""Values chosen at run time by constant strings, for the call graph's value follower
(tracer/index/calls/objects.py):

- `getattr(x, "name")` (and `getattr(x, "name", default)`): the attribute of that name of what
  x may hold: a module, a class, an instance. The name is a value like any other: a constant
  written there, or a parameter its callers give constants (`self.run("step")` dispatching to
  `getattr(self, name)()`).
- `importlib.import_module("pkg.mod")` (or `from importlib import import_module`): the module
  of the tree of that name, whose attributes are what the index resolves in it.
- A decorator factory (`@register("a")` on a class or function): the function nested in it
  that it returns (`deco`) is given the definition it decorates, so that `REGISTRY[name] =
  cls` in it stores the class at the constant key the factory's callers pass
  (`REGISTRY["a"]()` then makes an `A`).

Certain when the string is one constant naming one value; a guess (`Obj.guess`) when it may be
several constants or names several values, or when what x holds is not known (then the
methods of the tree of that name, as the resolver guesses for `x.name()`). A string that is
no constant chooses nothing here.
"""

from __future__ import annotations

from collections.abc import Iterable

from tracer.extract.facts import Call, ClassDef, FunctionDef
from tracer.index.calls.obj import UNKNOWN, Follower, Obj, Objs, guessed
from tracer.index.calls.rules import CallRules
from tracer.index.calls.values import FunctionValues
from tracer.index.index import Symbol

GETATTR = "<builtin>.getattr"
IMPORT_MODULE = "importlib.import_module"
CHOOSERS = frozenset({GETATTR, IMPORT_MODULE})  # the outside functions that choose by string


class Chosen:
    """What a choice by string gives, asked of the value follower FOLLOWER."""

    def __init__(self, follower: Follower, rules: CallRules, values: FunctionValues) -> None:
        self.follower = follower
        self.rules = rules
        self.values = values
        self.index = rules.index
        self.facts = rules.facts
        self.factories: dict[str, list[Obj]] = {}  # factory -> what its calls decorate

    def result(self, path: str, call: Call, chooser: str) -> Iterable[Obj]:
        """What CALL of CHOOSER (one of `CHOOSERS`) returns."""
        if chooser == GETATTR:
            return self.attribute_named(path, call)
        return self.module_named(path, call)

    # -- getattr ------------------------------------------------------------------------------

    def attribute_named(self, path: str, call: Call) -> Iterable[Obj]:
        """`getattr(x, name[, default])`: the attribute of each value x may hold named by each
        constant string name may be; the default as it is."""
        receivers = self.argument(path, call, 0)
        names = self.argument(path, call, 1)
        if receivers is None or names is None:
            return {UNKNOWN}
        strings = constant_strings(names)
        if not strings:
            return {UNKNOWN}
        found: set[Obj] = set()
        for name in strings:
            found |= self.follower.attribute(receivers, name)
            if UNKNOWN in receivers:  # as `x.name()` of an x nothing types: the methods so named
                found |= {
                    Obj("method", t.function, guess=True)
                    for t in self.rules.resolver.guess_method(name)
                    if t.function is not None
                }
        named = found - {UNKNOWN}
        if len(names) > 1 or len(named) > 1:
            found = set(guessed(found))
        default = self.argument(path, call, 2)
        return found | (default or set())

    def member(self, module: str, attr: str) -> Objs:
        """What ATTR of the module MODULE of the tree holds: what the index names, else
        what the module's global of that name holds."""
        symbol = self.index.member(Symbol("module", module), attr)
        if symbol is None:
            return self.follower.global_name(module, attr)
        if symbol.kind == "function":
            return frozenset({Obj("function", self.values.wrapper_of(symbol.name))})
        if symbol.kind == "external":
            return frozenset({Obj("function", symbol.name)})
        return frozenset({Obj(symbol.kind, symbol.name)})  # a class or a module

    # -- import_module --------------------------------------------------------------------------

    def module_named(self, path: str, call: Call) -> Iterable[Obj]:
        """`import_module("pkg.mod")`: the module of the tree of each constant name given
        (absolute names only: `package=` is not read)."""
        names = self.argument(path, call, 0)
        strings = constant_strings(names or frozenset())
        found = {Obj("module", name) if name in self.index.path_of else UNKNOWN for name in strings}
        if not found or names is None or len(names) > len(strings):
            found.add(UNKNOWN)
        return guessed(found) if len(strings) > 1 else found

    def argument(self, path: str, call: Call, position: int) -> Objs | None:
        """What the argument at POSITION of CALL may hold; None when it is not written."""
        for arg in call.args:
            if arg.position == position and not arg.star:
                return self.follower.value(path, call.scope, arg.value, arg.line)
        return None

    # -- decorator factories -------------------------------------------------------------------

    def decorated(self, function: str) -> Iterable[Obj]:
        """The classes and functions decorated by a call of a factory (`@register("a")`)
        that returns FUNCTION by name, a function nested in it: what FUNCTION is given as its
        first argument. The factory is named by the call, not followed by value: what the
        call's result reads would be read by every answer about FUNCTION's parameter."""
        factory = function.rpartition(".")[0]
        if factory not in self.index.functions or function not in self.rules.returned_functions(
            factory
        ):
            return
        yield from self.applications(factory)

    def applications(self, factory: str) -> list[Obj]:
        """The definitions of the tree decorated by a call of FACTORY (`@register(...)`,
        `@registry.register(...)`)."""
        found = self.factories.get(factory)
        if found is not None:
            return found
        found = self.factories[factory] = []
        name = self.index.functions[factory][1].name
        for path in self.facts.mentioning(name):
            summary = self.index.summaries[path]
            for definition in (*summary.functions, *summary.classes):
                decorators = [d for d in definition.decorators if d.rpartition(".")[2] == name]
                call = decorators and self.values.decorator_call(path, definition, decorators)
                if call and self.rules.function_named(path, call.scope, call.callee) == factory:
                    found.append(self.definition_obj(path, definition))
        return found

    def definition_obj(self, path: str, definition: FunctionDef | ClassDef) -> Obj:
        full = f"{self.index.module_of[path]}.{definition.qualname}"
        return Obj("class" if isinstance(definition, ClassDef) else "function", full)


def constant_strings(objs: Objs) -> list[str]:
    """The constant strings OBJS may be, sorted."""
    return sorted({obj.key for obj in objs if obj.kind == "const" and isinstance(obj.key, str)})
