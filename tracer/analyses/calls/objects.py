"""Functions, classes and containers as values, for the call graph: what an expression may
hold, followed through names, parameters, returns, attributes and the contents of dicts,
lists and tuples, as PyCG's assignment graph does (a call of what an expression holds runs
each function it may hold).

What a value may be (`Obj`): a function or lambda of the tree or outside it, a method bound
to its receiver, a class, an instance of a class of the tree, a constant (a key), or a
container: the display (`{"a": f}`, `[f, g]`, `(f, g)`) made where it is written, with the
stores into it (`d["k"] = v`, `d.update({...})`, `xs.append(v)`) anywhere in its file. A read
`d["k"]` takes the entries at k (of the same type: `1` is not `"1"`); a key that is not
constant takes every entry; `xs[1:3]` is a container of the elements it slices.

Order matters where it is certain: in one scope, a store that runs before a read, in the
scope's own block (no branch or loop around it; `Flows.straight`), hides what the same key or
name held before it, and at that level a read does not see what is bound after it
(Jarvis's flow sensitivity, within one scope).

A parameter holds what its calls pass (`Sites`, as tracer/analyses/calls/values.py reads
them) and its default. Each question is answered once and remembered with the functions
whose parameters it read (tracer/analyses/calls/answers.py): when their sites grow, those
answers alone are asked again. A question met again while it is being answered (recursion)
adds nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial

from tracer.analyses.calls.answers import Answers
from tracer.analyses.calls.rules import CallRules, binding_of
from tracer.analyses.calls.values import FunctionValues, Sites
from tracer.extract.facts import MODULE_SCOPE, Assign, Call, Raise, Shape, Value

# Bounds: containers nested deeper, or chains of questions longer, are not followed.
MAX_DEPTH = 24


@dataclass(frozen=True, slots=True)
class Obj:
    """A value: KIND is "function" (NAME a function or lambda, of the tree or outside it),
    "method" (NAME a method, bound to its receiver), "class", "instance" (NAME its class),
    "const" (KEY its value), "box" (a container: the display SHAPE written in SCOPE of the
    file NAME, at LINE)."""

    kind: str
    name: str = ""
    scope: str = ""
    shape: Shape | None = None
    line: int = 0
    key: object = None


UNKNOWN = Obj("unknown")  # a value nothing here can name (a key it stands for: any key)
Objs = frozenset[Obj]
NONE: Objs = frozenset()


class Objects:
    """What expressions may hold, asked on demand and remembered."""

    def __init__(self, rules: CallRules, values: FunctionValues, sites: Sites) -> None:
        self.rules = rules
        self.values = values
        self.index = rules.index
        self.facts = rules.facts
        self.resolver = rules.resolver
        self.sites = sites
        self.answers = Answers(MAX_DEPTH)
        self.storing: dict[str, list[Call]] = {}  # file -> its calls that may store

    # -- what a call runs ----------------------------------------------------------------------

    def callee_objects(self, path: str, call: Call) -> Objs:
        """What the callee of CALL may be."""
        if call.callee:
            return self.name(path, call.scope, call.callee, call.line)
        return self.shape(path, call.scope, call.receiver.shape, call.line)

    def run(self, objs: Objs) -> set[str]:
        """What calling each of OBJS runs: a function or method, a class's `__init__`."""
        found: set[str] = set()
        for obj in objs:
            if obj.kind in ("function", "method"):
                found.add(obj.name)
            elif obj.kind == "class" and not any(
                map(self.index.is_record, self.index.mro(obj.name))
            ):
                init = self.index.method(obj.name, "__init__") or self.rules.inherited(
                    obj.name, "__init__"
                )
                if init is not None:
                    found.add(init)
        return found

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
            if obj.kind == "instance":
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
                if obj.kind in ("function", "method") and obj.name in self.index.functions
            }
        return found

    def result(self, path: str, call: Call) -> Objs:
        """What CALL returns: an instance of a class it makes, what a function it runs
        returns (a generator for one that yields)."""
        return self.answers.ask(("result", path, call.id), lambda: self.find_result(path, call))

    def find_result(self, path: str, call: Call) -> Iterable[Obj]:
        callees = self.callee_objects(path, call)
        if not callees:
            targets = self.rules.runs(path, call)
            callees = frozenset(Obj("function", t.name) for t in targets if t.kept)
        for obj in callees:
            if obj.kind == "class":
                yield Obj("instance", obj.name)
            elif obj.kind in ("function", "method") and obj.name in self.index.functions:
                yield from self.returned(self.values.wrapper_of(obj.name))

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
        if value.shape is not None:
            return self.shape(path, scope, value.shape, line)
        if len(value.refs) == 1 and not value.calls and not value.arithmetic:
            return self.name(path, scope, value.refs[0], line)
        if len(value.calls) == 1 and not value.refs:
            return self.result(path, self.facts.flows(path).calls[value.calls[0]])
        if value.literal is not None and not value.refs and not value.calls:
            return frozenset({Obj("const", key=value.literal)})
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
                return frozenset(self.sliced(containers, key))
            keys = self.shape(path, scope, key, line)
            return self.items(containers, keys, (path, scope, line))
        if form == "attr":
            return self.attribute(self.shape(path, scope, shape[1], line), shape[2])
        return frozenset({UNKNOWN})

    def lambda_at(self, path: str, start: int) -> Objs:
        module = self.index.module_of[path]
        for function in self.index.summaries[path].functions:
            if function.is_lambda and function.start_byte == start:
                return frozenset({Obj("function", f"{module}.{function.qualname}")})
        return frozenset({UNKNOWN})

    # -- names -----------------------------------------------------------------------------------

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
            if klass is not None and not rest:
                return {Obj("instance" if head == "self" else "class", klass)}
            if klass is not None:
                return self.attributes(frozenset({Obj("instance", klass)}), rest)
        # A local binding first: assignments or a parameter of the nearest scope binding it.
        if bound is not None:
            found = self.bound(path, bound, scope, head, line)
            return self.attributes(found, rest) if rest else found
        # Then what the index names: a function, a class, a module, an outside name.
        symbol = self.index.resolve(module, name)
        if symbol is not None:
            if symbol.kind == "function":  # a decorated function's name holds the wrapper
                return {Obj("function", self.values.wrapper_of(symbol.name))}
            if symbol.kind == "class":
                return {Obj("class", symbol.name)}
            if symbol.kind == "external":
                return {Obj("function", symbol.name)}
        function = self.rules.function_named(path, scope, name)
        if function is not None:
            return {Obj("function", self.values.wrapper_of(function))}
        if rest:
            return self.attributes(self.name(path, scope, head, line), rest)
        return {UNKNOWN}

    def binding_scope(self, path: str, scope: str, name: str) -> str | None:
        """The nearest scope (SCOPE, a function around it, the module) that binds NAME by
        assignment or as a parameter; None when none does (a function, class or import)."""
        module = self.index.module_of[path]
        while True:
            if self.parameter_of(path, scope, name) is not None or self.binding(path, scope, name):
                return scope
            if scope == MODULE_SCOPE:
                return None
            scope = self.rules.enclosing_scope(module, scope)

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
            found |= self.parameter(function, name)
        flows = self.facts.flows(path)
        indices = self.binding(path, scope, name)
        for index in self.reaching(path, scope, reader, indices, line):
            found |= self.assigned(path, index, flows.assigns[index], name)
        return frozenset(found)

    def binding(self, path: str, scope: str, name: str) -> list[int]:
        """The assignments of SCOPE that bind NAME (`d["k"] = v` stores into d, binds none)."""
        indices = self.resolver.assigns(path, scope).get(name)
        if not indices:
            return []
        patterns = self.facts.flows(path).patterns
        return [i for i in indices if i not in patterns or contains(patterns[i], ("name", name))]

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
            elements = self.value(path, assign.scope, assign.value, assign.line)
            if len(assign.targets) != 1:
                return NONE
            return self.items(elements, frozenset({UNKNOWN}), (path, assign.scope, assign.line))
        if assign.op not in ("=", ":="):
            return NONE
        pattern = self.facts.flows(path).patterns.get(index)
        if pattern is None:
            one = binding_of(assign, name)
            if one is None:
                return self.unpacked_flat(path, assign, name)
            return self.value(path, assign.scope, one.value, assign.line)
        value = self.value(path, assign.scope, assign.value, assign.line)
        return frozenset(
            self.unpack(value, pattern, ("name", name), (path, assign.scope, assign.line))
        )

    def unpacked_flat(self, path: str, assign: Assign, name: str) -> Objs:
        """NAME of `a, b = value` where the value is no tuple written out."""
        positions = [t.index for t in assign.targets if t.path == name]
        if len(positions) != 1 or positions[0] is None:
            return NONE
        value = self.value(path, assign.scope, assign.value, assign.line)
        keys = frozenset({Obj("const", key=positions[0])})
        return self.items(value, keys, (path, assign.scope, assign.line))

    def unpack(
        self, value: Objs, pattern: Shape, want: Shape, where: tuple[str, str, int]
    ) -> set[Obj]:
        """What the part WANT of PATTERN takes when VALUE is stored into PATTERN."""
        if pattern == want:
            return set(value)
        if pattern is None or pattern[0] != "tuple":
            return set()
        parts = pattern[1]
        star = next((i for i, p in enumerate(parts) if p is not None and p[0] == "star"), None)
        found: set[Obj] = set()
        for i, part in enumerate(parts):
            if not contains(part, want):
                continue
            if i == star:
                after = len(parts) - i - 1
                elements = self.positions(value, i, -after if after else None, where)
                found.add(Obj("box", where[0], where[1], ("list", tuple(elements)), where[2]))
                continue
            key = i if star is None or i < star else i - len(parts)
            item = self.items(value, frozenset({Obj("const", key=key)}), where)
            found |= self.unpack(item, part, want, where)
        return found

    def positions(
        self, value: Objs, start: int, end: int | None, where: tuple[str, str, int]
    ) -> list[Shape]:
        """The elements START:END of the tuples and lists VALUE may be, as a display."""
        found: list[Shape] = []
        for obj in value:
            if obj.kind == "box" and obj.shape[0] in ("list", "tuple"):
                elements = obj.shape[1]
                if any(e is not None and e[0] == "star" for e in elements):
                    continue
                found += [("held", obj, e) for e in elements[start:end]]
        return found

    # -- parameters ----------------------------------------------------------------------------

    def parameter(self, function: str, name: str) -> Objs:
        """What parameter NAME of FUNCTION holds: what its calls pass, and its default."""
        return self.answers.ask(
            ("param", function, name), lambda: self.find_parameter(function, name), function
        )

    def find_parameter(self, function: str, name: str) -> Iterable[Obj]:
        path, definition = self.index.functions[function]
        index = next(i for i, p in enumerate(definition.params) if p.name == name)
        param = definition.params[index]
        if param.kind not in ("positional", "keyword_only"):
            yield UNKNOWN
            return
        if index == 0 and definition.class_qualname is not None and not definition.is_static:
            klass = f"{self.index.module_of[path]}.{definition.class_qualname}"
            yield Obj("class" if definition.is_classmethod else "instance", klass)
            return
        if "=" in param.code:
            outer = self.rules.enclosing_scope(self.index.module_of[path], definition.qualname)
            if len(param.default_refs) == 1:
                yield from self.name(path, outer, param.default_refs[0], 0)
            else:
                yield UNKNOWN
        if index == 0:
            yield from (Obj("function", f) for f in self.values.decorated_by(function))
        for site_path, site in self.sites(function):
            position = index - (1 if self.values.binds_self(site_path, site, definition) else 0)
            for arg in site.args:
                if arg.star:
                    yield UNKNOWN
                elif arg.keyword == name or arg.position == position:
                    yield from self.value(site_path, site.scope, arg.value, arg.line)

    # -- attributes ----------------------------------------------------------------------------

    def attributes(self, objs: Objs, path: str) -> Objs:
        for attr in path.split("."):
            objs = self.attribute(objs, attr)
        return objs

    def attribute(self, objs: Objs, attr: str) -> Objs:
        """What `x.ATTR` holds when x may be each of OBJS."""
        found: set[Obj] = set()
        for obj in objs:
            found |= self.answers.ask(("attr", obj, attr), partial(self.find_attribute, obj, attr))
        return frozenset(found)

    def find_attribute(self, obj: Obj, attr: str) -> Iterable[Obj]:
        if obj.kind == "instance":
            method = self.index.method(obj.name, attr)
            if method is not None:
                yield Obj("method", method)
                return
            yield from self.stored(obj.name, attr)
        elif obj.kind == "class":
            nested = f"{obj.name}.{attr}"
            if nested in self.index.classes:
                yield Obj("class", nested)
                return
            method = self.index.method(obj.name, attr)
            yield Obj("function", method) if method is not None else UNKNOWN
        elif obj.kind == "function" and obj.name not in self.index.functions:
            yield Obj("function", f"{obj.name}.{attr}")  # outside the tree: `ext.mod.f`
        else:
            yield UNKNOWN

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

    # -- contents ------------------------------------------------------------------------------

    def items(self, containers: Objs, keys: Objs, where: tuple[str, str, int]) -> Objs:
        """What `c[k]` holds when c may be each of CONTAINERS and k each of KEYS (any key
        when one is not constant)."""
        found: set[Obj] = set()
        consts = {k.key for k in keys if k.kind == "const"}
        any_key = not keys or any(k.kind != "const" for k in keys)
        for box in containers:
            if box.kind == "box":
                for key in (None,) if any_key else sorted(consts, key=repr):
                    found |= self.content(box, key, any_key, where)
        return frozenset(found)

    def content(self, box: Obj, key: object, any_key: bool, where: tuple[str, str, int]) -> Objs:
        """The entries of BOX at KEY (every entry when ANY_KEY), with the stores into it,
        as seen from WHERE (path, scope, line)."""
        return self.answers.ask(
            ("content", box, key, any_key, where),
            lambda: self.find_content(box, key, any_key, where),
        )

    def find_content(
        self, box: Obj, key: object, any_key: bool, where: tuple[str, str, int]
    ) -> Iterable[Obj]:
        path = box.name
        stores = self.stores(box)
        # A store at this key in the reader's scope, at its top level, before the read and
        # after the display, hides what was there before it.
        read_path, read_scope, read_line = where
        hidden_before = 0
        if not any_key and read_path == path and self.straight(path, read_line):
            for store in stores:
                if (
                    store.key == key
                    and store.scope == read_scope
                    and box.line <= store.line < read_line
                    and self.straight(path, store.line)
                ):
                    hidden_before = max(hidden_before, store.line)
        if not hidden_before:
            yield from self.displayed(box, key, any_key)
        for store in stores:
            if store.line < hidden_before and store.scope == read_scope:
                continue
            if any_key or store.key is ANY or store.key == key:
                yield from store.value

    def displayed(self, box: Obj, key: object, any_key: bool) -> Iterable[Obj]:
        """The entries of BOX's display at KEY."""
        path, scope, line = box.name, box.scope, box.line
        form, entries = box.shape
        if form == "dict":
            for entry_key, entry in entries:
                if entry_key is None:  # `**other`
                    inner = self.element(path, scope, entry[1], line)
                    keys = {UNKNOWN} if any_key else {Obj("const", key=key)}
                    yield from self.items(inner, frozenset(keys), (path, scope, line))
                elif any_key or entry_key == ("const", key) or entry_key[0] != "const":
                    yield from self.element(path, scope, entry, line)
            return
        shifted = False
        for i, entry in enumerate(entries):
            if entry is not None and entry[0] == "star":
                shifted = True
                inner = self.element(path, scope, entry[1], line)
                yield from self.items(inner, frozenset({UNKNOWN}), (path, scope, line))
            elif any_key or shifted or (isinstance(key, int) and key in (i, i - len(entries))):
                yield from self.element(path, scope, entry, line)

    def element(self, path: str, scope: str, entry: Shape | None, line: int) -> Objs:
        """What one entry of a display holds."""
        if entry is not None and entry[0] == "held":  # an element taken from another display
            held = entry[1]
            return self.element(held.name, held.scope, entry[2], held.line)
        if entry is not None and entry[0] == "yielded":
            ret = self.facts.flows(path).returns[entry[1]]
            return self.value(path, scope, ret.value, ret.line)
        return self.shape(path, scope, entry, line)

    def sliced(self, containers: Objs, key: Shape) -> Iterable[Obj]:
        """`xs[lo:hi]`: a list of the elements sliced."""
        for box in containers:
            if box.kind == "box" and box.shape[0] in ("list", "tuple"):
                elements = box.shape[1]
                if any(e is not None and e[0] == "star" for e in elements):
                    yield UNKNOWN
                    continue
                part = tuple(("held", box, e) for e in elements[key[1] : key[2]])
                yield Obj("box", box.name, box.scope, ("list", part), box.line)

    def stores(self, box: Obj) -> frozenset[Store]:
        """The stores into BOX in its file: `c[k] = v`, `c.update({...})`, `c.append(v)`,
        where c may be BOX."""
        return self.answers.ask(("stores", box), lambda: self.find_stores(box), bounded=False)

    def find_stores(self, box: Obj) -> Iterable[Store]:
        path = box.name
        flows = self.facts.flows(path)
        for index, pattern in flows.patterns.items():
            assign = flows.assigns[index]
            for item, value in stored_items(pattern, assign.value):
                if box not in self.shape(path, assign.scope, item[1], assign.line):
                    continue
                held = self.value_of_part(path, assign, value)
                for key in self.shape(path, assign.scope, item[2], assign.line):
                    constant = key.key if key.kind == "const" else ANY
                    yield Store(constant, held, assign.scope, assign.line)
        for call in self.storing_calls(path):
            head, _, method = call.callee.rpartition(".")
            if box in self.name(path, call.scope, head, call.line):
                yield from self.method_stores(path, call, method)

    def storing_calls(self, path: str) -> list[Call]:
        """The calls of PATH that may store into a dict or list (`c.update(...)`), in order."""
        found = self.storing.get(path)
        if found is None:
            callees = self.facts.rows(path).callees
            calls = self.facts.flows(path).calls
            ids = sorted(i for method in STORING for i in callees.get(method, ()))
            found = [calls[i] for i in ids if "." in calls[i].callee and calls[i].args]
            self.storing[path] = found
        return found

    def method_stores(self, path: str, call: Call, method: str) -> Iterable[Store]:
        """What `c.update({...})`, `c.append(v)`, `c.extend(vs)`... (CALL) store into c."""
        where = (path, call.scope, call.line)
        arg = call.args[-1 if method in ("insert", "setdefault") else 0]
        value = self.value(path, call.scope, arg.value, call.line)
        if method == "update":
            for inner in value:
                if inner.kind == "box" and inner.shape[0] == "dict":
                    for entry_key, entry in inner.shape[1]:
                        held = self.element(inner.name, inner.scope, entry, inner.line)
                        constant = entry_key[1] if entry_key and entry_key[0] == "const" else ANY
                        yield Store(constant, held, call.scope, call.line)
        elif method == "extend":
            yield Store(ANY, self.items(value, frozenset({UNKNOWN}), where), *where[1:])
        else:
            yield Store(ANY, value, *where[1:])

    def value_of_part(self, path: str, assign: Assign, value: Shape | Value | None) -> Objs:
        if isinstance(value, Value):
            return self.value(path, assign.scope, value, assign.line)
        return self.shape(path, assign.scope, value, assign.line)


ANY = object()  # a store at a key that is not constant
# Methods of dicts and lists that store into them.
STORING = frozenset({"update", "append", "insert", "extend", "setdefault"})


@dataclass(frozen=True, slots=True)
class Store:
    """VALUE stored at KEY (ANY when not constant) by the statement at LINE of SCOPE."""

    key: object
    value: Objs
    scope: str
    line: int


def contains(pattern: Shape | None, want: Shape) -> bool:
    if pattern == want:
        return True
    if pattern is None:
        return False
    if pattern[0] == "tuple":
        return any(contains(p, want) for p in pattern[1])
    if pattern[0] == "star":
        return contains(pattern[1], want)
    return False


def stored_items(pattern: Shape, value: Value) -> Iterable[tuple[Shape, Shape | Value | None]]:
    """(`c[k]` pattern, what it is given) for each item store in PATTERN given VALUE."""
    if pattern[0] == "item":
        yield pattern, value
    elif pattern[0] == "tuple" and value.shape is not None and value.shape[0] == "tuple":
        parts, given = pattern[1], value.shape[1]
        if len(parts) == len(given):
            for part, element in zip(parts, given, strict=True):
                if part is not None and part[0] == "item":
                    yield part, element
