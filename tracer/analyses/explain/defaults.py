"""A setting the log does not show, computed the way the code computes its default when the
server starts: the class's construction interpreted (`interpret.py`) with each field's value
from the log's command line, else its default in the code, and what the code measures when it
starts (the card's memory capacity) bound from the log where the log shows it."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from tracer.analyses.explain.arith import number
from tracer.analyses.explain.classcode import Program, Unknown, literal, program
from tracer.analyses.explain.cmdline import Given, command_line, declared_flags, given_fields
from tracer.analyses.explain.interpret import construct
from tracer.analyses.explain.interpvalues import Assumed, Decision, Run, Val, Write
from tracer.analyses.explain.logread import LogLine
from tracer.analyses.explain.match import Observation

# A call that asks the device for its memory capacity (`get_device_memory_capacity()`).
CAPACITY_CALL = re.compile(r"(?:mem|memory).*(?:capacity|total)|(?:capacity|total).*mem", re.I)
# A capacity a log prints: `total mem=80.00 GB`, `total_memory: 81559 MiB`, nvidia-smi's
# `1MiB / 81559MiB`.
TOTAL_PRINTED = re.compile(
    r"total[ _]?mem(?:ory)?\s*[=:]\s*(?P<v>\d+(?:\.\d+)?)\s*(?P<unit>GiB|GB|MiB|MB)\b"
    r"|\d+MiB\s*/\s*(?P<smi>\d+)MiB",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Input:
    name: str
    value: object
    how: str  # default, flag, given, logged, lower bound
    why: str


@dataclass(frozen=True, slots=True)
class Computed:
    """FIELD as the class's construction computes it, or why it cannot be (MISSING)."""

    field: str
    value: float | None
    path: str
    write: Write | None
    inputs: tuple[Input, ...]
    decisions: tuple[Decision, ...]  # the branches its value went through
    assumed: tuple[Assumed, ...]  # unknown conditions taken as false that would change it
    missing: str = ""  # what the log does not show, when VALUE is None
    missing_name: str = ""  # ... and the name --set gives it by


def compute_default(
    source: bytes,
    path: str,
    klass: str,
    field_name: str,
    lines: list[LogLine],
    first_free: Observation | None,
    given: dict[str, float],
) -> Computed | None:
    """FIELD_NAME of KLASS (defined in PATH, SOURCE) after KLASS's construction, with the
    settings LINES' command line gives; FIRST_FREE is the first free memory the log reports
    (a lower bound of the card's capacity when the log prints no capacity)."""
    prog = program(source, klass)
    if prog is None or not any(n in prog.methods for n in ("__post_init__", "__init__")):
        return None
    starting, inputs = starting_fields(prog, source, lines, given)
    external = Measured(source, path, lines, first_free, given)
    externals = external.inputs
    run = construct(prog, starting, external)
    final = run.fields.get(field_name, Val(Unknown(field_name)))
    write = run.writes.get(field_name)
    if write is None or not run.complete:
        return None  # the construction does not set it, or was not read to its end
    value = final.value if number_like(final.value) else None
    flips = {
        a.key: flipped(prog, starting, external, a.key, field_name) for a in run.assumed.values()
    }
    assumed = tuple(
        replace(a, otherwise=flips[a.key])
        for a in run.assumed.values()
        if flips[a.key] != final.value
    )
    used = tuple(
        inputs.get(d) or externals[d]
        for d in sorted(final.deps)
        if d not in run.writes and (d in inputs or d in externals)
    )
    missing, missing_name = "", ""
    if value is None:
        what = final.value.what if isinstance(final.value, Unknown) else repr(final.value)
        missing_name = what.split(" = ", 1)[0] if " = " in what else field_name
        missing = what
    return Computed(
        field_name,
        value,
        path,
        write,
        used,
        decisions(run, final, write),
        assumed,
        missing,
        missing_name,
    )


def settings_state(
    source: bytes,
    klass: str,
    lines: list[LogLine],
    first_free: Observation | None,
    given: dict[str, float],
) -> dict[str, Val]:
    """Every field of KLASS once the server has started: as the log prints it (`KLASS(a=1,
    ...)`, `name={'a': 1, ...}`), else as the construction computes it from the command line
    and the code's defaults."""
    prog = program(source, klass)
    if prog is None:
        return {}
    starting, _ = starting_fields(prog, source, lines, given)
    external = Measured(source, "", lines, first_free, given)
    fields = dict(construct(prog, starting, external).fields)
    for name, value in printed_settings(lines, klass, frozenset(prog.fields)).items():
        fields[name] = Val(value, frozenset({name}))
    return fields


PRINTED_FIELD = re.compile(
    r"""['"]?(?P<key>[a-z_]\w*)['"]?\s*[=:]\s*(?P<v>'[^']*'|"[^"]*"|[-+\w.]+)"""
)


def printed_settings(lines: list[LogLine], klass: str, fields: frozenset[str]) -> dict[str, object]:
    """The fields of the last line printing the settings (`KLASS(...)` or a dict of them)."""
    label = re.sub(r"(?<!^)(?=[A-Z])", "_", klass).lower()
    for line in reversed(lines):
        message = line.message
        if f"{klass}(" not in message and not re.search(rf"\b{label}\s*=\s*{{", message):
            continue
        found = {
            m["key"]: printed_value(m["v"])
            for m in PRINTED_FIELD.finditer(message)
            if m["key"] in fields
        }
        if len(found) > 2:
            return found
    return {}


def printed_value(raw: str) -> object:
    if raw[:1] in "'\"":
        return raw[1:-1]
    if raw in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[raw]
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            pass
    return raw


class Measured:
    """What the code measures when it starts, as the log shows it: a local assigned from a
    call asking the device for its memory capacity, or any local --set gives. Called as the
    interpreter's `External`; the inputs it gave are kept by name."""

    def __init__(
        self,
        source: bytes,
        path: str,
        lines: list[LogLine],
        first_free: Observation | None,
        given: dict[str, float],
    ) -> None:
        self.text = source.decode("utf-8", "replace")
        self.file = path.rsplit("/", 1)[-1]
        self.capacity = printed_capacity(lines) or lower_bound(first_free)
        self.given = given
        self.inputs: dict[str, Input] = {}

    def __call__(self, name: str, call: str, line: int) -> Val | None:
        if name in self.given:
            self.inputs[name] = Input(name, self.given[name], "given", "given with --set")
            return Val(self.given[name], frozenset({name}))
        if not call or not CAPACITY_CALL.search(call) or self.capacity is None:
            return None
        gib, how, why = self.capacity
        # The unit the code compares it in: `gpu_mem < 20 * 1024` reads MiB.
        in_mib = re.search(rf"\b{re.escape(name)}\s*[<>]=?\s*\d+\s*\*\s*1024\b", self.text)
        value = gib * 1024 if in_mib else gib
        self.inputs[name] = Input(
            name,
            value,
            how,
            f"{name} = {call}() at {self.file}:{line}, the card's memory capacity "
            f"({'MiB' if in_mib else 'GiB'}, as the code compares it): {why}",
        )
        return Val(value, frozenset({name}))


def number_like(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def flipped(
    prog: Program, starting: dict[str, Val], external: Measured, key: int, name: str
) -> object:
    run = construct(prog, starting, external, frozenset({key}))
    return run.fields.get(name, Val(None)).value


def decisions(run: Run, final: Val, write: Write) -> tuple[Decision, ...]:
    """The conditions the value went through: those around its write, and around the writes of
    the fields it was computed from."""
    found = {(d.line, d.condition): d for d in write.branch}
    for name in final.deps:
        other = run.writes.get(name)
        if other is not None and other is not write:
            found.update({(d.line, d.condition): d for d in other.branch})
    return tuple(found[k] for k in sorted(found))


def starting_fields(
    prog: Program, source: bytes, lines: list[LogLine], given: dict[str, float]
) -> tuple[dict[str, Val], dict[str, Input]]:
    """Each field's value when the construction starts, and how it is known: --set, the log's
    command line, else its default in the code."""
    command = command_line(lines)
    flags: dict[str, Given] = {}
    if command is not None:
        flags = given_fields(
            command[1], declared_flags(source, frozenset(prog.fields)), command[0].number
        )
    values: dict[str, Val] = {}
    inputs: dict[str, Input] = {}
    for name, default in prog.fields.items():
        if name in given:
            value: object = given[name]
            inputs[name] = Input(name, value, "given", "given with --set")
        elif name in flags:
            shown = flags[name]
            value = shown.value
            inputs[name] = Input(
                name, value, "flag", f"{shown.flag} on the command line (log line {shown.line})"
            )
        else:
            value = literal(default)
            inputs[name] = Input(name, value, "default", f"the default of {prog.klass}.{name}")
        values[name] = Val(value, frozenset({name}))
    return values, inputs


def printed_capacity(lines: list[LogLine]) -> tuple[float, str, str] | None:
    """The card's capacity in GiB where the log prints it."""
    for line in lines:
        found = TOTAL_PRINTED.search(line.message)
        if found is None:
            continue
        if found["smi"]:
            return (
                int(found["smi"]) / 1024,
                "logged",
                f"nvidia-smi's total (log line {line.number})",
            )
        value = float(found["v"])
        gib = value / 1024 if found["unit"].upper().startswith("M") else value
        return gib, "logged", f"{found[0]!r} (log line {line.number})"
    return None


def lower_bound(first: Observation | None) -> tuple[float, str, str] | None:
    if first is None or first.value is None:
        return None
    return (
        first.value,
        "lower bound",
        f"at least the first free memory the log reports, {number(first.value)} GB before "
        f"anything was loaded ({first.template.literal.strip()!r}, {first.where}"
        + (f", derived as {first.derived}" if first.derived else "")
        + "); the log does not print the capacity",
    )
