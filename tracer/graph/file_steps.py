"""One file's steps and the lookup tables that connect them (`FileTables`), built unit by unit
(a top-level function or class with everything inside it, or the module's own code) as a query
reads them: which units a key of a table depends on, and the queries over several units. The
tables are `step_tables.py`'s; `unit_steps.py` makes a unit's steps from its cached rows."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from itertools import accumulate, repeat
from operator import add
from textwrap import dedent

from tracer.extract.facts import MODULE_SCOPE, Arg, FileFlows, FileSummary
from tracer.extract.parse import BOM, MAX_CODE_LINES, SourceLines
from tracer.graph.demand import ALL
from tracer.graph.reads import NO_REFS
from tracer.graph.step_tables import Read, StepTables
from tracer.graph.steps import Step
from tracer.graph.unit_steps import UNREAD, UnitIndex, UnitSteps
from tracer.index.resolve import Resolver
from tracer.store import step_ids
from tracer.store.names import FLAG_METHODS, FileNames
from tracer.store.rows import file_rows
from tracer.store.units import MEMBER_KINDS, top_classes, unit_of


class CodeLines:
    """The spans SourceLines gives, each decoded from the file's bytes when first asked: a
    query shows a few steps of a file, and decoding and splitting all of it cost more. A
    line break is one byte that no other character's encoding holds, so a span decoded
    alone reads as the same lines of the whole text decoded."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.text = source[len(BOM) :] if source.startswith(BOM) else source
        self.starts: list[int] | None = None  # where each line starts, in bytes

    def start(self, line: int) -> int | None:
        """Where LINE (1-based) starts; None past the last line."""
        starts = self.starts
        if starts is None:
            # All at once, in C: past a few hundred lines, faster than finding them one by one.
            lengths = map(len, self.text.split(b"\n")[:-1])
            starts = self.starts = list(accumulate(map(add, lengths, repeat(1)), initial=0))
        return starts[line - 1] if line <= len(starts) else None

    def line(self, number: int) -> str | None:
        """Line NUMBER (1-based) as written, indentation kept; None past the last line."""
        start = self.start(number) if number > 0 else None
        if start is None:
            return None
        end = self.text.find(b"\n", start)
        return self.text[start : end if end >= 0 else len(self.text)].decode("utf-8", "replace")

    def span(self, line: int, end_line: int) -> str:
        """SourceLines.span(LINE, END_LINE); a one-line span is not dedented (most are)."""
        start = self.start(line) if 0 < line <= end_line else None
        if start is None:  # past the end, or no span: as SourceLines slices its lines
            return self.whole.span(line, end_line)
        last = min(end_line, line + MAX_CODE_LINES - 1)
        after = self.start(last + 1)
        end = len(self.text) if after is None else after - 1
        code = self.text[start:end].decode("utf-8", "replace")
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
    ) -> None:
        super().__init__(flows.calls, set(names.flag_generators), demands=self)
        self.path = path
        self.summary = summary
        self.flows = flows
        self.names = names
        self.resolver = resolver
        self.source = source
        self.building = False
        self.built: set[str] = set()
        self.whole = names.whole
        self.classes = top_classes(summary)
        self.unit_names: dict[str, str] = {}  # scope -> its unit
        # Keys whose units are built (read again, they build nothing): step ids, calls, attributes.
        self.demanded: set[str] = set()
        self.demanded_calls: set[int] = set()
        self.demanded_attrs: set[str] = set()
        self.defaults: dict[str, set[str]] | None = None
        self.block_ends: dict[int, int | None] = {}  # see tracer.graph.blocks
        self.shared = self.classes | {MODULE_SCOPE}  # scopes that several units read in
        self.rows = file_rows(flows, summary)
        self.units = (WHOLE,) if self.whole else self.rows.units
        self.unit_steps = UnitSteps(path, summary, flows, resolver, self, self.rows)

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
            self.steps.put(step_id, step)
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
        if not self.resolver.targets(self.path, scope, callee, self.rows.call_line(call_id)):
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
        if self.whole:
            sizes = self.rows.sizes
            return UnitIndex(*(list(range(size)) for size in sizes)) if unit == WHOLE else None
        number = self.rows.unit_number(unit)
        return None if number is None else UnitIndex(*self.rows.unit_members(number))

    def ensure(self, unit: str) -> None:
        if unit in self.built or self.building:
            return
        self.built.add(unit)
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
            if step_ids.file_of(step_id) == self.path:
                self.ensure(self.step_unit(step_id))
            if not self.building:  # its unit is built now: asked again, nothing to do
                self.demanded.add(step_id)

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
            self.ensure(self.unit_of(key[0]))

    def by_local_read(self, key: object) -> None:
        # The module and a class body hold the default values of functions of other units.
        if key is ALL or (isinstance(key, tuple) and key[0] in self.shared):
            self.ensure_all()
        else:
            self.by_scope(key)

    def by_function(self, qualname: object) -> None:
        if qualname is ALL:
            self.ensure_all()
        elif isinstance(qualname, str):
            self.ensure(self.unit_of(qualname))

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
        """The reads of ATTR, in the tables' order, in the units built so far and in those of
        SCOPES (and of the functions whose default values read ATTR, read in the scope around
        them), each with the names its step reads only opaquely. Those of units not built yet
        are read from their rows, without building them: most readers are never expanded."""
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
                    found += self.unit_steps.attr_reads(index, attr)
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
        in the order a whole-file build makes them; only the units that may are built."""
        for function in self.summary.functions:
            if any(p.name == word for p in function.params):
                self.ensure(self.unit_of(function.qualname))
        for klass in self.summary.classes:
            if any(f.name == word for f in klass.fields):
                self.ensure(self.unit_of(klass.qualname))
        for unit in self.rows.binders.get(word, ()):
            self.ensure(WHOLE if self.whole else self.rows.units[unit])
        if word in self.names.flag_dests:
            self.by_flag(word)
        found = [s for s in self.steps.held_values() if s.name == word]
        return sorted(found, key=lambda s: self.rank[s.id])

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
CALLS = MEMBER_KINDS.index("calls")
# The kinds of rows that steps made from rows are addressed in (see step_ids.Address).
ROWS_OF_ADDRESS = {"a": "assigns", "r": "returns", "u": "uses", "c": "calls"}
MEMBER_KIND_OF_ADDRESS = {kind: MEMBER_KINDS.index(rows) for kind, rows in ROWS_OF_ADDRESS.items()}
