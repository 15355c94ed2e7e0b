"""The call graph in PyCG's interchange format: `{"caller": ["callee", ...]}`.

Keys are every module (its module-level code is the caller), every function and lambda of
the tree, and every callee. The edges are the rules of tracer/index/calls/rules.py and
values.py, with the values followed where statements.py says (objects.py), applied to every
scope of the tree, keeping what they name at confidence 0.8 and above (`MIN_CONFIDENCE`): the
same rules `sgtrace export --scope calls` asks one function at a time (tracer/analyses/calls/
queries.py). Only the whole tree finds every function passed through a parameter: what a call
of a parameter runs is what all the calls of its function pass, which may be found by value
or through other parameters in turn, so the passes go on until nothing is new. A pass asks
again only the values that read the parameters of a function given new calls since they were
found (tracer/index/calls/answers.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import fields
from functools import partial

from tracer.extract.facts import Assign, Call, Raise
from tracer.index.calls.answers import Key
from tracer.index.calls.objects import Objects
from tracer.index.calls.rules import CallRules, caller_name
from tracer.index.calls.statements import ValueStatements
from tracer.index.calls.values import FunctionValues
from tracer.session import Session
from tracer.store.rows import row_at

# Where an assignment's row holds its operator (rows follow the fields of the dataclass).
ASSIGN_OP = [field.name for field in fields(Assign)].index("op")
# The files whose flows are kept at once: a bound on memory, not on what is found (a file let
# go is read again from the cache when asked again). Every file's flows, facts and rows, held
# at once on a tree of 4,700 files took 1.2 GB of the 1.9 the call graph took; holding 128 to
# 512 files read as many files again (tests/bench/bench_callgraph.py, docs/performance.md).
HELD_FILES = 128


def call_graph(session: Session) -> dict[str, list[str]]:
    """Every module, function, lambda and callee as a key, with its callees sorted, unique."""
    return CallGraph(session).build()


class CallGraph:
    """One pass over the calls of every file, then the passes through parameters."""

    def __init__(self, session: Session, held_files: int = HELD_FILES) -> None:
        self.held_files = held_files
        self.index = session.index
        self.facts = session.facts
        self.rules = CallRules(session.index, session.facts, session.graph.resolver)
        self.values = FunctionValues(self.rules, whole=True)
        # Function -> the calls that run it: (path, call id), each call made when read (the
        # facts of every call of a large tree do not fit in memory beside the rest).
        self.sites: dict[str, list[tuple[str, int]]] = {}
        self.objects = Objects(self.rules, self.values, self.sites_of)
        self.statements = ValueStatements(self.rules, self.values, self.objects)

    def build(self) -> dict[str, list[str]]:
        held = self.facts.held
        self.facts.hold_at_most(self.held_files)
        self.facts.make_flows(sorted(self.index.module_of))  # those not cached, in workers
        try:
            return self.edges()
        finally:
            self.facts.hold_at_most(held)  # the session's other questions keep theirs

    def edges(self) -> dict[str, list[str]]:
        edges: dict[str, set[str]] = {name: set() for name in self.index.functions}
        sites = self.sites
        # Calls the rules name nothing for, and calls of names bound by assignment (which the
        # values follow in order): what their callee may hold runs, else what the rules say.
        # Statements are kept as (path, index), their facts made again when read.
        by_value: list[tuple[str, int, set[str]]] = []
        # `f(...)` where f is a parameter, with the function whose parameter it is.
        through_parameters: list[tuple[str, int, str]] = []
        # Calls that run only code outside the tree, given arguments.
        outward: list[tuple[str, int]] = []
        loops: list[tuple[str, int]] = []  # `for` loops over what the rules do not type
        raises: list[tuple[str, Raise]] = []  # `raise E` where E may name a class
        for path, module in sorted(self.index.module_of.items()):
            edges.setdefault(module, set())
            for call in self.facts.flows(path).calls:
                found = self.statements.named(path, call)
                if self.statements.follows(path, call, found):
                    by_value.append((path, call.id, found))
                    found = set()
                edges.setdefault(caller_name(module, call.scope), set()).update(found)
                for callee in found:
                    sites.setdefault(callee, []).append((path, call.id))
                if self.statements.hands_out(call, found):
                    outward.append((path, call.id))
                owner = self.values.parameter_owner(path, call)
                if owner is not None:
                    through_parameters.append((path, call.id, owner))
            for caller, callee, _ in self.rules.decorations(path):
                edges.setdefault(caller, set()).add(callee)
            for i, assign in self.for_loops(path):
                iterated = self.rules.iteration(path, assign)
                for callee in iterated:
                    edges.setdefault(caller_name(module, assign.scope), set()).add(callee)
                if self.statements.loops(assign, iterated):
                    loops.append((path, i))
            raises += [
                (path, r) for r in self.facts.flows(path).raises if self.statements.names_class(r)
            ]
        # A function passed as an argument runs where the parameter is called; what a call
        # through a parameter runs may itself be called with functions; what a value holds
        # depends on the calls found: until nothing is new.
        seen: set[tuple[str, int, str]] = set()  # (path, call, callee) found by value
        new = True
        dropped: set[Key] | None = None  # the first pass asks every statement
        while new:
            new = False
            for i in due("call", len(by_value), dropped):
                path, call_id, named = by_value[i]
                call = self.call(path, call_id)
                caller = edges[caller_name(self.index.module_of[path], call.scope)]
                runs = self.remembered(("call", i), partial(self.kept_runs, path, call, named))
                for callee in runs:
                    if (path, call.id, callee) not in seen:
                        seen.add((path, call.id, callee))
                        caller.add(callee)
                        self.add_site(callee, path, call)
                        new = True
            new = self.add_by_values(edges, outward, loops, raises, dropped) or new
            for path, call_id, owner in through_parameters:
                call = self.call(path, call_id)
                caller = edges[caller_name(self.index.module_of[path], call.scope)]
                passed = self.values.passed(owner, call.callee, self.sites_of, frozenset())
                for callee in passed - caller:
                    caller.add(callee)
                    self.add_site(callee, path, call)
                    new = True
            # What the parameters of functions given new calls hold may have grown: the
            # answers that read them before are asked again, every other is kept
            # (tracer/index/calls/answers.py); a statement whose answer is kept has its
            # edges already.
            dropped = self.objects.answers.forget()
        self.facts.flush()  # the greps, for the next run (as a trace keeps its own)
        callees = set().union(*edges.values())
        return {name: sorted(edges.get(name, ())) for name in edges.keys() | callees}

    def kept_runs(self, path: str, call: Call, named: set[str]) -> list[str]:
        """What CALL, followed by value, runs as the call graph keeps it (no guess)."""
        return [callee.name for callee in self.statements.runs(path, call, named) if callee.kept]

    def add_site(self, callee: str, path: str, call: Call) -> None:
        """CALL (in PATH) runs CALLEE, found by value or through a parameter."""
        self.sites.setdefault(callee, []).append((path, call.id))
        self.objects.answers.grew(callee)

    def sites_of(self, function: str) -> Iterator[tuple[str, Call]]:
        """The calls found so far that run FUNCTION, with their paths."""
        for path, call_id in self.sites.get(function, ()):
            yield path, self.call(path, call_id)

    def call(self, path: str, call_id: int) -> Call:
        return self.facts.flows(path).calls[call_id]

    def remembered(self, key: tuple[str, int], answer: Callable[[], Iterable[str]]) -> frozenset:
        """What ANSWER finds for one statement (KEY), kept between passes until what it read
        changes (a question of its own: it does not count towards the depth bound)."""
        return self.objects.answers.ask(key, answer, counted=False)

    def for_loops(self, path: str) -> list[tuple[int, Assign]]:
        """The `for` statements of PATH, in order, with their indices (found by their rows:
        the file's other assignments, most of its facts, are not made)."""
        assigns = self.facts.flows(path).assigns
        return [
            (i, assigns[i]) for i in range(len(assigns)) if row_at(assigns, i)[ASSIGN_OP] == "for"
        ]

    def add_by_values(
        self,
        edges: dict[str, set[str]],
        outward: list[tuple[str, int]],
        loops: list[tuple[str, int]],
        raises: list[tuple[str, Raise]],
        dropped: set[Key] | None,
    ) -> bool:
        """Add what follows from values: classes raised, objects iterated over, functions
        handed to code outside the tree (those whose answers were DROPPED, or all when
        None). Is anything new?"""
        statements = self.statements
        found: list[tuple[str, str, str]] = []  # (path, scope, callee)
        for i in due("handed", len(outward), dropped):
            path, call_id = outward[i]
            call = self.call(path, call_id)
            runs = self.remembered(("handed", i), partial(statements.handed_out, path, call))
            found += [(path, call.scope, f) for f in runs]
        for i in due("raised", len(raises), dropped):
            path, raised = raises[i]
            runs = self.remembered(("raised", i), partial(statements.raised, path, raised))
            found += [(path, raised.scope, f) for f in runs]
        for i in due("loop", len(loops), dropped):
            path, at = loops[i]
            assign = self.facts.flows(path).assigns[at]
            runs = self.remembered(("loop", i), partial(statements.iterated, path, assign))
            found += [(path, assign.scope, f) for f in runs]
        new = False
        for path, scope, callee in found:
            caller = edges.setdefault(caller_name(self.index.module_of[path], scope), set())
            new = new or callee not in caller
            caller.add(callee)
        return new


def due(kind: str, count: int, dropped: set[Key] | None) -> Iterable[int]:
    """The statements of KIND (COUNT of them) a pass asks, in order: every one in the first
    (DROPPED is None), else those whose remembered answers were DROPPED (keys `(KIND, i)`)."""
    if dropped is None:
        return range(count)
    return sorted(key[1] for key in dropped if key[0] == kind)
