"""One file's steps and the lookup tables that connect them, built unit by unit (see
`tracer.graph.unit_steps`) as a query reads them."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import cached_property
from typing import Any

from tracer.extract.facts import MODULE_SCOPE, Arg, Call, FileFlows, FileSummary
from tracer.graph.steps import Step
from tracer.graph.unit_steps import UNREAD, CodeLines, Read, UnitIndex, build_unit
from tracer.index.resolve import CallTarget, Resolver
from tracer.store.names import FLAG_METHODS, FileNames
from tracer.store.rows import file_rows
from tracer.store.units import MEMBER_KINDS, top_classes, unit_of

__all__ = ["FileTables", "Read", "build_tables"]

Rank = tuple[int, ...]  # a step's place in the order a whole-file build makes steps in
ALL = object()  # a demand for every unit of the file


class Demanded(dict):  # type: ignore[type-arg]
    """A table of one file filled unit by unit: reading a key first builds the units it
    depends on (DEMAND); iterating the whole table builds every unit."""

    __slots__ = ("demand",)

    def __init__(self, demand: Callable[[object], None]) -> None:
        super().__init__()
        self.demand = demand

    def __getitem__(self, key: object) -> Any:
        self.demand(key)
        return super().__getitem__(key)

    def get(self, key: object, default: Any = None) -> Any:
        self.demand(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self.demand(key)
        return super().__contains__(key)

    def __iter__(self) -> Iterator[Any]:
        self.demand(ALL)
        return super().__iter__()

    def __len__(self) -> int:
        self.demand(ALL)
        return super().__len__()

    def keys(self) -> Any:
        self.demand(ALL)
        return super().keys()

    def values(self) -> Any:
        self.demand(ALL)
        return super().values()

    def items(self) -> Any:
        self.demand(ALL)
        return super().items()


class FileTables:
    """One file's steps and lookup tables, built one unit at a time (a top-level function or
    class with everything inside it, or the module's own code) as queries read them. Lists
    that several units fill are kept in the order a whole-file build gives, so what a query
    finds does not depend on which units it happened to build first."""

    def __init__(
        self,
        path: str,
        summary: FileSummary,
        flows: FileFlows,
        names: FileNames,
        resolver: Resolver,
        source: bytes,
    ) -> None:
        self.path = path
        self.summary = summary
        self.flows = flows
        self.names = names
        self.resolver = resolver
        self.calls: Sequence[Call] = flows.calls
        self.source = source
        by_step, by_scope, by_call = self.by_step, self.by_scope, self.by_call
        self.steps: dict[str, Step] = Demanded(by_step)
        self.scope_of: dict[str, str] = Demanded(by_step)
        # What each step reads: plain refs, and the resolved calls whose results it takes.
        self.refs: dict[str, tuple[str, ...]] = Demanded(by_step)
        # Refs a step reads only as arguments of calls we cannot see into (`f(gpu_id)`).
        self.opaque: dict[str, frozenset[str]] = Demanded(by_step)
        self.results: dict[str, tuple[int, ...]] = Demanded(by_step)
        self.bound: dict[str, str] = Demanded(by_step)  # assignment step -> target path
        # Tuple positions: of a target in `a, b = ...`, of a value in `return a, b`.
        self.position: dict[str, int] = Demanded(by_step)
        self.local_defs: dict[tuple[str, str], list[str]] = Demanded(by_scope)
        self.local_reads: dict[tuple[str, str], list[str]] = Demanded(self.by_local_read)
        self.attr_reads: dict[str, list[Read]] = Demanded(self.by_attr_read)
        self.returns: dict[str, list[str]] = Demanded(self.by_function)
        self.consumers: dict[int, list[str]] = Demanded(by_call)
        self.call_args: dict[int, list[str]] = Demanded(by_call)  # the steps of its args
        self.targets: dict[int, list[CallTarget]] = Demanded(by_call)
        self.flags: dict[str, list[tuple[str, tuple[str, ...]]]] = Demanded(self.by_flag)
        self.flag_generators = set(names.flag_generators)  # scopes that build flags by name
        self.rank: dict[str, Rank] = {}
        self.added = 0  # steps added from outside (generated flags), ranked after the rest
        self.building = False
        self.built: set[str] = set()
        self.touched: list[list[Any]] = []  # lists earlier units filled too, to re-sort
        self.fresh: set[int] = set()  # ids of the lists this unit made or already touched
        self.whole = names.whole
        self.classes = top_classes(summary)
        self.unit_names: dict[str, str] = {}  # scope -> its unit
        self.defaults: dict[str, set[str]] | None = None
        self.shared = self.classes | {MODULE_SCOPE}  # scopes that several units read in
        self.rows = file_rows(flows, summary)
        self.units = (WHOLE,) if self.whole else self.rows.units
        self.in_class_body: Callable[[int], bool] | None = None

    @cached_property
    def lines(self) -> CodeLines:
        return CodeLines(self.source)

    def step(self, step_id: str) -> Step:
        """The step STEP_ID, with its code (read from the source the first time it is asked
        for: most steps a query makes are never shown)."""
        step = self.steps[step_id]
        if step.code == UNREAD:
            step = replace(step, code=self.lines.span(step.line, step.end_line))
            dict.__setitem__(self.steps, step_id, step)
        return step

    def arguments(self, call_id: int) -> list[tuple[Arg, str]]:
        """The arguments of a resolved call, each with its step (none if unresolved)."""
        steps = self.call_args.get(call_id, [])
        return list(zip(self.calls[call_id].args, steps, strict=True)) if steps else []

    @cached_property
    def attr_writes(self) -> dict[str, list[Read]]:
        """Attribute -> its writes in this file (fields, `x.ATTR = ...`), in the tables' order."""
        return {a: [Read(*w) for w in writes] for a, writes in self.names.writes.items()}

    # -- units -------------------------------------------------------------------------------

    def unit_of(self, scope: str) -> str:
        found = self.unit_names.get(scope)
        if found is None:
            found = WHOLE if self.whole else unit_of(scope, self.classes)
            self.unit_names[scope] = found
        return found

    def unit_index(self, unit: str) -> UnitIndex | None:
        """What UNIT holds; None for a name that is no unit of the file."""
        if self.whole:
            sizes = self.rows.sizes
            return UnitIndex(*(list(range(size)) for size in sizes)) if unit == WHOLE else None
        number = self.unit_numbers.get(unit)
        return None if number is None else UnitIndex(*self.rows.unit_members(number))

    @cached_property
    def unit_numbers(self) -> dict[str, int]:
        return {unit: number for number, unit in enumerate(self.rows.units)}

    def ensure(self, unit: str) -> None:
        if unit in self.built or self.building:
            return
        self.built.add(unit)
        found = self.unit_index(unit)
        if found is not None:
            self.building = True
            try:
                build_unit(self, found)
            finally:
                self.building = False
        for touched in self.touched:
            touched.sort(key=self.rank_of)
        self.touched = []
        self.fresh = set()

    def ensure_all(self) -> None:
        for unit in list(self.units):
            self.ensure(unit)

    def rank_of(self, item: Any) -> Rank:
        step = item if isinstance(item, str) else item[0] if isinstance(item, tuple) else item.step
        return self.rank[step]

    def append(self, table: dict[Any, list[Any]], key: Any, item: Any) -> None:
        """Append ITEM to TABLE[KEY], a list that other units may fill too."""
        found = dict.get(table, key)
        if found is None:
            found = table[key] = []
            self.fresh.add(id(found))
        elif id(found) not in self.fresh:  # filled by an earlier unit: order them again
            self.touched.append(found)
            self.fresh.add(id(found))
        found.append(item)

    def add(self, step: Step, scope: str, rank: Rank | None = None) -> None:
        if rank is None:
            self.added += 1
            rank = (6, self.added)
        dict.__setitem__(self.steps, step.id, step)
        dict.__setitem__(self.scope_of, step.id, scope)
        self.rank[step.id] = rank

    # -- demands: the units a key depends on -------------------------------------------------

    def by_step(self, step_id: object) -> None:
        if step_id is ALL:
            self.ensure_all()
        elif isinstance(step_id, str) and step_id.startswith(self.path + "#"):
            self.ensure(self.step_unit(step_id[len(self.path) + 1 :]))

    def step_unit(self, tag: str) -> str:
        """The unit of the step whose id ends in TAG (`p:f.x`, `a3.0`, `c12.1`, ...)."""
        kind, rest = tag[:1], tag[1:]
        if kind in ("p", "f"):
            return self.unit_of(rest[1:].rpartition(".")[0])
        number = int(rest.partition(".")[0].partition(":")[0] or -1)
        member_kind = MEMBER_KIND_OF_TAG.get(kind)
        if member_kind is None:
            return WHOLE  # not a step of this file: nothing to build
        return self.unit_of_member(member_kind, number)

    def unit_of_member(self, kind: int, number: int) -> str:
        """The unit of member NUMBER of KIND (a position in MEMBER_KINDS); WHOLE if there is
        none."""
        if self.whole or not 0 <= number < self.rows.sizes[kind]:
            return WHOLE
        return self.rows.units[self.rows.owner(kind, number)]

    def by_scope(self, key: object) -> None:
        if key is ALL:
            self.ensure_all()
        elif isinstance(key, tuple):
            self.ensure(self.unit_of(key[0]))

    def by_local_read(self, key: object) -> None:
        # The module and a class body hold the default values of functions of other units.
        if key is ALL or (isinstance(key, tuple) and key[0] in self.shared):
            self.ensure_all()
        else:
            self.by_scope(key)

    def by_function(self, qualname: object) -> None:
        if qualname is ALL:
            self.ensure_all()
        elif isinstance(qualname, str):
            self.ensure(self.unit_of(qualname))

    def by_call(self, call_id: object) -> None:
        if call_id is ALL:
            self.ensure_all()
        elif isinstance(call_id, int) and 0 <= call_id < len(self.calls):
            self.ensure(self.unit_of_member(CALLS, call_id))

    def by_attr_read(self, attr: object) -> None:
        if attr is ALL or not isinstance(attr, str):
            self.ensure_all()
            return
        for scope in {scope for scope, _ in self.names.reads.get(attr, ())}:
            self.ensure(self.unit_of(scope))
        # A default value is read in the scope around its function, built with the function.
        for unit in self.default_readers().get(attr, ()):
            self.ensure(unit)

    def default_readers(self) -> dict[str, set[str]]:
        """Attribute -> the units of the functions whose default values read it."""
        if self.defaults is None:
            self.defaults = {}
            for function in self.summary.functions:
                for param in function.params:
                    for ref in param.default_refs:
                        if "." in ref:
                            units = self.defaults.setdefault(ref.rpartition(".")[2], set())
                            units.add(self.unit_of(function.qualname))
        return self.defaults

    def by_flag(self, dest: object) -> None:
        for method in FLAG_METHODS:
            for call_id in self.rows.callees.get(method, ()):
                self.ensure(self.unit_of_member(CALLS, call_id))

    # -- queries over several units ----------------------------------------------------------

    def binding_steps(self, word: str) -> list[Step]:
        """Steps that bind WORD (parameters, fields, assignments, flags, generated flags),
        in the order a whole-file build makes them; only the units that may are built."""
        for function in self.summary.functions:
            if any(p.name == word for p in function.params):
                self.ensure(self.unit_of(function.qualname))
        for klass in self.summary.classes:
            if any(f.name == word for f in klass.fields):
                self.ensure(self.unit_of(klass.qualname))
        for unit in self.rows.binders.get(word, ()):
            self.ensure(WHOLE if self.whole else self.rows.units[unit])
        if word in self.names.flag_dests:
            self.by_flag(word)
        found = [s for s in dict.values(self.steps) if s.name == word]
        return sorted(found, key=lambda s: self.rank[s.id])

    def inner_reads(self, scope: str) -> list[tuple[tuple[str, str], list[str]]]:
        """Reads of names in the functions nested in SCOPE (every function, for the module),
        by (scope, name), in the order a whole-file build first makes them."""
        if scope == MODULE_SCOPE:
            self.ensure_all()
            found = list(dict.items(self.local_reads))
            return sorted(found, key=lambda item: self.rank[item[1][0]])
        self.ensure(self.unit_of(scope))
        prefix = scope + "."
        return [item for item in dict.items(self.local_reads) if item[0][0].startswith(prefix)]


WHOLE = "*"  # the one unit of a file whose units cannot be built apart
ROW_TAGS = {"a": "assigns", "r": "returns", "u": "uses", "c": "calls"}
CALLS = MEMBER_KINDS.index("calls")
# Step id tags of the steps made from rows: `a3.0`, `r1`, `u2`, `c12.1`.
MEMBER_KIND_OF_TAG = {tag: MEMBER_KINDS.index(kind) for tag, kind in ROW_TAGS.items()}


def build_tables(
    path: str,
    summary: FileSummary,
    flows: FileFlows,
    names: FileNames,
    resolver: Resolver,
    source: bytes,
) -> FileTables:
    """PATH's tables, empty until read: each read builds the units it needs."""
    return FileTables(path, summary, flows, names, resolver, source)
