"""A setting's value as one start's log shows it: printed with its class
(`ServerArgs(..., name=0.88, ...)`) or in a printed dict of settings, given on the command line,
the default in the code, or the code's own default computation when the server starts
(`defaults.py`); else why it is not known, in one line."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tracer.analyses.explain.arith import number
from tracer.analyses.explain.binding import Binding
from tracer.analyses.explain.cmdline import COMMAND
from tracer.analyses.explain.defaults import Computed, compute_default
from tracer.analyses.explain.logread import LogLine
from tracer.analyses.explain.match import Observation
from tracer.graph.flow import FlowGraph
from tracer.graph.steps import Step
from tracer.sources.snapshot import Snapshot

WRITES = frozenset({"attr_write", "formula"})  # the steps of `self.x = ...`, `self.x += ...`
FLAG_VALUE = r"(?:=|\s+)['\"]?(?P<v>[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)"


@dataclass(frozen=True, slots=True)
class StartSettings:
    """What one start's log shows of the settings, and the code that computes them."""

    snapshot: Snapshot
    graph: FlowGraph
    lines: list[LogLine]  # the start's lines
    first_free: Observation | None  # the first free memory the log reports
    given: dict[str, float]  # values given with --set

    def binding(self, name: str, step: Step) -> Binding:
        """A setting's value: printed with its class (`ServerArgs(..., name=0.88, ...)`), then
        the command line, then the default in the code."""
        field_name = step.name
        klass = step.symbol.split(".")[0]
        # The field's own class first; then any settings object printed with that field
        # (the value often reaches the field from another settings class).
        for own_class_only in (True, False):
            for line in reversed(self.lines):
                if field_name not in line.message:
                    continue
                for found in settings_printed(line.message, field_name):
                    printed, value = owner(line.message, found.start()), to_float(found["v"])
                    if value is None or not printed:
                        continue
                    if found["key"] and not printed[0].isupper():
                        continue  # `f(x=1)`: a call's keyword, not a settings object
                    if own_class_only and printed != klass:
                        continue
                    shown = (
                        f"{printed}.{field_name} as the log prints {printed}(...)"
                        if found["key"]
                        else f"{printed}[{field_name!r}] as the log prints {printed}={{...}}"
                    )
                    return Binding(name, value, "logged-args", f"{shown} (log line {line.number})")
        flags = (
            set(re.findall(r"[\"'](--[\w-]+)[\"']", step.code))
            if step.kind == "cli_flag"
            else set()
        )
        flags.add("--" + field_name.replace("_", "-"))
        for line in reversed(self.lines):
            for flag in sorted(flags):
                found = re.search(rf"(?<![\w-]){re.escape(flag)}{FLAG_VALUE}", line.message)
                if found:
                    return Binding(
                        name,
                        float(found["v"]),
                        "flag",
                        f"{flag} on the command line (log line {line.number})",
                    )
        default = re.search(r"=\s*(?P<v>[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)\s*(?:#.*)?$", step.code)
        if step.kind == "field" and default:
            return Binding(
                name,
                float(default["v"]),
                "default",
                f"not in the log: the default of {klass}.{field_name} in the code",
            )
        why = self.unknown_setting(step, sorted(flags))
        computed = self.computed_default(step)
        if computed is None:
            why += self.set_elsewhere(step)
            return Binding(name, None, "unbound", f"{why}: give --set {field_name}=VALUE")
        how = "computed" if computed.value is not None else "unbound"
        return Binding(
            name, computed.value, how, f"{why}; {computed_why(computed)}", computed=computed
        )

    def computed_default(self, step: Step) -> Computed | None:
        """The setting of STEP as the construction of its class computes it when the server
        starts, with what this start's lines show."""
        if step.kind != "field":
            return None
        first = self.first_free
        source = self.snapshot.read(step.file)
        klass = step.symbol.split(".")[0]
        return compute_default(source, step.file, klass, step.name, self.lines, first, self.given)

    def unknown_setting(self, step: Step, flags: list[str]) -> str:
        """Why a setting is not known, in one line: what the log shows of the launch."""
        klass = step.symbol.split(".")[0]
        command = next((line for line in self.lines if COMMAND.search(line.message)), None)
        launch = (
            f"the command line (log line {command.number}) does not set {' or '.join(flags)}"
            if command is not None
            else f"no command line setting {' or '.join(flags)}"
        )
        return f"{klass}.{step.name} is not in the log: no {klass}(...) line, {launch}"

    def set_elsewhere(self, step: Step) -> str:
        """Where the code sets the field when the server starts, from values not evaluated."""
        klass = step.symbol.split(".")[0]
        writes = [self.graph.step(w) for w in self.graph.attribute_writes(step.name)]
        writes = [w for w in writes if w.symbol.split(".")[0] == klass and w.kind in WRITES]
        if step.kind != "field" or not writes:
            return ""
        first = writes[0]
        where = f"{first.symbol} ({first.file.rsplit('/', 1)[-1]}:{first.line})"
        more = f" and {len(writes) - 1} more place" if len(writes) > 1 else ""
        more += "s" if len(writes) > 2 else ""
        return (
            f"; so the code sets it when the server starts, in {where}{more}, from values "
            "explain does not evaluate"
        )


def settings_printed(message: str, field_name: str) -> list[re.Match[str]]:
    """Where MESSAGE gives FIELD_NAME a value: `name=0.88` in a printed object, or
    `'name': 0.88` in a printed dict."""
    return list(
        re.finditer(
            rf"(?:\b(?P<key>{field_name})=|['\"]{field_name}['\"]:\s*)(?P<v>[^,)}}\s]+)",
            message,
        )
    )


def owner(text: str, at: int) -> str:
    """The name of what encloses position AT: `ServerArgs` in `ServerArgs(a=1, b=2)`, the
    label `server_args` of a dict printed as `server_args={'a': 1}`; or ""."""
    depth = 0
    for index in range(at - 1, -1, -1):
        char = text[index]
        if char in ")}":
            depth += 1
        elif char in "({":
            if depth == 0:
                pattern = r"([A-Za-z_]\w*)$" if char == "(" else r"([A-Za-z_]\w*)\s*[=:]\s*$"
                found = re.search(pattern, text[:index])
                return found[1] if found else ""
            depth -= 1
    return ""


def to_float(text: str) -> float | None:
    try:
        return float(text.strip().strip("'\""))
    except ValueError:
        return None


def computed_why(computed: Computed) -> str:
    """How the code computes a default when the server starts, in one line: where, on which
    branches, from which inputs; or what it lacks."""
    write = computed.write
    assert write is not None
    file = computed.path.rsplit("/", 1)[-1]
    where = f"{write.function} ({file}:{write.line})"
    if computed.value is None:
        return (
            f"the code computes it when the server starts, in {where}, from "
            f"{computed.missing}, which the log does not show: give --set "
            f"{computed.missing_name}=VALUE"
        )
    branches = ", ".join(
        f"{d.condition} {'true' if d.taken else 'false'} ({file}:{d.line})"
        for d in computed.decisions
    )
    known = [
        f"{i.name} = {shown_value(i.value)} ({i.why})"
        for i in computed.inputs
        if i.how != "default"
    ]
    defaults = [f"{i.name} = {shown_value(i.value)}" for i in computed.inputs if i.how == "default"]
    if defaults:
        known.append("the code's defaults " + ", ".join(defaults))
    out = (
        f"the code's own default computation gives {number(computed.value)}: "
        f"self.{computed.field} = {write.code} in {where}"
        + (f", on the branch {branches}" if branches else "")
        + (f"; from {'; '.join(known)}" if known else "")
    )
    for assumed in computed.assumed:
        out += (
            f"; {assumed.condition} ({file}:{assumed.line}) taken as false: {assumed.unknown} "
            "is not in the log"
        )
    return out


def shown_value(value: object) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return repr(value)
    if isinstance(value, int | float):
        return number(float(value))
    return repr(value)
