"""Objects made in the function that reads them: which writes may give `b.attr` its value where
`b` holds an object the same function constructed (`b = C(...)`), followed in the order the
statements run instead of joined by the attribute's name.

Python semantics, for a read of `b.attr` at line L of scope S, where every binding of `b`
that reaches L constructs an object of a class of the tree:

- the construction stores first: the constructor (`__init__`, and what it calls on `self`)
  writes `self.attr`; a dataclass-like class's field `attr` is filled by the constructor's
  argument or default; a class-level `attr` is what an instance shows until one is stored;
- then, in order, each statement of S between the construction and L (and, in a loop around
  L, the rest of the loop's body: the iteration before runs it too) that stores into the
  object: `b.attr = v` itself, and every call that is given the object (`b.set(v)`,
  `set_attr(b, v)`, `f = b.set; f(v)`) and, transitively, writes `attr` on the parameter it
  binds the object to;
- a direct store that always runs before L (tracer/graph/blocks.py) replaces what came
  before it. A call may store on some paths only: it adds, and replaces nothing.

Another object of the same class (another construction, another name) never gives `b.attr`
its value, nor does a store after L. A binding of `b` that is no construction (a parameter,
`self`, a call's result) is not followed here: such reads keep the join by the attribute's
name and the receiver's class family (tracer/graph/flow.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from tracer.extract.facts import MODULE_SCOPE
from tracer.graph.blocks import (
    block_end,
    covered_before,
    dominates,
    in_own_body,
    reaching,
    runs_before,
)
from tracer.store import step_ids

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tracer.extract.facts import Arg, Call
    from tracer.graph.file_steps import FileTables
    from tracer.graph.step_tables import Read
    from tracer.graph.steps import Step
    from tracer.index.index import Index
    from tracer.index.resolve import Resolver
    from tracer.index.targets import CallTarget


class FlowGraph(Protocol):
    """What this module asks of the flow graph (`tracer.graph.flow.FlowGraph`)."""

    index: Index
    resolver: Resolver

    def file(self, path: str) -> FileTables: ...

    def step(self, step_id: str) -> Step: ...

    def writes(self, path: str, attr: str) -> list[Read]: ...

    def writing(self, attr: str) -> list[str]: ...

    def field_step(self, klass: str, attr: str) -> str: ...

    def callers(self, function: str) -> Iterator[tuple[FileTables, int, CallTarget]]: ...

    def bindings(
        self, target: CallTarget, arg: Arg, siblings: tuple[Arg, ...] = ()
    ) -> list[tuple[str, str, float]]: ...


# A bound on the work, no rule of Python and no ranking: calls followed into (and callers
# followed out of) to the writes on the parameter an object is bound to. A write made deeper is
# not seen: a flow missed, never one made up (a call's stores add and replace nothing).
MAX_CALL_DEPTH = 4
LOOP_HEADS = (b"for ", b"while ", b"async for ")
HEADS_OF_SCOPES = (b"def ", b"async def ", b"class ")


@dataclass(frozen=True, slots=True)
class Window:
    """Where a statement may run between an object's construction (at START) and a read of it
    (at LINE): after the one and before the other, or anywhere in the loop around the read
    (LOOP: its first line and where it ends), which runs again after the read."""

    start: int
    line: int
    loop: tuple[int, int] | None

    def holds(self, at: int) -> bool:
        return self.start < at < self.line or (
            self.loop is not None and self.start < at and self.loop[0] <= at < self.loop[1]
        )


@dataclass(frozen=True, slots=True)
class Event:
    """What a statement of the reading function does to the object: stores WRITES into its
    attribute, at LINE; REPLACES is the step of a direct store, which replaces what was stored
    before wherever it always runs first ("" for a call: it may store on some paths only)."""

    line: int
    writes: frozenset[str]
    replaces: str = ""
    call: int | None = None  # the call (of the reading file) the writes are made through
    always: bool = False  # the call stores on every path: it replaces where it always runs


class Instances:
    """The writes that may give a read of an attribute of an object made in the reading
    function its value (see the module's docstring), remembered per read."""

    def __init__(self, graph: FlowGraph) -> None:
        self.graph = graph
        self.known: dict[tuple[str, str, str], frozenset[str] | None] = {}
        # (write, read) -> the calls of the read's file the write reaches it through (none:
        # a store in the reading function itself)
        self.through: dict[tuple[str, str], frozenset[int]] = {}
        self.stored: dict[tuple[str, str, str], frozenset[str]] = {}  # (class, "<class>", attr)
        # (function, param, attr, depth) -> `stores_on`: what is found depends on the depth
        # it is asked at (the bound cuts deeper calls), so the depth is part of the key.
        self.stored_on: dict[tuple[str, str, str, int], frozenset[str]] = {}
        self.by_scope: dict[tuple[str, str], list[int]] = {}  # (path, scope) -> its calls

    def writes_reaching(
        self, tables: FileTables, scope: str, read: str, base: str, attr: str
    ) -> frozenset[str] | None:
        """The steps whose value the read step READ (in SCOPE) may take as `BASE.ATTR`, when
        BASE holds an object constructed in SCOPE; None when it does not (or may not)."""
        key = (read, base, attr)
        if key not in self.known:
            self.known[key] = self.find(tables, scope, read, base, attr)
        return self.known[key]

    def find(
        self, tables: FileTables, scope: str, read: str, base: str, attr: str
    ) -> frozenset[str] | None:
        if not base.isidentifier() or base in ("self", "cls"):
            return None
        line = tables.steps[read].line
        constructions = self.constructions(tables, scope, base, line)
        if not constructions:
            return None
        loop = loop_around(tables, scope, line)
        found: set[str] = set()
        calls: dict[str, set[int]] = {}
        for _, made_line, targets, made_by in constructions:
            window = Window(made_line, line, loop)
            classes = [t.klass for t in targets if t.klass is not None]
            if self.escapes(tables, scope, base, window, classes):
                return None  # handed where it cannot be followed: joined by name instead
            events = [Event(made_line, self.constructed(targets, attr), call=made_by)]
            events += self.events(tables, scope, base, attr, window, classes)
            events.sort(key=lambda e: e.line)
            # Stores in every branch of an `if`/`else` overwrite what was stored before it.
            covered = covered_before(tables, [e.replaces for e in events if e.replaces], line)
            events = [e for e in events if e.line >= covered]
            kept: list[Event] = []
            for event in events:
                if event.line < line and (
                    (event.replaces and dominates(tables, event.replaces, line))
                    or (event.always and call_dominates(tables, event.call, line))
                ):
                    kept = []
                kept.append(event)
            for event in kept:
                found.update(event.writes)
                for write in event.writes:
                    through = calls.setdefault(write, set())
                    if event.call is not None:
                        through.add(event.call)
        for write, through in calls.items():
            self.through[(write, read)] = frozenset(through)
        return frozenset(found)

    def calls_between(self, write: str, read: str) -> frozenset[int] | None:
        """The calls of READ's file through which WRITE gives READ its value, as this module
        found it (the object's construction, a method given it); empty for a store in the
        reading function itself; None when the two were not joined here."""
        return self.through.get((write, read))

    # -- the object's bindings, and what the construction stores -------------------------------

    def constructions(
        self, tables: FileTables, scope: str, base: str, line: int
    ) -> list[tuple[str, int, list[CallTarget], int]] | None:
        """The bindings of BASE in SCOPE that may reach LINE, each a construction of a class of
        the tree (its step, line, the call's targets and the call); None when one is anything
        else."""
        defs = tables.local_defs.get((scope, base)) or []
        if not defs:
            return None
        before = [d for d in defs if tables.steps[d].line < line and not step_ids.is_param(d)]
        if len(before) != len([d for d in defs if tables.steps[d].line < line]):
            return None  # a parameter: the object comes from the callers
        reached = reaching(tables, scope, before, line)
        if not reached:
            return None
        found = []
        for binding in reached:
            made = self.constructor_of(tables, binding)
            if made is None:
                return None
            targets, call_id = made
            found.append((binding, tables.steps[binding].line, targets, call_id))
        return found

    def constructor_of(
        self, tables: FileTables, binding: str
    ) -> tuple[list[CallTarget], int] | None:
        """The targets of the constructor call BINDING takes whole (`b = C(...)`), when every
        one constructs a class, and the call; None otherwise."""
        if tables.bound.get(binding, "") != tables.steps[binding].name:
            return None  # `b.x = ...`, or a target inside a pattern
        return construction(tables, binding)

    def constructed(self, targets: list[CallTarget], attr: str) -> frozenset[str]:
        """What a construction stores into ATTR: its class family's declared field ATTR (the
        constructor's argument or default fills it), the writes of `self.ATTR` that its
        `__init__` makes or calls, and what is stored into the class's own ATTR anywhere
        (`C.attr = v`, `cls.attr = v`: an instance shows it until it stores its own)."""
        graph, found = self.graph, set()
        for target in targets:
            klass = target.klass
            assert klass is not None
            for owner in graph.index.mro(klass):
                entry = graph.index.classes.get(owner)
                if entry is not None and any(f.name == attr for f in entry[1].fields):
                    found.add(graph.field_step(owner, attr))
                    break
            if target.function is not None:
                first = first_param(graph, target.function)
                if first is not None:
                    found |= self.stores_on(target.function, first, attr, 0)
            found |= self.class_stores(klass, attr)
        return frozenset(found)

    def class_stores(self, klass: str, attr: str) -> frozenset[str]:
        """The writes of ATTR on the class KLASS or a base of it, as an object: `C.attr = v`
        anywhere, `cls.attr = v` in a method of one of them."""
        key = (klass, "<class>", attr)
        if key in self.stored:
            return self.stored[key]
        graph, index = self.graph, self.graph.index
        owners = set(index.mro(klass))
        found = set()
        for path in graph.writing(attr):
            module = index.module_of[path]
            for write in graph.writes(path, attr):
                if write.base == "<class>" or not write.base:
                    continue
                if write.base == "cls":
                    function = graph.resolver.function(path, write.scope)
                    if function is not None and function[0].rpartition(".")[0] in owners:
                        found.add(write.step)
                    continue
                symbol = index.resolve(module, write.base)
                if symbol is not None and symbol.kind == "class" and symbol.name in owners:
                    found.add(write.step)
        self.stored[key] = frozenset(found)
        return self.stored[key]

    # -- what the statements between store into the object ----------------------------------

    def events(
        self,
        tables: FileTables,
        scope: str,
        base: str,
        attr: str,
        window: Window,
        classes: list[str],
    ) -> list[Event]:
        """The stores into BASE's object (of CLASSES) in SCOPE that run in WINDOW."""
        found = []
        for write in self.graph.writes(tables.path, attr):
            if write.scope == scope and write.base == base and window.holds(write.line):
                found.append(Event(write.line, frozenset({write.step}), write.step))
        for call_id in self.calls_in(tables, scope):
            call = tables.calls[call_id]
            if not window.holds(call.line):
                continue
            writes = self.stored_by_call(tables, scope, call_id, base, attr, classes)
            if writes:
                always = self.always_stores(tables, scope, call_id, base, classes, writes)
                found.append(Event(call.line, writes, call=call_id, always=always))
        return found

    def always_stores(
        self,
        tables: FileTables,
        scope: str,
        call_id: int,
        base: str,
        classes: list[str],
        writes: frozenset[str],
    ) -> bool:
        """Does the call CALL_ID store on every path one of WRITES (stores it may make into
        BASE's object, of CLASSES)? When it surely runs one function (its target, or the one
        method of the object a local is bound to: `f = b.set; f(v)`), and a store of WRITES
        is a statement of that function's own body (in no branch, loop or `with`) that no
        `return`, `raise` or `yield` comes before."""
        targets = tables.targets[call_id]
        if targets:
            sure = len(targets) == 1 and targets[0].confidence >= 1.0
            functions = {targets[0].function} if sure else set()
        else:
            call = tables.calls[call_id]
            methods = self.bound_method(tables, scope, call, base)
            functions = {self.graph.index.method(k, m) for k in classes for m in methods}
        if len(functions) != 1 or None in functions:
            return False
        entry = self.graph.index.functions.get(functions.pop())  # type: ignore[arg-type]
        if entry is None:
            return False
        path, function = entry
        callee = self.graph.file(path)
        for write in writes:
            if step_ids.file_of(write) != path or callee.scope_of[write] != function.qualname:
                continue
            step = callee.steps[write]
            if (
                block_end(callee, step.line, step.end_line) is not None
                and in_own_body(callee, step.line)
                and not leaves_before(callee, function.line + 1, step.line)
            ):
                return True
        return False

    def escapes(
        self, tables: FileTables, scope: str, base: str, window: Window, classes: list[str]
    ) -> bool:
        """Is BASE's object handed, in WINDOW, where this module cannot follow what is stored
        into it: kept in another name, container or object (`alias = b`, `{"a": b}`,
        `x.y = b`), given in a `*`/`**` argument or inside an expression, given to a call
        whose target is not known or collects it (`*args`, `**kwargs`), or a method of it
        called that the tree does not define? A call outside the tree (a builtin, a library
        function) is taken to store nothing into it."""
        from tracer.graph.contents import value_row
        from tracer.store.rows import VALUE_REFS, VALUE_SHAPE

        for step_id in tables.local_reads.get((scope, base)) or []:
            step = tables.steps[step_id]
            if not window.holds(step.line) or step.kind == "call_arg":
                continue
            found = value_row(tables, step_id)
            if found is None:
                continue
            refs, shape = found[0][VALUE_REFS], found[0][VALUE_SHAPE]
            if base in refs or (shape is not None and names_in(shape, base)):
                return True
        for call_id in self.calls_in(tables, scope):
            call = tables.calls[call_id]
            if window.holds(call.line) and self.call_escapes(tables, scope, call, base, classes):
                return True
        return False

    def call_escapes(
        self, tables: FileTables, scope: str, call: Call, base: str, classes: list[str]
    ) -> bool:
        """Does CALL take BASE's object where it cannot be followed (see `escapes`)?"""
        receiver, _, method = call.callee.rpartition(".")
        given = [a for a in call.args if base in a.value.refs]
        methods = self.bound_method(tables, scope, call, base)
        if receiver != base and not given and not methods:
            return False
        if any(a.star or a.value.refs != (base,) or a.value.calls for a in given):
            return True  # inside an expression, a container, a `*`/`**` argument
        targets = tables.targets[call.id]
        if receiver == base:
            return not targets and not all(self.graph.index.method(k, method) for k in classes)
        if methods and not given:  # `f = b.set; f(v)`: a method the object's classes define
            return not all(self.graph.index.method(k, m) for k in classes for m in methods)
        if not targets:
            symbol = self.graph.index.resolve(self.graph.index.module_of[tables.path], call.callee)
            if call.callee == "setattr":  # by a constant name it is a store (`b.x = v`) of its own
                return not named_store(call)
            return symbol is None or symbol.kind != "external"
        for target in targets:
            for arg in given:
                for bound, _, _ in self.graph.bindings(target, arg, call.args):
                    if not step_ids.is_param(bound) or collecting(self.graph, bound):
                        return True
        return False

    def calls_in(self, tables: FileTables, scope: str) -> list[int]:
        key = (tables.path, scope)
        found = self.by_scope.get(key)
        if found is None:
            unit = tables.unit_index(tables.unit_of(scope))  # the unit holding the scope
            ids = unit.calls if unit is not None else range(len(tables.calls))
            head = tables.rows.call_head
            found = [i for i in ids if head(i)[0] == scope]
            self.by_scope[key] = found
        return found

    def stored_by_call(
        self,
        tables: FileTables,
        scope: str,
        call_id: int,
        base: str,
        attr: str,
        classes: list[str],
    ) -> frozenset[str]:
        """The writes of ATTR on the object BASE holds (of CLASSES) that the call CALL_ID may
        make: on the parameter each of its targets binds the object to (its receiver, an
        argument), or through a local bound to one of the object's methods (`f = b.set;
        f(v)`, the method found on the object's classes)."""
        call = tables.calls[call_id]
        receiver = call.callee.rpartition(".")[0]
        methods = self.bound_method(tables, scope, call, base)
        given = [i for i, a in enumerate(call.args) if a.value.refs == (base,) and not a.star]
        if receiver != base and not methods and not given:
            return frozenset()
        found: set[str] = set()
        for name in methods:
            for klass in classes:
                function = self.graph.index.method(klass, name)
                first = first_param(self.graph, function) if function is not None else None
                if function is not None and first is not None:
                    found |= self.stores_on(function, first, attr, 0)
        for target in tables.targets[call_id]:
            if target.function is None:
                continue
            if receiver == base and target.bound:
                first = first_param(self.graph, target.function)
                if first is not None:
                    found |= self.stores_on(target.function, first, attr, 0)
            for i in given:
                arg = call.args[i]
                for param, _, _ in self.graph.bindings(target, arg, call.args):
                    name = self.graph.step(param).name if step_ids.is_param(param) else None
                    if name is not None:
                        found |= self.stores_on(target.function, name, attr, 0)
        return frozenset(found)

    def bound_method(self, tables: FileTables, scope: str, call: Call, base: str) -> list[str]:
        """The methods of BASE's object a local callee may be bound to (`f = b.set` before
        `f(v)`: ["set"]); [] when the callee is no such local."""
        from tracer.graph.contents import value_row
        from tracer.store.rows import VALUE_CALLS, VALUE_REFS

        if not call.callee.isidentifier():
            return []
        found = []
        for binding in tables.local_defs.get((scope, call.callee)) or []:
            row = value_row(tables, binding) if not step_ids.is_param(binding) else None
            if row is None:
                continue
            refs, calls = row[0][VALUE_REFS], row[0][VALUE_CALLS]
            if not calls and len(refs) == 1 and refs[0].startswith(base + "."):
                found.append(refs[0][len(base) + 1 :])
        return found

    def stores_on(self, function: str, param: str, attr: str, depth: int) -> frozenset[str]:
        """The writes `PARAM.ATTR = ...` FUNCTION makes, and those the calls it gives PARAM to
        make on the parameter they bind it to (`super().m(...)` gives its `self`),
        MAX_CALL_DEPTH calls deep."""
        key = (function, param, attr, depth)
        if key in self.stored_on:
            return self.stored_on[key]
        self.stored_on[key] = frozenset()  # a call back into FUNCTION adds nothing new
        graph = self.graph
        entry = graph.index.functions.get(function)
        if entry is None:
            return frozenset()
        path, definition = entry
        scope = definition.qualname
        found = {w.step for w in graph.writes(path, attr) if w.scope == scope and w.base == param}
        if depth < MAX_CALL_DEPTH:
            tables = graph.file(path)
            first = first_param(graph, function)
            for call_id in self.calls_in(tables, scope):
                call = tables.calls[call_id]
                receiver = call.callee.rpartition(".")[0]
                if receiver == "super()" and param == first:
                    receiver = param  # `super().__init__(...)`: the same object
                given = [a for a in call.args if a.value.refs == (param,) and not a.star]
                if receiver != param and not given:
                    continue
                for target in tables.targets[call_id]:
                    if target.function is None:
                        continue
                    if receiver == param and target.bound:
                        bound = first_param(graph, target.function)
                        if bound is not None:
                            found |= self.stores_on(target.function, bound, attr, depth + 1)
                    for arg in given:
                        for bound, _, _ in graph.bindings(target, arg, call.args):
                            if step_ids.is_param(bound):
                                name = graph.step(bound).name
                                found |= self.stores_on(target.function, name, attr, depth + 1)
        self.stored_on[key] = frozenset(found)
        return self.stored_on[key]

    # -- forward: from a write on a parameter to the reads of the objects given to it -----------

    def stays_in(self, writer: str) -> str | None:
        """The scope of the write `b.attr = v` WRITER when the object `b` holds there was
        constructed in that scope and is not handed anywhere after the write (no call is given
        it, as its receiver or an argument, and it is not kept, returned or put inside another
        value: see `escapes`): then only reads in that scope, or in functions nested in it, may
        take what it stores. None when the object may be read elsewhere, and for a global (a
        name bound at the top of a module): any function may read it there, or import it."""
        tables = self.graph.file(step_ids.file_of(writer))
        base = tables.bound.get(writer, "").rpartition(".")[0]
        if not base.isidentifier() or base in ("self", "cls"):
            return None
        scope, line = tables.scope_of[writer], tables.steps[writer].line
        if scope == MODULE_SCOPE:
            return None
        constructions = self.constructions(tables, scope, base, line)
        if not constructions:
            return None
        function = self.graph.resolver.function(tables.path, scope)
        end = function[1].end_line + 1 if function is not None else len(tables.lines.raw()) + 1
        window = Window(line, end, loop_around(tables, scope, line))
        classes = [t.klass for _, _, targets, _ in constructions for t in targets if t.klass]
        if self.escapes(tables, scope, base, window, classes):
            return None
        for call_id in self.calls_in(tables, scope):
            call = tables.calls[call_id]
            if not window.holds(call.line):
                continue
            given = any(base in a.value.refs for a in call.args)
            if given or call.callee.rpartition(".")[0] == base:
                return None  # handed to a call: read where it binds it (joined by name)
            if self.bound_method(tables, scope, call, base):
                return None
        return scope

    def readers(self, writer: str) -> list[tuple[FileTables, str, str, str]]:
        """The reads of `b.attr` whose value the write `p.attr = v` WRITER may give: where
        `p` is a parameter of the writer's function (its `self` too), the objects made in
        the functions that give them to it (the receiver, an argument, the object a
        constructor makes), then in theirs, MAX_CALL_DEPTH calls up; each read as (its
        tables, step, its base's text, the ref it reads), among those the backward rule
        (`writes_reaching`) says the write reaches."""
        graph = self.graph
        tables = graph.file(step_ids.file_of(writer))
        target = tables.bound.get(writer, "")
        base, _, attr = target.rpartition(".")
        if not base.isidentifier():
            return []
        function = graph.resolver.function(tables.path, tables.scope_of[writer])
        if function is None or base not in {p.name for p in function[1].params}:
            return []
        found = []
        for caller, scope, local in self.objects_given(function[0], base, 0, set()):
            for read, _ in caller.attr_readers(attr, {scope}):
                if read.scope != scope or read.base != local:
                    continue
                writes = self.writes_reaching(caller, scope, read.step, local, attr)
                if writes is not None and writer in writes:
                    found.append((caller, read.step, local, f"{local}.{attr}"))
        return found

    def objects_given(
        self, function: str, param: str, depth: int, seen: set[tuple[str, str]]
    ) -> list[tuple[FileTables, str, str]]:
        """The locals (with their tables and scope) whose objects the calls of FUNCTION bind to
        PARAM: a receiver, an argument, the local a constructor's object is bound to; where a
        caller passes one of its own parameters, that caller's callers, MAX_CALL_DEPTH up."""
        if (function, param) in seen or depth > MAX_CALL_DEPTH:
            return []
        seen.add((function, param))
        graph = self.graph
        first = first_param(graph, function)
        found: list[tuple[FileTables, str, str]] = []
        for caller, call_id, target in graph.callers(function):
            call = caller.calls[call_id]
            given: list[str] = []
            if param == first and target.klass is not None:  # the object a constructor makes
                given += [caller.bound.get(c, "") for c in caller.consumers.get(call_id, [])]
            elif param == first and target.bound:
                given.append(call.callee.rpartition(".")[0])
            for arg in call.args:
                if len(arg.value.refs) != 1 or arg.star:
                    continue
                for bound, _, _ in graph.bindings(target, arg, call.args):
                    if step_ids.is_param(bound) and graph.step(bound).name == param:
                        given.append(arg.value.refs[0])
            outer = graph.resolver.function(caller.path, call.scope)
            params = {p.name for p in outer[1].params} if outer is not None else set()
            for local in given:
                if not local.isidentifier():
                    continue
                if local in params and outer is not None:
                    found += self.objects_given(outer[0], local, depth + 1, seen)
                else:
                    found.append((caller, call.scope, local))
        return found


def construction(tables: FileTables, step_id: str) -> tuple[list[CallTarget], int] | None:
    """The targets of the constructor call whose result STEP_ID takes whole (`x = C()`,
    `return C()`, `f(C())`), when each constructs a class, and the call; None otherwise."""
    from tracer.graph.contents import value_row
    from tracer.store.rows import VALUE_CALLS, VALUE_REFS, VALUE_SHAPE

    found = value_row(tables, step_id)
    if found is None or found[1] is not None:
        return None
    value = found[0]
    calls = value[VALUE_CALLS]
    if value[VALUE_REFS] or value[VALUE_SHAPE] is not None or len(calls) != 1:
        return None
    targets = tables.targets[calls[0]]
    if not targets or any(t.klass is None for t in targets):
        return None
    return list(targets), calls[0]


def named_store(call: Call) -> bool:
    """Is CALL `setattr(b, "x", v)`, by a constant name (the extractor makes it the
    assignment `b.x = v`)?"""
    args = call.args
    if len(args) != 3 or any(a.keyword is not None or a.star for a in args):
        return False
    name = args[1].value.literal
    return name is not None and name.isidentifier() and not args[1].value.refs


def call_dominates(tables: FileTables, call_id: int | None, line: int) -> bool:
    """Does the call CALL_ID always run before LINE, a later line of its function (a
    statement of its own, or the value of one, in the block that holds LINE)?"""
    if call_id is None:
        return False
    call = tables.calls[call_id]
    return runs_before(tables, call.line, call.end_line, line)


LEAVING = re.compile(rb"\s*(?:return|raise|yield)\b")  # read from the line's bytes


def leaves_before(tables: FileTables, first: int, last: int) -> bool:
    """Is a `return`, `raise` or `yield` written on the lines FIRST up to LAST (excluded)?"""
    raw = tables.lines.raw()
    return any(LEAVING.match(raw[n - 1]) for n in range(max(first, 1), min(last, len(raw) + 1)))


def names_in(shape: object, name: str) -> bool:
    """Does SHAPE (a Value's structure) hold the plain name NAME somewhere?"""
    if isinstance(shape, tuple):
        if shape[:1] == ("name",) and shape[1:2] == (name,):
            return True
        return any(names_in(part, name) for part in shape[1:])
    return False


def collecting(graph: FlowGraph, param: str) -> bool:
    """Is PARAM a `*args` or `**kwargs` parameter (what it is given is kept in a container)?"""
    from tracer.graph.contents import collecting as kind

    return kind(graph, param) != 0


def first_param(graph: FlowGraph, function: str) -> str | None:
    """The name of FUNCTION's first parameter (its `self`), if it has one."""
    entry = graph.index.functions.get(function)
    if entry is None or not entry[1].params:
        return None
    return entry[1].params[0].name


def loop_around(tables: FileTables, scope: str, line: int) -> tuple[int, int] | None:
    """The first line and the end of the innermost `for` or `while` loop around LINE in the
    same function (read from the source's indentation); None when there is none."""
    lines = tables.lines
    raw = lines.raw()
    if not 0 < line <= len(raw):
        return None
    text = raw[line - 1]
    if not text.strip() or text.lstrip().startswith(b"#"):
        return None  # no statement here (a row's line always holds one)
    index = lines.parent(line - 1)
    while index >= 0:
        body = raw[index].lstrip()
        if body.startswith(HEADS_OF_SCOPES):
            return None
        if body.startswith(LOOP_HEADS):
            return index + 1, lines.block_end(index) + 1
        index = lines.parent(index)
    return None
