"""Binding the variables of a formula to a server's log, walking back from the formula along
the flow graph to where the log shows the value: printed where it is computed, a setting
(`settings.py`: printed with its class, given on the command line, computed by the code), a
measurement (`measured.py`: logged nearest in time, the minimum across ranks where the code takes
it), or a value a function logs as it returns. A mixin of the explain view's Binder, which holds
the log and the chain."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracer.analyses.explain.arith import first_statement, statement_value
from tracer.analyses.explain.binding import Binding
from tracer.analyses.explain.match import Matched, Observation
from tracer.analyses.explain.measured import Measurements
from tracer.analyses.explain.settings import StartSettings
from tracer.analyses.explain.templates import calls_in
from tracer.graph.steps import Step

if TYPE_CHECKING:
    from tracer.graph.flow import FlowGraph

PASS_THROUGH = frozenset({"call_arg", "param", "field", "attr_read", "sink", "use", "cli_flag"})
MAX_BACK = 14  # steps walked back from a formula variable to where its value is measured
TRUSTED = 0.8  # the confidence of an edge a value is followed back along


Neutral = tuple[float, str]  # a value that changes the value on its way least, and why


class LogBindings:
    """What the Binder holds that binding reads."""

    graph: FlowGraph
    steps: list[Step]  # the formula's part of the spine, to the sink
    mine: list[Matched]  # the explained rank's lines, and those without a rank
    given: dict[str, float]
    bindings: dict[str, Binding]
    result_line: int
    settings: StartSettings  # the start's settings
    measurements: Measurements  # the start's measurements

    # -- binding a variable --------------------------------------------------------------------

    def bind(
        self, name: str, at: Step, record: bool = True, neutral: Neutral | None = None
    ) -> Binding:
        """NAME's binding at the step AT (RECORD: kept for the explanation). NEUTRAL: what
        NAME does to the value on its way where it changes it least (a term added or taken
        away: 0; the step of a rounding `x // n * n`: 1), taken when the log cannot give it,
        and said so."""
        known = self.bindings.get(name)
        if known is not None and (known.value is not None or neutral is None):
            return known
        binding = self.find_binding(name, at)
        if binding.value is None and neutral is not None:
            value, why = neutral
            binding = Binding(name, value, "assumed", f"{binding.why}; {why}")
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
            setting = self.settings.binding(name, step)
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
            at_formula = step.symbol == self.steps[0].symbol
            measured = self.measurements.measured(name, step, function, at_formula)
            if measured is not None:
                return measured
        for function in sorted(calls):
            returned = self.measurements.returned(name, step, function)
            if returned is not None:
                return returned
        return None

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
