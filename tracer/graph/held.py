"""Objects followed by value: a value stored in an attribute of an object is kept in that
object, at the attribute, as a dict keeps a value at a key (the access paths of
tracer/graph/contents.py); the object carries it wherever the object goes, and a read of the
attribute on that object takes it out again.

In a function, what is stored into the object a name holds is there from the store on: a
store `x.f = v` reaches the reads of `x.f` after it that the same binding of x reaches (a
later store of `x.f` that always runs first replaces it, as a later binding of a name does:
`blocks.reaching`), the uses of x whole after it (`g(x)`, `return x`: the value rides in the
object, at `.f`), and the methods called on x after it (their `self`). A store on a method's
`self` leaves with the object after each call of the method: into the caller's object from
the call on, or, for a constructor, into the call's result. A record's field is in each
object its class's constructor makes. An object's attributes that came with it (from a
parameter, a call's result) are read by the reads of that binding.

Each of these edges is found from the step that meets it, by a search that follows objects
(`Held.edges`, asked beside `FlowGraph.edges`): a store's (forward) and a read's (backward)
edges do not depend on where the value sought is kept (`stored_in`, `read_from`); those of a
step that holds the object whole depend on the attribute the value is kept at, and are asked
with the keys the search carries.

Not followed here: an object made in the reading function (tracer/graph/instances.py
follows it, with the calls given it), `getattr`/`setattr` with a name, an attribute read on
a call's result (`f().x`), a store on a parameter other than `self` seen by the caller, and
`self.f` in one method joined to `self.f` in another, which the graph joins by name and
class family (`FlowGraph.slot_readers`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Protocol

from tracer.extract.facts import MODULE_SCOPE
from tracer.extract.values import call_of_ref
from tracer.graph.blocks import dominates, reaching
from tracer.graph.contents import ATTRIBUTE, Keys
from tracer.graph.instances import construction, first_param, loop_around
from tracer.graph.parsed import parsed_into
from tracer.graph.steps import Edge, Step, field_class
from tracer.store import step_ids

if TYPE_CHECKING:
    from tracer.graph.call_values import CallValues
    from tracer.graph.file_steps import FileTables
    from tracer.graph.instances import Instances
    from tracer.graph.step_tables import Read
    from tracer.index.index import Index
    from tracer.index.resolve import Resolver
    from tracer.index.targets import CallTarget
    from tracer.store.facts import Facts

# The edges of objects this module makes (a step's own, and those asked with the keys).
OBJECT_EDGES = frozenset({"store", "read", "receiver"})
NAMED = frozenset({"module", "class", "function", "external"})  # no object a store fills
ASSIGNS = frozenset({"local_assign", "formula", "attr_write"})
CONSTRUCTING = frozenset({"__init__", "cls"})  # callees naming no class that construct one
AT_CALL = "@call"  # the kind (and id's end) of the step `call_step` makes: no graph step
MAX_CALLERS_UP = 3  # callers a store on `self` is followed out through, at most
# Where a use is: (edge kind, destination, the label: the attribute path it keeps or takes).
Use = tuple[str, str, str]


class FlowGraph(Protocol):
    """What this module asks of the flow graph (`tracer.graph.flow.FlowGraph`)."""

    index: Index
    facts: Facts
    resolver: Resolver
    instances: Instances
    values: CallValues

    def file(self, path: str) -> FileTables: ...

    def writes(self, path: str, attr: str) -> list[Read]: ...

    def field_step(self, klass: str, attr: str) -> str: ...

    def calling(self, name: str) -> list[str]: ...

    def calls_to(
        self, path: str, words: set[str], wanted: Callable[[CallTarget], bool]
    ) -> list[int]: ...

    def callers(self, function: str) -> Iterator[tuple[FileTables, int, CallTarget]]: ...

    def ref_sources(
        self, tables: FileTables, scope: str, step: Step, ref: str
    ) -> Iterator[Edge]: ...


class Held:
    """The edges of objects that carry a value at an attribute, for one flow graph, each
    found once."""

    def __init__(self, graph: FlowGraph) -> None:
        self.graph = graph
        self.known: dict[tuple[str, bool, object], list[Edge]] = {}
        self.made: dict[str, list[str]] = {}  # class -> the steps taking its constructions
        self.reaching: dict[tuple[str, str, str, str, int], list[str]] = {}  # stores_reaching

    # -- a step's own edges ---------------------------------------------------------------

    def stored_in(self, tables: FileTables, step: Step) -> Iterator[Edge]:
        """From a store STEP to where its value is in the object it stores into: a field, in
        each object its class's constructor makes; `x.f = v`, at the reads, uses and calls
        on x after it (and after the calls of the method, for `self`)."""
        if step.kind == "field":
            yield from self.made_with_field(step)
            return
        root, _, path = tables.bound.get(step.id, "").partition(".")
        if not path or not root.isidentifier() or not self.plain_object(tables, step.id, root):
            return
        scope = tables.scope_of[step.id]
        for kind, dst, label in self.uses_after(tables, scope, root, step, path, 0):
            yield Edge(step.id, dst, kind, 1.0, label)

    def read_from(self, tables: FileTables, step: Step) -> Iterator[Edge]:
        """Into a step reading `x.f` (`x.f.g`): from the stores into x before it that reach
        it, from the methods called on x before it (what their stores on `self` put there),
        and from the bindings of x that reach it (what the object came with)."""
        scope = tables.scope_of[step.id]
        for ref in tables.refs.get(step.id, ()):
            root, _, path = ref.partition(".")
            if not path or call_of_ref(root) is not None or not root.isidentifier():
                continue
            if not self.plain_object(tables, step.id, root) or self.followed(
                tables, scope, step, root, path
            ):
                continue
            for kind, src, label in self.puts_before(tables, scope, root, step, path):
                yield Edge(src, step.id, kind, 1.0, label)
            if self.replaced(tables, scope, root, path, step):
                continue  # what the object came with is no longer there
            for holder in self.bindings_at(tables, step, root):
                yield Edge(holder, step.id, "read", 1.0, path)

    # -- the edges that depend on the keys carried ---------------------------------------

    def edges(self, step_id: str, forward: bool, keys: Keys) -> list[Edge]:
        """The edges of objects at STEP_ID (out of it FORWARD, else into it): a store's into
        the object and a read's out of it, and, for a value kept at KEYS (innermost first)
        in the object STEP_ID holds whole, forward the reads that take it out and the
        methods called on it, backward the stores into it before the step and the objects
        a method's `self` comes from."""
        own = self.known.get((step_id, forward, None))
        if own is None:
            tables = self.graph.file(step_ids.file_of(step_id))
            step = tables.steps[step_id]
            own = self.known[(step_id, forward, None)] = self.with_arguments(
                self.stored_in(tables, step) if forward else self.read_from(tables, step), forward
            )
        if not keys or not isinstance(keys[-1], str) or not keys[-1].startswith(ATTRIBUTE):
            return own  # (a dict's key is no attribute)
        top = keys[-1][len(ATTRIBUTE) :]
        key = (step_id, forward, top)
        found = self.known.get(key)
        if found is None:
            more = self.ahead(step_id, top) if forward else self.behind(step_id, top)
            found = self.known[key] = own + self.with_arguments(more, forward)
        return found

    def with_arguments(self, edges: Iterator[Edge], forward: bool) -> list[Edge]:
        """EDGES, and, forward, those into the arguments of the calls they reach that only a
        search by value resolves (as `FlowGraph.edges` adds)."""
        found = list(edges)
        if forward:
            found += self.graph.values.into_arguments(found)
        return found

    def ahead(self, step_id: str, top: str) -> Iterator[Edge]:
        """From a binding of a name holding the object: the reads of `.TOP` on it, and the
        methods called on it."""
        tables = self.graph.file(step_ids.file_of(step_id))
        step = tables.steps[step_id]
        name = self.holder_name(tables, step)
        if name is None:
            return
        scope = tables.scope_of[step_id]
        for read, path in self.reads_along(tables, scope, name, top):
            reader = tables.steps[read]
            if (
                not self.followed(tables, scope, reader, name, path)
                and not self.replaced(tables, scope, name, path, reader)
                and step_id in self.bindings_at(tables, reader, name)
            ):
                yield Edge(step_id, read, "read", 1.0, path)
        for read in self.reads_in(tables, scope, "__dict__", name):  # `name.__dict__`: vars
            if step_id in self.bindings_at(tables, tables.steps[read], name):
                yield Edge(step_id, read, "local", 1.0)
        for call_id, target in self.calls_on(tables, scope, name):
            if step_id in self.bindings_at(tables, self.call_step(tables, call_id), name):
                first = self.self_step(target)
                if first is not None:
                    yield Edge(step_id, first, "receiver", target.confidence)

    def behind(self, step_id: str, top: str) -> Iterator[Edge]:
        """Into a step holding the object whole: the stores of `.TOP` into the names it reads
        before it; into a method's `self`, the objects its callers call it on; into a step
        taking a construction, what the construction stores."""
        graph = self.graph
        tables = graph.file(step_ids.file_of(step_id))
        step = tables.steps[step_id]
        scope = tables.scope_of[step_id]
        for ref in tables.refs.get(step_id, ()):
            if "." not in ref and ref.isidentifier() and self.plain_object(tables, step_id, ref):
                yield from self.kept_before(tables, scope, ref, step, top, step_id)
        if step.kind == "param" and self.is_self(tables, step):
            yield from self.into_method(tables, step, top)
        yield from parsed_into(graph, step_id, top)  # the flags a parser puts there
        made = construction(tables, step_id)
        if made is not None:
            for target in made[0]:
                for write in sorted(graph.instances.constructed([target], top)):
                    yield Edge(write, step_id, "store", 1.0, top)

    # -- where a stored value is, and where a read one was put ----------------------------

    def uses_after(
        self, tables: FileTables, scope: str, root: str, at: Step, path: str, depth: int
    ) -> Iterator[Use]:
        """Where a value stored at PATH of the object ROOT holds at the step AT is, after it:
        the reads of ROOT's attributes that the same binding reaches (a store of PATH that
        always runs before replaces it), the uses of ROOT whole, the methods called on it,
        and, ROOT a method's `self`, where the object is after the method's calls."""
        holders = set(self.bindings_at(tables, at, root))
        if not holders:
            return
        head = path.partition(".")[0]
        for read, taken in self.reads_along(tables, scope, root, head):
            reader = tables.steps[read]
            if not self.later(tables, scope, at, reader, root) or self.followed(
                tables, scope, reader, root, taken
            ):
                continue
            if self.still_there(tables, scope, root, at, path, holders, reader):
                yield self.between(path, taken, reader.id)
        for reader in tables.local_reads.get((scope, root), []):
            use = tables.steps[reader]
            if self.later(tables, scope, at, use, root) and self.still_there(
                tables, scope, root, at, path, holders, use
            ):
                yield ("store", reader, path)
        for call_id, target in self.calls_on(tables, scope, root):
            call = self.call_step(tables, call_id)
            first = self.self_step(target)
            if (
                first is not None
                and self.later(tables, scope, at, call, root)
                and self.still_there(tables, scope, root, at, path, holders, call)
            ):
                yield ("store", first, path)
        if depth >= MAX_CALLERS_UP:
            return
        for holder in sorted(holders):
            if not step_ids.is_param(holder) or step_ids.file_of(holder) != tables.path:
                continue
            param = tables.steps[holder]
            if self.is_self(tables, param):
                yield from self.out_of_method(tables, param, path, depth)

    def out_of_method(
        self, tables: FileTables, param: Step, path: str, depth: int
    ) -> Iterator[Use]:
        """Where a value stored at PATH of a method's `self` is after the method's calls: in
        a constructor's result, else in the object the caller called it on, from the call
        on."""
        graph = self.graph
        found = graph.resolver.function(tables.path, tables.scope_of[param.id])
        if found is None:
            return
        for caller, call_id, target in graph.callers(found[0]):
            if target.klass is not None:
                for consumer in caller.consumers.get(call_id, []):
                    yield ("store", consumer, path)
                continue
            if not target.bound:
                continue
            root = self.receiver(caller, call_id)
            if root is not None:
                call = self.call_step(caller, call_id)
                yield from self.uses_after(caller, call.symbol, root, call, path, depth + 1)

    def puts_before(
        self, tables: FileTables, scope: str, root: str, at: Step, path: str
    ) -> Iterator[Use]:
        """What put the value the step AT reads at PATH of the object ROOT holds: the stores
        into ROOT before it that reach it, and the methods called on ROOT before it (their
        stores on `self`)."""
        head = path.partition(".")[0]
        holders = set(self.bindings_at(tables, at, root))
        for _, _, stored in self.prefixes(root, path):
            for write in self.stores_reaching(tables, scope, root, stored, at):
                store = tables.steps[write]
                if holders & set(self.bindings_at(tables, store, root, scope)):
                    yield self.between(stored, path, write)
        for call_id, target in self.calls_on(tables, scope, root):
            call = self.call_step(tables, call_id)
            if self.later(tables, scope, call, at, root) and holders & set(
                self.bindings_at(tables, call, root)
            ):
                for write in sorted(self.stores_in_method(target, head)):
                    yield ("read" if path != head else "attr", write, path)

    def still_there(
        self,
        tables: FileTables,
        scope: str,
        root: str,
        at: Step,
        path: str,
        holders: set[str],
        then: Step,
    ) -> bool:
        """Is what the store AT put at PATH of ROOT's object still there at the step THEN: the
        same binding of ROOT reaches both, and no store of PATH that always runs before THEN
        replaced it?"""
        if not holders & set(self.bindings_at(tables, then, root, scope)):
            return False
        stores = self.stores_reaching(tables, scope, root, path, then)
        if at.kind == AT_CALL:  # what a method called on it stored: unless stored again
            return not any(
                tables.steps[s].line > at.line and dominates(tables, s, then.line) for s in stores
            )
        return at.id in stores

    def between(self, stored: str, taken: str, step: str) -> Use:
        """The edge from a store at STORED to a read at TAKEN (attribute paths on one
        object): the read of what was stored (`attr`), of something inside it (`read`, at
        the rest of the path), or of an object the value is inside (`store`, at the rest)."""
        if stored == taken:
            return ("attr", step, "")
        if taken.startswith(stored + "."):
            return ("read", step, taken[len(stored) + 1 :])
        return ("store", step, stored[len(taken) + 1 :])

    def into_method(self, tables: FileTables, param: Step, top: str) -> Iterator[Edge]:
        """Into a method's `self`, for a value kept at `.TOP`: the objects its callers call
        it on (what they came with, what was stored into them before the call). A
        constructor's object is made there: nothing is in it yet."""
        graph = self.graph
        found = graph.resolver.function(tables.path, tables.scope_of[param.id])
        if found is None:
            return
        for caller, call_id, target in graph.callers(found[0]):
            if target.klass is not None or not target.bound:
                continue
            root = self.receiver(caller, call_id)
            if root is None:
                continue
            call = self.call_step(caller, call_id)
            for holder in self.bindings_at(caller, call, root):
                yield Edge(holder, param.id, "receiver", target.confidence)
            yield from self.kept_before(caller, call.symbol, root, call, top, param.id)

    def kept_before(
        self, tables: FileTables, scope: str, root: str, at: Step, top: str, dst: str
    ) -> Iterator[Edge]:
        """Into DST, which takes the object ROOT holds at the step AT whole: what was put at
        `.TOP` of it before AT (see `puts_before`; what a read takes is not the object)."""
        for kind, src, label in self.puts_before(tables, scope, root, at, top):
            if kind != "read":
                yield Edge(src, dst, "store" if kind == "attr" else kind, 1.0, label)

    def stores_in_method(self, target: CallTarget, attr: str) -> frozenset[str]:
        """The stores of `self.ATTR` a method makes, or the methods it calls on `self`."""
        first = first_param(self.graph, target.function) if target.function else None
        if first is None:
            return frozenset()
        return self.graph.instances.stores_on(target.function, first, attr, 0)

    # -- the object's reads, stores and calls in a function ---------------------------------

    def reads_along(
        self, tables: FileTables, scope: str, root: str, head: str
    ) -> list[tuple[str, str]]:
        """The steps of SCOPE reading `ROOT.HEAD` or an attribute of it one deeper, each with
        the attribute path it reads."""
        found: list[tuple[str, str]] = []
        for read in self.reads_in(tables, scope, head, root):
            found.append((read, head))
        base = f"{root}.{head}"
        if scope == MODULE_SCOPE:  # its reads of any attribute of `ROOT.HEAD`
            tables.ensure_all()
        else:
            tables.ensure(tables.unit_of(scope))
        deeper = [
            (read.step, f"{head}.{attr}")
            for attr, reads in tables.attr_reads.held_items()
            for read in reads
            if read.base == base and nested_or_same(read.scope, scope)
        ]
        found.extend(sorted(deeper))  # (in no order the units built before would give)
        return found

    def prefixes(self, root: str, path: str) -> list[tuple[str, str, str]]:
        """The stores that may put what `ROOT.PATH` reads: of PATH itself and of each object
        on the way (`x.a = obj` for `x.a.b`), as (attribute, base, path stored)."""
        parts = path.split(".")
        return [
            (parts[i - 1], ".".join([root, *parts[: i - 1]]), ".".join(parts[:i]))
            for i in range(1, len(parts) + 1)
        ]

    def stores_reaching(
        self, tables: FileTables, scope: str, root: str, path: str, at: Step
    ) -> list[str]:
        """The stores of `ROOT.PATH` in SCOPE before the step AT that may reach it (a later
        one that always runs before AT replaces those before it)."""
        attr = path.rpartition(".")[2]
        base = ".".join([root, *path.split(".")[:-1]])
        key = (scope, root, path, at.id, at.line)
        found = self.reaching.get(key)
        if found is not None:
            return found
        mine = [
            w.step
            for w in self.graph.writes(tables.path, attr)
            if w.scope == scope and w.base == base and assigned(w.step)
        ]
        mine.sort(key=lambda s: tables.steps[s].line)
        before = [s for s in mine if tables.steps[s].line < at.line]
        found = reaching(tables, scope, before, at.line) if before else []
        # In a loop, a store after the step reaches it the next time round (where ROOT is
        # not bound again in the loop).
        loop = loop_around(tables, scope, at.line)
        if loop is not None and not rebound_in(tables, scope, root, loop):
            found = found + [s for s in mine if at.line < tables.steps[s].line < loop[1]]
        self.reaching[key] = found
        return found

    def replaced(self, tables: FileTables, scope: str, root: str, path: str, at: Step) -> bool:
        """Has a store of PATH (or of an object on the way to it) into ROOT's object that
        always runs before the step AT replaced what the object came with?"""
        for _, _, stored in self.prefixes(root, path):
            for store in self.stores_reaching(tables, scope, root, stored, at):
                if tables.steps[store].line < at.line and dominates(tables, store, at.line):
                    return True
        return False

    def later(
        self, tables: FileTables, scope: str, first: Step, then: Step, root: str = ""
    ) -> bool:
        """Does THEN run after FIRST in SCOPE: a later line, or an earlier one in a loop
        around both where ROOT is not bound again (each time round, another object)?"""
        if then.line > first.end_line:
            return True
        loop = loop_around(tables, scope, first.line)
        if loop is None or not loop[0] < then.line < first.line:
            return False
        return not root or not rebound_in(tables, scope, root, loop)

    def followed(self, tables: FileTables, scope: str, step: Step, root: str, path: str) -> bool:
        """Does tracer/graph/instances.py follow the object ROOT holds at STEP (one made in
        its function), for the attribute read there?"""
        attr = path.partition(".")[0]
        return self.graph.instances.writes_reaching(tables, scope, step.id, root, attr) is not None

    # -- names, bindings and calls --------------------------------------------------------

    def holder_name(self, tables: FileTables, step: Step) -> str | None:
        """The plain name STEP binds (a parameter, `x = ...`), which its object is read by."""
        if step.kind == "param":
            return step.name
        bound = tables.bound.get(step.id, "")
        if step.kind in ASSIGNS and bound.isidentifier():
            return bound
        return None

    def bindings_at(
        self, tables: FileTables, step: Step, name: str, scope: str | None = None
    ) -> list[str]:
        """The bindings of NAME that reach STEP (in SCOPE, its function, or around it)."""
        if scope is None:
            scope = step.symbol if step.kind == AT_CALL else tables.scope_of[step.id]
        return [e.src for e in self.graph.ref_sources(tables, scope, step, name)]

    def plain_object(self, tables: FileTables, step_id: str, root: str) -> bool:
        """Is ROOT, read at STEP_ID, a name holding an object (not a module or a class)?"""
        graph = self.graph
        if graph.resolver.is_local(tables.path, tables.scope_of[step_id], root):
            return True
        symbol = graph.index.resolve(graph.index.module_of[tables.path], root)
        return symbol is None or symbol.kind not in NAMED

    def reads_in(self, tables: FileTables, scope: str, attr: str, base: str) -> list[str]:
        """The steps of SCOPE (and the functions in it) reading `BASE.ATTR`."""
        names = self.graph.facts.names(tables.path).reads.get(attr, ())
        scopes = {s for s, b in names if b == base and nested_or_same(s, scope)}
        if not scopes:
            return []
        return [
            read.step
            for read, _ in tables.attr_readers(attr, scopes)
            if read.base == base and read.scope in scopes
        ]

    def calls_on(
        self, tables: FileTables, scope: str, name: str
    ) -> Iterator[tuple[int, CallTarget]]:
        """The calls of SCOPE made on the object NAME holds (`name.m(...)`), with each target
        that runs a method on it."""
        for call_id in self.graph.instances.calls_in(tables, scope):
            callee = tables.rows.call_head(call_id)[1]
            if callee.partition(".")[0] != name or callee.count(".") != 1:
                continue
            for target in tables.targets[call_id]:
                if target.bound and target.klass is None and target.function is not None:
                    yield call_id, target

    def receiver(self, tables: FileTables, call_id: int) -> str | None:
        """The name holding the object the call CALL_ID is made on (`x.m()`: x; `super().m()`:
        the caller's `self`), or None."""
        scope, callee = tables.rows.call_head(call_id)
        root, dot, _ = callee.partition(".")
        if callee.startswith("super()."):
            return self.first_name(tables, scope)
        return root if dot and root.isidentifier() else None

    def call_step(self, tables: FileTables, call_id: int) -> Step:
        """A step standing for the call CALL_ID where the bindings reaching it are asked: its
        line, in its scope."""
        scope, _ = tables.rows.call_head(call_id)
        line = tables.rows.call_line(call_id)
        return Step(
            f"{step_ids.call_id(tables.path, call_id)}{AT_CALL}",
            AT_CALL,
            tables.path,
            line,
            line,
            scope,
            "",
            "",
        )

    def self_step(self, target: CallTarget) -> str | None:
        """The step of the first parameter (`self`) of TARGET's function."""
        if target.function is None or target.function not in self.graph.index.functions:
            return None
        path, function = self.graph.index.functions[target.function]
        if not function.params:
            return None
        return step_ids.param_id(path, function.qualname, function.params[0].name)

    def first_name(self, tables: FileTables, scope: str) -> str | None:
        found = self.graph.resolver.function(tables.path, scope)
        if found is None or not found[1].params:
            return None
        return found[1].params[0].name

    def is_self(self, tables: FileTables, param: Step) -> bool:
        """Is PARAM the first parameter of a method (of a class's body)?"""
        scope = tables.scope_of[param.id]
        if self.graph.resolver.self_class(tables.path, scope) is None:
            return False
        return self.first_name(tables, scope) == param.name

    def made_with_field(self, field: Step) -> Iterator[Edge]:
        """From a record's field to the steps taking each construction of its class (or a
        subclass) in the tree."""
        for consumer in self.constructions(field_class(self.graph.index, field)):
            yield Edge(field.id, consumer, "store", 1.0, field.name)

    def constructions(self, klass: str) -> list[str]:
        """The steps taking the result of a construction of KLASS or a subclass, found once
        for the class (its fields all ask)."""
        found = self.made.get(klass)
        if found is not None:
            return found
        graph = self.graph
        heirs = {klass, *graph.index.descendants(klass)}
        names = {h.rpartition(".")[2] for h in heirs}
        found = []
        # The files calling one by name, and those defining one (`cls(...)` in a classmethod
        # makes the class it is called on).
        paths = set().union(*(graph.calling(name) for name in names))
        paths.update(graph.index.classes[h][0] for h in heirs if h in graph.index.classes)
        for path in sorted(paths):
            calls = graph.calls_to(path, names | CONSTRUCTING, lambda t: t.klass in heirs)
            if calls:
                caller = graph.file(path)
                found.extend(c for call_id in calls for c in caller.consumers.get(call_id, []))
        self.made[klass] = found
        return found


def rebound_in(tables: FileTables, scope: str, name: str, loop: tuple[int, int]) -> bool:
    """Is NAME bound in SCOPE in the loop LOOP (its header's target too): each time round,
    another object?"""
    return any(
        loop[0] <= tables.steps[d].line <= loop[1]
        for d in tables.local_defs.get((scope, name), [])
        if not step_ids.is_param(d)
    )


def assigned(step_id: str) -> bool:
    """Is STEP_ID an assignment's target (`x.f = v`), not a call that stores by name?"""
    return step_ids.address(step_id).kind == "a"


def nested_or_same(scope: str, outer: str) -> bool:
    return scope == outer or scope.startswith(outer + ".")
