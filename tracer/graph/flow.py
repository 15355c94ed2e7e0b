"""The call + dataflow graph, grown on demand from what a query reaches (a networkx
MultiDiGraph of it is made when asked). Files are turned into steps when first touched; edges
are found when a step is expanded forward (who reads this value) or backward (where does
this value come from)."""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Iterator
from functools import partial
from typing import Any, TypeVar

import networkx as nx

from tracer.extract.facts import MODULE_SCOPE, Arg
from tracer.extract.values import call_of_ref
from tracer.graph.binding import bindings
from tracer.graph.blocks import covered_before, dominates, reaching, rebinds, stored_key
from tracer.graph.call_values import CallValues
from tracer.graph.callsites import COMMON_WORD_FILES, MAX_FAMILY_NAMES, CallSites
from tracer.graph.contents import Contents, store_target
from tracer.graph.file_steps import FileTables
from tracer.graph.flags import FlagEdges
from tracer.graph.held import Held
from tracer.graph.instances import Instances, loop_around
from tracer.graph.launches import launch_edges, launch_sources
from tracer.graph.objects import splat_keys
from tracer.graph.parsed import namespace_edges
from tracer.graph.slots import Slots
from tracer.graph.step_tables import Read
from tracer.graph.steps import FLAG_EDGES, TRUSTED, Edge, Step, field_class
from tracer.index.calls.rules import CallRules
from tracer.index.index import Index
from tracer.index.resolve import DYNAMIC, OPAQUE, CallTarget, Resolver
from tracer.store import step_ids
from tracer.store.facts import Facts
from tracer.versions import DERIVED

ASSIGN_KINDS = frozenset({"local_assign", "attr_write", "formula"})
T = TypeVar("T")
MISSING = object()  # no answer remembered yet (None is an answer)


class FlowGraph:
    def __init__(self, index: Index, facts: Facts) -> None:
        self.index = index
        self.facts = facts
        self.resolver = Resolver(index, facts)
        self.rules = CallRules(index, facts, self.resolver)  # what one call runs, for all
        self.tables: dict[str, FileTables] = {}
        self.expanded: dict[tuple[str, bool], list[Edge]] = {}
        self.flag_only: dict[str, list[Edge]] = {}  # see flag_edges
        self.attr_writes: dict[tuple[str, str], list[Read]] = {}  # (path, attribute) -> writes
        self.running: dict[tuple[str, str], bool] = {}  # see may_run
        self.declared: dict[tuple[str, str, str], list[str]] = {}  # see declared_readers
        self.modules_imported: dict[str, set[str]] = {}  # see imports_module
        self.global_reads: dict[tuple[str, str], list[tuple[FileTables, str, bool]]] = {}
        self.answers: dict[tuple[str, Hashable], Any] = {}  # see remembered
        found = facts.cached(DERIVED, facts.snapshot_key)
        self.derived = set(found) if isinstance(found, dict) else set()
        if isinstance(found, dict):
            index.restore(found)
        self.field_index: dict[str, list[str]] = {}
        for full, (_, klass) in index.classes.items():
            for definition in klass.fields:
                self.field_index.setdefault(definition.name, []).append(full)
        self.flags = FlagEdges(self)
        self.sites = CallSites(self)
        self.slots = Slots(self)
        self.contents = Contents(self)
        self.values = CallValues(self)
        self.instances = Instances(self)
        self.held = Held(self)

    @property
    def graph(self) -> nx.MultiDiGraph:
        """The edges found so far, as a networkx graph (made when asked: no query reads it)."""
        graph = nx.MultiDiGraph()
        for found in self.expanded.values():
            for edge in found:
                graph.add_edge(edge.src, edge.dst, key=edge.kind, edge=edge)
        return graph

    def flush(self) -> None:
        """Keep what this session learnt that the next one can reuse: the greps, the index's
        derived tables, and the calls found by value that run the functions asked for."""
        self.values.flush()
        derived = self.index.derived()
        if derived.keys() - self.derived:
            self.facts.keep(DERIVED, self.facts.snapshot_key, derived)
            self.derived = set(derived)
        self.facts.flush()

    def remembered(self, question: str, key: Hashable, answer: Callable[[], T]) -> T:
        """What ANSWER gives for QUESTION about KEY, found once for this graph: for answers
        that depend on the graph and KEY alone (the graph grows as queries read it, but what it
        holds never changes), kept with the graph they were found on."""
        found = self.answers.get((question, key), MISSING)
        if found is MISSING:
            found = self.answers[(question, key)] = answer()
        return found  # type: ignore[no-any-return]

    # -- files and steps ---------------------------------------------------------------------

    def file(self, path: str) -> FileTables:
        tables = self.tables.get(path)
        if tables is None:
            summary = self.facts.summaries[path]
            flows = self.facts.flows(path)
            names = self.facts.names(path)
            source = partial(self.facts.snapshot.read, path)
            tables = FileTables(path, summary, flows, names, self.resolver, source, self.rules)
            self.tables[path] = tables
        return tables

    def writes(self, path: str, attr: str) -> list[Read]:
        """The writes of ATTR in PATH (fields, `x.ATTR = ...`), without building its tables."""
        key = (path, attr)
        found = self.attr_writes.get(key)
        if found is None:  # asked again for each reader of the attribute
            found = [Read(*write) for write in self.facts.names(path).writes.get(attr, ())]
            self.attr_writes[key] = found
        return found

    def splat_keys(self, tables: FileTables, call_id: int, arg: Arg) -> frozenset[str] | None:
        """The constant keys a `**d` argument holds (see `objects.splat_keys`)."""
        return splat_keys(self, tables, call_id, arg)

    def step(self, step_id: str) -> Step:
        return self.file(step_ids.file_of(step_id)).step(step_id)

    def centrality(self, step_id: str) -> int:
        """How many modules import the module of STEP_ID (main paths run through those)."""
        module = self.index.module_of[step_ids.file_of(step_id)]
        return self.index.importers.get(module, 0)

    def mentioning(self, word: str) -> list[str]:
        return self.facts.mentioning(word)

    def writing(self, attr: str) -> list[str]:
        """Files that may assign ATTR: `x.ATTR = ...`, `x.ATTR += ...`, or a class-level
        `ATTR: T = ...`."""
        name = re.escape(attr.encode())
        assign = rb"(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)"
        return self.facts.matching(
            attr, rb"\." + name + rb"\s*" + assign + rb"|^\s*" + name + rb"\s*[:=]"
        )

    def mentioning_with(self, word: str, classes: list[str]) -> list[str]:
        """Files that mention WORD; for a common word, only those that also name one of
        CLASSES (a typed access needs the type's name in the file, or an attribute chain)."""
        found = self.mentioning(word)
        if len(found) <= COMMON_WORD_FILES or not classes:
            return found
        allowed: set[str] = set()
        for klass in classes[:MAX_FAMILY_NAMES]:
            allowed.update(self.mentioning(klass.rpartition(".")[2]))
        return list(filter(allowed.__contains__, found))

    def edges(self, step_id: str, forward: bool) -> list[Edge]:
        """Edges out of (forward) or into (backward) STEP_ID, found once, kept in the graph."""
        key = (step_id, forward)
        found = self.expanded.get(key)
        if found is None:
            kind = step_ids.address(step_id).kind
            if forward:
                found = list(self.find_forward(step_id))
                found += self.values.into_arguments(found)
                if kind == "r":
                    found += self.returned_by_value(step_id)
            else:
                found = list(self.find_backward(step_id))
                if kind == "p":
                    found += self.params_by_value(step_id)
            found = [e for e in dedupe(found) if e.src != e.dst]
            self.expanded[key] = found
        return found

    def returned_by_value(self, step_id: str) -> Iterator[Edge]:
        """From the return STEP_ID to the steps that take the result of a call found by value
        that runs its function (see CallValues.held_callers)."""
        tables = self.file(step_ids.file_of(step_id))
        found = self.resolver.function(tables.path, tables.scope_of[step_id])
        if found is None:
            return
        position = tables.position.get(step_id)
        for caller, consumer, target in self.values.returned_to(found[0]):
            if fits(position, caller.position.get(consumer)):
                yield Edge(step_id, consumer, "return_to_result", target.confidence, "", target.why)

    def flag_edges(self, field_step: str) -> list[Edge]:
        """The edges into the field FIELD_STEP from the flags that set it: those of its
        backward edges, found without the constructions of its class when not found yet."""
        found = self.expanded.get((field_step, False))
        if found is None:
            found = self.flag_only.get(field_step)
        if found is None:
            step = self.file(step_ids.file_of(field_step)).steps[field_step]
            found = [e for e in self.flags.flag_sources(step) if e.src != e.dst]
            if not self.flags.filling:  # whole: kept (a settings bag asks it of each read)
                self.flag_only[field_step] = found
        return [e for e in found if e.kind in FLAG_EDGES]

    # -- seeds -------------------------------------------------------------------------------

    def seeds(self, name: str) -> list[str]:
        """Steps that bind NAME: `attr`, `Class.attr`, or `Class.method.param`."""
        parts = name.split(".")
        word = parts[-1]
        owner = ".".join(parts[:-1])
        found = []
        # A flag's dest may be spelled only with dashes there (`--learning-rate`).
        paths = dict.fromkeys(self.mentioning(word))
        if "_" in word:
            paths.update(dict.fromkeys(self.mentioning(word.replace("_", "-"))))
        for path in paths:
            if path not in self.tables and word not in self.facts.names(path).binders:
                continue
            tables = self.file(path)
            for step in tables.binding_steps(word):
                if step.name != word or step.kind in ("use", "return", "call_arg"):
                    continue
                if owner and not self.owned_by(tables, step, owner):
                    continue
                found.append(step.id)
        return found

    def attribute_writes(self, attr: str) -> list[str]:
        """The steps `x.ATTR (op)= ...` (class-level fields aside), in the order `seeds(ATTR)`
        gives them, found from each file's names without building its tables."""
        found = []
        for path in self.mentioning(attr):
            found.extend(
                w[0] for w in self.facts.names(path).writes.get(attr, ()) if w[2] != "<class>"
            )
        return found

    def owned_by(self, tables: FileTables, step: Step, owner: str) -> bool:
        """Does STEP belong to OWNER, a dotted suffix of a class or function name?"""
        scope = tables.scope_of[step.id]
        module = self.index.module_of[tables.path]
        if step.kind == "field":
            holder = f"{module}.{step.symbol}"
        elif step.kind == "param":
            holder = f"{module}.{scope}"
        elif step.kind in ASSIGN_KINDS and "." in tables.bound.get(step.id, ""):
            base = tables.bound[step.id].rpartition(".")[0]
            holder = self.resolver.ref_type(tables.path, scope, base) or ""
            family = self.index.family(holder) if holder else []
            return any(c == owner or c.endswith("." + owner) for c in family)
        else:
            holder = f"{module}.{scope}"
        return holder == owner or holder.endswith("." + owner)

    # -- forward -----------------------------------------------------------------------------

    def find_forward(self, step_id: str) -> Iterator[Edge]:
        tables = self.file(step_ids.file_of(step_id))
        step = tables.steps[step_id]
        scope = tables.scope_of[step_id]
        if step.kind == "cli_flag":
            fields = list(self.flags.forward(tables, step))
            yield from fields
            # A dest no class surely declares stays in the namespace the parser returns.
            if not any(edge.confidence >= TRUSTED for edge in fields):
                yield from namespace_edges(self, step_id)
        elif step.kind == "call_arg" and tables.elements.get(step_id) is not None:
            yield from launch_edges(self, tables, step_id)  # a value a launcher passes
        elif step.kind == "call_arg" and step_id in self.values.made:
            yield from self.values.bind(tables, step_id)  # of a call found by value
        elif step.kind == "call_arg":
            yield from self.bind_forward(tables, step_id)
        elif step.kind == "return":
            yield from self.results_of(tables, scope, step_id)
        elif step.kind == "field":
            klass = field_class(self.index, step)
            yield from self.slot_readers(klass, step.name, step_id)
        elif step.kind in ASSIGN_KINDS and "." in tables.bound.get(step_id, ""):
            base = tables.bound[step_id].rpartition(".")[0]
            klass = self.resolver.ref_type(tables.path, scope, base)
            yield from self.slot_readers(klass, step.name, step_id)
            # The objects given to the parameter it writes on, read after the call.
            for reader_tables, reader, _, ref in self.instances.readers(step_id):
                opaque = ref in reader_tables.opaque.get(reader, ())
                yield read_edge(step_id, reader, opaque, 1.0)
        elif step.kind in ASSIGN_KINDS or step.kind == "param":
            yield from self.local_readers(tables, scope, step)
        elif step.kind == "use" and (container := store_target(tables, step_id)) is not None:
            # `conf.update(k=v)`: v is kept in conf, read where conf is read after.
            yield from self.local_readers(tables, scope, step, container)

    def local_readers(
        self, tables: FileTables, scope: str, step: Step, name: str | None = None
    ) -> Iterator[Edge]:
        name = name or tables.bound.get(step.id, step.name)
        after = step.kind != "param"
        first, later = binding_span(tables, scope, step, name)
        # In a loop, a read before the binding takes it the next time round.
        loop = loop_around(tables, scope, step.line) if after and step.kind != "param" else None
        for reader in tables.local_reads.get((scope, name), []):
            line = tables.steps[reader].line
            follows = (
                (not after or line >= first)
                and not any(dominates(tables, d, line) for d in later)
                and covered_before(tables, later, line) <= step.line
            )
            carried = (
                loop is not None
                and loop[0] < line < step.line
                and not self.bound_in_loop(tables, scope, name, loop[0], line)
            )
            if follows or carried:
                yield Edge(step.id, reader, "local", 1.0)
        # Closures and globals: functions inside that read the name without binding it.
        # (A function that declares the name this scope's reads it so even where it binds it.)
        for (inner, local), readers in tables.inner_reads(scope):
            declared = tables.declared.get((inner, name))
            if inner == scope or local != name or declared not in (None, scope):
                continue  # (a name INNER declares another scope's is not this one's)
            if ((inner, name) not in tables.local_defs or declared == scope) and self.closure_reads(
                tables, scope, inner, first, later
            ):
                for reader in readers:
                    yield Edge(step.id, reader, "local", 1.0)
        # A name the function declares `global` or `nonlocal`: the outer scope's reads too.
        variable = tables.declared.get((scope, name)) if after else None
        if variable is not None:
            for reader in self.declared_readers(tables, scope, name):
                yield Edge(step.id, reader, "local", 1.0)
        # A module's global: read in the modules that import it, or read it as `m.NAME`.
        if after and MODULE_SCOPE in (scope, variable):
            for reader_tables, reader, imported in self.global_readers(tables.path, name):
                if imported and scope != MODULE_SCOPE and (scope, name) not in tables.mutated:
                    continue  # `from m import NAME` took what m's module code bound
                if imported:
                    yield Edge(step.id, reader, "local", 1.0)
                else:
                    yield attr_edge(reader_tables, step.id, reader, name, 1.0)

    def global_home(self, path: str, base: str, name: str) -> tuple[str, str] | None:
        """The module of the tree (its file) and the name there of the global that NAME, read
        in PATH as `BASE.NAME` (BASE a module) or, BASE empty, imported by `from m import
        NAME`, is: a name bound by assignment in that module, not a function, class or
        module; followed through re-exports (`from .conf import NAME` in a package)."""
        module = self.index.module_of[path]
        for _ in range(8):  # re-exports, at most this deep
            if base:
                symbol = self.index.resolve(module, base)
                if symbol is None or symbol.kind != "module":
                    return None
                source = symbol.name
            else:
                imp = self.index.namespace(module, path)[1].get(name)
                if imp is None or imp.name is None:
                    return None
                source = self.index.absolute(imp.module, imp.level, module)
                name = imp.name
                if f"{source}.{name}" in self.index.path_of:
                    return None  # a module
            home = self.index.path_of.get(source)
            if home is None or self.index.resolve(source, name) is not None:
                return None  # outside the tree; a function, class or module of it
            if self.resolver.assigns(home, MODULE_SCOPE).get(name) or self.file(home).declarers.get(
                (MODULE_SCOPE, name)
            ):
                return home, name
            module, path, base = source, home, ""  # perhaps imported there in turn
        return None

    def global_bindings(self, path: str, base: str, name: str, imported: bool) -> list[str]:
        """The steps binding the global `BASE.NAME` (or NAME imported) read in PATH: its
        module's own bindings of it at its top level, and, read as an attribute of the module
        at any time (not IMPORTED once), those of its functions that declare it `global`;
        either way, the stores of its functions into it (`REGISTRY[k] = v` in a function:
        an import copies the container, whose contents change after)."""
        home = self.global_home(path, base, name)
        if home is None:
            return []
        tables = self.file(home[0])
        found = list(tables.local_defs.get((MODULE_SCOPE, home[1]), []))
        found += tables.stores_into.get((MODULE_SCOPE, home[1]), [])  # `REG.update(k=v)`
        for function in tables.declarers.get((MODULE_SCOPE, home[1]), ()):
            if not imported or (function, home[1]) in tables.mutated:
                found += self.declared_bindings(tables, function, home[1])
        return found

    def declared_sources(
        self, tables: FileTables, scope: str, name: str, reader: str
    ) -> Iterator[str]:
        """The bindings (and stores) of NAME in SCOPE that reach the reads of the function
        READER, which declares NAME SCOPE's (see `closure_reads`)."""
        for source in [
            *tables.local_defs.get((scope, name), []),
            *tables.stores_into.get((scope, name), []),
        ]:
            first, later = binding_span(tables, scope, tables.steps[source], name)
            if self.closure_reads(tables, scope, reader, first, later):
                yield source

    @staticmethod
    def declared_bindings(tables: FileTables, function: str, name: str) -> list[str]:
        """The steps of FUNCTION that bind or store into NAME, a name it declares `global` or
        `nonlocal` or stores into without binding it (`tables.declared`)."""
        found = [d for d in tables.local_defs.get((function, name), []) if not step_ids.is_param(d)]
        return found + tables.stores_into.get((function, name), [])

    def imports_module(self, path: str, module: str) -> bool:
        """Does PATH's module import MODULE, or a package holding it, as a module?"""
        found = self.modules_imported.get(path)
        if found is None:
            found = self.modules_imported[path] = self.index.modules_imported(path)
        return any(module == m or module.startswith(m + ".") for m in found)

    def global_readers(self, path: str, name: str) -> list[tuple[FileTables, str, bool]]:
        """The reads in other modules of the global NAME of PATH's module: of NAME imported
        from it (True) and of `m.NAME`, m that module (False), with their files' tables."""
        key = (path, name)
        found = self.global_reads.get(key)
        if found is not None:
            return found
        found = self.global_reads[key] = []
        module = self.index.module_of[path]
        if not self.index.importers.get(module):
            return found  # a module no module imports (a script)
        for other in self.mentioning(name):
            if other == path:
                continue
            # What the index says first (no file read): does it import NAME (under which
            # names: `from m import NAME as N`), or the module?
            imported = {
                imp.alias
                for imp in self.index.summaries[other].imports
                if imp.name == name and self.global_home(other, "", imp.alias) == (path, name)
            }
            homes: set[str] = set()
            if self.imports_module(other, module):
                reads = self.facts.names(other).reads.get(name, ())
                bases = {base for _, base in reads if base}
                homes = {b for b in bases if self.global_home(other, b, name) == (path, name)}
            if not homes and not imported:
                continue
            tables = self.file(other)
            for read in tables.attr_reads.get(name, []) if homes else []:
                if read.base in homes:
                    found.append((tables, read.step, False))
            for (scope, local), readers in tables.inner_reads(MODULE_SCOPE) if imported else ():
                if local in imported and not self.local_definitions(tables, scope, local):
                    found += [(tables, reader, True) for reader in readers]
        return found

    def declared_readers(self, tables: FileTables, function: str, name: str) -> list[str]:
        """The reads outside FUNCTION a binding of NAME in it reaches, where FUNCTION declares
        NAME `global` or `nonlocal` (the variable of the scope S `tables.declared` names):
        S's own reads after a call written in S of FUNCTION (of the function around it in S,
        if each one on the way is called in the one around it), unless a binding of S always
        runs in between (after the function's end, where S hands it on; none where it is
        never called), and the reads of NAME of every other function that may run and reads
        S's variable. [] for any other name."""
        key = (tables.path, function, name)
        found = self.declared.get(key)
        if found is not None:
            return found
        found = self.declared[key] = []
        scope = tables.declared.get((function, name))
        if scope is None:
            return found
        # The function around it directly in S, if each one on the way is called in its own.
        current: str | None = function
        while current is not None and (current.rpartition(".")[0] or MODULE_SCOPE) != scope:
            parent = current.rpartition(".")[0]
            current = parent if closure_calls(tables, parent, current) != [] else None
        starts: list[int] | None = []
        if current is not None and scope == MODULE_SCOPE:
            starts = [
                tables.rows.call_line(call_id)
                for call_id, where, callee in tables.rows.callees.heads(current)
                if where == MODULE_SCOPE and callee == current
            ]
        elif current is not None:
            starts = closure_calls(tables, scope, current)
        if starts is None and current is not None:
            # Handed on: it may run once its name is read (`map(fill, xs)`, `run(fill)`),
            # and where that is not seen in S, whenever after its definition.
            simple = current.rpartition(".")[2]
            named = [tables.steps[r].line for r in tables.local_reads.get((scope, simple), [])]
            defined = [f.end_line for f in tables.summary.functions if f.qualname == current]
            starts = named or defined[:1]
        later = [
            d
            for d in tables.local_defs.get((scope, name), [])
            if not step_ids.is_param(d) and rebinds(tables, d)
        ]
        for reader in tables.local_reads.get((scope, name), []):
            line = tables.steps[reader].line
            if any(
                start < line
                and not any(
                    start < tables.steps[d].line < line and dominates(tables, d, line)
                    for d in later
                )
                for start in starts
            ):
                found.append(reader)
        for (inner, local), readers in tables.inner_reads(scope):
            declared = tables.declared.get((inner, name))
            if local != name or inner in (scope, function) or declared not in (None, scope):
                continue
            if declared is None:  # else it reads S's, as it declares
                if (inner, name) in tables.local_defs:
                    continue
                defs = self.local_definitions(tables, inner, name)
                if (tables.scope_of[defs[0]] if defs else MODULE_SCOPE) != scope:
                    continue  # a function nearer binds its own
            if self.may_run(tables.path, inner):
                found.extend(readers)
        return found

    def closure_reads(
        self, tables: FileTables, scope: str, inner: str, first: int, later: list[str]
    ) -> bool:
        """Does a binding of SCOPE, read from line FIRST on unless one of LATER always runs
        before, reach the reads of the function INNER nested in SCOPE? When INNER may run;
        where it runs only where SCOPE calls it, when a call comes after the binding."""
        if not self.may_run(tables.path, inner):
            return False
        calls = closure_calls(tables, scope, inner)
        return calls is None or any(
            line >= first and not any(dominates(tables, d, line) for d in later) for line in calls
        )

    def bound_in_loop(
        self, tables: FileTables, scope: str, name: str, start: int, line: int
    ) -> bool:
        """Is NAME bound in SCOPE, in the loop starting at line START, before LINE by a binding
        that always runs before it (what the round before left is then overwritten)?"""
        return any(
            start < tables.steps[d].line < line
            and rebinds(tables, d)
            and dominates(tables, d, line)
            for d in tables.local_defs.get((scope, name), [])
            if not step_ids.is_param(d)
        )

    def may_run(self, path: str, inner: str) -> bool:
        """May the nested function INNER ever run: is each function around it, from the
        outermost function in, named in the body of the one around it besides its own `def`
        (called, returned, passed on, kept) or decorated? A function only defined never runs,
        and reads nothing of its closure (a method, a lambda, a top-level function may always
        run)."""
        key = (path, inner)
        found = self.running.get(key)
        if found is None:
            found = self.running[key] = self.named_around(path, inner)
        return found

    def named_around(self, path: str, inner: str) -> bool:
        functions = {f.qualname: f for f in self.facts.summaries[path].functions}
        source = self.facts.snapshot.read(path)
        parts = inner.split(".")
        for depth in range(len(parts) - 1, 0, -1):
            parent, name = ".".join(parts[:depth]), parts[depth]
            child = functions.get(".".join(parts[: depth + 1]))
            around = functions.get(parent)
            if child is None or around is None or name.startswith("<"):
                continue  # a method (its parent a class), a lambda
            word = re.compile(rb"(?<![\w.])" + re.escape(name.encode()) + rb"(?!\w)")
            before = COMMENT.sub(b"", source[around.start_byte : child.start_byte])
            after = COMMENT.sub(b"", source[child.end_byte : around.end_byte])
            decorated = before.rstrip().rpartition(b"\n")[2].lstrip().startswith(b"@")
            if not (decorated or word.search(before) or word.search(after)):
                return False
        return True

    def slot_readers(self, klass: str | None, attr: str, writer: str) -> Iterator[Edge]:
        """Reads of `x.ATTR` where x is of KLASS's family; untyped x only when one family
        owns ATTR (a guess)."""
        classes = self.index.family(klass) if klass else []
        family = set(classes)
        declared = step_ids.is_field(writer)
        if not family and len(self.mentioning(attr)) > COMMON_WORD_FILES:
            return  # untyped and common: a guess would touch half the tree
        candidates = self.mentioning_with(attr, classes)
        # An object made where it is written and handed nowhere after: read only there.
        kept = None if declared else self.instances.stays_in(writer)
        # A store on an instance is in the instance: reads on the class itself do not see it.
        on_instance = not declared and not self.names_class_at(writer)
        if kept is not None:
            candidates = [p for p in candidates if p == step_ids.file_of(writer)]
        if declared and family:
            # A declared field is also read through bags that name no class of it
            # (`get_limits().x`, see Slots.dynamic_fields): files whose reads of ATTR are
            # on a call's result, though they name no class of FAMILY.
            named = set(candidates)
            candidates = candidates + [
                path
                for path in self.mentioning(attr)
                if path not in named
                and any(
                    call_of_ref(base) is not None
                    for _, base in self.facts.names(path).reads.get(attr, ())
                )
            ]
        for path in candidates:
            # How sure a read is depends on its scope and receiver alone: only the units of
            # the scopes where one may be of this family are built.
            scopes = {
                scope
                for scope, base in self.facts.names(path).reads.get(attr, ())
                if (kept is None or nested_in(scope, kept))
                and self.slots.slot_match(path, Read("", scope, base, 0), klass, attr, declared)
            }
            if not scopes:
                continue  # no read there can be of this family: its tables are not needed
            reader_tables = self.file(path)
            for read, opaque in reader_tables.attr_readers(attr, scopes):
                if read.scope not in scopes:
                    continue  # read in a unit built for another question
                if on_instance and (
                    read.base == "cls" or self.resolver.names_class(path, read.scope, read.base)
                ):
                    continue
                # An object made in the reading function: followed, not joined by name.
                made = self.instances.writes_reaching(
                    reader_tables, read.scope, read.step, read.base, attr
                )
                if made is not None:
                    if writer in made:
                        yield read_edge(writer, read.step, f"{read.base}.{attr}" in opaque, 1.0)
                    continue
                confidence = self.slots.slot_match(path, read, klass, attr, declared)
                if confidence == DYNAMIC and declared:
                    # As sure as the read's own way back to the fields it may come from.
                    fields, sure = self.slots.dynamic_fields(attr)
                    confidence = sure if writer in fields else confidence
                if confidence:
                    ref = f"{read.base}.{attr}"
                    yield read_edge(writer, read.step, ref in opaque, confidence)

    def names_class_at(self, writer: str) -> bool:
        """Does the attribute write WRITER store on a class (`C.x = v`, `cls.x = v`)?"""
        tables = self.file(step_ids.file_of(writer))
        base = tables.bound.get(writer, "").rpartition(".")[0]
        return base == "cls" or self.resolver.names_class(
            tables.path, tables.scope_of[writer], base
        )

    def field_step(self, klass: str, attr: str) -> str:
        """The step of the field ATTR declared in KLASS (full name)."""
        path, definition = self.index.classes[klass]
        return step_ids.field_id(path, definition.qualname, attr)

    def bind_forward(self, tables: FileTables, step_id: str) -> Iterator[Edge]:
        call_id = step_ids.call_of(step_id)
        arg = next(a for a, sid in tables.arguments(call_id) if sid == step_id)
        yield from self.bound_edges(tables, step_id, arg, tables.targets[call_id])
        # `cls(...)` in a classmethod: also the classes the follower finds it called on.
        extra = self.values.subclasses_made(tables, call_id)
        for edge in self.bound_edges(tables, step_id, arg, extra):
            self.values.one_way.add((edge.src, edge.dst))
            yield edge

    def bound_edges(
        self, tables: FileTables, step_id: str, arg: Arg, targets: Iterable[CallTarget]
    ) -> Iterator[Edge]:
        """The edges from the argument STEP_ID (ARG of its call) to what each of TARGETS
        binds it to, as sure as the binding and the target."""
        call_id = step_ids.call_of(step_id)
        siblings = tables.calls[call_id].args
        keys = self.splat_keys(tables, call_id, arg)
        for target in targets:
            for dst, kind, confidence in self.bindings(target, arg, siblings, keys):
                yield Edge(step_id, dst, kind, confidence * target.confidence, condition=target.why)

    def bindings(
        self,
        target: CallTarget,
        arg: Arg,
        siblings: tuple[Arg, ...] = (),
        keys: frozenset[str] | None = None,
    ) -> list[tuple[str, str, float]]:
        """Steps ARG is bound to when TARGET is called (see tracer.graph.binding)."""
        return bindings(self.index, target, arg, siblings, keys)

    # -- call sites (see tracer.graph.callsites) ---------------------------------------------

    def callers(
        self, function: str, within: set[str] | None = None
    ) -> Iterator[tuple[FileTables, int, CallTarget]]:
        return self.sites.callers(function, within)

    def calls_to(
        self, path: str, words: set[str], wanted: Callable[[CallTarget], bool]
    ) -> list[int]:
        return self.sites.calls_to(path, words, wanted)

    def calling_files(
        self, function: str, within: set[str] | None = None
    ) -> tuple[list[str], set[str]]:
        return self.sites.calling_files(function, within)

    def calling(self, name: str) -> list[str]:
        return self.sites.calling(name)

    def renamed(self, path: str) -> set[str]:
        return self.sites.renamed(path)

    def results_of(self, tables: FileTables, scope: str, step_id: str) -> Iterator[Edge]:
        found = self.resolver.function(tables.path, scope)
        if found is None:
            return
        position = tables.position.get(step_id)
        for caller, call_id, target in self.callers(found[0]):
            for consumer in caller.consumers.get(call_id, []):
                if fits(position, caller.position.get(consumer)):
                    yield Edge(
                        step_id, consumer, "return_to_result", target.confidence, "", target.why
                    )

    def find_backward(self, step_id: str) -> Iterator[Edge]:
        tables = self.file(step_ids.file_of(step_id))
        step = tables.steps[step_id]
        scope = tables.scope_of[step_id]
        if step.kind == "param":
            yield from self.param_sources(tables, scope, step)
            outer = scope.rpartition(".")[0] or MODULE_SCOPE
            for ref in tables.refs.get(step_id, ()):  # the default value
                for edge in self.ref_sources(tables, outer, step, ref):
                    yield Edge(edge.src, edge.dst, "default", edge.confidence)
            return
        if step.kind == "field":  # a flag that sets it, then its value in the class body
            yield from self.flags.field_sources(tables, step)
        for ref in tables.refs.get(step_id, ()):
            yield from self.ref_sources(tables, scope, step, ref)
        for call_id in tables.results.get(step_id, ()):
            for target in tables.targets[call_id]:
                if target.function is None:
                    continue
                path, function = self.index.functions[target.function]
                callee = self.file(path)
                position = tables.position.get(step_id)
                for ret in callee.returns.get(function.qualname, []):
                    if fits(callee.position.get(ret), position):
                        yield Edge(
                            ret, step_id, "return_to_result", target.confidence, "", target.why
                        )
        yield from self.returns_by_value(tables, step_id)

    def returns_by_value(self, tables: FileTables, step_id: str) -> Iterator[Edge]:
        """The returns of what the calls found by value whose results STEP_ID takes run."""
        position = tables.position.get(step_id)
        for _, target in self.values.results_read(tables, step_id):
            if target.function is None or target.function not in self.index.functions:
                continue
            path, function = self.index.functions[target.function]
            callee = self.file(path)
            for ret in callee.returns.get(function.qualname, []):
                if fits(callee.position.get(ret), position):
                    yield Edge(ret, step_id, "return_to_result", target.confidence, "", target.why)

    def ref_sources(self, tables: FileTables, scope: str, step: Step, ref: str) -> Iterator[Edge]:
        base, _, attr = ref.rpartition(".")
        if not base:
            # A name this function declares another scope's (`global`, `nonlocal`, stores
            # into it): its own bindings, and that scope's, as a closure reads them.
            own = tables.declared.get((scope, ref))
            if own is None or tables.local_defs.get((scope, ref)):
                defs = self.local_definitions(tables, scope, ref)
            else:
                defs = []  # not the scopes between (`global x` skips an enclosing `x`)
            for source in () if own is None else self.declared_sources(tables, own, ref, scope):
                yield local_edge(tables, source, step.id, ref)
            # Bindings in functions that declare the name theirs (`global`, `nonlocal`).
            variable = own or (tables.scope_of[defs[0]] if defs else MODULE_SCOPE)
            for function in tables.declarers.get((variable, ref), ()):
                if function != scope and step.id in self.declared_readers(tables, function, ref):
                    for source in self.declared_bindings(tables, function, ref):
                        yield local_edge(tables, source, step.id, ref)
            outer = tables.scope_of[defs[0]] if defs else scope
            calls = closure_calls(tables, outer, scope) if outer != scope else None
            if calls is not None:  # a closure run only where it is called: bound at a call
                sources = [
                    d
                    for line in calls
                    for d in reaching(
                        tables,
                        outer,
                        [d for d in defs if tables.steps[d].line < line or step_ids.is_param(d)],
                        line,
                    )
                ]
                for source in dict.fromkeys(sources):
                    yield local_edge(tables, source, step.id, ref)
                return
            if not defs:  # `from m import NAME`: what m's own module code binds it to
                for source in self.global_bindings(tables.path, "", ref, imported=True):
                    yield local_edge(tables, source, step.id, ref)
            before = [d for d in defs if tables.steps[d].line < step.line or step_ids.is_param(d)]
            sources = reaching(tables, scope, before, step.line) or defs
            # In a loop, a binding after the read reaches it the next time round.
            loop = loop_around(tables, scope, step.line)
            if loop is not None and not self.bound_in_loop(tables, scope, ref, loop[0], step.line):
                sources = sources + [
                    d
                    for d in defs
                    if d not in sources
                    and tables.scope_of[d] == scope
                    and step.line < tables.steps[d].line < loop[1]
                ]
            for source in sources:
                yield local_edge(tables, source, step.id, ref)
            # Stores into the container since (`conf.update(k=v)` after `conf = {}`).
            stores = tables.stores_into.get((scope, ref))
            if stores:
                since = max(
                    (tables.steps[d].line for d in sources if rebinds(tables, d)), default=0
                )
                for store in stores:
                    found = tables.steps.get(store)
                    if found is not None and since <= found.line < step.line:
                        yield local_edge(tables, store, step.id, ref)
            return
        if self.global_home(tables.path, base, attr) is not None:  # `m.NAME`, m a module
            for source in self.global_bindings(tables.path, base, attr, imported=False):
                yield attr_edge(tables, source, step.id, ref, 1.0)
            return
        made = self.instances.writes_reaching(tables, scope, step.id, base, attr)
        if made is not None:  # an object made here: followed, not joined by name
            for write in sorted(made):
                yield attr_edge(tables, write, step.id, ref, 1.0)
            return
        klass = self.resolver.ref_type(tables.path, scope, base)
        if klass is not None and not self.slots.binds(klass, attr):
            # Read through a bag filled by setattr: the declared fields of that name.
            fields, confidence = self.slots.dynamic_fields(attr)
            for field_step in fields:
                yield attr_edge(tables, field_step, step.id, ref, confidence)
            return
        classes = self.index.family(klass) if klass else []
        family = set(classes)
        if not family and len(self.mentioning(attr)) > COMMON_WORD_FILES:
            return
        writers = set(self.writing(attr))
        for path in self.mentioning_with(attr, classes):
            if path not in writers:
                continue
            for write in self.writes(path, attr):
                confidence = self.slots.slot_match(
                    path, write, klass, attr, write.base == "<class>"
                )
                if confidence:
                    yield attr_edge(tables, write.step, step.id, ref, confidence)

    def local_definitions(self, tables: FileTables, scope: str, name: str) -> list[str]:
        """Steps binding NAME in SCOPE, else in the nearest enclosing scope that binds it."""
        while True:
            defs = tables.local_defs.get((scope, name))
            if defs:
                return defs
            if scope == MODULE_SCOPE:
                return []
            scope = scope.rpartition(".")[0] or MODULE_SCOPE

    def param_sources(self, tables: FileTables, scope: str, step: Step) -> Iterator[Edge]:
        found = self.resolver.function(tables.path, scope)
        if found is None:
            return
        # A constructor's own class made first, then its subclasses that inherit it (stable);
        # then `cls(...)` in a base's classmethod called on its class (found by value).
        own = found[0].rpartition(".")[0]
        yield from self.bound_from(
            step,
            [
                *sorted(self.callers(found[0]), key=lambda c: c[2].klass not in (None, own)),
                *self.values.class_callers(found[0]),
                *self.values.callers(found[0]),
            ],
        )
        # Run by a launcher too, perhaps (a function both called and handed to a process).
        yield from launch_sources(self, found[0], step.id)

    def params_by_value(self, step_id: str) -> Iterator[Edge]:
        """Into the parameter STEP_ID from the arguments of the calls found by value that run
        its function (see CallValues.held_callers)."""
        tables = self.file(step_ids.file_of(step_id))
        found = self.resolver.function(tables.path, tables.scope_of[step_id])
        if found is None:
            return
        yield from self.bound_from(tables.steps[step_id], self.values.held_callers(found[0]))

    def bound_from(
        self, step: Step, calls: list[tuple[FileTables, int, CallTarget]]
    ) -> Iterator[Edge]:
        """The edges into the parameter STEP from the arguments of CALLS bound to it."""
        for caller, call_id, target in calls:
            siblings = caller.calls[call_id].args
            for arg, arg_step in caller.arguments(call_id) or self.values.argument_pairs(
                caller, call_id
            ):
                keys = self.splat_keys(caller, call_id, arg)
                for dst, kind, confidence in self.bindings(target, arg, siblings, keys):
                    if dst == step.id:
                        yield Edge(
                            arg_step,
                            step.id,
                            kind,
                            confidence * target.confidence,
                            condition=target.why,
                        )


def binding_span(tables: FileTables, scope: str, step: Step, name: str) -> tuple[int, list[str]]:
    """The first line a binding STEP of NAME in SCOPE is read from, and the later bindings
    that replace it where they always run before a read (and a later store at the constant
    key this store is at: `d["k"] = a; d["k"] = b`)."""
    key = stored_key(tables, step.id)
    later = [
        d
        for d in tables.local_defs.get((scope, name), [])
        if tables.steps[d].line > step.line
        and not step_ids.is_param(d)
        and (rebinds(tables, d) or (key is not None and stored_key(tables, d) == key))
    ]
    # Outside every loop, a statement's reads run before its own targets are bound.
    after = step.kind != "param"
    first = step.end_line + 1 if after and step.line in tables.flows.straight else step.line
    return first, later


COMMENT = re.compile(rb"#[^\n]*")  # a comment (a `#` in a string cuts more: it only widens)


def closure_calls(tables: FileTables, outer: str, inner: str) -> list[int] | None:
    """The lines of OUTER where the function INNER, defined directly in it, is called, when
    that is all OUTER does with it (it is not handed on, kept, returned, decorated, nor called
    from another function): what INNER reads of OUTER's names is then what they hold at those
    calls. None when INNER may run elsewhere too."""
    parent, _, name = inner.rpartition(".")
    if parent != outer or outer == MODULE_SCOPE or name.startswith("<"):
        return None  # deeper, a method or a lambda (a value handed on where it is written)
    if tables.local_reads.get((outer, name)):
        return None
    found = []
    for call_id, scope, callee in tables.rows.callees.heads(name):
        if callee != name:
            continue  # `x.NAME(...)`: another name's attribute
        if scope == outer:
            found.append(tables.rows.call_line(call_id))
        elif nested_in(scope, outer):
            return None  # called from another function nested in OUTER
    if any(local == name for (_, local), _ in tables.inner_reads(outer)):
        return None
    if any(f.qualname == inner and f.decorators for f in tables.summary.functions):
        return None  # a decorator may keep it, or run it
    return found


def nested_in(scope: str, outer: str) -> bool:
    """Is SCOPE the function OUTER or one defined inside it?"""
    return scope == outer or scope.startswith(outer + ".")


def fits(returned: int | None, taken: int | None) -> bool:
    """Does the value returned at position RETURNED reach a target at position TAKEN?"""
    return returned is None or taken is None or returned == taken


def local_edge(reader_tables: FileTables, src: str, reader: str, name: str) -> Edge:
    if name in reader_tables.opaque.get(reader, ()):
        return Edge(src, reader, "local_via_call", OPAQUE)
    return Edge(src, reader, "local", 1.0)


def attr_edge(
    reader_tables: FileTables, src: str, reader: str, ref: str, confidence: float
) -> Edge:
    return read_edge(src, reader, ref in reader_tables.opaque.get(reader, ()), confidence)


def read_edge(src: str, reader: str, opaque: bool, confidence: float) -> Edge:
    """An attribute's value read by READER: only as an input of a call we cannot see into
    (OPAQUE), or as such."""
    if opaque:
        return Edge(src, reader, "attr_via_call", confidence * OPAQUE)
    return Edge(src, reader, "attr", confidence)


def dedupe(edges: list[Edge]) -> list[Edge]:
    """One edge per (src, dst, kind), keeping the most confident."""
    best: dict[tuple[str, str, str], Edge] = {}
    for edge in edges:
        key = (edge.src, edge.dst, edge.kind)
        if key not in best or best[key].confidence < edge.confidence:
            best[key] = edge
    return list(best.values())
