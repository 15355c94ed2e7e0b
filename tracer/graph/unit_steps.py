"""The steps of one unit of a file (a top-level function or class with everything inside it,
or the module's own code), made from the unit's cached rows in the order, and with the ids, a
whole-file build gives, into the file's `StepTables`: parameters and fields, assignment
targets, returned values, arguments of resolved calls, flags, the values a launcher passes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tracer.extract.facts import MODULE_SCOPE, Call, FileFlows, FileSummary
from tracer.graph.reads import NO_REFS, index_reads, record_reads, value_reads
from tracer.graph.step_tables import LoneTables, Rank, Read, StepTables
from tracer.graph.steps import StepRow
from tracer.index.library import LAUNCHER_NAMES, Launcher, storing_receiver
from tracer.index.resolve import Resolver
from tracer.store import step_ids
from tracer.store.names import FLAG_METHODS, class_bodies, flag_dest
from tracer.store.rows import (
    ARG_VALUE,
    ASSIGN_LINE,
    ASSIGN_OP,
    ASSIGN_VALUE,
    CALL_ARGS,
    CALL_LINE,
    CALL_SCOPE,
    CALLEE,
    DISCARDED,
    VALUE_ARITHMETIC,
    VALUE_CALLS,
    VALUE_REFS,
    VALUE_SHAPE,
    FileRows,
    Row,
    row_at,
)
from tracer.store.units import ROW_KINDS

CALL_ROWS, ASSIGN_ROWS, RETURN_ROWS, USE_ROWS = map(
    ROW_KINDS.index, ("calls", "assigns", "returns", "uses")
)

# Steps are made as StepRows (a Step is made of one when first read: see step_tables.Steps),
# with positional arguments, in Step's field order (id, kind, file, line, end_line, symbol,
# code, name): a call by keyword costs half as much again, thousands a query.

# The code of a step made from a row, until the step is first asked for (most never are):
# then the lines of its span. A span is stripped: it never is a lone space.
UNREAD = " "


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


class UnitSteps:
    """Makes the steps of one file's units into TABLES, the file's."""

    def __init__(
        self,
        path: str,
        summary: FileSummary,
        flows: FileFlows,
        resolver: Resolver,
        tables: StepTables,
        rows: FileRows,
    ) -> None:
        self.path = path
        self.summary = summary
        self.flows = flows
        self.resolver = resolver
        self.tables = tables
        self.rows = rows  # FLOWS' rows
        self.calls = flows.calls
        self.in_class_body: Callable[[int], bool] | None = None

    def build(self, unit: UnitIndex) -> None:
        """The steps of one unit, made in the order (and with the ids) of a whole-file build.
        They are made from the cached rows (see `tracer.store.rows`): a unit's facts are read once,
        here, and making fact objects of them would cost more than the steps."""
        path, tables, row = self.path, self.tables, self.rows.row
        targets = tables.resolve
        calls = [row(CALL_ROWS, call_id) for call_id in unit.calls]
        resolved = []
        for call_id, call in zip(unit.calls, calls, strict=True):
            found = targets(call[CALL_SCOPE], call[CALLEE], call[CALL_LINE])
            tables.targets[call_id] = found
            resolved.append(found)
        self.add_definitions(unit)
        for i in unit.assigns:
            assign = row(ASSIGN_ROWS, i)
            if not self.in_body(assign[ASSIGN_LINE]):  # class-level ones are fields already
                self.add_assign(i, assign)
        for i in unit.returns:
            self.add_return(i, row(RETURN_ROWS, i))
        for i in unit.uses:
            self.add_use(i, row(USE_ROWS, i))
        for call, found in zip(calls, resolved, strict=True):
            last = call[CALLEE].rpartition(".")[2]
            # Only a flag, a resolved call, a thrown-away result or a store into a local makes
            # steps (see add_call).
            stores = storing_receiver(call[CALLEE]) is not None
            if call[DISCARDED] or found or last in FLAG_METHODS or stores:
                self.add_call(call)
            if last in LAUNCHER_NAMES and not found:
                launcher = self.resolver.launcher(path, call[CALL_SCOPE], call[CALLEE])
                if launcher is not None:
                    self.add_launch(call, launcher)

    def attr_reads(
        self, unit: UnitIndex, attr: str, scopes: set[str]
    ) -> list[tuple[Rank, Read, frozenset[str]]]:
        """The reads of `x.ATTR` in SCOPES that `build` would note for UNIT, in its order, each
        with its step's rank and the names that step reads only opaquely, found without
        building it: only the statements in SCOPES that mention ATTR are read, and only their
        calls resolved."""
        path, row, calls = self.path, self.rows.row, self.calls
        suffix = "." + attr
        found: list[tuple[Rank, Read, frozenset[str]]] = []
        resolved: dict[int, list[Any]] = {}

        def targets_of(call_id: int) -> list[Any]:
            known = resolved.get(call_id)
            if known is None:
                call = row(CALL_ROWS, call_id)
                known = self.tables.resolve(call[CALL_SCOPE], call[CALLEE], call[CALL_LINE])
                resolved[call_id] = known
            return known

        calls_mentioning: dict[int, bool] = {}

        def mentions(value: Row) -> bool:  # may a step reading VALUE read `x.ATTR`?
            for ref in value[VALUE_REFS]:
                if ref.endswith(suffix):
                    return True
            called = value[VALUE_CALLS]  # most values call nothing: no any() made for them
            return bool(called) and any(map(mentioned_by, called))

        def mentioned_by(call_id: int) -> bool:  # ... through the call CALL_ID?
            known = calls_mentioning.get(call_id)
            if known is None:
                _, _, callee, receiver_value, args, _, _, _ = row_at(calls, call_id)
                known = callee.rpartition(".")[0].endswith(suffix) or mentions(receiver_value)
                for arg in () if known else args:
                    if mentions(arg[ARG_VALUE]):
                        known = True
                        break
                calls_mentioning[call_id] = known
            return known

        def reads(
            value: Row, extra: tuple[str, ...] = ()
        ) -> tuple[tuple[str, ...], frozenset[str]]:
            if not value[VALUE_CALLS] and not extra:  # as record_reads
                return value[VALUE_REFS], NO_REFS
            refs, opaque, _ = value_reads(value, extra, targets_of, calls)
            return refs, opaque

        def note(rank: Rank, step_id: str, scope: str, line: int, refs: Any, opaque: Any) -> None:
            for ref in refs:
                base, _, name = ref.rpartition(".")
                if base and name == attr:
                    found.append((rank, Read(step_id, scope, base, line), opaque))

        for i in unit.functions:
            function = self.summary.functions[i]
            outer = function.qualname.rpartition(".")[0] or MODULE_SCOPE
            if outer not in scopes:
                continue
            for j, param in enumerate(function.params):
                step_id = step_ids.param_id(path, function.qualname, param.name)
                note((0, i, j), step_id, outer, param.line, param.default_refs, NO_REFS)
        for i in unit.assigns:
            scope, targets, whole_value, items, op, _, line, _ = row(ASSIGN_ROWS, i)
            if scope not in scopes or self.in_body(line):
                continue
            changes = op not in ("=", "for", "with", ":=", "case")
            for j, (target, position) in enumerate(targets):
                if not target:
                    continue
                value = whole_value
                if position is not None and len(items) == len({t[1] for t in targets}):
                    value = items[position]
                extra = (target,) if changes else ()
                if mentions(value) or target.endswith(suffix) and changes:
                    note(
                        (2, i, j), step_ids.target_id(path, i, j), scope, line, *reads(value, extra)
                    )
        for i in unit.returns:
            scope, whole_value, items, line, _ = row(RETURN_ROWS, i)
            if scope not in scopes:
                continue
            parts = list(enumerate(items)) if len(items) > 1 else [(None, whole_value)]
            for position, value in parts:
                if mentions(value):
                    rank = (3, i, -1 if position is None else position)
                    step_id = step_ids.return_id(path, i, position)
                    note(rank, step_id, scope, line, *reads(value))
        for i in unit.uses:
            scope, value, line, _ = row(USE_ROWS, i)
            if scope in scopes and mentions(value):
                note((4, i), step_ids.use_id(path, i), scope, line, *reads(value))
        for call_id in unit.calls:
            _, scope, callee, _, args, discarded, line, _ = row(CALL_ROWS, call_id)
            if scope not in scopes:
                continue
            last = callee.rpartition(".")[2]
            if last not in LAUNCHER_NAMES and not mentioned_by(call_id):
                continue
            mentioned = [mentions(arg[ARG_VALUE]) for arg in args]
            if last not in LAUNCHER_NAMES and not any(mentioned):
                continue
            targets = targets_of(call_id)
            if last in FLAG_METHODS:
                pass  # a flag: it reads nothing
            elif targets:
                for i, arg in enumerate(args):
                    if mentioned[i]:
                        step_id = step_ids.argument_id(path, call_id, i)
                        note((5, call_id, i), step_id, scope, arg[4], *reads(arg[ARG_VALUE]))
            elif (discarded or storing_receiver(callee) is not None) and any(mentioned):
                # Each argument noted in turn: the step's opaque names are its last one's.
                opaque = reads(args[-1][ARG_VALUE])[1] if mentioned[-1] else NO_REFS
                step_id = step_ids.call_id(path, call_id)
                for arg, mention in zip(args, mentioned, strict=True):
                    if mention:
                        note(
                            (5, call_id, -1), step_id, scope, line, reads(arg[ARG_VALUE])[0], opaque
                        )
            if last in LAUNCHER_NAMES and not targets:
                launcher = self.resolver.launcher(path, scope, callee)
                if launcher is not None:
                    for i, j, _, refs, arg_line, _ in launch_parts(
                        row(CALL_ROWS, call_id), launcher, self.flows, self.rows
                    )[1]:
                        step_id = step_ids.element_id(path, call_id, i, j)
                        rank = (5, call_id, 1000 + 1000 * i + j)
                        note(rank, step_id, scope, arg_line, refs, NO_REFS)
        return found

    def in_body(self, line: int) -> bool:
        """Is LINE directly in a class body (an assignment there is a field)?"""
        if self.in_class_body is None:
            self.in_class_body = class_bodies(self.summary)
        return self.in_class_body(line)

    def alone(self, lone: LoneTables, where: step_ids.Address, unit: UnitIndex) -> None:
        """The steps of the one row (or definition) at WHERE, of UNIT, as its build makes
        them, into LONE: the unit is not built (see `FileTables.make_alone`)."""
        built, self.tables = self.tables, lone  # type: ignore[assignment]
        try:
            self.add_alone(where, unit)
        finally:
            self.tables = built

    def add_alone(self, where: step_ids.Address, unit: UnitIndex) -> None:
        kind, number, row = where.kind, where.number, self.rows.row
        if kind == "p":
            for i in unit.functions:
                if self.summary.functions[i].qualname == where.owner:
                    self.add_params(i)
        elif kind == "f":
            for i in unit.classes:
                if self.summary.classes[i].qualname == where.owner:
                    self.add_fields(i)
        elif kind == "a":
            assign = row(ASSIGN_ROWS, number)
            if not self.in_body(assign[ASSIGN_LINE]):
                self.add_assign(number, assign)
        elif kind == "r":
            self.add_return(number, row(RETURN_ROWS, number))
        elif kind == "u":
            self.add_use(number, row(USE_ROWS, number))
        elif kind == "c":
            call = row(CALL_ROWS, number)
            last = call[CALLEE].rpartition(".")[2]
            found = self.tables.targets.held(number)
            # A flag is made with the flags its unit gives (see FileTables.make_alone).
            if last not in FLAG_METHODS and (
                call[DISCARDED] or found or storing_receiver(call[CALLEE]) is not None
            ):
                self.add_call(call)
            if last in LAUNCHER_NAMES and not found:
                launcher = self.resolver.launcher(self.path, call[CALL_SCOPE], call[CALLEE])
                if launcher is not None:
                    self.add_launch(call, launcher)

    def add_launch(self, row: Row, launcher: Launcher) -> None:
        """A call that runs a function later (`Process(target=f, args=(a, b), kwargs=...)`):
        a step for each value it will pass, an element of its ARGS tuple (by position) or of
        its KWARGS dict (by key), and what its target reads, for the graph to bind them to
        the parameters of the functions the target may hold."""
        path = self.path
        call_id, scope = row[0], row[CALL_SCOPE]
        target, elements = launch_parts(row, launcher, self.flows, self.rows)
        for i, j, key, refs, line, end_line in elements:
            step = StepRow(
                step_ids.element_id(path, call_id, i, j),
                "call_arg",
                path,
                line,
                end_line,
                scope,
                UNREAD,
                key if isinstance(key, str) else "",
            )
            self.tables.add(step, scope, (5, call_id, 1000 + 1000 * i + j))
            self.tables.elements[step.id] = (call_id, key)
            index_reads(self.tables, step, scope, refs, NO_REFS, ())
        self.tables.launches[call_id] = target

    def add_assign(self, index: int, row: Row) -> None:
        """The steps of an assignment's targets (ROW, an Assign's)."""
        path = self.path
        scope, targets, whole_value, items, op, _, line, end_line = row
        changes = op not in ("=", "for", "with", ":=", "case")  # x += v reads x too
        for j, (target, position) in enumerate(targets):
            if not target:
                continue
            value = whole_value
            if position is not None and len(items) == len({t[1] for t in targets}):
                value = items[position]
            attr = "." in target
            kind = "attr_write" if attr else "local_assign"
            step = StepRow(
                step_ids.target_id(path, index, j),
                "formula" if value[VALUE_ARITHMETIC] or changes else kind,
                path,
                line,
                end_line,
                scope,
                UNREAD,
                target.rpartition(".")[2],
            )
            self.tables.add(step, scope, (2, index, j))
            self.tables.bound[step.id] = target
            if position is not None:
                self.tables.position[step.id] = position
            record_reads(self.tables, step, scope, value, (target,) if changes else ())
            if not attr:  # attribute writes come from the file's names
                self.tables.local_defs.setdefault((scope, target), []).append(step.id)

    def add_return(self, index: int, row: Row) -> None:
        """One step per returned value (ROW, a Return's); `return a, b` gives one per position,
        so that `x, y = f()` takes each from its own."""
        scope, whole_value, items, line, end_line = row
        parts = list(enumerate(items)) if len(items) > 1 else [(None, whole_value)]
        for position, value in parts:
            step = StepRow(
                step_ids.return_id(self.path, index, position),
                "return",
                self.path,
                line,
                end_line,
                scope,
                UNREAD,
                "return",
            )
            self.tables.add(step, scope, (3, index, -1 if position is None else position))
            self.tables.returns.setdefault(scope, []).append(step.id)
            if position is not None:
                self.tables.position[step.id] = position
            record_reads(self.tables, step, scope, value)

    def add_use(self, index: int, row: Row) -> None:
        """The step of an expression statement (ROW, a Use's)."""
        path = self.path
        scope, value, line, end_line = row
        step = StepRow(step_ids.use_id(path, index), "use", path, line, end_line, scope, UNREAD, "")
        self.tables.add(step, scope, (4, index))
        record_reads(self.tables, step, scope, value)

    def add_definitions(self, unit: UnitIndex) -> None:
        for i in unit.functions:
            self.add_params(i)
        for i in unit.classes:
            self.add_fields(i)

    def add_params(self, i: int) -> None:
        """The steps of the parameters of the summary's function I."""
        path = self.path
        function = self.summary.functions[i]
        for j, param in enumerate(function.params):
            step = StepRow(
                step_ids.param_id(path, function.qualname, param.name),
                "param",
                path,
                param.line,
                param.line,
                function.qualname,
                param.code,
                param.name,
            )
            self.tables.add(step, function.qualname, (0, i, j))
            self.tables.local_defs.setdefault((function.qualname, param.name), []).append(step.id)
            if param.default_refs:  # evaluated where the function is defined
                outer = function.qualname.rpartition(".")[0] or MODULE_SCOPE
                record_reads(self.tables, step, outer, (param.default_refs, (), False, None))

    def add_fields(self, i: int) -> None:
        """The steps of the class-level fields of the summary's class I."""
        path = self.path
        klass = self.summary.classes[i]
        for j, definition in enumerate(klass.fields):
            step = StepRow(
                step_ids.field_id(path, klass.qualname, definition.name),
                "field",
                path,
                definition.line,
                definition.end_line,
                klass.qualname,
                definition.code,
                definition.name,
            )
            self.tables.add(step, MODULE_SCOPE, (1, i, j))
            number = self.field_assign(definition.line, definition.name)
            if number is not None:  # `name = value` in the body: the field holds the value
                assign = self.rows.row(ASSIGN_ROWS, number)
                self.tables.field_value[step.id] = number
                # The class body looks names up where the class is defined (its row's scope).
                record_reads(self.tables, step, assign[0], assign[ASSIGN_VALUE])

    def field_assign(self, line: int, name: str) -> int | None:
        """The number of the class-body assignment at LINE that binds NAME, if one does: of
        the assignments to NAME in the scope around the class (the class body's names are
        assigned there), the one on LINE."""
        inner = self.summary.function_at(line)
        scope = inner.qualname if inner is not None else MODULE_SCOPE
        for number in self.rows.scope_targets.get(scope, {}).get(name, ()):
            assign = self.rows.row(ASSIGN_ROWS, number)
            if assign[ASSIGN_LINE] == line and assign[ASSIGN_OP] == "=":
                return number
        return None

    def add_call(self, row: Row) -> None:
        """Arguments of resolved calls become steps; a thrown-away unresolved call is a read;
        `add_argument` calls become flags. ROW is the call's."""
        path = self.path
        call_id, scope, callee, _, args, discarded, line, end_line = row
        if callee.rpartition(".")[2] in FLAG_METHODS:
            self.add_flag(self.calls[call_id])
            return
        if self.tables.targets.held(call_id):
            for i, (keyword, _, _, value, arg_line, arg_end_line) in enumerate(args):
                step = StepRow(
                    step_ids.argument_id(path, call_id, i),
                    "call_arg",
                    path,
                    arg_line,
                    arg_end_line,
                    scope,
                    UNREAD,
                    keyword or "",
                )
                self.tables.add(step, scope, (5, call_id, i))
                self.tables.call_args.setdefault(call_id, []).append(step.id)
                record_reads(self.tables, step, scope, value)
        elif discarded or storing_receiver(callee) is not None:
            # A call whose result is thrown away reads its arguments; a storing method's
            # call on a local (`x = d.setdefault("k", v)`) is also a store into the local,
            # whatever is done with its result.
            step_id = step_ids.call_id(path, call_id)
            step = StepRow(step_id, "use", path, line, end_line, scope, UNREAD, "")
            self.tables.add(step, scope, (5, call_id, -1))
            for arg in args:
                record_reads(self.tables, step, scope, arg[ARG_VALUE])

    def add_flag(self, call: Call) -> None:
        dest = flag_dest(call)
        if dest is None:
            # The flag's name is computed: this function generates flags from data.
            self.tables.flag_generators.add(call.scope)
            return
        step = StepRow(
            step_ids.flag_id(self.path, call.id),
            "cli_flag",
            self.path,
            call.line,
            call.end_line,
            call.scope,
            UNREAD,
            dest,
        )
        self.tables.add(step, call.scope, (5, call.id, -1))
        default = next((a.value.refs for a in call.args if a.keyword == "default"), ())
        self.tables.append(self.tables.flags, dest, (step.id, default))


# A value a launcher passes: (argument, element, key or position, names read, line, end line).
LaunchElement = tuple[int, int, int | str, tuple[str, ...], int, int]


def launch_parts(
    row: Row, launcher: Launcher, flows: FileFlows, rows: FileRows
) -> tuple[tuple[str, ...], list[LaunchElement]]:
    """Of a launcher's call (ROW), what its target reads and each value it will pass, in
    order (see `UnitSteps.add_launch`): the items of its `args` tuple or `kwargs` dict, or,
    given a local (`args=args`), of each tuple or dict that name is bound to before the call,
    at that binding (ROWS, the file's, say where)."""
    target: tuple[str, ...] = ()
    elements: list[LaunchElement] = []
    for i, (keyword, position, star, value, line, end_line) in enumerate(row[CALL_ARGS]):
        if star:
            continue
        if keyword == launcher.target or (keyword is None and position == launcher.target_position):
            target = tuple(value[VALUE_REFS])
            continue
        each = launcher.each_from
        if each is not None and keyword is None and position >= each:
            # An iterable: each element of it is passed at its place (`map(f, xs)`).
            elements.append((i, 0, position - each, tuple(value[VALUE_REFS]), line, end_line))
            continue
        if keyword not in (launcher.args, launcher.kwargs):
            continue
        by_key = keyword == launcher.kwargs
        spread = [(line, end_line, spread_values(value, flows, by_key))]
        # `args=args`, `kwargs={**common, "k": v}`, `kwargs=common | {...}`: the tuples or
        # dicts the names are bound to before the call, where they are written
        for name in spread_names(value, by_key):
            spread += bound_values(rows, flows, row[CALL_SCOPE], name, row[CALL_LINE], by_key)
        j = 0
        for at, end, values in spread:
            for key, refs in values:
                elements.append((i, j, key, refs, at, end))
                j += 1
    return target, elements


def spread_names(value: Row, by_key: bool) -> list[str]:
    """The locals whose items VALUE, given to a launcher, passes: itself when it is a plain
    name; those a dict display spreads (`{**common, ...}`, `common | {...}`), BY_KEY."""
    refs, shape = value[VALUE_REFS], value[VALUE_SHAPE]
    if shape is None:
        plain = len(refs) == 1 and "." not in refs[0] and not value[VALUE_CALLS]
        return [refs[0]] if plain else []
    if shape[0] != "dict" or not by_key:
        return []
    names = []
    for key, entry in shape[1]:  # a `**x` entry is (None, ("star", x's shape))
        spread = entry[1] if key is None and entry is not None and entry[0] == "star" else None
        if spread is not None and spread[0] == "name" and "." not in spread[1]:
            names.append(spread[1])
    return names


def bound_values(
    rows: FileRows, flows: FileFlows, scope: str, name: str, before: int, by_key: bool
) -> list[tuple[int, int, list[tuple[int | str, tuple[str, ...]]]]]:
    """The values of each tuple (or dict, BY_KEY) the local NAME is bound to in SCOPE before
    line BEFORE, as (line, end line, values; see spread_values). Each is read where it is
    written: a launcher given `args=args` after `target = f; args = (a, b)` in one branch
    and other bindings in another passes the values of the binding that reaches it, with
    the target bound beside it (see tracer.graph.blocks)."""
    found = []
    for index in rows.assigns_by_scope.get(scope, ()):
        if rows.assign_targets[index] != (name,):
            continue
        _, targets, whole, _, op, _, line, end_line = rows.row(ASSIGN_ROWS, index)
        if op != "=" or line >= before or len(targets) != 1 or targets[0][1] is not None:
            continue
        values = spread_values(whole, flows, by_key)
        if values:
            found.append((line, end_line, values))
    return found


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
