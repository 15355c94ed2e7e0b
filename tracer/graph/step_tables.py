"""The tables one file's steps fill (`StepTables`): the steps, what each reads, what each
binds, the steps of each call's arguments, a function's returns... Each is a `Demanded` table:
a query that reads a key asks the file's `Demands` first to build the units the key depends
on. Lists that several units fill are kept in the order a whole-file build gives."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tracer.extract.facts import Call
from tracer.graph.demand import ALL, Demanded, Whole
from tracer.graph.steps import Step, StepRow
from tracer.index.targets import CallTarget

Rank = tuple[int, ...]  # a step's place in the order a whole-file build makes steps in


@dataclass(slots=True)
class Read:
    """A step reading `base.attr` (base "" for a plain name)."""

    step: str
    scope: str
    base: str
    line: int


class Steps(Whole[str, Step]):
    """A file's steps by id: each kept as the builder's StepRow until first read, then as its
    Step (the table gives Steps only)."""

    __slots__ = ()

    def __getitem__(self, key: object) -> Step:
        found = dict.get(self, key)
        if found is None:
            self.demand(key)
            found = dict.get(self, key)
            if found is None:
                raise KeyError(key)
        if type(found) is StepRow:
            found = self[key] = found.step()  # type: ignore[index]
        return found  # type: ignore[no-any-return]

    def get(self, key: object, default: Any = None) -> Any:
        found = dict.get(self, key)
        if found is None:
            self.demand(key)
            found = dict.get(self, key, default)
        if type(found) is StepRow:
            found = self[key] = found.step()  # type: ignore[index]
        return found

    def made(self) -> None:
        """Every step held so far as its Step."""
        rows = [(key, row) for key, row in dict.items(self) if type(row) is StepRow]
        for key, row in rows:
            self[key] = row.step()

    def values(self) -> Any:
        self.demand(ALL)
        self.made()
        return dict.values(self)

    def items(self) -> Any:
        self.demand(ALL)
        self.made()
        return dict.items(self)

    def held_values(self) -> Any:  # type: ignore[override]
        self.made()
        return dict.values(self)

    def held_items(self) -> Any:  # type: ignore[override]
        self.made()
        return dict.items(self)

    def held(self, key: object, default: Any = None) -> Any:  # type: ignore[override]
        found = dict.get(self, key, default)
        if type(found) is StepRow:
            found = self[key] = found.step()
        return found


class Demands(Protocol):
    """What builds the units a key of each table depends on (`ALL`: every unit)."""

    def by_step(self, step_id: object) -> None: ...

    def by_scope(self, key: object) -> None: ...

    def by_local_read(self, key: object) -> None: ...

    def by_attr_read(self, attr: object) -> None: ...

    def by_function(self, qualname: object) -> None: ...

    def by_call(self, call_id: object) -> None: ...

    def by_target(self, call_id: object) -> None: ...

    def by_flag(self, dest: object) -> None: ...


class StepTables:
    """One file's steps and the lookup tables that connect them, filled unit by unit."""

    def __init__(self, calls: Sequence[Call], flag_generators: set[str], demands: Demands) -> None:
        self.calls = calls
        by_step, by_scope, by_call = demands.by_step, demands.by_scope, demands.by_call
        self.steps = Steps(by_step)
        self.scope_of: Demanded[str, str] = Whole(by_step)
        # What each step reads: plain refs, and the resolved calls whose results it takes.
        self.refs: Demanded[str, tuple[str, ...]] = Whole(by_step)
        # Refs a step reads only as arguments of calls we cannot see into (`f(gpu_id)`).
        self.opaque: Demanded[str, frozenset[str]] = Whole(by_step)
        self.results: Demanded[str, tuple[int, ...]] = Whole(by_step)
        self.bound: Demanded[str, str] = Whole(by_step)  # assignment step -> target path
        # Tuple positions: of a target in `a, b = ...`, of a value in `return a, b`.
        self.position: Demanded[str, int] = Whole(by_step)
        # A class-body field's assignment (`name = value`): the number of its row.
        self.field_value: Demanded[str, int] = Whole(by_step)
        self.local_defs: Demanded[tuple[str, str], list[str]] = Whole(by_scope)
        self.local_reads: Demanded[tuple[str, str], list[str]] = Demanded(demands.by_local_read)
        self.attr_reads: Demanded[str, list[Read]] = Demanded(demands.by_attr_read)
        self.returns: Demanded[str, list[str]] = Whole(demands.by_function)
        self.consumers: Demanded[int, list[str]] = Whole(by_call)
        self.call_args: Demanded[int, list[str]] = Whole(by_call)  # the steps of its args
        self.targets: Demanded[int, list[CallTarget]] = Whole(demands.by_target)
        self.flags: Demanded[str, list[tuple[str, tuple[str, ...]]]] = Demanded(demands.by_flag)
        # Launchers (`Process(target=f, args=(a,))`): what each one's target reads, and the
        # call and the position (or key) of each value it will pass.
        self.launches: Demanded[int, tuple[str, ...]] = Whole(by_call)
        self.elements: Demanded[str, tuple[int, int | str]] = Whole(by_step)
        self.flag_generators = flag_generators  # scopes that build flags by name
        self.rank: dict[str, Rank] = {}
        self.added = 0  # steps added from outside (generated flags), ranked after the rest
        self.touched: list[list[Any]] = []  # lists earlier units filled too, to re-sort
        self.fresh: set[int] = set()  # ids of the lists this unit made or already touched

    def rank_of(self, item: Any) -> Rank:
        step = item if isinstance(item, str) else item[0] if isinstance(item, tuple) else item.step
        return self.rank[step]

    def append(self, table: Demanded[Any, list[Any]], key: Any, item: Any) -> None:
        """Append ITEM to TABLE[KEY], a list that other units may fill too."""
        found = table.held(key)
        if found is None:
            found = table[key] = []
            self.fresh.add(id(found))
        elif id(found) not in self.fresh:  # filled by an earlier unit: order them again
            self.touched.append(found)
            self.fresh.add(id(found))
        found.append(item)

    def add(self, step: Step | StepRow, scope: str, rank: Rank | None = None) -> None:
        if rank is None:
            self.added += 1
            rank = (6, self.added)
        self.steps[step.id] = step  # item assignment builds nothing (see Demanded)
        self.scope_of[step.id] = scope
        self.rank[step.id] = rank

    def settle(self) -> None:
        """Once a unit is built: order again the lists it filled that earlier units filled too."""
        for touched in self.touched:
            touched.sort(key=self.rank_of)
        self.touched = []
        self.fresh = set()


class LoneTables:
    """What `UnitSteps` makes one row's steps into when their unit is not built (see
    `FileTables.make_alone`): the file's tables of each step itself (the step, its scope, what
    it reads and binds, its position, a launcher's value's call and key), and none of those a
    whole unit fills together (who reads a name, a function's returns, a call's consumers...),
    which its build alone fills.
    Whether a call is resolved is asked of TARGETS (a call's targets, resolved once)."""

    def __init__(self, tables: StepTables, targets: Callable[[int], list[CallTarget]]) -> None:
        self.calls = tables.calls
        self.steps, self.scope_of, self.rank = tables.steps, tables.scope_of, tables.rank
        self.refs, self.opaque, self.results = tables.refs, tables.opaque, tables.results
        self.bound, self.position = tables.bound, tables.position
        self.field_value = tables.field_value
        self.elements = tables.elements  # a value a launcher passes: its call, its key
        self.targets = Resolved(targets)
        self.launches: dict[int, tuple[str, ...]] = {}
        self.local_defs: dict[Any, list[str]] = {}
        self.returns: dict[Any, list[str]] = {}
        self.consumers: dict[Any, list[str]] = {}
        self.call_args: dict[Any, list[str]] = {}
        self.local_reads: dict[Any, list[str]] = {}
        self.attr_reads: dict[Any, list[Read]] = {}
        self.made: list[str] = []  # the ids of the steps made, in order

    def add(self, step: Step | StepRow, scope: str, rank: Rank) -> None:
        self.steps[step.id] = step
        self.scope_of[step.id] = scope
        self.rank[step.id] = rank
        self.made.append(step.id)

    def append(self, table: Any, key: Any, item: Any) -> None:
        """A unit's build keeps ITEM in TABLE[KEY]: alone, it is not kept."""


class Resolved:
    """The targets of a file's calls, as a build reads them (`held`), each resolved once."""

    __slots__ = ("held",)

    def __init__(self, targets: Callable[[int], list[CallTarget]]) -> None:
        self.held = targets
