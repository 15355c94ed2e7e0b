"""Which statements the call graph answers by value, and how the value follower's answer
(tracer/index/calls/objects.py) and the rules' (rules.py) combine: the one place where
`sgtrace callgraph` (tracer/analyses/callgraph.py) and the on-demand queries
(tracer/analyses/calls/queries.py) decide it, so that both follow the same rules.

- A call the rules name nothing kept for, whose callee may hold a function found by value (a
  name, an expression, an attribute named like a function or class of the tree), and a call of
  a name bound by assignment: what its callee may hold runs; what the rules name when that is
  nothing, or when the callee may hold a value nothing names. When the rules name nothing and
  the callee may also hold a value nothing names, what it holds runs only as a guess
  (`GUESS`), which the call graph leaves out and the export draws dashed.
- A call that runs only code outside the tree and passes a name that may be a function of the
  tree: the functions and methods of the tree it passes are called by the caller (PyCG's
  convention: `map(f, xs)`, `sorted(xs, key=f)`).
- `raise E` where E may name a class: E's `__init__` runs.
- `for x in v` the rules do not type, when a class of the tree defines `__iter__` or
  `__next__`: those of the instances v may hold run.

The tests on names come first and are cheap: the tree's calls are many, and most call methods
of objects from outside.
"""

from __future__ import annotations

from functools import cached_property

from tracer.extract.facts import Assign, Call, Raise
from tracer.index.calls.obj import UNKNOWN
from tracer.index.calls.objects import Objects
from tracer.index.calls.rules import Callee, CallRules, callees_of, named_target
from tracer.index.calls.values import FunctionValues
from tracer.index.targets import CallTarget


class ValueStatements:
    """The statements followed by value, and what each runs."""

    def __init__(self, rules: CallRules, values: FunctionValues, objects: Objects) -> None:
        self.rules = rules
        self.index = rules.index
        self.values = values
        self.objects = objects

    # -- calls ---------------------------------------------------------------------------------

    def named(self, path: str, call: Call) -> set[str]:
        """What the rules name for CALL and keep (a decorated function's wrapper for it)."""
        return {self.values.wrapper_of(c.name) for c in self.rules.runs(path, call) if c.kept}

    def follows(self, path: str, call: Call, named: set[str]) -> bool:
        """Is what CALL runs found by value, NAMED being what the rules name for it?"""
        return (not named and self.may_hold(call)) or self.assigned_name(path, call)

    def runs(self, path: str, call: Call, named: set[str]) -> list[Callee]:
        """What CALL (one that `follows`) runs, sorted: `held_targets` by the names they
        run, else NAMED, certain."""
        found = callees_of(self.held_targets(path, call, named), self.rules.target_name)
        return found or [Callee(name, 1.0) for name in sorted(named)]

    def held_targets(self, path: str, call: Call, named: set[str]) -> list[CallTarget]:
        """What CALL (one that `follows`) runs by what its callee may hold
        (`Objects.value_targets`: guesses when it may also hold a value nothing names); none
        when NAMED (what the rules name for it) stands: when the callee may hold a value
        nothing names, or holds nothing found."""
        held = self.objects.callee_objects(path, call)
        if named and UNKNOWN in held:
            return []
        return self.objects.value_targets(held)

    def targets(self, path: str, call: Call) -> list[CallTarget]:
        """What CALL runs, as the call graph decides it (`named`, then `follows`: `runs`),
        each a target: the one answer the chains and `sgtrace callgraph` share for a call
        (NAMED by function name, certain, where nothing held is found)."""
        named = self.named(path, call)
        if self.follows(path, call, named):
            found = self.held_targets(path, call, named)
            if found:
                return found
        return [named_target(self.index, name, call.callee) for name in sorted(named)]

    def guessed(self, path: str, call: Call) -> set[str]:
        """What CALL (one that `follows`) may run by a guess: a value chosen by a string that
        may be several (`getattr(self, name)()` where name may be several constants), which
        the call graph leaves out and the export draws dashed."""
        names = map(self.rules.target_name, self.guessed_targets(path, call))
        return {name for name in names if name is not None}

    def guessed_targets(self, path: str, call: Call) -> list[CallTarget]:
        """`guessed` as targets, each a guess (`GUESS`), for the chains; where the callee
        holds nothing known, the constructors of what its result is declared to be."""
        held = self.objects.callee_objects(path, call)
        found = self.objects.guessed_targets(held)
        if not found and held <= {UNKNOWN}:
            found = self.objects.declared_result(path, call)
        return found

    def may_hold(self, call: Call) -> bool:
        """May what CALL's callee holds be found by value: a name, an expression, or an
        attribute named like a function or class of the tree?"""
        return "." not in call.callee or call.callee.rpartition(".")[2] in self.member_names

    def assigned_name(self, path: str, call: Call) -> bool:
        """Is CALL's callee a plain name that assignments bind in its scope or around it?"""
        if not call.callee or "." in call.callee:
            return False
        return bool(self.rules.assignments(path, call.scope, call.callee))

    # -- functions handed to code outside the tree ---------------------------------------------

    def hands_out(self, call: Call, named: set[str]) -> bool:
        """Does CALL, which runs NAMED, run only code outside the tree and pass a name that
        may be a function of the tree?"""
        if not named or named & self.index.functions.keys():
            return False
        return any(
            len(arg.value.refs) == 1
            and not arg.value.calls
            and arg.value.refs[0].rpartition(".")[2] in self.member_names
            for arg in call.args
        )

    def handed_out(self, path: str, call: Call) -> set[str]:
        """The functions of the tree CALL (one that `hands_out`) passes: called by the caller."""
        return self.objects.handed_out(path, call)

    # -- raises and loops ----------------------------------------------------------------------

    def names_class(self, raised: Raise) -> bool:
        """May `raise E` (RAISED) raise a class of the tree by name?"""
        refs = raised.value.refs
        return not raised.value.calls and len(refs) == 1 and bool(self.member_names)

    def raised(self, path: str, raised: Raise) -> set[str]:
        """What `raise E` runs (one that `names_class`): E's `__init__`, when E is a class."""
        return self.objects.raised(path, raised)

    def loops(self, assign: Assign, iterated: list[str]) -> bool:
        """Is the `for` statement ASSIGN, whose rules' iteration runs ITERATED, followed by
        value?"""
        return assign.op == "for" and not iterated and self.iterables

    def iterated(self, path: str, assign: Assign) -> set[str]:
        """What a `for` loop (one that `loops`) runs: `__iter__`, `__next__` of what it
        iterates over."""
        return self.objects.iterated(path, assign)

    # -- what the tree names -------------------------------------------------------------------

    @cached_property
    def member_names(self) -> frozenset[str]:
        """The last names of the tree's functions and classes (the resolver's)."""
        return self.rules.resolver.member_names

    @cached_property
    def iterables(self) -> bool:
        """Does a class of the tree define `__iter__` or `__next__`?"""
        return any(name.endswith(("__iter__", "__next__")) for name in self.index.functions)
