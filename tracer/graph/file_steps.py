"""One file's steps and the lookup tables that connect them (`FileTables`), built unit by unit
(a top-level function or class with everything inside it, or the module's own code) as a query
reads them: which units a key of a table depends on, and the queries over several units. The
tables are `step_tables.py`'s; `unit_steps.py` makes a unit's steps from its cached rows."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from textwrap import dedent
from typing import Any

from tracer.extract.facts import MODULE_SCOPE, Arg, FileFlows, FileSummary
from tracer.extract.parse import BOM, MAX_CODE_LINES, SourceLines
from tracer.graph.demand import ALL
from tracer.graph.reads import NO_REFS
from tracer.graph.step_tables import LoneTables, Read, StepTables
from tracer.graph.steps import Step
from tracer.graph.unit_steps import ASSIGN_ROWS, RETURN_ROWS, UNREAD, UnitIndex, UnitSteps
from tracer.index.calls.rules import CallRules
from tracer.index.library import STORING_METHODS, storing_receiver
from tracer.index.resolve import CallTarget, Resolver
from tracer.store import step_ids
from tracer.store.names import FLAG_METHODS, FileNames
from tracer.store.rows import ASSIGN_LINE, file_rows, row_at
from tracer.store.units import MEMBER_KINDS, top_classes, unit_of

NOT_READ = -2  # a line whose indentation is not read yet


class CodeLines:
    """The spans SourceLines gives, each decoded from the file's bytes when first asked: a
    query shows a few steps of a file, and decoding and splitting all of it cost more. A
    line break is one byte that no other character's encoding holds, so a span decoded
    alone reads as the same lines of the whole text decoded."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.text = source[len(BOM) :] if source.startswith(BOM) else source
        self.split: list[bytes] | None = None  # the lines' bytes, without their line breaks
        self.widths: list[int] | None = None  # each line's indentation, as read (`indent`)
        self.parents: dict[int, int] = {}  # a line (0-based) -> the header of its block
        self.ends: dict[int, int] = {}  # a header (0-based) -> the line after its block
        # A header (0-based) -> the branches of dispatches it and those around it make
        # (tracer.graph.objects.guards).
        self.guards: dict[int, int] = {}

    def raw(self) -> list[bytes]:
        """The file's lines as bytes (split in C, all at once: a line's bytes are what most
        readers look at, and finding each line's start would cost more)."""
        found = self.split
        if found is None:
            found = self.split = self.text.split(b"\n")
        return found

    def indent(self, index: int) -> int:
        """The indentation of line INDEX (0-based, within the file), -1 for a blank line or a
        comment: read from the bytes when first asked (indentation is ASCII), kept."""
        widths = self.widths
        if widths is None:
            widths = self.widths = [NOT_READ] * len(self.raw())
        found = widths[index]
        if found == NOT_READ:
            raw = self.split[index]  # type: ignore[index]
            body = raw.lstrip()
            found = widths[index] = len(raw) - len(body) if body and body[0] != 35 else -1
        return found

    def parent(self, index: int) -> int:
        """The nearest line above line INDEX (0-based) indented less, whose block holds it
        (blank lines and comments skipped); -1 when there is none. Kept, for it and for the
        lines of its block met on the way: a walk up from a line goes from block to block."""
        found = self.parents.get(index)
        if found is not None:
            return found
        indent = self.indent(index)
        above = index - 1 if indent > 0 else -1
        siblings = [index]  # lines of the same block met on the way: the same parent
        while above >= 0:
            width = self.indent(above)
            if width < 0:
                above -= 1
            elif width < indent:
                break
            elif (known := self.parents.get(above)) is not None:
                if width == indent:
                    above = known
                    break
                above = known
            else:
                if width == indent:
                    siblings.append(above)
                above -= 1
        for line in siblings:
            self.parents[line] = above
        return above

    def block_end(self, index: int) -> int:
        """The index of the first line after line INDEX's block (the next line indented no
        more than it, blank lines and comments skipped; the number of lines at the end)."""
        found = self.ends.get(index)
        if found is None:
            level, last = self.indent(index), len(self.raw())
            found = index + 1
            while found < last and not 0 <= self.indent(found) <= level:
                found += 1
            self.ends[index] = found
        return found

    def line(self, number: int) -> str | None:
        """Line NUMBER (1-based) as written, indentation kept; None past the last line."""
        raw = self.raw()
        if not 0 < number <= len(raw):
            return None
        return raw[number - 1].decode("utf-8", "replace")

    def span(self, line: int, end_line: int) -> str:
        """SourceLines.span(LINE, END_LINE); a one-line span is not dedented (most are)."""
        raw = self.raw()
        if not 0 < line <= min(end_line, len(raw)):  # as SourceLines slices its lines
            return self.whole.span(line, end_line)
        last = min(end_line, line + MAX_CODE_LINES - 1)
        code = b"\n".join(raw[line - 1 : last]).decode("utf-8", "replace")
        return code.strip() if line == end_line else dedent(code).strip()

    @cached_property
    def whole(self) -> SourceLines:
        return SourceLines(self.source)


class FileTables(StepTables):
    """One file's steps and lookup tables, built one unit at a time (a top-level function or
    class with everything inside it, or the module's own code) as queries read them. Lists
    that several units fill are kept in the order a whole-file build gives, so what a query
    finds does not depend on which units it happened to build first."""

    def __init__(
        self,
        path: str,
        summary: FileSummary,
        flows: FileFlows,
        names: FileNames,
        resolver: Resolver,
        source: bytes | Callable[[], bytes],
        rules: CallRules,
    ) -> None:
        super().__init__(flows.calls, set(names.flag_generators), demands=self)
        self.path = path
        self.summary = summary
        self.flows = flows
        self.names = names
        self.resolver = resolver
        self.rules = rules  # what a call runs (tracer/index/calls/rules.py)
        self.source = source
        self.building = False
        self.built: set[str] = set()
        self.whole = names.whole
        self.classes = top_classes(summary)
        self.unit_names: dict[str, str] = {}  # scope -> its unit
        self.indices: dict[str, UnitIndex | None] = {}  # unit -> what it holds (unit_index)
        # Keys whose units are built (read again, they build nothing): step ids, calls, attributes.
        self.demanded: set[str] = set()
        self.demanded_calls: set[int] = set()
        self.demanded_attrs: set[str] = set()
        self.defaults: dict[str, set[str]] | None = None
        # Of units not built yet: the steps made alone (see make_alone), and the keys of
        # tables filled without a build (a scope's bindings of a name, a function's returns),
        # dropped when the unit is built (the build fills them again, the same).
        self.alone: set[str] = set()
        self.alone_in: dict[str, list[str]] = {}
        self.filled: dict[str, list[tuple[dict[Any, Any], object]]] = {}
        self.filled_keys: set[tuple[int, object]] = set()  # (id of the table, key)
        self.block_ends: dict[tuple[int, bool], int | None] = {}  # see tracer.graph.blocks
        self.shared = self.classes | {MODULE_SCOPE}  # scopes that several units read in
        self.rows = file_rows(flows, summary)
        self.units = (WHOLE,) if self.whole else self.rows.units
        self.unit_steps = UnitSteps(path, summary, flows, resolver, self, self.rows)

    @cached_property
    def declared(self) -> dict[tuple[str, str], str]:
        """(function, name) -> the scope whose variable NAME is in that function, where the
        function declares it: `global` the module's, `nonlocal` the nearest function around
        that binds it itself. The function's own bindings of NAME are kept under its own
        scope (as its steps are) and reach that scope's reads by `FlowGraph.declared_readers`."""
        functions = {f.qualname: f for f in self.summary.functions}

        patterns = self.flows.patterns

        def binds(scope: str, name: str) -> bool:  # a function that binds NAME itself
            around = functions.get(scope)
            indices = (self.rows.scope_targets.get(scope) or {}).get(name, ())
            return (
                around is not None
                and (name, "nonlocal") not in around.declared
                and (
                    any(p.name == name for p in around.params)
                    or any(patterns.get(i, ("",))[0] != "item" for i in indices)  # not d[k] = v
                )
            )

        def around(function: str, name: str) -> str | None:  # the scope that binds NAME
            scope = function
            while scope != MODULE_SCOPE:
                scope = scope.rpartition(".")[0] or MODULE_SCOPE
                if binds(scope, name):
                    return scope
            return None

        found: dict[tuple[str, str], str] = {}
        for function in self.summary.functions:
            for name, word in function.declared:
                scope = MODULE_SCOPE if word == "global" else around(function.qualname, name)
                if scope is not None:  # else no function around binds it: not Python
                    found[(function.qualname, name)] = scope
        # Stores into a container the function does not bind (`d["k"] = v`, `d.update(...)`
        # on the module's or an enclosing function's d): into that scope's variable.
        module = self.rows.scope_targets.get(MODULE_SCOPE) or {}
        for function, name in sorted(self.mutated):  # in a fixed order: declarers' order
            if (function, name) not in found:
                scope = around(function, name)
                if scope is None and name in module:
                    scope = MODULE_SCOPE
                if scope is not None:
                    found[(function, name)] = scope
        return found

    @cached_property
    def mutated(self) -> set[tuple[str, str]]:
        """(function, name): the functions that store into a name they never bind (no
        parameter, no assignment but `NAME[k] = v`; a storing method called on it)."""
        patterns = self.flows.patterns
        candidates = set(self.stores_into)
        for i, pattern in patterns.items():  # the item stores `NAME[k] = v`, by their scope
            container = pattern[1] if pattern[0] == "item" else None
            if container is not None and container[0] == "name" and "." not in container[1]:
                candidates.add((row_at(self.flows.assigns, i)[0], container[1]))
        functions = {f.qualname: f for f in self.summary.functions}
        found: set[tuple[str, str]] = set()
        for scope, name in candidates:
            function = functions.get(scope)
            if function is None or any(p.name == name for p in function.params):
                continue
            indices = (self.rows.scope_targets.get(scope) or {}).get(name, ())
            if all(patterns.get(i, ("",))[0] == "item" for i in indices):
                found.add((scope, name))
        return found

    @cached_property
    def stores_into(self) -> dict[tuple[str, str], list[str]]:
        """(scope, local) -> the calls of the file that store into the local (`conf.update(k=v)`,
        `x = d.setdefault("k", v)`: see library.storing_receiver, contents.store_target)."""
        found: dict[tuple[str, str], list[str]] = {}
        for method in STORING_METHODS:
            for call_id, scope, callee in self.rows.callees.heads(method):
                base = storing_receiver(callee)
                if base is not None:
                    found.setdefault((scope, base), []).append(step_ids.call_id(self.path, call_id))
        return found

    @cached_property
    def declarers(self) -> dict[tuple[str, str], list[str]]:
        """(scope, name) -> the functions that declare NAME theirs (see `declared`)."""
        found: dict[tuple[str, str], list[str]] = {}
        for (function, name), scope in self.declared.items():
            found.setdefault((scope, name), []).append(function)
        return found

    @cached_property
    def lines(self) -> CodeLines:
        # SOURCE may be how to read it: most files a query reaches show no step.
        source = self.source
        return CodeLines(source if isinstance(source, bytes) else source())

    def step(self, step_id: str) -> Step:
        """The step STEP_ID, with its code (read from the source the first time it is asked
        for: most steps a query makes are never shown)."""
        step = self.steps[step_id]
        if step.code == UNREAD:
            code = self.lines.span(step.line, step.end_line)
            step = Step(
                step.id,
                step.kind,
                step.file,
                step.line,
                step.end_line,
                step.symbol,
                code,
                step.name,
            )
            self.steps[step_id] = step
        return step

    def arguments(self, call_id: int) -> list[tuple[Arg, str]]:
        """The arguments of a resolved call, each with its step (none if unresolved). The
        steps' ids are known before their unit is built (see `UnitSteps.add_call`): asking
        which steps a call passes builds nothing."""
        if self.unit_of_member(CALLS, call_id) in self.built:
            steps = self.call_args.get(call_id, [])
        else:
            steps = self.argument_steps(call_id)
        return list(zip(self.calls[call_id].args, steps, strict=True)) if steps else []

    def argument_steps(self, call_id: int) -> list[str]:
        """The steps `UnitSteps.add_call` makes of the arguments of call CALL_ID: one each
        when the call is resolved (and adds no flag)."""
        scope, callee = self.rows.call_head(call_id)
        if callee.rpartition(".")[2] in FLAG_METHODS:
            return []
        if not self.resolve_id(call_id):
            return []
        count = len(self.calls[call_id].args)
        return [step_ids.argument_id(self.path, call_id, i) for i in range(count)]

    @cached_property
    def attr_writes(self) -> dict[str, list[Read]]:
        """Attribute -> its writes in this file (fields, `x.ATTR = ...`), in the tables' order."""
        return {a: [Read(*w) for w in writes] for a, writes in self.names.writes.items()}

    # -- units -------------------------------------------------------------------------------

    def unit_of(self, scope: str) -> str:
        found = self.unit_names.get(scope)
        if found is None:
            found = WHOLE if self.whole else unit_of(scope, self.classes)
            self.unit_names[scope] = found
        return found

    def unit_index(self, unit: str) -> UnitIndex | None:
        """What UNIT holds; None for a name that is no unit of the file."""
        if unit in self.indices:
            return self.indices[unit]
        found = None
        if self.whole:
            sizes = self.rows.sizes
            found = UnitIndex(*(list(range(size)) for size in sizes)) if unit == WHOLE else None
        elif (number := self.rows.unit_number(unit)) is not None:
            found = UnitIndex(*self.rows.unit_members(number))
        self.indices[unit] = found
        return found

    def ensure(self, unit: str) -> None:
        if unit in self.built or self.building:
            return
        self.built.add(unit)
        self.alone.difference_update(self.alone_in.pop(unit, ()))
        for table, key in self.filled.pop(unit, ()):
            dict.pop(table, key, None)
            self.filled_keys.discard((id(table), key))
        found = self.unit_index(unit)
        if found is not None:
            self.building = True
            try:
                self.unit_steps.build(found)
            finally:
                self.building = False
        self.settle()

    def ensure_all(self) -> None:
        for unit in list(self.units):
            self.ensure(unit)

    # -- demands: the units a key depends on -------------------------------------------------

    def by_step(self, step_id: object) -> None:
        if step_id is ALL:
            self.ensure_all()
        elif isinstance(step_id, str) and step_id not in self.demanded:
            if step_id in self.alone:
                return  # made alone: its unit is not needed
            if step_ids.file_of(step_id) == self.path:
                unit = self.step_unit(step_id)
                if self.lone(unit) and self.make_alone(step_id, unit):
                    return
                self.ensure(unit)
            if not self.building:  # its unit is built now: asked again, nothing to do
                self.demanded.add(step_id)

    def lone(self, unit: str) -> bool:
        """May a key of UNIT be answered without building it (see make_alone)?"""
        return unit not in self.built and not self.building and not self.whole and unit != WHOLE

    def make_alone(self, step_id: str, unit: str) -> bool:
        """Make the steps of the row STEP_ID is made from (an assignment, a return, a use, a
        call's arguments; a function's parameters, a class's fields) as UNIT's build makes
        them, without building UNIT: most steps a query reaches are asked only what they
        are, and their units for nothing else. True when STEP_ID is one of them; a flag is
        made with its unit."""
        where = step_ids.address(step_id)
        index = self.unit_index(unit)
        if index is None or (where.kind == "c" and ":" in step_id.rpartition("#")[2]):
            return False
        lone = LoneTables(self, self.call_targets)
        self.unit_steps.alone(lone, where, index)
        if step_id not in lone.made:
            return False  # it is no step (or one of those): the unit says
        self.alone.update(lone.made)
        self.alone_in.setdefault(unit, []).extend(lone.made)
        return True

    def resolve(self, scope: str, callee: str, line: int = 0) -> list[CallTarget]:
        """What a call of CALLEE in SCOPE at LINE runs: the one answer the chains and the call
        graph share (`CallRules.call_targets`)."""
        return self.rules.call_targets(self.path, scope, callee, line)

    def resolve_id(self, call_id: int) -> list[CallTarget]:
        """`resolve` of the call CALL_ID, read from the rows' columns."""
        return self.rules.call_targets_of_id(self.path, call_id)

    def call_targets(self, call_id: int) -> list[CallTarget]:
        """The targets of the call CALL_ID, as its unit's build resolves them, resolved once
        (kept in the table, where the build puts them again)."""
        found = dict.get(self.targets, call_id)
        if found is None:
            found = self.targets[call_id] = self.resolve_id(call_id)
        return found  # type: ignore[no-any-return]

    def fill(self, unit: str, table: dict[Any, Any], key: object, found: list[str]) -> None:
        """TABLE[KEY] is FOUND (kept if any), as UNIT's build would fill it, UNIT not built."""
        if found:
            table[key] = found  # (not a demand: see Demanded)
        self.filled.setdefault(unit, []).append((table, key))
        self.filled_keys.add((id(table), key))

    def step_unit(self, step_id: str) -> str:
        """The unit of STEP_ID, a step of this file."""
        where = step_ids.address(step_id)
        if where.kind in ("p", "f"):
            return self.unit_of(where.owner)
        member_kind = MEMBER_KIND_OF_ADDRESS.get(where.kind)
        if member_kind is None:
            return WHOLE  # not a step of this file: nothing to build
        return self.unit_of_member(member_kind, where.number)

    def unit_of_member(self, kind: int, number: int) -> str:
        """The unit of member NUMBER of KIND (a position in MEMBER_KINDS); WHOLE if there is
        none."""
        if self.whole or not 0 <= number < self.member_counts[kind]:
            return WHOLE
        return self.units[self.rows.owner(kind, number)]

    @cached_property
    def member_counts(self) -> tuple[int, ...]:
        """The file's count of members of each of MEMBER_KINDS (asked for each step's unit)."""
        return self.rows.sizes

    def by_scope(self, key: object) -> None:
        if key is ALL:
            self.ensure_all()
        elif isinstance(key, tuple):
            unit = self.unit_of(key[0])
            if not self.lone(unit):
                self.ensure(unit)
            elif (id(self.local_defs), key) not in self.filled_keys:
                self.fill(unit, self.local_defs, key, self.definitions(unit, *key))

    def definitions(self, unit: str, scope: str, name: str) -> list[str]:
        """The steps binding NAME in SCOPE (of UNIT), in the order a build of UNIT lists them
        (`local_defs`): the parameters, then the assignments' targets. Read from the rows'
        columns; an assignment's row only for a target of that name."""
        index = self.unit_index(unit)
        if index is None:
            return []
        found = []
        for i in index.functions:
            function = self.summary.functions[i]
            if function.qualname == scope:
                for param in function.params:
                    if param.name == name:
                        found.append(step_ids.param_id(self.path, scope, name))
        if name and "." not in name:  # attribute writes are no local bindings
            targets = self.rows.assign_targets
            # The scope's assignments to NAME (each once, in order), from its targets' table.
            for i in dict.fromkeys(self.rows.scope_targets.get(scope, {}).get(name, ())):
                for j, target in enumerate(targets[i]):
                    if target == name and not self.unit_steps.in_body(
                        self.rows.row(ASSIGN_ROWS, i)[ASSIGN_LINE]
                    ):
                        found.append(step_ids.target_id(self.path, i, j))
        return found

    def by_local_read(self, key: object) -> None:
        # The module and a class body hold the default values of functions of other units.
        if key is ALL or (isinstance(key, tuple) and key[0] in self.shared):
            self.ensure_all()
        elif isinstance(key, tuple):
            self.ensure(self.unit_of(key[0]))

    def by_function(self, qualname: object) -> None:
        if qualname is ALL:
            self.ensure_all()
        elif isinstance(qualname, str):
            unit = self.unit_of(qualname)
            if not self.lone(unit):
                self.ensure(unit)
            elif (id(self.returns), qualname) not in self.filled_keys:
                self.fill(unit, self.returns, qualname, self.returned(qualname))

    def returned(self, qualname: str) -> list[str]:
        """The steps of the values the function QUALNAME returns, in the order a build of its
        unit lists them (`returns`): one per return, or per position of `return a, b`."""
        found = []
        for i in self.rows.returns_by_scope.get(qualname, ()):
            items = self.rows.row(RETURN_ROWS, i)[RETURN_ITEMS]
            if len(items) > 1:
                found += [step_ids.return_id(self.path, i, k) for k in range(len(items))]
            else:
                found.append(step_ids.return_id(self.path, i))
        return found

    def by_target(self, call_id: object) -> None:
        """A call's targets: resolved alone when its unit is not built."""
        if isinstance(call_id, int) and 0 <= call_id < len(self.calls):
            unit = self.unit_of_member(CALLS, call_id)
            if self.lone(unit):
                self.call_targets(call_id)
                return
        self.by_call(call_id)

    def by_call(self, call_id: object) -> None:
        if call_id is ALL:
            self.ensure_all()
        elif isinstance(call_id, int) and call_id not in self.demanded_calls:
            if 0 <= call_id < len(self.calls):
                self.ensure(self.unit_of_member(CALLS, call_id))
            if not self.building:
                self.demanded_calls.add(call_id)

    def by_attr_read(self, attr: object) -> None:
        if attr is ALL or not isinstance(attr, str):
            self.ensure_all()
            return
        if attr in self.demanded_attrs:
            return
        for scope in {scope for scope, _ in self.names.reads.get(attr, ())}:
            self.ensure(self.unit_of(scope))
        # A default value is read in the scope around its function, built with the function.
        for unit in self.default_readers().get(attr, ()):
            self.ensure(unit)
        if not self.building:
            self.demanded_attrs.add(attr)

    def attr_readers(self, attr: str, scopes: set[str]) -> list[tuple[Read, frozenset[str]]]:
        """The reads of ATTR, in the tables' order, in the units built so far, and those in
        SCOPES of the units not built (the caller takes no other: a read's receiver in its
        scope says whether it may be of the caller's class), each with the names its step reads
        only opaquely. Those of units not built are read from their rows, without building
        them: most readers are never expanded."""
        found = [
            (self.rank[read.step], read, self.opaque.held(read.step, NO_REFS))
            for read in self.attr_reads.held(attr, ())
        ]
        if attr not in self.demanded_attrs:
            units = {self.unit_of(scope) for scope in scopes}
            units.update(self.default_readers().get(attr, ()))
            for unit in sorted(units - self.built):
                index = self.unit_index(unit)
                if index is not None:
                    found += self.unit_steps.attr_reads(index, attr, scopes)
            found.sort(key=lambda item: item[0])
        return [(read, opaque) for _, read, opaque in found]

    def default_readers(self) -> dict[str, set[str]]:
        """Attribute -> the units of the functions whose default values read it."""
        if self.defaults is None:
            self.defaults = {}
            for function in self.summary.functions:
                for param in function.params:
                    for ref in param.default_refs:
                        if "." in ref:
                            units = self.defaults.setdefault(ref.rpartition(".")[2], set())
                            units.add(self.unit_of(function.qualname))
        return self.defaults

    def by_flag(self, dest: object) -> None:
        for method in FLAG_METHODS:
            for call_id in self.rows.callees.get(method, ()):
                self.ensure(self.unit_of_member(CALLS, call_id))

    # -- queries over several units ----------------------------------------------------------

    def binding_steps(self, word: str) -> list[Step]:
        """Steps that bind WORD (parameters, fields, assignments, flags, generated flags),
        in the order a whole-file build makes them. Parameters, fields and assignments are
        made alone where their units are not built; the units of flags are built."""
        if self.whole:
            self.ensure_all()
        found: dict[str, Step] = {}
        for step_id in self.binders(word):
            step = self.steps.get(step_id)
            if step is not None:
                found[step_id] = step
        if word in self.names.flag_dests:
            self.by_flag(word)
        alone = self.alone  # steps of units not built
        for step in self.steps.held_values():
            if step.name == word and step.kind == "cli_flag" and step.id not in alone:
                found[step.id] = step
        return sorted(found.values(), key=lambda s: self.rank[s.id])

    def binders(self, word: str) -> list[str]:
        """The ids of the parameters, fields and assignments' targets named WORD (read from
        the summary and the rows' columns: no step is made)."""
        path, found = self.path, []
        for function in self.summary.functions:
            if any(p.name == word for p in function.params):
                found.append(step_ids.param_id(path, function.qualname, word))
        for klass in self.summary.classes:
            if any(f.name == word for f in klass.fields):
                found.append(step_ids.field_id(path, klass.qualname, word))
        targets, in_body = self.rows.assign_targets, self.unit_steps.in_body
        for number in self.rows.binders.get(word, ()):
            index = self.unit_index(WHOLE if self.whole else self.rows.units[number])
            for i in index.assigns if index is not None else ():
                for j, target in enumerate(targets[i]):
                    if target.rpartition(".")[2] == word and not in_body(
                        self.rows.row(ASSIGN_ROWS, i)[ASSIGN_LINE]
                    ):
                        found.append(step_ids.target_id(path, i, j))
        return found

    def inner_reads(self, scope: str) -> list[tuple[tuple[str, str], list[str]]]:
        """Reads of names in the functions nested in SCOPE (every function, for the module),
        by (scope, name), in the order a whole-file build first makes them."""
        if scope == MODULE_SCOPE:
            self.ensure_all()
            found = list(self.local_reads.held_items())
            return sorted(found, key=lambda item: self.rank[item[1][0]])
        self.ensure(self.unit_of(scope))
        prefix = scope + "."
        return [item for item in self.local_reads.held_items() if item[0][0].startswith(prefix)]


WHOLE = "*"  # the one unit of a file whose units cannot be built apart
RETURN_ITEMS = 2  # of a Return's row: its values by position (`return a, b`)
CALLS = MEMBER_KINDS.index("calls")
# The kinds of rows that steps made from rows are addressed in (see step_ids.Address).
ROWS_OF_ADDRESS = {"a": "assigns", "r": "returns", "u": "uses", "c": "calls"}
MEMBER_KIND_OF_ADDRESS = {kind: MEMBER_KINDS.index(rows) for kind, rows in ROWS_OF_ADDRESS.items()}
