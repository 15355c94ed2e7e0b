"""Functions, classes and containers as values, for the call graph: what an expression may
hold, followed through names, parameters, returns, attributes and the contents of dicts,
lists and tuples, as PyCG's assignment graph does (a call of what an expression holds runs
each function it may hold).

What a value may be is an `Obj` (obj.py). This module answers what a call runs and returns,
what an expression, a parameter and an attribute hold; what a name holds is bindings.py's
(with the order of bindings within one scope), what a container holds contents.py's. Both ask
this follower back through the `Follower` interface.

A parameter holds what its calls pass (`Sites`, as tracer/index/calls/values.py reads
them) and its default; `*args` a tuple of the positional arguments past the others at each
call. Each question is answered once and remembered with the functions whose parameters it
read (tracer/index/calls/answers.py): when their sites grow, those answers alone are asked
again. A question met again while it is being answered (recursion)
adds nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import partial

from tracer.extract.facts import Assign, Call, FunctionDef, Raise, Shape, Value
from tracer.index.calls.answers import Answers
from tracer.index.calls.bindings import Bindings
from tracer.index.calls.chosen import CHOOSERS, GETATTR, Chosen
from tracer.index.calls.contents import Contents
from tracer.index.calls.obj import NONE, UNKNOWN, Obj, Objs, guessed
from tracer.index.calls.rules import CallRules, binding_of
from tracer.index.calls.values import FunctionValues, Sites
from tracer.index.library import ELEMENT_TAKERS, EMPTY_CONTAINERS, KEY_GETTERS
from tracer.index.resolve import GUESS, MAX_OVERRIDES
from tracer.index.targets import CallTarget

# Bounds: containers nested deeper, or chains of questions longer, are not followed.
MAX_DEPTH = 24


class Objects:
    """What expressions may hold, asked on demand and remembered."""

    def __init__(
        self, rules: CallRules, values: FunctionValues, sites: Sites, depth: int = MAX_DEPTH
    ) -> None:
        self.rules = rules
        self.values = values
        self.index = rules.index
        self.facts = rules.facts
        self.resolver = rules.resolver
        self.sites = sites
        self.answers = Answers(depth, unknown=frozenset({UNKNOWN}))
        self.contents = Contents(self, self.facts, self.answers)
        self.bindings = Bindings(self, self.contents, rules, values, self.answers)
        self.chosen = Chosen(self, rules, values)

    # -- what a call runs ----------------------------------------------------------------------

    def callee_objects(self, path: str, call: Call) -> Objs:
        """What the callee of CALL may be."""
        if call.callee:
            return self.name(path, call.scope, call.callee, call.line)
        return self.shape(path, call.scope, call.receiver.shape, call.line)

    def taken(self, path: str, call: Call) -> Objs:
        """What `c.pop()`, `c.popleft()`, `c.get("k")` (CALL) give out of the containers c
        may be: an element at any index, the value at the constant key given."""
        head, _, method = call.callee.rpartition(".")
        if not head or not (method in ELEMENT_TAKERS or method in KEY_GETTERS):
            return NONE
        boxes = frozenset(
            b for b in self.name(path, call.scope, head, call.line) if b.kind == "box"
        )
        if not boxes:
            return NONE
        where = (path, call.scope, call.line)
        if not call.args and method in ELEMENT_TAKERS:
            return self.contents.items(boxes, frozenset(), where)
        if call.args and method in KEY_GETTERS and call.args[0].keyword is None:
            first = call.args[0].value
            keys = self.value(path, call.scope, first, call.line)
            found = self.contents.items(boxes, keys, where)
            if len(call.args) > 1:  # `d.get("k", default)`: the default when k is missing
                found |= self.value(path, call.scope, call.args[1].value, call.line)
            return found
        return NONE

    def value_targets(self, held: Objs) -> list[CallTarget]:
        """What calling a value that may be each of HELD runs: a function, a method bound to
        its receiver, a class's constructor (as the resolver makes one); certain, or each a
        guess (`GUESS`) when HELD may also be a value nothing names (UNKNOWN). The values
        chosen by a string (`Obj.guess`) are left out (`guesses`)."""
        confidence = 1.0 if UNKNOWN not in held else GUESS
        found: list[CallTarget] = []
        for obj in sorted(held, key=lambda obj: (obj.kind, obj.name)):
            if obj.guess:
                continue
            if obj.kind in ("function", "method"):
                # A classmethod is bound to its class however it is reached.
                defined = self.index.functions.get(obj.name)
                bound = obj.kind == "method" or (defined is not None and defined[1].is_classmethod)
                found.append(CallTarget(obj.name, None, confidence, bound))
            elif obj.kind == "class":
                made = self.resolver.constructor(obj.name)
                found += [replace(target, confidence=confidence) for target in made]
        return found

    def run(self, objs: Objs) -> set[str]:
        """The functions calling each of OBJS runs (`value_targets`, however sure): a
        function or method, a class's `__init__`."""
        names = map(self.rules.target_name, self.value_targets(objs))
        return {name for name in names if name is not None}

    def raised(self, path: str, raised: Raise) -> set[str]:
        """`raise E` where E may be a class (not a call of it): E is made, its `__init__` runs."""
        if raised.value.calls:
            return set()
        objs = self.value(path, raised.scope, raised.value, raised.line)
        return self.run(frozenset(obj for obj in objs if obj.kind == "class"))

    def iterated(self, path: str, assign: Assign) -> set[str]:
        """`for x in v` where v may be an instance of a class of the tree: the loop calls its
        `__iter__` and `__next__`."""
        if assign.op != "for":
            return set()
        found: set[str] = set()
        for obj in self.value(path, assign.scope, assign.value, assign.line):
            if obj.kind == "instance" and not obj.guess:
                for name in ("__iter__", "__next__"):
                    method = self.index.method(obj.name, name)
                    if method is not None:
                        found.add(method)
        return found

    def handed_out(self, path: str, call: Call) -> set[str]:
        """The functions and methods of the tree CALL passes to code outside the tree (`map(f,
        xs)`, `sorted(xs, key=f)`), which calls them: as PyCG counts them, called by the
        caller."""
        found: set[str] = set()
        for arg in call.args:
            objs = self.value(path, call.scope, arg.value, arg.line)
            found |= {
                obj.name
                for obj in objs
                if obj.kind in ("function", "method")
                and obj.name in self.index.functions
                and not obj.guess
            }
        return found

    def guessed_targets(self, objs: Objs) -> list[CallTarget]:
        """The targets of `guesses` (each at `GUESS`), bound as `value_targets` binds them."""
        certain = {t.function for t in self.value_targets(objs)}
        chosen = frozenset(replace(o, guess=False) for o in objs if o.guess)
        return [
            replace(target, confidence=GUESS)
            for target in self.value_targets(chosen - {UNKNOWN})
            if target.function not in certain
        ]

    def declared_result(self, path: str, call: Call) -> list[CallTarget]:
        """What CALL, whose callee holds nothing known, may run by what its result is declared
        to be: `self.pool = pool_class(**options)` where `self.pool: PoolBase` (or `x: T
        = f()`) makes a T or one of T's subclasses (each constructor a guess, at `GUESS`; none
        past `MAX_OVERRIDES` subclasses)."""
        klass = self.declared_class(path, call)
        below = self.subclasses(klass) if klass is not None else None
        if below is None:
            return []
        return [
            replace(target, confidence=GUESS)
            for made in (klass, *below)
            for target in self.resolver.constructor(made)
        ]

    def declared_class(self, path: str, call: Call) -> str | None:
        """The class the one assignment of CALL's result in its scope declares its target to
        hold (its annotation, or the annotation of the attribute it assigns), if any."""
        flows = self.facts.flows(path)
        module = self.index.module_of[path]
        for indexes in self.resolver.assigns(path, call.scope).values():
            for index in indexes:
                assign = flows.assigns[index]
                if (
                    assign.value.calls != (call.id,)
                    or assign.value.refs
                    or len(assign.targets) != 1
                ):
                    continue
                if assign.annotation:
                    return self.index.annotation_class(module, assign.annotation)
                target = assign.targets[0].path
                head, _, attr = target.rpartition(".")
                method = self.resolver.function(path, call.scope)
                if head and method and method[1].params and head == method[1].params[0].name:
                    klass = self.resolver.self_class(path, call.scope)
                    if klass is not None:
                        return self.resolver.types.attr_type(klass, attr)
                return None
        return None

    def result(self, path: str, call: Call) -> Objs:
        """What CALL returns: an instance of a class it makes, what a function it runs
        returns (a generator for one that yields)."""
        return self.answers.ask(("result", path, call.id), lambda: self.find_result(path, call))

    def find_result(self, path: str, call: Call) -> Iterable[Obj]:
        taken = self.taken(path, call)
        if taken:
            yield from taken
            return
        callees = self.callee_objects(path, call)
        if not callees:
            targets = self.rules.runs(path, call)
            callees = frozenset(Obj("function", t.name) for t in targets if t.kept)
        for obj in callees:
            if obj.kind == "class":
                yield Obj("instance", obj.name, guess=obj.guess)
            elif obj.kind in ("function", "method") and obj.name in self.index.functions:
                returned = self.returned(self.values.wrapper_of(obj.name))
                yield from guessed(returned) if obj.guess else returned
            elif obj.kind == "function" and obj.name in CHOOSERS:
                yield from self.chosen.result(path, call, obj.name)
            elif obj.kind == "function" and obj.name in EMPTY_CONTAINERS:
                # `set()`, `deque()`, `defaultdict(list)`: an empty container, filled by stores
                form, skipped = EMPTY_CONTAINERS[obj.name]
                if len(call.args) <= skipped:
                    yield Obj("box", path, call.scope, (form, ()), call.line)

    def returned(self, function: str) -> Objs:
        """What FUNCTION returns; for a generator, a container of what it yields."""
        return self.answers.ask(("returned", function), lambda: self.find_returned(function))

    def find_returned(self, function: str) -> Iterable[Obj]:
        path, definition = self.index.functions[function]
        flows = self.facts.flows(path)
        scope = definition.qualname
        if definition.is_lambda:
            return  # a lambda's body is no return fact
        for index in self.facts.rows(path).returns_by_scope.get(scope, ()):
            ret = flows.returns[index]
            if index in flows.yields:
                yield Obj("box", path, scope, ("list", (("yielded", index),)), ret.line)
            else:
                yield from self.value(path, scope, ret.value, ret.line)

    # -- expressions ---------------------------------------------------------------------------

    def value(self, path: str, scope: str, value: Value, line: int) -> Objs:
        """What VALUE (read in SCOPE at LINE) may hold: by its shape, else when it reads one
        name or one call's result and nothing else."""
        if value.shape is not None and value.shape[0] != "parts":
            return self.shape(path, scope, value.shape, line)
        if len(value.refs) == 1 and not value.calls and not value.arithmetic:
            return self.name(path, scope, value.refs[0], line)
        if len(value.calls) == 1 and not value.refs:
            return self.result(path, self.facts.flows(path).calls[value.calls[0]])
        if value.literal is not None and not value.refs and not value.calls:
            return frozenset({Obj("const", key=value.literal)})
        if not value.refs and not value.calls and value.shape is None:
            return NONE  # reads no name and calls nothing: a literal (`None`, `0`), no object
        return frozenset({UNKNOWN})

    def shape(self, path: str, scope: str, shape: Shape | None, line: int) -> Objs:
        if shape is None:
            return frozenset({UNKNOWN})
        form = shape[0]
        if form == "name":
            return self.name(path, scope, shape[1], line)
        if form == "call":
            return self.result(path, self.facts.flows(path).calls[shape[1]])
        if form == "const":
            return frozenset({Obj("const", key=shape[1])})
        if form in ("dict", "list", "tuple", "set"):
            return frozenset({Obj("box", path, scope, shape, line)})
        if form == "lambda":
            return self.lambda_at(path, shape[1])
        if form == "item":
            containers = self.shape(path, scope, shape[1], line)
            key = shape[2]
            if key is not None and key[0] == "slice":
                return frozenset(self.contents.sliced(containers, key))
            keys = self.shape(path, scope, key, line)
            return self.contents.items(containers, keys, (path, scope, line))
        if form == "attr":
            return self.attribute(self.shape(path, scope, shape[1], line), shape[2])
        if form == "except":  # `case {"k": v, **rest}`: rest holds what the subject holds
            return self.shape(path, scope, shape[1], line)
        return frozenset({UNKNOWN})

    def lambda_at(self, path: str, start: int) -> Objs:
        module = self.index.module_of[path]
        for function in self.index.summaries[path].functions:
            if function.is_lambda and function.start_byte == start:
                return frozenset({Obj("function", f"{module}.{function.qualname}")})
        return frozenset({UNKNOWN})

    # -- names and containers: bindings.py, contents.py ------------------------------------------

    def name(self, path: str, scope: str, name: str, line: int) -> Objs:
        """What NAME (dotted) may hold in SCOPE at LINE."""
        return self.bindings.name(path, scope, name, line)

    def global_name(self, module: str, name: str) -> Objs:
        """What NAME holds as a global of MODULE, read from another scope."""
        return self.bindings.global_name(module, name)

    def straight(self, path: str, line: int) -> bool:
        """Is the statement at LINE at the top level of its scope (no branch or loop)?"""
        return self.bindings.straight(path, line)

    # -- parameters ----------------------------------------------------------------------------

    def parameter(self, function: str, name: str) -> Objs:
        """What parameter NAME of FUNCTION holds: what its calls pass, and its default."""
        return self.answers.ask(
            ("param", function, name), lambda: self.find_parameter(function, name), function
        )

    def find_parameter(self, function: str, name: str) -> Iterable[Obj]:
        """What the calls of FUNCTION pass to NAME; where nothing passed is known, the class
        its annotation names as a class (`type[X]`: X, or one of its subclasses, each a
        guess, as `declared` has it)."""
        key = ("passed", function, name)
        passed = self.answers.ask(key, lambda: self.passed(function, name), function)
        taken = self.answers.holds(key, passed)
        if taken is not None:
            return taken
        path, definition = self.index.functions[function]
        klass = self.resolver.types.class_parameter(path, definition.qualname, name)
        if klass is None or klass not in self.index.classes:
            return passed
        below = self.subclasses(klass) or []
        declared = {Obj("class", klass), *guessed(Obj("class", child) for child in below)}
        return declared | (passed - {UNKNOWN})

    def passed(self, function: str, name: str) -> Iterable[Obj]:
        path, definition = self.index.functions[function]
        index = next(i for i, p in enumerate(definition.params) if p.name == name)
        param = definition.params[index]
        if param.kind == "varargs":
            yield from self.packed(function, definition, index)
            return
        if param.kind not in ("positional", "keyword_only"):
            yield UNKNOWN
            return
        if index == 0 and definition.class_qualname is not None and not definition.is_static:
            klass = f"{self.index.module_of[path]}.{definition.class_qualname}"
            if not definition.is_classmethod:
                yield Obj("instance", klass)
                return
            yield Obj("class", klass)
            yield from self.receivers(function, klass)
            return
        if "=" in param.code:
            outer = self.rules.enclosing_scope(self.index.module_of[path], definition.qualname)
            if len(param.default_refs) == 1:
                yield from self.name(path, outer, param.default_refs[0], 0)
            else:
                yield UNKNOWN
        if index == 0:
            yield from (Obj("function", f) for f in self.values.decorated_by(function))
            yield from (Obj("class", c) for c in self.values.classes_decorated_by(function))
            yield from self.chosen.decorated(function)
        for site_path, site in self.sites(function):
            position = index - (1 if self.values.binds_self(site_path, site, definition) else 0)
            for arg in site.args:
                if arg.star:
                    yield UNKNOWN
                elif arg.keyword == name or arg.position == position:
                    yield from self.value(site_path, site.scope, arg.value, arg.line)

    def receivers(self, function: str, klass: str) -> Iterable[Obj]:
        """The classes of KLASS's family the calls of its classmethod FUNCTION are made on
        (`HFLM.create()`, `registry.get(name).create()`, `model.create()`): what the
        classmethod's first parameter holds there."""
        for site_path, site in self.sites(function):
            for obj in self.receiver(site_path, site):
                if obj.kind not in ("class", "instance") or obj.name not in self.index.classes:
                    continue
                if klass in self.index.mro(obj.name):
                    yield Obj("class", obj.name, guess=obj.guess)

    def receiver(self, path: str, call: Call) -> Objs:
        """What `x` of CALL `x.f(...)` may hold; in `super().f(...)`, what the first parameter
        of the method it is written in holds."""
        head = call.callee.rpartition(".")[0]
        if head == "super()":
            method = self.resolver.function(path, call.scope)
            if method is None or not method[1].params:
                return frozenset()
            return self.name(path, call.scope, method[1].params[0].name, call.line)
        if head:
            return self.name(path, call.scope, head, call.line)
        shape = call.receiver.shape
        if not call.callee and shape is not None and shape[0] == "attr":
            return self.shape(path, call.scope, shape[1], call.line)
        return frozenset()

    def packed(self, function: str, definition: FunctionDef, index: int) -> Iterable[Obj]:
        """`*args` (parameter INDEX of FUNCTION): at each of its calls, a tuple of the
        positional arguments past the parameters before it, and of what a `*xs` spreads."""
        for site_path, site in self.sites(function):
            start = index - (1 if self.values.binds_self(site_path, site, definition) else 0)
            entries = tuple(
                ("star", ("arg", site.id, i)) if arg.star == 1 else ("arg", site.id, i)
                for i, arg in enumerate(site.args)
                if arg.star == 1 or (arg.position is not None and arg.position >= start)
            )
            yield Obj("box", site_path, site.scope, ("tuple", entries), site.line)

    # -- attributes ----------------------------------------------------------------------------

    def attributes(self, objs: Objs, path: str) -> Objs:
        for attr in path.split("."):
            objs = self.attribute(objs, attr)
        return objs

    def attribute(self, objs: Objs, attr: str) -> Objs:
        """What `x.ATTR` holds when x may be each of OBJS."""
        found: set[Obj] = set()
        for obj in objs:
            if obj.guess:  # an attribute of a guess is a guess
                certain = replace(obj, guess=False)
                found |= guessed(
                    self.answers.ask(
                        ("attr", certain, attr), partial(self.find_attribute, certain, attr)
                    )
                )
            else:
                found |= self.answers.ask(
                    ("attr", obj, attr), partial(self.find_attribute, obj, attr)
                )
        return frozenset(found)

    def find_attribute(self, obj: Obj, attr: str) -> Iterable[Obj]:
        if obj.kind == "instance":
            method = self.index.method(obj.name, attr)
            if method is not None:
                yield Obj("method", method)
                return
            key = ("stored", obj.name, attr)
            stored = self.answers.ask(key, partial(self.stored, obj.name, attr))
            taken = self.answers.holds(key, stored)
            if taken is not None:
                yield from taken
                return
            declared = set(self.declared(obj.name, attr))
            fallback = self.index.method(obj.name, "__getattr__")
            if declared or fallback is None or attr.startswith("__"):
                yield from declared or stored
            else:  # Python asks `__getattr__(name)` for what the class does not have.
                yield from self.delegated(fallback, attr)
            yield from stored - {UNKNOWN}  # known once the fallback was chosen
        elif obj.kind == "class":
            nested = f"{obj.name}.{attr}"
            if nested in self.index.classes:
                yield Obj("class", nested)
                return
            method = self.index.method(obj.name, attr)
            yield Obj("function", method) if method is not None else UNKNOWN
        elif obj.kind == "function" and obj.name not in self.index.functions:
            yield Obj("function", f"{obj.name}.{attr}")  # outside the tree: `ext.mod.f`
        elif obj.kind == "module":
            yield from self.chosen.member(obj.name, attr)
        else:
            yield UNKNOWN

    def declared(self, klass: str, attr: str) -> Iterable[Obj]:
        """What `self.ATTR` of a KLASS holds by its annotation (a field's, or `self.ATTR: T`
        in a method), where what is stored there is not known: an instance of T, or of
        one of T's subclasses (each a guess; none past `MAX_OVERRIDES` of them)."""
        annotated = self.resolver.types.attr_type(klass, attr)
        if annotated is None or annotated not in self.index.classes:
            return
        yield Obj("instance", annotated)
        yield from guessed(Obj("instance", child) for child in self.subclasses(annotated) or [])

    def subclasses(self, klass: str) -> list[str] | None:
        """The subclasses a value declared as KLASS may also be (each a guess where it is
        taken); None past `MAX_OVERRIDES` of them (as the resolver's overrides)."""
        below = list(self.index.descendants(klass))
        return below if len(below) <= MAX_OVERRIDES else None

    def delegated(self, fallback: str, attr: str) -> Iterable[Obj]:
        """What `__getattr__` (FALLBACK) returns for the name ATTR: where it returns
        `getattr(x, name)` of its own name parameter, ATTR of what x holds (a proxy handing
        every lookup on to the object it wraps); elsewhere what it returns, whatever the name."""
        path, definition = self.index.functions[fallback]
        params = definition.params
        name = params[1].name if len(params) > 1 else None
        flows = self.facts.flows(path)
        for index in self.facts.rows(path).returns_by_scope.get(definition.qualname, ()):
            ret = flows.returns[index]
            call = sole_call(flows.calls, ret.value)
            if call is not None and name is not None and self.hands_on(path, call, name):
                receivers = self.value(path, call.scope, call.args[0].value, call.line)
                yield from self.attribute(receivers, attr)
            else:
                yield from self.value(path, definition.qualname, ret.value, ret.line)

    def hands_on(self, path: str, call: Call, name: str) -> bool:
        """Is CALL `getattr(x, NAME)`, NAME read alone as the attribute's name?"""
        if len(call.args) != 2 or any(arg.star or arg.keyword for arg in call.args):
            return False
        named = call.args[1].value
        if named.refs != (name,) or named.calls:
            return False
        return any(c.name == GETATTR for c in self.rules.runs(path, call))

    def stored(self, klass: str, attr: str) -> Iterable[Obj]:
        """What the classes of KLASS's family store in `self.ATTR`."""
        found = False
        for member in self.index.family(klass):
            member_path, definition = self.index.classes[member]
            for assign in self.resolver.self_writes(member_path, attr):
                if assign.scope.startswith(definition.qualname + ".") and assign.op == "=":
                    one = binding_of(assign, f"self.{attr}")
                    if one is not None:
                        found = True
                        yield from self.value(member_path, assign.scope, one.value, assign.line)
        if not found:
            yield UNKNOWN


def sole_call(calls: Sequence[Call], value: Value) -> Call | None:
    """The call VALUE is, when it is one call and nothing else."""
    if value.shape is not None and value.shape[0] == "call":
        return calls[value.shape[1]]
    if len(value.calls) == 1 and not value.refs and value.shape is None:
        return calls[value.calls[0]]
    return None
