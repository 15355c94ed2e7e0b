"""The steps of one unit of a file (a function, a method, a class's fields, the module's own
code) and what they read, made from its facts in the order and with the ids a whole-file build
gives; `tracer.graph.file_steps.FileTables` decides which units to build."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tracer.extract.facts import MODULE_SCOPE, Call
from tracer.extract.parse import SourceLines
from tracer.graph.steps import Step
from tracer.store.names import FLAG_METHODS, class_bodies, flag_dest
from tracer.store.rows import (
    ARG_VALUE,
    ASSIGN_LINE,
    CALL_SCOPE,
    CALLEE,
    DISCARDED,
    VALUE_ARITHMETIC,
    VALUE_CALLS,
    VALUE_REFS,
    Row,
    row_at,
)

if TYPE_CHECKING:  # the tables call in here; only their type is needed
    from tracer.graph.file_steps import FileTables

NO_REFS: frozenset[str] = frozenset()
# The code of a step made from a row, until the step is first asked for (most never are):
# then the lines of its span. A span is stripped: it never is a lone space.
UNREAD = " "
# Calls whose result is their argument's value, converted or combined: the value flows on.
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


def build_unit(tables: FileTables, unit: UnitIndex) -> None:
    """The steps of one unit, made in the order (and with the ids) of a whole-file build.
    They are made from the cached rows (see `tracer.store.rows`): a unit's facts are read once,
    here, and making fact objects of them would cost more than the steps."""
    path, flows = tables.path, tables.flows
    targets = tables.resolver.targets
    for call_id in unit.calls:
        row = row_at(flows.calls, call_id)
        dict.__setitem__(tables.targets, call_id, targets(path, row[CALL_SCOPE], row[CALLEE]))
    add_definitions(tables, unit)
    if unit.assigns and tables.in_class_body is None:
        tables.in_class_body = class_bodies(tables.summary)
    for i in unit.assigns:
        row = row_at(flows.assigns, i)
        assert tables.in_class_body is not None
        if not tables.in_class_body(row[ASSIGN_LINE]):  # class-level ones are fields already
            add_assign(tables, i, row)
    for i in unit.returns:
        add_return(tables, i, row_at(flows.returns, i))
    for i in unit.uses:
        scope, value, line, end_line = row_at(flows.uses, i)
        step = Step(f"{path}#u{i}", "use", path, line, end_line, scope, UNREAD, "")
        tables.add(step, scope, (4, i))
        record_reads(tables, step, scope, value)
    for call_id in unit.calls:
        row = row_at(flows.calls, call_id)
        # Only a flag, a resolved call or a thrown-away result makes steps (see add_call).
        if (
            row[DISCARDED]
            or dict.get(tables.targets, call_id)
            or row[CALLEE].rpartition(".")[2] in FLAG_METHODS
        ):
            add_call(tables, row)


def add_assign(tables: FileTables, index: int, row: Row) -> None:
    """The steps of an assignment's targets (ROW, an Assign's)."""
    path = tables.path
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
            id=f"{path}#a{index}.{j}",
            kind="formula" if value[VALUE_ARITHMETIC] or changes else kind,
            file=path,
            line=line,
            end_line=end_line,
            symbol=scope,
            code=UNREAD,
            name=target.rpartition(".")[2],
        )
        tables.add(step, scope, (2, index, j))
        tables.bound[step.id] = target
        if position is not None:
            tables.position[step.id] = position
        record_reads(tables, step, scope, value, (target,) if changes else ())
        if not attr:  # attribute writes come from the file's names
            tables.local_defs.setdefault((scope, target), []).append(step.id)


def add_return(tables: FileTables, index: int, row: Row) -> None:
    """One step per returned value (ROW, a Return's); `return a, b` gives one per position,
    so that `x, y = f()` takes each from its own."""
    scope, whole_value, items, line, end_line = row
    parts = list(enumerate(items)) if len(items) > 1 else [(None, whole_value)]
    for position, value in parts:
        suffix = "" if position is None else f".{position}"
        step = Step(
            f"{tables.path}#r{index}{suffix}",
            "return",
            tables.path,
            line,
            end_line,
            scope,
            UNREAD,
            "return",
        )
        tables.add(step, scope, (3, index, -1 if position is None else position))
        tables.returns.setdefault(scope, []).append(step.id)
        if position is not None:
            tables.position[step.id] = position
        record_reads(tables, step, scope, value)


def add_definitions(tables: FileTables, unit: UnitIndex) -> None:
    path = tables.path
    for i in unit.functions:
        function = tables.summary.functions[i]
        for j, param in enumerate(function.params):
            step = Step(
                id=f"{path}#p:{function.qualname}.{param.name}",
                kind="param",
                file=path,
                line=param.line,
                end_line=param.line,
                symbol=function.qualname,
                code=param.code,
                name=param.name,
            )
            tables.add(step, function.qualname, (0, i, j))
            tables.local_defs.setdefault((function.qualname, param.name), []).append(step.id)
            if param.default_refs:  # evaluated where the function is defined
                outer = function.qualname.rpartition(".")[0] or MODULE_SCOPE
                record_reads(tables, step, outer, (param.default_refs, (), False, None))
    for i in unit.classes:
        klass = tables.summary.classes[i]
        for j, definition in enumerate(klass.fields):
            step = Step(
                id=f"{path}#f:{klass.qualname}.{definition.name}",
                kind="field",
                file=path,
                line=definition.line,
                end_line=definition.end_line,
                symbol=klass.qualname,
                code=definition.code,
                name=definition.name,
            )
            tables.add(step, MODULE_SCOPE, (1, i, j))


def add_call(tables: FileTables, row: Row) -> None:
    """Arguments of resolved calls become steps; a thrown-away unresolved call is a read;
    `add_argument` calls become flags. ROW is the call's."""
    path = tables.path
    call_id, scope, callee, _, args, discarded, line, end_line = row
    if callee.rpartition(".")[2] in FLAG_METHODS:
        add_flag(tables, tables.calls[call_id])
        return
    if dict.get(tables.targets, call_id):
        for i, (keyword, _, _, value, arg_line, arg_end_line) in enumerate(args):
            step = Step(
                id=f"{path}#c{call_id}.{i}",
                kind="call_arg",
                file=path,
                line=arg_line,
                end_line=arg_end_line,
                symbol=scope,
                code=UNREAD,
                name=keyword or "",
            )
            tables.add(step, scope, (5, call_id, i))
            tables.call_args.setdefault(call_id, []).append(step.id)
            record_reads(tables, step, scope, value)
    elif discarded:
        step = Step(f"{path}#c{call_id}", "use", path, line, end_line, scope, UNREAD, "")
        tables.add(step, scope, (5, call_id, -1))
        for arg in args:
            record_reads(tables, step, scope, arg[ARG_VALUE])


def add_flag(tables: FileTables, call: Call) -> None:
    dest = flag_dest(call)
    if dest is None:
        # The flag's name is computed: this function generates flags from data.
        tables.flag_generators.add(call.scope)
        return
    step = Step(
        id=f"{tables.path}#c{call.id}:flag",
        kind="cli_flag",
        file=tables.path,
        line=call.line,
        end_line=call.end_line,
        symbol=call.scope,
        code=UNREAD,
        name=dest,
    )
    tables.add(step, call.scope, (5, call.id, -1))
    default = next((a.value.refs for a in call.args if a.keyword == "default"), ())
    tables.append(tables.flags, dest, (step.id, default))


def record_reads(
    tables: FileTables, step: Step, scope: str, value: Row, extra: tuple[str, ...] = ()
) -> None:
    """Note what STEP reads (VALUE, a Value's row). A resolved call contributes its result;
    an unresolved one its receiver (`tensor.item()`) and its arguments: as the value itself
    for conversions (`int(x)`), else as an opaque input (`mem_get_info(gpu_id)` does not
    return gpu_id)."""
    if not value[VALUE_CALLS] and not extra:  # the common case: names only
        index_reads(tables, step, scope, value[VALUE_REFS], NO_REFS, ())
        return
    refs: dict[str, bool] = dict.fromkeys(extra, False)  # ref -> reached only opaquely
    results: list[int] = []
    pending: list[tuple[Row, bool]] = [(value, False)]
    while pending:
        current, opaque = pending.pop()
        for ref in current[VALUE_REFS]:
            refs[ref] = refs.get(ref, True) and opaque
        for call_id in current[VALUE_CALLS]:
            if dict.get(tables.targets, call_id):
                results.append(call_id)
                tables.consumers.setdefault(call_id, []).append(step.id)
                continue
            _, _, callee, receiver_value, args, _, _, _ = row_at(tables.calls, call_id)
            receiver = callee.rpartition(".")[0]
            if receiver and receiver != "super()":
                refs[receiver] = refs.get(receiver, True) and opaque
            pending.append((receiver_value, opaque))
            keeps_value = callee in VALUE_PRESERVING
            pending.extend((arg[ARG_VALUE], opaque or not keeps_value) for arg in args)
    opaque = frozenset(ref for ref, hidden in refs.items() if hidden) or NO_REFS
    index_reads(tables, step, scope, tuple(refs), opaque, tuple(results))


def index_reads(
    tables: FileTables,
    step: Step,
    scope: str,
    refs: tuple[str, ...],
    opaque: frozenset[str],
    results: tuple[int, ...],
) -> None:
    tables.refs[step.id] = refs
    tables.opaque[step.id] = opaque
    tables.results[step.id] = results
    for ref in refs:
        base, _, name = ref.rpartition(".")
        if base:
            tables.append(tables.attr_reads, name, Read(step.id, scope, base, step.line))
        else:
            tables.append(tables.local_reads, (scope, ref), step.id)
