"""The callees of one caller and the callers of one function, on demand, by the rules of the
call graph (tracer/index/calls/rules.py, values.py, and objects.py as statements.py applies
it), which `sgtrace callgraph` applies to every scope of the tree (tracer/analyses/callgraph.py).
`export --scope calls` draws from here.

Each edge carries its call line and its confidence: at `MIN_CONFIDENCE` (0.8) or more it is
an edge of the call graph; below, it is the same rule's guess (a name-only one, or what a
callee that may also hold a value nothing names holds), which the call graph leaves out (the
export draws it dashed and says so).

A query reads only the files that may hold what it asks: those grepped by name, and those the
values it follows come from (a function's returns, the calls of a function whose parameter it
reads, the class that stores an attribute). The functions around a chain of SGLang 0.5.9, two
levels each way, take about a third of a second; the whole call graph several seconds. Values
are followed as the whole graph follows them (`ValueStatements`), through the calls found
here: a parameter holds what the calls found by name pass. So a query finds a subset of the
whole graph's edges, never another edge:
- the callees of a function or module are the whole graph's for that scope, except that what
  a parameter holds comes from the callers found by name (below) only, where the whole graph
  also has the callers found by value and through other parameters, until nothing is new;
- the callers of a function are the calls that name it (its name, an alias it is imported
  as; for an `__init__`, the classes it constructs) and run it by the call graph's rules (a
  call of a name bound by assignment runs what the name holds where it is called), the
  definitions it decorates, the calls of a parameter it is given for (by a decorator that
  wraps it, or as an argument written by name: one step, not when passed on again), and the
  calls handing it to code outside the tree. Left out: calls through values that hold it
  (`g = f; g()`, `self.hook = f`, `{"k": f}["k"]()`, `for g in [f]: g()`), the calls of a
  decorated function that run the wrapper its decorator returns (they are the wrapper's
  callers, not found from its side), `for` loops calling `__iter__` and `__next__`, and
  `raise E` running `E.__init__`.

One caveat, the value follower's: a question met again while it is being answered (a value
that flows round a cycle: a function passing its parameter back to itself) adds nothing there,
and questions deeper than 24 are not followed; so an answer may lack what a cycle adds, and
the whole graph and a query may enter the cycle at different points. The subset is checked on
snippets (tests/unit/test_callgraph_objects.py) and on the chain of SGLang 0.5.9 above, three
levels each way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from tracer.extract.facts import MODULE_SCOPE, Arg, Call, FunctionDef
from tracer.index.calls.objects import Objects
from tracer.index.calls.rules import MIN_CONFIDENCE, MIN_GUESS, Callee, CallRules, caller_name
from tracer.index.calls.statements import ValueStatements
from tracer.index.calls.values import FunctionValues
from tracer.session import Session


@dataclass(frozen=True, slots=True)
class CallEdge:
    """CALLER runs CALLEE at LINE: a call, or a decorator applied to the definition there."""

    caller: str
    callee: str
    line: int
    confidence: float

    @property
    def kept(self) -> bool:
        """Is it an edge of the call graph (else a guess)?"""
        return self.confidence >= MIN_CONFIDENCE


@dataclass(frozen=True, slots=True)
class Place:
    """Where a function, class or module of the tree is defined."""

    path: str
    scope: str  # its qualname; MODULE_SCOPE for a module
    line: int  # 0 for a module


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    """The callers and callees reached from some functions, and the call edges met."""

    levels: dict[str, int]  # each name reached -> its distance from the start (0)
    edges: tuple[CallEdge, ...]  # one per call site (twice if met from both its ends)


class CallQueries:
    """Callers and callees of single functions; remembers what it found."""

    def __init__(self, session: Session) -> None:
        self.index = session.index
        self.facts = session.facts
        self.graph = session.graph
        self.rules = CallRules(session.index, session.facts, session.graph.resolver)
        self.values = FunctionValues(self.rules, whole=False)
        # Values are followed as the call graph follows them, through the calls found here.
        self.objects = Objects(self.rules, self.values, self.sites)
        self.statements = ValueStatements(self.rules, self.values, self.objects)
        self.named: dict[str, list[tuple[str, Call, float]]] = {}
        self.decorations_in: dict[str, list[tuple[str, str, int]]] = {}

    # -- names and places ----------------------------------------------------------------------

    @cached_property
    def module_paths(self) -> dict[str, str]:
        return {module: path for path, module in self.index.module_of.items()}

    def place(self, name: str) -> Place | None:
        """Where NAME is defined; None outside the tree."""
        found = self.index.functions.get(name) or self.index.classes.get(name)
        if found is not None:
            return Place(found[0], found[1].qualname, found[1].line)
        path = self.module_paths.get(name)
        return Place(path, MODULE_SCOPE, 0) if path is not None else None

    def scope_name(self, path: str, symbol: str) -> str:
        """The function or class SYMBOL (a step's symbol in PATH) lies in, innermost first,
        else the module."""
        module = self.index.module_of[path]
        scope = symbol
        while scope and scope != MODULE_SCOPE:
            name = f"{module}.{scope}"
            if name in self.index.functions or name in self.index.classes:
                return name
            scope = scope.rpartition(".")[0]
        return module

    # -- callees -------------------------------------------------------------------------------

    def callees(self, name: str) -> list[CallEdge]:
        """What the code of NAME (a function, a lambda, a module's own code) runs, in call
        order, then its decorators applied, its `for` loops and its `raise`s. A class body
        calls nothing: its calls are the function's or module's around it, as in the call
        graph."""
        place = self.place(name)
        if place is None or name in self.index.classes:
            return []
        path, scope = place.path, place.scope
        rows = self.facts.rows(path)
        flows = self.facts.flows(path)
        found = []
        for call_id in range(len(flows.calls)):
            if rows.call_head(call_id)[0] == scope:
                call = flows.calls[call_id]
                for callee in self.runs(path, call):
                    found.append(CallEdge(name, callee.name, call.line, callee.confidence))
        for caller, decorator, line in self.decorations(path):
            if caller == name:
                found.append(CallEdge(name, decorator, line, 1.0))
        for index in rows.assigns_by_scope.get(scope, ()):
            assign = flows.assigns[index]
            iterated = self.rules.iteration(path, assign)
            if self.statements.loops(assign, iterated):
                iterated = sorted(self.statements.iterated(path, assign))
            for method in iterated:
                found.append(CallEdge(name, method, assign.line, 1.0))
        for raised in flows.raises:
            if raised.scope == scope and self.statements.names_class(raised):
                for init in sorted(self.statements.raised(path, raised)):
                    found.append(CallEdge(name, init, raised.line, 1.0))
        return found

    def runs(self, path: str, call: Call) -> list[Callee]:
        """What CALL runs, as the call graph has it (`ValueStatements`): the rules' callees
        (a decorated function's wrapper for the function), or what its callee may hold by
        value; the functions it hands to code outside the tree; for a call of a parameter,
        what the callers found by name pass for it. The guesses (the rules' and the values')
        stay beside, below `MIN_CONFIDENCE`."""
        found = self.named_by_rules(path, call)
        named = {name for name, confidence in found.items() if confidence >= MIN_CONFIDENCE}
        statements = self.statements
        if statements.follows(path, call, named):
            guesses = {name: c for name, c in found.items() if c < MIN_CONFIDENCE}
            guesses |= dict.fromkeys(statements.guessed(path, call), MIN_GUESS)
            found = guesses | {c.name: c.confidence for c in statements.runs(path, call, named)}
        elif statements.hands_out(call, named):
            found.update(dict.fromkeys(statements.handed_out(path, call), 1.0))
        owner = self.values.parameter_owner(path, call)
        if owner is not None:
            for name in self.values.passed(owner, call.callee, self.sites, frozenset()):
                found[name] = 1.0
        return [Callee(name, found[name]) for name in sorted(found)]

    def named_by_rules(self, path: str, call: Call) -> dict[str, float]:
        """What the rules name for CALL (a decorated function's wrapper for the function),
        each with its confidence."""
        found: dict[str, float] = {}
        for callee in self.rules.runs(path, call):
            name = self.values.wrapper_of(callee.name)
            found[name] = max(found.get(name, 0.0), callee.confidence)
        return found

    def decorations(self, path: str) -> list[tuple[str, str, int]]:
        found = self.decorations_in.get(path)
        if found is None:
            found = self.decorations_in[path] = self.rules.decorations(path)
        return found

    # -- callers -------------------------------------------------------------------------------

    def callers(self, function: str) -> list[CallEdge]:
        """The calls and definitions that run FUNCTION: the calls naming it, the definitions
        it decorates, the calls of a parameter it is given for, the calls handing it to code
        outside the tree."""
        if function not in self.index.functions:
            return []
        found = [
            CallEdge(caller_name(self.index.module_of[path], call.scope), function, call.line, c)
            for path, call, c in self.named_calls(function)
        ]
        found += self.decorating(function)
        found += self.parameter_calls(function)
        found += self.handing(function)
        return found

    def sites(self, function: str) -> list[tuple[str, Call]]:
        """The calls found by name that run FUNCTION, as the call graph keeps them: what
        `FunctionValues.passed` reads a parameter's values from."""
        return [(path, call) for path, call, c in self.named_calls(function) if c >= MIN_CONFIDENCE]

    def named_calls(self, function: str) -> list[tuple[str, Call, float]]:
        """(path, call, confidence) for each call naming FUNCTION that runs it, as the call
        graph decides (a call it follows by value runs FUNCTION if the value may hold it)."""
        found = self.named.get(function)
        if found is not None:
            return found
        found = self.named[function] = []
        paths, words = self.calling_files(function)
        for path in paths:
            rows = self.facts.rows(path)
            names = words | self.graph.renamed(path)
            calls = self.facts.flows(path).calls
            for call_id in sorted({i for word in names for i in rows.callees.get(word, ())}):
                call = calls[call_id]
                named = self.named_by_rules(path, call)
                if function in named and self.runs_named(path, call, function, named):
                    found.append((path, call, named[function]))
        return found

    def runs_named(self, path: str, call: Call, function: str, by_rules: dict[str, float]) -> bool:
        """Does CALL, for which the rules name FUNCTION (BY_RULES: what they name, with
        confidences), run it as the call graph decides? A guess is kept as one (the export
        draws it dashed)."""
        if by_rules[function] < MIN_CONFIDENCE:
            return True
        named = {name for name, c in by_rules.items() if c >= MIN_CONFIDENCE}
        if not self.statements.follows(path, call, named):
            return True
        return any(callee.name == function for callee in self.statements.runs(path, call, named))

    def calling_files(self, function: str) -> tuple[list[str], set[str]]:
        """The files that may call FUNCTION by name and the last names such calls have, as
        the dataflow graph finds callers (`FlowGraph.calling_files`); none for a lambda."""
        if self.index.functions[function][1].is_lambda:
            return [], set()
        return self.graph.calling_files(function)

    def decorating(self, function: str) -> list[CallEdge]:
        """FUNCTION applied as a decorator: called where each definition it decorates is made."""
        name = self.index.functions[function][1].name
        pattern = rb"@(?:\w+\.)*" + re.escape(name.encode()) + rb"\b"
        return [
            CallEdge(caller, function, line, 1.0)
            for path in self.facts.matching(name, pattern)
            for caller, decorator, line in self.decorations(path)
            if decorator == function
        ]

    def parameter_calls(self, function: str) -> list[CallEdge]:
        """The calls of a parameter that run FUNCTION: of a decorator's first parameter where
        the decorator wraps FUNCTION, of a parameter it is passed for by name."""
        found = []
        for owner, parameter in sorted(self.holders(function)):
            if function not in self.values.passed(owner, parameter, self.sites, frozenset()):
                continue
            path = self.index.functions[owner][0]
            module = self.index.module_of[path]
            calls = self.facts.flows(path).calls
            for call_id in self.facts.rows(path).callees.get(parameter, ()):
                call = calls[call_id]
                if call.callee == parameter and self.values.parameter_owner(path, call) == owner:
                    found.append(
                        CallEdge(caller_name(module, call.scope), function, call.line, 1.0)
                    )
        return found

    def holders(self, function: str) -> set[tuple[str, str]]:
        """(function, parameter) pairs that may be given FUNCTION: the first parameter of the
        innermost decorator that wraps it, and each parameter an argument filled with it
        (written by name, or the lambda itself) is for."""
        path, definition = self.index.functions[function]
        found: set[tuple[str, str]] = set()
        applied = self.values.applied(path, definition)[0] if definition.decorators else []
        for decorator, given in applied:
            params = self.index.functions[decorator][1].params
            if given == function and params:
                found.add((decorator, params[0].name))
        if definition.is_lambda:
            return found | self.lambda_argument_holders(path, function, definition)
        for site_path, call, arg in self.passing(function):
            found |= self.filled(site_path, call, arg)
        return found

    def passing(self, function: str) -> list[tuple[str, Call, Arg]]:
        """(path, call, argument) for each argument that names FUNCTION (not a lambda)."""
        definition = self.index.functions[function][1]
        name = definition.name
        # The name then `,` or `)`: an argument (a method's, after its object: `a.step`).
        dot = b"." if definition.class_qualname else b""
        pattern = re.escape(dot + name.encode()) + rb"\s*[,)]"
        return [
            (site_path, call, arg)
            for site_path in self.facts.matching(name, pattern)
            for call in self.facts.flows(site_path).calls
            for arg in call.args
            if names_function(arg, name)
        ]

    def handing(self, function: str) -> list[CallEdge]:
        """FUNCTION handed to code outside the tree (`sorted(xs, key=f)`): called by the
        caller, as the call graph has it."""
        if self.index.functions[function][1].is_lambda:
            return []
        found = []
        for path, call in dict.fromkeys((path, call) for path, call, _ in self.passing(function)):
            named = self.named_by_rules(path, call)
            kept = {name for name, c in named.items() if c >= MIN_CONFIDENCE}
            statements = self.statements
            if statements.follows(path, call, kept) or not statements.hands_out(call, kept):
                continue
            if function in statements.handed_out(path, call):
                caller = caller_name(self.index.module_of[path], call.scope)
                found.append(CallEdge(caller, function, call.line, 1.0))
        return found

    def lambda_argument_holders(
        self, path: str, function: str, definition: FunctionDef
    ) -> set[tuple[str, str]]:
        """The parameters the lambda FUNCTION is for where it is written as an argument."""
        module = self.index.module_of[path]
        scope = self.rules.enclosing_scope(module, definition.qualname)
        found: set[tuple[str, str]] = set()
        for call in self.facts.flows(path).calls:
            if call.scope != scope or not call.line <= definition.line <= call.end_line:
                continue
            for i, lambda_name in self.values.lambda_arguments(path, call).items():
                if lambda_name == function:
                    found |= self.filled(path, call, call.args[i])
        return found

    def filled(self, path: str, call: Call, arg: Arg) -> set[tuple[str, str]]:
        """(function, parameter) for each function of the tree CALL runs whose parameter
        ARG fills, by keyword or by position."""
        found = set()
        for callee in self.rules.runs(path, call):
            if not callee.kept or callee.name not in self.index.functions:
                continue
            definition = self.index.functions[callee.name][1]
            params: list[str] = []
            if arg.keyword is not None:
                params = [p.name for p in definition.params if p.name == arg.keyword]
            elif arg.position is not None:
                at = arg.position + (1 if self.values.binds_self(path, call, definition) else 0)
                params = [definition.params[at].name] if at < len(definition.params) else []
            found |= {(callee.name, param) for param in params}
        return found

    # -- both ways -----------------------------------------------------------------------------

    def around(self, start: list[str], depth: int) -> Neighbourhood:
        """From START, DEPTH levels of callees downward and of callers upward, within the tree
        (functions outside it are left out)."""
        levels = dict.fromkeys(start, 0)
        edges: list[CallEdge] = []
        for upward in (False, True):
            frontier = list(start)
            for distance in range(1, depth + 1):
                found: list[str] = []
                for name in frontier:
                    for edge in self.callers(name) if upward else self.callees(name):
                        other = edge.caller if upward else edge.callee
                        if self.place(other) is None:
                            continue
                        edges.append(edge)
                        if other not in levels:
                            levels[other] = distance
                            found.append(other)
                frontier = found
        self.graph.flush()  # the greps, for the next run (as a trace keeps its own)
        return Neighbourhood(levels, tuple(edges))


def names_function(arg: Arg, name: str) -> bool:
    """Is ARG a function value written by NAME alone (`on_done`, `worker.step`), not called?"""
    if arg.star or arg.value.calls or len(arg.value.refs) != 1:
        return False
    ref = arg.value.refs[0]
    return ref == name or ref.endswith("." + name)
