"""Binding the variables of a formula to a server's log: a value printed where it is
computed, a setting printed with its class or given on the command line, a measurement logged
nearest in time (the minimum across ranks where the code takes it), or a value the log implies.
A mixin of the explain view's Binder, which holds the log and the chain."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracer.analyses.explain.arith import first_statement, number, statement_value
from tracer.analyses.explain.cmdline import COMMAND
from tracer.analyses.explain.defaults import Computed, compute_default
from tracer.analyses.explain.logread import LogLine
from tracer.analyses.explain.match import Matched, Observation
from tracer.analyses.explain.returns import logged_returns
from tracer.analyses.explain.templates import calls_in
from tracer.graph.steps import Step

if TYPE_CHECKING:
    from tracer.graph.flow import FlowGraph
    from tracer.session import Session

PASS_THROUGH = frozenset({"call_arg", "param", "field", "attr_read", "sink", "use", "cli_flag"})
MAX_BACK = 14  # steps walked back from a formula variable to where its value is measured
FORWARD_DEPTH = 6  # steps walked on from the result to the lines that print it
FORWARD_STEPS = 400
TRUSTED = 0.8  # the confidence of an edge a value is followed back along
WRITES = frozenset({"attr_write", "formula"})  # the steps of `self.x = ...`, `self.x += ...`
# A number given to a setting: `name=8192` in a settings print, `'name': 8192` in a printed
# dict of settings, `--name 8192` on a command line.
SETTING_VALUE = re.compile(
    r"(?:(?<![\w-])(?P<flag>--[a-z][\w-]*)(?:=|\s+)|\b(?P<field>[a-z_]\w*)="
    r"|['\"](?P<key>[a-z_]\w*)['\"]:\s*)"
    r"(?P<v>\d+)(?![\w.])"
)
FLAG_VALUE = r"(?:=|\s+)['\"]?(?P<v>[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)"


@dataclass(frozen=True, slots=True)
class Binding:
    name: str  # as the formula writes it: "self.mem_fraction_static"
    value: float | None
    how: str  # printed, measured, derived, flag, logged-args, default, solved, unbound
    why: str
    observation: Observation | None = None
    per_rank: tuple[tuple[str, float], ...] = ()
    function: str = ""  # for a measured value: the function that measured it
    at: Step | None = None  # ... and the step that called it
    computed: Computed | None = None  # a default the code computes when it starts


@dataclass(frozen=True, slots=True)
class Cap:
    """A setting the log shows whose value is the logged result: a cap that binds."""

    name: str  # "ServerArgs.max_total_tokens", "--max-total-tokens"
    value: float
    line: int  # the log line that shows it


class LogBindings:
    """What the Binder holds that binding reads."""

    session: Session
    graph: FlowGraph
    steps: list[Step]  # the formula's part of the spine, to the sink
    lines: list[LogLine]
    matched: list[Matched]
    mine: list[Matched]  # the explained rank's lines, and those without a rank
    ranks: tuple[str, ...]
    rank: str
    sinks: tuple[str, ...]
    given: dict[str, float]
    bindings: dict[str, Binding]
    result_line: int

    # -- binding a variable --------------------------------------------------------------------

    def bind(self, name: str, at: Step, record: bool = True) -> Binding:
        known = self.bindings.get(name)
        if known is not None:
            return known
        binding = self.find_binding(name, at)
        if record:
            self.bindings[name] = binding
        return binding

    def find_binding(self, name: str, at: Step) -> Binding:
        tail = name.rsplit(".", 1)[-1]
        if tail in self.given or name in self.given:
            value = self.given.get(name, self.given.get(tail))
            logged = self.from_log(name, at)
            why = "given with --set"
            if logged.value is not None and logged.value != value:
                why += f", instead of {logged.value:g} ({logged.how}: {logged.why})"
            return Binding(name, value, "given", why)
        return self.from_log(name, at)

    def from_log(self, name: str, at: Step) -> Binding:
        printed = self.printed(name, at.symbol)
        if printed is not None:
            return Binding(
                name,
                printed.value,
                "printed",
                f"printed by {printed.template.file}:{printed.template.line} ({printed.where})",
                printed,
            )
        tail = name.rsplit(".", 1)[-1]
        frontier = [
            e.src
            for e in self.graph.edges(at.id, forward=False)
            if e.confidence >= TRUSTED and self.graph.step(e.src).name == tail
        ]
        seen: set[str] = set()
        for _ in range(MAX_BACK):
            following: list[str] = []
            for step_id in frontier:
                if step_id in seen:
                    continue
                seen.add(step_id)
                step = self.graph.step(step_id)
                found = self.from_step(name, step)
                if found is not None:
                    return found
                following.extend(self.value_sources(step))
            frontier = following
            if not frontier:
                break
        return Binding(name, None, "unbound", "not printed in the log, and not derivable from it")

    def value_sources(self, step: Step) -> list[str]:
        """The steps STEP's value is copied from: through parameters, arguments, plain copies
        and returns; a computed value stops the walk (it is not this variable any more)."""
        # A guessed (name-only) edge may lead to any value of that name: not followed.
        edges = [e for e in self.graph.edges(step.id, forward=False) if e.confidence >= TRUSTED]
        if step.kind in PASS_THROUGH:
            return [e.src for e in edges]
        node = statement_value(step.code)
        while node is not None and node.type == "parenthesized_expression":
            node = node.named_children[0]
        if node is None:
            return []
        if node.type == "call":
            return [e.src for e in edges if e.kind == "return_to_result"]
        if node.type in ("identifier", "attribute"):
            return [e.src for e in edges]
        return []

    def from_step(self, name: str, step: Step) -> Binding | None:
        if step.kind in ("field", "cli_flag"):
            setting = self.setting(name, step)
            if setting.how in ("logged-args", "flag") or not self.filled_by_calls(step):
                return setting
            return None  # a record the code fills: its value is what the constructor is given
        printed = self.printed(step.name, step.symbol)
        if printed is not None and step.name:
            return Binding(
                name,
                printed.value,
                "printed",
                f"{step.name} in {step.symbol} is printed by {printed.template.file}:"
                f"{printed.template.line} ({printed.where})",
                printed,
            )
        statement = first_statement(step.code)
        calls = set(calls_in(statement)) if statement is not None else set()
        for function in sorted(calls):
            measured = self.measured(name, step, function)
            if measured is not None:
                return measured
        for function in sorted(calls):
            returned = self.returned(name, step, function)
            if returned is not None:
                return returned
        return None

    def returned(self, name: str, step: Step, function: str) -> Binding | None:
        """NAME = FUNCTION(...) where FUNCTION logs what it returns: the logged value, or,
        when this start holds no line of it, the constant its other returns give."""
        path, body = self.function_at(function)
        if not body:
            return None
        found = logged_returns(function, path, self.session.snapshot.read(path), body)
        if found is None:
            return None
        lines = [
            m for m in self.mine if m.template in found.logs and m.line.number < self.result_line
        ]
        values = [o for m in lines for o in m.observations if o.value is not None]
        call = f"{name} = {function}(...) at {step.file}:{step.line} ({step.symbol})"
        literal = found.logs[0].literal.strip()
        if values:
            return Binding(
                name,
                values[-1].value,
                "printed",
                f"{call}, which logs what it returns: {literal!r} ({values[-1].where})",
                values[-1],
            )
        if len(found.constants) != 1:
            return None
        return Binding(
            name,
            found.constants[0],
            "implied",
            f"{call}: it logs {literal!r} when it returns a computed value, and this start "
            f"has no such line, so it returned its constant {number(found.constants[0])}",
        )

    def filled_by_calls(self, step: Step) -> bool:
        """STEP is a field of a record some call constructs with it (not a setting)."""
        return step.kind == "field" and any(
            e.kind == "arg_to_field" and e.confidence >= 1.0
            for e in self.graph.edges(step.id, forward=False)
        )

    def printed(self, name: str, symbol: str) -> Observation | None:
        """The last line before the result that prints NAME itself in the same function (a
        local) or the same class (an attribute)."""
        klass = symbol.split(".")[0]
        best: Observation | None = None
        for matched in self.mine:
            if matched.line.number >= self.result_line:
                break
            for observation in matched.observations:
                if observation.hole.expr != name or observation.value is None:
                    continue
                where = observation.template.symbol
                same = where == symbol if "." not in name else where.split(".")[0] == klass
                if same and not observation.derived:
                    best = observation
        return best

    def measured(self, name: str, step: Step, function: str) -> Binding | None:
        """NAME's value comes from a call of FUNCTION at STEP: bind it to the logged value of
        the same measurement nearest in time (before the result line)."""
        candidates = self.candidates(function, self.mine)
        if not candidates:
            return None
        at_formula = step.symbol == self.steps[0].symbol
        if at_formula:
            chosen = candidates[-1]
            when = f"the last logged {function}() before the result"
        else:
            logged_here = [m.line.number for m in self.mine if m.template.symbol == step.symbol]
            after = max(logged_here, default=0)
            later = [c for c in candidates if position(c) > after]
            chosen = later[0] if later else candidates[0]
            when = f"the first logged {function}() after {step.symbol} ran"
        value = chosen.value
        per_rank: list[tuple[str, float]] = []
        how = "measured"
        why = (
            f"{name} = {function}(...) at {step.file}:{step.line} ({step.symbol}); not printed "
            f"there: {when}, {chosen.template.literal.strip()!r} ({chosen.where})"
        )
        if chosen.derived:
            how = "derived"
            why += f", derived as {chosen.derived}"
        if chosen.loose:
            why += " (a line another build printed: read by its label)"
        if self.takes_minimum(function, step.code) and len(self.ranks) > 1:
            per_rank = self.across_ranks(chosen, function)
            if per_rank:
                value = min(v for _, v in per_rank)
                why += f"; the code takes the minimum across ranks ({len(per_rank)} ranks)"
        return Binding(name, value, how, why, chosen, tuple(per_rank), function, step)

    def candidates(self, function: str, matched: list[Matched]) -> list[Observation]:
        found = []
        for line in matched:
            if line.line.number >= self.result_line:
                break
            for observation in line.observations:
                hole = observation.hole
                if observation.value is not None and hole.simple and function in hole.measured_by:
                    found.append(observation)
        return sorted(found, key=position)

    def across_ranks(self, chosen: Observation, function: str) -> list[tuple[str, float]]:
        """The same logged measurement on every rank (the Nth of its template on each)."""
        mine = [
            o
            for o in self.candidates(function, self.mine)
            if o.template == chosen.template
            and o.hole.expr == chosen.hole.expr
            and bool(o.derived) == bool(chosen.derived)
        ]
        nth = mine.index(chosen) if chosen in mine else 0
        out: list[tuple[str, float]] = []
        for rank in self.ranks:
            values = [
                o.value
                for m in self.matched
                if m.line.rank == rank and m.template == chosen.template
                for o in m.observations
                if o.hole.expr == chosen.hole.expr and bool(o.derived) == bool(chosen.derived)
            ]
            if len(values) > nth and values[nth] is not None:
                out.append((rank, values[nth]))
        return out

    def takes_minimum(self, function: str, call_code: str) -> bool:
        """FUNCTION reduces with a MIN across processes when a keyword the call passes says so
        (read from FUNCTION's own source)."""
        body = self.function_source(function)
        if not body or "MIN" not in body:
            return False
        call = call_code[call_code.find(function) :]
        for keyword in re.findall(r"[(,]\s*(\w+)\s*=(?!=)", call):
            if re.search(rf"\b{keyword}\s*=\s*(False|None|0)\b", call):
                continue
            for guard in re.finditer(rf"^(?P<indent>[ \t]*)if\s+{keyword}\b.*$", body, re.M):
                if "ReduceOp.MIN" in guarded_block(body, guard.end(), len(guard["indent"])):
                    return True
        return False

    def function_source(self, function: str) -> str:
        return self.function_at(function)[1]

    def function_at(self, function: str) -> tuple[str, str]:
        """The file defining FUNCTION (the first, in path order) and its source there."""
        for path in self.session.facts.mentioning(f"def {function}("):
            text = self.session.snapshot.read(path).decode("utf-8", "replace")
            start = text.find(f"def {function}(")
            body = text.find(":\n", start)  # past the signature, which may span lines
            end = re.compile(r"^\S", re.M).search(text, max(body, start) + 2)
            return path, text[start : end.start() if end else len(text)]
        return "", ""

    def setting(self, name: str, step: Step) -> Binding:
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
        first = self.first_free()
        source = self.session.snapshot.read(step.file)
        klass = step.symbol.split(".")[0]
        return compute_default(source, step.file, klass, step.name, self.lines, first, self.given)

    def first_free(self) -> Observation | None:
        """The first free memory the log reports (before anything was loaded)."""
        measured = [
            o
            for m in self.mine
            for o in m.observations
            if o.value is not None and o.hole.simple and o.hole.measured_by
        ]
        return min(measured, key=position, default=None)

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

    def logged_cap(self, observed: Observation) -> Cap | None:
        """A setting of this start named like the result (its words all in the result's
        name: `max_total_tokens` for `max_total_num_tokens`) whose value is the logged result:
        the count is that cap, not the formula's."""
        words = {w for name in (observed.hole.expr, *self.sinks) for w in words_of(name)}
        for line in self.lines:
            for found in SETTING_VALUE.finditer(line.message):
                key = found["flag"] or found["field"] or found["key"]
                if not words_of(key) <= words or to_float(found["v"]) != observed.value:
                    continue
                if found["field"]:
                    printed = owner(line.message, found.start())
                    if not printed or not printed[0].isupper():
                        continue
                    key = f"{printed}.{key}"
                elif found["key"]:
                    printed = owner(line.message, found.start())
                    if not printed:
                        continue  # a dict of settings is printed with its label
                    key = f"{printed}[{key!r}]"
                return Cap(key, float(found["v"]), line.number)
        return None

    # -- what the log reports as the result -----------------------------------------------------

    def find_observed(self) -> list[Observation]:
        """Lines printing the result: a hole that reads a sink, or a name that carries the
        sink's value onwards (found by walking the flow graph forward from the spine's end)."""
        carried = self.carriers()
        found: list[Observation] = []
        for matched in self.mine:
            for observation in matched.observations:
                hole = observation.hole
                if observation.value is None or not hole.simple or observation.derived:
                    continue
                tail = hole.expr.rsplit(".", 1)[-1]
                if tail in self.sinks or (observation.template.symbol, tail) in carried:
                    found.append(observation)
                    break
        return found

    def after_formula(self) -> list[int]:
        """Log lines printed, in a function of the spine, below the spine's step there: the
        formula has run by then (the pool is built after it is sized)."""
        below = {}
        for step in self.steps:
            below.setdefault(step.symbol, (step.file, step.line))
        return [
            m.line.number
            for m in self.mine
            if (m.template.file, m.template.symbol) in {(f, s) for s, (f, _) in below.items()}
            and m.template.line > below[m.template.symbol][1]
        ]

    def carriers(self) -> set[tuple[str, str]]:
        """(function, name) of the places the result is copied to, a few steps onwards."""
        # From every step after the last formula: the value may leave the spine (into the
        # pool that logs it) before the spine's end.
        last = max((i for i, s in enumerate(self.steps) if s.kind == "formula"), default=0)
        frontier = [s.id for s in self.steps[last:]]
        seen = set(frontier)
        carried: set[tuple[str, str]] = set()
        for _ in range(FORWARD_DEPTH):
            following = []
            for step_id in frontier:
                for edge in self.graph.edges(step_id, forward=True):
                    if edge.dst in seen or len(seen) >= FORWARD_STEPS:
                        continue
                    seen.add(edge.dst)
                    step = self.graph.step(edge.dst)
                    if step.kind in ("param", "local_assign", "attr_write", "field", "call_arg"):
                        carried.add((step.symbol, step.name))
                        following.append(edge.dst)
            frontier = following
        return carried

    def timeline(self) -> list[Observation]:
        """Every logged measurement of the functions the formula's variables were bound to."""
        functions = {
            f
            for b in self.bindings.values()
            if b.observation is not None and b.how in ("measured", "derived")
            for f in b.observation.hole.measured_by
        }
        out = []
        for matched in self.mine:
            for observation in matched.observations:
                hole = observation.hole
                if (
                    observation.value is not None
                    and hole.simple
                    and functions & set(hole.measured_by)
                ):
                    out.append(observation)
        return sorted(out, key=position)


def settings_printed(message: str, field_name: str) -> list[re.Match[str]]:
    """Where MESSAGE gives FIELD_NAME a value: `name=0.88` in a printed object, or
    `'name': 0.88` in a printed dict."""
    return list(
        re.finditer(
            rf"(?:\b(?P<key>{field_name})=|['\"]{field_name}['\"]:\s*)(?P<v>[^,)}}\s]+)",
            message,
        )
    )


def words_of(name: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", name.rsplit(".", 1)[-1].lower()) if w}


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


def guarded_block(text: str, start: int, indent: int) -> str:
    """The lines after START indented deeper than INDENT (the body of an `if`)."""
    block: list[str] = []
    for line in text[start:].splitlines()[1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        block.append(line)
    return "\n".join(block)


def position(observation: Observation) -> float:
    # A derived value was measured before the line that lets us derive it.
    return observation.line.number - (0.5 if observation.derived else 0.0)


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
