"""The call graph in PyCG's interchange format: `{"caller": ["callee", ...]}`.

Keys are every module (its module-level code is the caller), every function and lambda of
the tree, and every callee. The edges are the rules of tracer/analyses/calls/rules.py and
values.py applied to every scope of the tree, keeping what they name at confidence 0.8 and
above (`MIN_CONFIDENCE`): the same rules `sgtrace export --scope calls` asks one function at a
time (tracer/analyses/calls/queries.py). Only the whole tree finds every function passed
through a parameter: what a call of a parameter runs is what all the calls of its function
pass, which may be found through other parameters in turn, so the passes go on until nothing
is new.
"""

from __future__ import annotations

from tracer.analyses.calls.objects import Objects
from tracer.analyses.calls.rules import CallRules, caller_name
from tracer.analyses.calls.values import FunctionValues
from tracer.extract.facts import Call
from tracer.session import Session


def call_graph(session: Session) -> dict[str, list[str]]:
    """Every module, function, lambda and callee as a key, with its callees sorted, unique."""
    return CallGraph(session).build()


class CallGraph:
    """One pass over the calls of every file, then the passes through parameters."""

    def __init__(self, session: Session) -> None:
        self.index = session.index
        self.facts = session.facts
        self.rules = CallRules(session)
        self.values = FunctionValues(self.rules, whole=True)
        self.sites: dict[str, list[tuple[str, Call]]] = {}  # function -> the calls that run it
        self.objects = Objects(self.rules, self.values, lambda f: self.sites.get(f, ()))

    def build(self) -> dict[str, list[str]]:
        edges: dict[str, set[str]] = {name: set() for name in self.index.functions}
        sites = self.sites
        # Calls the rules name nothing for: what their callee may hold runs.
        by_value: list[tuple[str, Call]] = []
        # `f(...)` where f is a parameter, with the function whose parameter it is.
        through_parameters: list[tuple[str, Call, str]] = []
        for path, module in sorted(self.index.module_of.items()):
            edges.setdefault(module, set())
            for call in self.facts.flows(path).calls:
                runs = self.rules.runs(path, call)
                found = {self.values.wrapper_of(c.name) for c in runs if c.kept}
                if not found:
                    by_value.append((path, call))
                edges.setdefault(caller_name(module, call.scope), set()).update(found)
                for callee in found:
                    sites.setdefault(callee, []).append((path, call))
                owner = self.values.parameter_owner(path, call)
                if owner is not None:
                    through_parameters.append((path, call, owner))
            for caller, callee, _ in self.rules.decorations(path):
                edges.setdefault(caller, set()).add(callee)
            for assign in self.facts.flows(path).assigns:
                for callee in self.rules.iteration(path, assign):
                    edges.setdefault(caller_name(module, assign.scope), set()).add(callee)
        # A function passed as an argument runs where the parameter is called; what a call
        # through a parameter runs may itself be called with functions; what a value holds
        # depends on the calls found: until nothing is new.
        new = True
        while new:
            new = False
            self.objects.forget()
            for path, call in by_value:
                caller = edges[caller_name(self.index.module_of[path], call.scope)]
                for callee in self.objects.runs(path, call):
                    if callee not in caller:
                        caller.add(callee)
                        sites.setdefault(callee, []).append((path, call))
                        new = True
            for path, call, owner in through_parameters:
                caller = edges[caller_name(self.index.module_of[path], call.scope)]
                passed = self.values.passed(
                    owner, call.callee, lambda f: sites.get(f, ()), frozenset()
                )
                for callee in passed - caller:
                    caller.add(callee)
                    sites.setdefault(callee, []).append((path, call))
                    new = True
        callees = set().union(*edges.values())
        return {name: sorted(edges.get(name, ())) for name in edges.keys() | callees}
