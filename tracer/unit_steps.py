"""The steps of one unit of a file (a function, a method, a class's fields, the module's own
code) and what they read, made from its facts in the order and with the ids a whole-file build
gives; `tracer.tables.FileTables` decides which units to build."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tracer.facts import MODULE_SCOPE, Assign, Call, Return, Value
from tracer.names import FLAG_METHODS, class_bodies, flag_dest
from tracer.parse import SourceLines
from tracer.rows import CALLEE, DISCARDED, call_heads, row_at
from tracer.steps import Step

if TYPE_CHECKING:  # the tables call in here; only their type is needed
    from tracer.tables import FileTables

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
    """The steps of one unit, made in the order (and with the ids) of a whole-file build."""
    path, flows = tables.path, tables.flows
    heads, targets = call_heads(flows.calls), tables.resolver.targets
    for call_id in unit.calls:
        dict.__setitem__(tables.targets, call_id, targets(path, *heads[call_id]))
    add_definitions(tables, unit)
    if unit.assigns and tables.in_class_body is None:
        tables.in_class_body = class_bodies(tables.summary)
    for i in unit.assigns:
        assign = flows.assigns[i]
        assert tables.in_class_body is not None
        if not tables.in_class_body(assign.line):  # class-level assignments are fields already
            add_assign(tables, i, assign)
    for i in unit.returns:
        add_return(tables, i, flows.returns[i])
    for i in unit.uses:
        use = flows.uses[i]
        step = Step(
            f"{path}#u{i}",
            "use",
            path,
            use.line,
            use.end_line,
            use.scope,
            UNREAD,
            "",
        )
        tables.add(step, use.scope, (4, i))
        record_reads(tables, step, use.scope, use.value)
    for call_id in unit.calls:
        row = row_at(flows.calls, call_id)
        # Only a flag, a resolved call or a thrown-away result makes steps (see add_call).
        if (
            row[DISCARDED]
            or dict.get(tables.targets, call_id)
            or row[CALLEE].rpartition(".")[2] in FLAG_METHODS
        ):
            add_call(tables, flows.calls[call_id])


def add_assign(tables: FileTables, index: int, assign: Assign) -> None:
    path = tables.path
    changes = assign.op not in ("=", "for", "with", ":=")  # x += v reads x too
    for j, target in enumerate(assign.targets):
        if not target.path:
            continue
        value = assign.value
        if target.index is not None and len(assign.items) == len({t.index for t in assign.targets}):
            value = assign.items[target.index]
        attr = "." in target.path
        kind = "attr_write" if attr else "local_assign"
        step = Step(
            id=f"{path}#a{index}.{j}",
            kind="formula" if value.arithmetic or changes else kind,
            file=path,
            line=assign.line,
            end_line=assign.end_line,
            symbol=assign.scope,
            code=UNREAD,
            name=target.path.rpartition(".")[2],
        )
        tables.add(step, assign.scope, (2, index, j))
        tables.bound[step.id] = target.path
        if target.index is not None:
            tables.position[step.id] = target.index
        record_reads(tables, step, assign.scope, value, (target.path,) if changes else ())
        if not attr:  # attribute writes come from the file's names
            tables.local_defs.setdefault((assign.scope, target.path), []).append(step.id)


def add_return(tables: FileTables, index: int, ret: Return) -> None:
    """One step per returned value; `return a, b` gives one per position, so that
    `x, y = f()` takes each from its own."""
    parts = list(enumerate(ret.items)) if len(ret.items) > 1 else [(None, ret.value)]
    for position, value in parts:
        suffix = "" if position is None else f".{position}"
        step = Step(
            f"{tables.path}#r{index}{suffix}",
            "return",
            tables.path,
            ret.line,
            ret.end_line,
            ret.scope,
            UNREAD,
            "return",
        )
        tables.add(step, ret.scope, (3, index, -1 if position is None else position))
        tables.returns.setdefault(ret.scope, []).append(step.id)
        if position is not None:
            tables.position[step.id] = position
        record_reads(tables, step, ret.scope, value)


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
                record_reads(tables, step, outer, Value(param.default_refs, ()))
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


def add_call(tables: FileTables, call: Call) -> None:
    """Arguments of resolved calls become steps; a thrown-away unresolved call is a read;
    `add_argument` calls become flags."""
    path = tables.path
    method = call.callee.rpartition(".")[2]
    if method in FLAG_METHODS:
        add_flag(tables, call)
        return
    if dict.get(tables.targets, call.id):
        for i, arg in enumerate(call.args):
            step = Step(
                id=f"{path}#c{call.id}.{i}",
                kind="call_arg",
                file=path,
                line=arg.line,
                end_line=arg.end_line,
                symbol=call.scope,
                code=UNREAD,
                name=arg.keyword or "",
            )
            tables.add(step, call.scope, (5, call.id, i))
            tables.call_args.setdefault(call.id, []).append((arg, step.id))
            record_reads(tables, step, call.scope, arg.value)
    elif call.discarded:
        step = Step(
            f"{path}#c{call.id}",
            "use",
            path,
            call.line,
            call.end_line,
            call.scope,
            UNREAD,
            "",
        )
        tables.add(step, call.scope, (5, call.id, -1))
        for arg in call.args:
            record_reads(tables, step, call.scope, arg.value)


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
    tables: FileTables, step: Step, scope: str, value: Value, extra: tuple[str, ...] = ()
) -> None:
    """Note what STEP reads. A resolved call contributes its result; an unresolved one its
    receiver (`tensor.item()`) and its arguments: as the value itself for conversions
    (`int(x)`), else as an opaque input (`mem_get_info(gpu_id)` does not return gpu_id)."""
    if not value.calls and not extra:  # the common case: names only
        index_reads(tables, step, scope, value.refs, NO_REFS, ())
        return
    refs: dict[str, bool] = dict.fromkeys(extra, False)  # ref -> reached only opaquely
    results: list[int] = []
    pending: list[tuple[Value, bool]] = [(value, False)]
    while pending:
        current, opaque = pending.pop()
        for ref in current.refs:
            refs[ref] = refs.get(ref, True) and opaque
        for call_id in current.calls:
            if dict.get(tables.targets, call_id):
                results.append(call_id)
                tables.consumers.setdefault(call_id, []).append(step.id)
                continue
            call = tables.calls[call_id]
            receiver = call.callee.rpartition(".")[0]
            if receiver and receiver != "super()":
                refs[receiver] = refs.get(receiver, True) and opaque
            pending.append((call.receiver, opaque))
            keeps_value = call.callee in VALUE_PRESERVING
            pending.extend((arg.value, opaque or not keeps_value) for arg in call.args)
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
