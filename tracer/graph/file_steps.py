"""One file's steps and the lookup tables that connect them, built unit by unit (a top-level
function or class with everything inside it, or the module's own code) as a query reads them.
A unit's steps are made from its cached rows in the order, and with the ids, a whole-file
build gives."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from tracer.extract.facts import MODULE_SCOPE, Arg, Call, FileFlows, FileSummary
from tracer.extract.parse import SourceLines
from tracer.graph.demand import ALL, Demanded
from tracer.graph.steps import Step
from tracer.index.library import LAUNCHER_NAMES, Launcher
from tracer.index.resolve import CallTarget, Resolver
from tracer.store import step_ids
from tracer.store.names import FLAG_METHODS, FileNames, class_bodies, flag_dest
from tracer.store.rows import (
    ARG_VALUE,
    ASSIGN_LINE,
    CALL_ARGS,
    CALL_LINE,
    CALL_SCOPE,
    CALLEE,
    DISCARDED,
    VALUE_ARITHMETIC,
    VALUE_CALLS,
    VALUE_REFS,
    VALUE_SHAPE,
    Row,
    file_rows,
    row_at,
)
from tracer.store.units import MEMBER_KINDS, top_classes, unit_of

Rank = tuple[int, ...]  # a step's place in the order a whole-file build makes steps in

NO_REFS: frozenset[str] = frozenset()
# The code of a step made from a row, until the step is first asked for (most never are):
# then the lines of its span. A span is stripped: it never is a lone space.
UNREAD = " "
# Calls whose result is their argument's value, converted or combined, or holds it (a list,
# a tuple, a dict: `dict(server_args=x)` holds x): the value flows on.
VALUE_PRESERVING = frozenset(
    [
        "int",
        "float",
        "round",
        "abs",
        "min",
        "max",
        "sum",
        "bool",
        "str",
        "list",
        "tuple",
        "dict",
        "sorted",
        "reversed",
        "math.floor",
        "math.ceil",
        "math.prod",
    ]
)


class CodeLines(SourceLines):
    """SourceLines whose one-line spans skip `dedent` (most steps are one line)."""

    def span(self, line: int, end_line: int) -> str:
        if line == end_line and 0 < line <= len(self.lines):
            return self.lines[line - 1].strip()
        return super().span(line, end_line)


@dataclass
class Read:
    """A step reading `base.attr` (base "" for a plain name)."""

    step: str
    scope: str
    base: str
    line: int


@dataclass
class UnitIndex:
    """What one unit holds: indices into the summary's functions and classes and into the
    flows' assignments, returns, uses and calls."""

    functions: list[int] = field(default_factory=list)
    classes: list[int] = field(default_factory=list)
    assigns: list[int] = field(default_factory=list)
    returns: list[int] = field(default_factory=list)
    uses: list[int] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)


class FileTables:
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
        source: bytes,
    ) -> None:
        self.path = path
        self.summary = summary
        self.flows = flows
        self.names = names
        self.resolver = resolver
        self.calls: Sequence[Call] = flows.calls
        self.source = source
        by_step, by_scope, by_call = self.by_step, self.by_scope, self.by_call
        self.steps: Demanded[str, Step] = Demanded(by_step)
        self.scope_of: Demanded[str, str] = Demanded(by_step)
        # What each step reads: plain refs, and the resolved calls whose results it takes.
        self.refs: Demanded[str, tuple[str, ...]] = Demanded(by_step)
        # Refs a step reads only as arguments of calls we cannot see into (`f(gpu_id)`).
        self.opaque: Demanded[str, frozenset[str]] = Demanded(by_step)
        self.results: Demanded[str, tuple[int, ...]] = Demanded(by_step)
        self.bound: Demanded[str, str] = Demanded(by_step)  # assignment step -> target path
        # Tuple positions: of a target in `a, b = ...`, of a value in `return a, b`.
        self.position: Demanded[str, int] = Demanded(by_step)
        self.local_defs: Demanded[tuple[str, str], list[str]] = Demanded(by_scope)
        self.local_reads: Demanded[tuple[str, str], list[str]] = Demanded(self.by_local_read)
        self.attr_reads: Demanded[str, list[Read]] = Demanded(self.by_attr_read)
        self.returns: Demanded[str, list[str]] = Demanded(self.by_function)
        self.consumers: Demanded[int, list[str]] = Demanded(by_call)
        self.call_args: Demanded[int, list[str]] = Demanded(by_call)  # the steps of its args
        self.targets: Demanded[int, list[CallTarget]] = Demanded(by_call)
        self.flags: Demanded[str, list[tuple[str, tuple[str, ...]]]] = Demanded(self.by_flag)
        # Launchers (`Process(target=f, args=(a,))`): what each one's target reads, and the
        # call and the position (or key) of each value it will pass.
        self.launches: Demanded[int, tuple[str, ...]] = Demanded(by_call)
        self.elements: Demanded[str, tuple[int, int | str]] = Demanded(by_step)
        self.flag_generators = set(names.flag_generators)  # scopes that build flags by name
        self.rank: dict[str, Rank] = {}
        self.added = 0  # steps added from outside (generated flags), ranked after the rest
        self.building = False
        self.built: set[str] = set()
        self.touched: list[list[Any]] = []  # lists earlier units filled too, to re-sort
        self.fresh: set[int] = set()  # ids of the lists this unit made or already touched
        self.whole = names.whole
        self.classes = top_classes(summary)
        self.unit_names: dict[str, str] = {}  # scope -> its unit
        self.defaults: dict[str, set[str]] | None = None
        self.shared = self.classes | {MODULE_SCOPE}  # scopes that several units read in
        self.rows = file_rows(flows, summary)
        self.units = (WHOLE,) if self.whole else self.rows.units
        self.in_class_body: Callable[[int], bool] | None = None

    @cached_property
    def lines(self) -> CodeLines:
        return CodeLines(self.source)

    def step(self, step_id: str) -> Step:
        """The step STEP_ID, with its code (read from the source the first time it is asked
        for: most steps a query makes are never shown)."""
        step = self.steps[step_id]
        if step.code == UNREAD:
            step = replace(step, code=self.lines.span(step.line, step.end_line))
            self.steps.put(step_id, step)
        return step

    def arguments(self, call_id: int) -> list[tuple[Arg, str]]:
        """The arguments of a resolved call, each with its step (none if unresolved)."""
        steps = self.call_args.get(call_id, [])
        return list(zip(self.calls[call_id].args, steps, strict=True)) if steps else []

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
        number = self.unit_numbers.get(unit)
        return None if number is None else UnitIndex(*self.rows.unit_members(number))

    @cached_property
    def unit_numbers(self) -> dict[str, int]:
        return {unit: number for number, unit in enumerate(self.rows.units)}

    def ensure(self, unit: str) -> None:
        if unit in self.built or self.building:
            return
        self.built.add(unit)
        found = self.unit_index(unit)
        if found is not None:
            self.building = True
            try:
                self.build_unit(found)
            finally:
                self.building = False
        for touched in self.touched:
            touched.sort(key=self.rank_of)
        self.touched = []
        self.fresh = set()

    def ensure_all(self) -> None:
        for unit in list(self.units):
            self.ensure(unit)

    def rank_of(self, item: Any) -> Rank:
        step = item if isinstance(item, str) else item[0] if isinstance(item, tuple) else item.step
        return self.rank[step]

    def append(self, table: Demanded[Any, list[Any]], key: Any, item: Any) -> None:
        """Append ITEM to TABLE[KEY], a list that other units may fill too."""
        found = table.held(key)
        if found is None:
            found = table[key] = []
            self.fresh.add(id(found))
        elif id(found) not in self.fresh:  # filled by an earlier unit: order them again
            self.touched.append(found)
            self.fresh.add(id(found))
        found.append(item)

    def add(self, step: Step, scope: str, rank: Rank | None = None) -> None:
        if rank is None:
            self.added += 1
            rank = (6, self.added)
        self.steps.put(step.id, step)
        self.scope_of.put(step.id, scope)
        self.rank[step.id] = rank

    # -- demands: the units a key depends on -------------------------------------------------

    def by_step(self, step_id: object) -> None:
        if step_id is ALL:
            self.ensure_all()
        elif isinstance(step_id, str) and step_ids.file_of(step_id) == self.path:
            self.ensure(self.step_unit(step_id))

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
        if self.whole or not 0 <= number < self.rows.sizes[kind]:
            return WHOLE
        return self.rows.units[self.rows.owner(kind, number)]

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
        elif isinstance(call_id, int) and 0 <= call_id < len(self.calls):
            self.ensure(self.unit_of_member(CALLS, call_id))

    def by_attr_read(self, attr: object) -> None:
        if attr is ALL or not isinstance(attr, str):
            self.ensure_all()
            return
        for scope in {scope for scope, _ in self.names.reads.get(attr, ())}:
            self.ensure(self.unit_of(scope))
        # A default value is read in the scope around its function, built with the function.
        for unit in self.default_readers().get(attr, ()):
            self.ensure(unit)

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

    # -- building a unit: its steps and what they read ------------------------------------

    def build_unit(self, unit: UnitIndex) -> None:
        """The steps of one unit, made in the order (and with the ids) of a whole-file build.
        They are made from the cached rows (see `tracer.store.rows`): a unit's facts are read once,
        here, and making fact objects of them would cost more than the steps."""
        path, flows = self.path, self.flows
        targets = self.resolver.targets
        for call_id in unit.calls:
            row = row_at(flows.calls, call_id)
            self.targets.put(call_id, targets(path, row[CALL_SCOPE], row[CALLEE], row[CALL_LINE]))
        self.add_definitions(unit)
        if unit.assigns and self.in_class_body is None:
            self.in_class_body = class_bodies(self.summary)
        for i in unit.assigns:
            row = row_at(flows.assigns, i)
            assert self.in_class_body is not None
            if not self.in_class_body(row[ASSIGN_LINE]):  # class-level ones are fields already
                self.add_assign(i, row)
        for i in unit.returns:
            self.add_return(i, row_at(flows.returns, i))
        for i in unit.uses:
            scope, value, line, end_line = row_at(flows.uses, i)
            step = Step(step_ids.use_id(path, i), "use", path, line, end_line, scope, UNREAD, "")
            self.add(step, scope, (4, i))
            self.record_reads(step, scope, value)
        for call_id in unit.calls:
            row = row_at(flows.calls, call_id)
            # Only a flag, a resolved call or a thrown-away result makes steps (see add_call).
            if (
                row[DISCARDED]
                or self.targets.held(call_id)
                or row[CALLEE].rpartition(".")[2] in FLAG_METHODS
            ):
                self.add_call(row)
            if row[CALLEE].rpartition(".")[2] in LAUNCHER_NAMES and not self.targets.held(call_id):
                launcher = self.resolver.launcher(path, row[CALL_SCOPE], row[CALLEE])
                if launcher is not None:
                    self.add_launch(row, launcher)

    def add_launch(self, row: Row, launcher: Launcher) -> None:
        """A call that runs a function later (`Process(target=f, args=(a, b), kwargs=...)`):
        a step for each value it will pass, an element of its ARGS tuple (by position) or of
        its KWARGS dict (by key), and what its target reads, for the graph to bind them to
        the parameters of the functions the target may hold."""
        path = self.path
        call_id, scope, _, _, args, _, _, _ = row
        target: tuple[str, ...] = ()
        for i, (keyword, position, star, value, line, end_line) in enumerate(args):
            if star:
                continue
            if keyword == launcher.target or (
                keyword is None and position == launcher.target_position
            ):
                target = tuple(value[VALUE_REFS])
                continue
            if keyword not in (launcher.args, launcher.kwargs):
                continue
            for j, (key, refs) in enumerate(
                spread_values(value, self.flows, keyword == launcher.kwargs)
            ):
                step = Step(
                    id=step_ids.element_id(path, call_id, i, j),
                    kind="call_arg",
                    file=path,
                    line=line,
                    end_line=end_line,
                    symbol=scope,
                    code=UNREAD,
                    name=key if isinstance(key, str) else "",
                )
                self.add(step, scope, (5, call_id, 1000 + 100 * i + j))
                self.elements.put(step.id, (call_id, key))
                self.index_reads(step, scope, refs, NO_REFS, ())
        self.launches.put(call_id, target)

    def add_assign(self, index: int, row: Row) -> None:
        """The steps of an assignment's targets (ROW, an Assign's)."""
        path = self.path
        scope, targets, whole_value, items, op, _, line, end_line = row
        changes = op not in ("=", "for", "with", ":=")  # x += v reads x too
        for j, (target, position) in enumerate(targets):
            if not target:
                continue
            value = whole_value
            if position is not None and len(items) == len({t[1] for t in targets}):
                value = items[position]
            attr = "." in target
            kind = "attr_write" if attr else "local_assign"
            step = Step(
                id=step_ids.target_id(path, index, j),
                kind="formula" if value[VALUE_ARITHMETIC] or changes else kind,
                file=path,
                line=line,
                end_line=end_line,
                symbol=scope,
                code=UNREAD,
                name=target.rpartition(".")[2],
            )
            self.add(step, scope, (2, index, j))
            self.bound[step.id] = target
            if position is not None:
                self.position[step.id] = position
            self.record_reads(step, scope, value, (target,) if changes else ())
            if not attr:  # attribute writes come from the file's names
                self.local_defs.setdefault((scope, target), []).append(step.id)

    def add_return(self, index: int, row: Row) -> None:
        """One step per returned value (ROW, a Return's); `return a, b` gives one per position,
        so that `x, y = f()` takes each from its own."""
        scope, whole_value, items, line, end_line = row
        parts = list(enumerate(items)) if len(items) > 1 else [(None, whole_value)]
        for position, value in parts:
            step = Step(
                step_ids.return_id(self.path, index, position),
                "return",
                self.path,
                line,
                end_line,
                scope,
                UNREAD,
                "return",
            )
            self.add(step, scope, (3, index, -1 if position is None else position))
            self.returns.setdefault(scope, []).append(step.id)
            if position is not None:
                self.position[step.id] = position
            self.record_reads(step, scope, value)

    def add_definitions(self, unit: UnitIndex) -> None:
        path = self.path
        for i in unit.functions:
            function = self.summary.functions[i]
            for j, param in enumerate(function.params):
                step = Step(
                    id=step_ids.param_id(path, function.qualname, param.name),
                    kind="param",
                    file=path,
                    line=param.line,
                    end_line=param.line,
                    symbol=function.qualname,
                    code=param.code,
                    name=param.name,
                )
                self.add(step, function.qualname, (0, i, j))
                self.local_defs.setdefault((function.qualname, param.name), []).append(step.id)
                if param.default_refs:  # evaluated where the function is defined
                    outer = function.qualname.rpartition(".")[0] or MODULE_SCOPE
                    self.record_reads(step, outer, (param.default_refs, (), False, None))
        for i in unit.classes:
            klass = self.summary.classes[i]
            for j, definition in enumerate(klass.fields):
                step = Step(
                    id=step_ids.field_id(path, klass.qualname, definition.name),
                    kind="field",
                    file=path,
                    line=definition.line,
                    end_line=definition.end_line,
                    symbol=klass.qualname,
                    code=definition.code,
                    name=definition.name,
                )
                self.add(step, MODULE_SCOPE, (1, i, j))

    def add_call(self, row: Row) -> None:
        """Arguments of resolved calls become steps; a thrown-away unresolved call is a read;
        `add_argument` calls become flags. ROW is the call's."""
        path = self.path
        call_id, scope, callee, _, args, discarded, line, end_line = row
        if callee.rpartition(".")[2] in FLAG_METHODS:
            self.add_flag(self.calls[call_id])
            return
        if self.targets.held(call_id):
            for i, (keyword, _, _, value, arg_line, arg_end_line) in enumerate(args):
                step = Step(
                    id=step_ids.argument_id(path, call_id, i),
                    kind="call_arg",
                    file=path,
                    line=arg_line,
                    end_line=arg_end_line,
                    symbol=scope,
                    code=UNREAD,
                    name=keyword or "",
                )
                self.add(step, scope, (5, call_id, i))
                self.call_args.setdefault(call_id, []).append(step.id)
                self.record_reads(step, scope, value)
        elif discarded:
            step_id = step_ids.call_id(path, call_id)
            step = Step(step_id, "use", path, line, end_line, scope, UNREAD, "")
            self.add(step, scope, (5, call_id, -1))
            for arg in args:
                self.record_reads(step, scope, arg[ARG_VALUE])

    def add_flag(self, call: Call) -> None:
        dest = flag_dest(call)
        if dest is None:
            # The flag's name is computed: this function generates flags from data.
            self.flag_generators.add(call.scope)
            return
        step = Step(
            id=step_ids.flag_id(self.path, call.id),
            kind="cli_flag",
            file=self.path,
            line=call.line,
            end_line=call.end_line,
            symbol=call.scope,
            code=UNREAD,
            name=dest,
        )
        self.add(step, call.scope, (5, call.id, -1))
        default = next((a.value.refs for a in call.args if a.keyword == "default"), ())
        self.append(self.flags, dest, (step.id, default))

    def record_reads(self, step: Step, scope: str, value: Row, extra: tuple[str, ...] = ()) -> None:
        """Note what STEP reads (VALUE, a Value's row). A resolved call contributes its result;
        an unresolved one its receiver (`tensor.item()`) and its arguments: as the value itself
        for conversions (`int(x)`), else as an opaque input (`mem_get_info(gpu_id)` does not
        return gpu_id)."""
        if not value[VALUE_CALLS] and not extra:  # the common case: names only
            self.index_reads(step, scope, value[VALUE_REFS], NO_REFS, ())
            return
        refs: dict[str, bool] = dict.fromkeys(extra, False)  # ref -> reached only opaquely
        results: list[int] = []
        pending: list[tuple[Row, bool]] = [(value, False)]
        while pending:
            current, opaque = pending.pop()
            for ref in current[VALUE_REFS]:
                refs[ref] = refs.get(ref, True) and opaque
            for call_id in current[VALUE_CALLS]:
                if self.targets.held(call_id):
                    results.append(call_id)
                    self.consumers.setdefault(call_id, []).append(step.id)
                    continue
                _, _, callee, receiver_value, args, _, _, _ = row_at(self.calls, call_id)
                receiver = callee.rpartition(".")[0]
                if receiver and receiver != "super()":
                    refs[receiver] = refs.get(receiver, True) and opaque
                pending.append((receiver_value, opaque))
                keeps_value = callee in VALUE_PRESERVING
                pending.extend((arg[ARG_VALUE], opaque or not keeps_value) for arg in args)
        opaque = frozenset(ref for ref, hidden in refs.items() if hidden) or NO_REFS
        self.index_reads(step, scope, tuple(refs), opaque, tuple(results))

    def index_reads(
        self,
        step: Step,
        scope: str,
        refs: tuple[str, ...],
        opaque: frozenset[str],
        results: tuple[int, ...],
    ) -> None:
        self.refs[step.id] = refs
        self.opaque[step.id] = opaque
        self.results[step.id] = results
        for ref in refs:
            base, _, name = ref.rpartition(".")
            if base:
                self.append(self.attr_reads, name, Read(step.id, scope, base, step.line))
            else:
                self.append(self.local_reads, (scope, ref), step.id)


WHOLE = "*"  # the one unit of a file whose units cannot be built apart
CALLS = MEMBER_KINDS.index("calls")
# The kinds of rows that steps made from rows are addressed in (see step_ids.Address).
ROWS_OF_ADDRESS = {"a": "assigns", "r": "returns", "u": "uses", "c": "calls"}
MEMBER_KIND_OF_ADDRESS = {kind: MEMBER_KINDS.index(rows) for kind, rows in ROWS_OF_ADDRESS.items()}


def spread_values(
    value: Row, flows: FileFlows, by_key: bool
) -> list[tuple[int | str, tuple[str, ...]]]:
    """The values a tuple (by position) or a dict (BY_KEY: by constant key) given to a
    launcher holds, each as the names it reads: a display `(a, b)`, `{"k": v}`, or a call
    `dict(k=v)`. Empty for anything else (its values cannot be told apart)."""
    shape = value[VALUE_SHAPE]
    found: list[tuple[int | str, tuple[str, ...]]] = []
    if shape is not None and shape[0] in ("tuple", "list") and not by_key:
        for position, element in enumerate(shape[1]):
            found.append((position, names_of(element)))
    elif shape is not None and shape[0] == "dict" and by_key:
        for key, element in shape[1]:
            if isinstance(key, tuple) and key[0] == "const" and isinstance(key[1], str):
                found.append((key[1], names_of(element)))
    elif by_key and len(value[VALUE_CALLS]) == 1 and not value[VALUE_REFS]:
        call = row_at(flows.calls, value[VALUE_CALLS][0])
        if call[CALLEE] == "dict":
            for keyword, _, star, arg_value, _, _ in call[CALL_ARGS]:
                if keyword and not star:
                    found.append((keyword, tuple(arg_value[VALUE_REFS])))
    return found


def names_of(shape: Any) -> tuple[str, ...]:
    """The dotted name a part of a shape is, if it is one."""
    return (shape[1],) if isinstance(shape, tuple) and shape and shape[0] == "name" else ()
