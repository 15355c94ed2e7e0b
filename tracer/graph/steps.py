"""The nodes and edges of the dataflow graph, as plain values."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracer.index.targets import BY_DEFAULT
from tracer.store.step_ids import StepId

if TYPE_CHECKING:
    from tracer.index.index import Index

# Step kinds: the places a value lives (docs/DESIGN.md, "The trace JSON contract").
KINDS = (
    "cli_flag",
    "field",
    "attr_write",
    "attr_read",
    "call_arg",
    "param",
    "local_assign",
    "return",
    "formula",
    "sink",
    "use",
)

# Edge kinds: how a value moves from one step to the next, said the way the output says it.
EDGE_REASONS = {
    "local": "the name is read here",
    "attr": "attribute written there, read here",
    "local_via_call": "passed to a call outside the tree, whose result is read",
    "attr_via_call": "attribute passed to a call outside the tree, whose result is read",
    "default": "the parameter's default value",
    "arg_to_param": "argument bound to the parameter",
    "arg_to_field": "argument bound to the field by the synthesized __init__",
    "return_to_result": "returned value becomes the call's result",
    "flag_to_field": "argparse stores the flag in the field of the same name",
    "generated_flag": "the flag is generated from the class's fields",
    "parsed": "the parser returns the flag's value in the namespace it parses",
    "copied_to_field": "the namespace's value is copied into the field of the same name",
    "store": "the value is kept in this object",
    "read": "taken out of the object here",
    "read_by_name": "read out of this object by a name held in a variable",
    "filled_by_name": "kept in the object this step makes, under the name it is given",
    "receiver": "the object the method is called on",
}


@dataclass(frozen=True, slots=True)
class Step:
    id: StepId
    kind: str
    file: str
    line: int
    end_line: int
    symbol: str  # where the step is: "Runner.init_pool", "Settings", "<module>"
    code: str
    name: str  # the name bound or read: "learning_rate", "budget"


class StepRow:
    """A Step's fields, as a unit's build makes them: most steps a build makes are never
    read, and this plain object costs far less to make than the frozen Step its table
    gives on first reading it (see `step_tables.Steps`). Never changed once made."""

    __slots__ = ("code", "end_line", "file", "id", "kind", "line", "name", "symbol")

    def __init__(
        self,
        id: StepId,  # noqa: A002 (Step's field)
        kind: str,
        file: str,
        line: int,
        end_line: int,
        symbol: str,
        code: str,
        name: str,
    ) -> None:
        self.id = id
        self.kind = kind
        self.file = file
        self.line = line
        self.end_line = end_line
        self.symbol = symbol
        self.code = code
        self.name = name

    def step(self) -> Step:
        return Step(
            self.id,
            self.kind,
            self.file,
            self.line,
            self.end_line,
            self.symbol,
            self.code,
            self.name,
        )


@dataclass(frozen=True, slots=True)
class Edge:
    src: StepId
    dst: StepId
    kind: str
    confidence: float
    label: str = ""  # the attribute a store or read edge puts the value in or takes it from
    condition: str = ""  # when the call runs this function: the factory's branch choosing it


TRUSTED = 0.8  # an edge at least this sure is followed as certain; below, it is a guess
# Edges along which an object moves whole (a formula makes a new value; opaque calls too).
CARRYING = frozenset(
    {"local", "arg_to_param", "return_to_result", "attr", "arg_to_field", "default"}
)
FLAG_EDGES = frozenset({"flag_to_field", "generated_flag"})  # a flag sets the field


def edge_pairs(edges: Iterable[Edge]) -> dict[tuple[str, str], list[Edge]]:
    """EDGES by the two steps each joins (source, destination)."""
    pairs: dict[tuple[str, str], list[Edge]] = {}
    for edge in edges:
        pairs.setdefault((edge.src, edge.dst), []).append(edge)
    return pairs


class Edges(dict[tuple[str, str, str], Edge]):
    """The edges a trace met, by (source, destination, kind), kept by pair as they are met:
    a route's checks ask for the edges between each two of its steps, many routes over one
    search's edges, and indexing every edge again for each would cost the search's size each
    time. Set only by `edges[key] = edge` (the pairs follow that alone)."""

    def __init__(self) -> None:
        super().__init__()
        self.pairs: dict[tuple[str, str], list[Edge]] = {}  # as edge_pairs(self.values())

    def __setitem__(self, key: tuple[str, str, str], edge: Edge) -> None:
        old = self.get(key)
        if old is edge:
            return  # a walk meets an edge again and again
        same = self.pairs.setdefault(key[:2], [])
        if old is None:
            same.append(edge)
        else:  # of a pair's edges only this one has its kind
            same[same.index(old)] = edge
        super().__setitem__(key, edge)


def pairs_of(edges: dict[tuple[str, str, str], Edge]) -> dict[tuple[str, str], list[Edge]]:
    """EDGES by the two steps each joins: kept by an `Edges`, else made."""
    return edges.pairs if isinstance(edges, Edges) else edge_pairs(edges.values())


# Edges that say no more than that a name is read: of two edges as sure between the same
# steps, the other says why (`read_by_name` beside the `local` read of the record).
PLAIN = frozenset({"local", "local_via_call"})


def surest(edges: Iterable[Edge]) -> Edge | None:
    """Of EDGES (between the same two steps), the one to show: the surest, and of those as
    sure, one that says more than a plain read of a name."""
    return max(edges, key=lambda e: (e.confidence, e.kind not in PLAIN), default=None)


def by_condition(edge: Edge) -> bool:
    """Does EDGE run a method of a class a factory makes only under a condition (not the
    class it makes by default)?"""
    return bool(edge.condition) and not edge.condition.endswith(BY_DEFAULT)


def edge_reason(edge: Edge) -> str:
    """Why the value moves along EDGE, said the way the output says it."""
    reason = EDGE_REASONS.get(edge.kind, edge.kind)
    if edge.label:
        reason = f"{reason}, as .{edge.label}"
    return f"{reason}; {edge.condition}" if edge.condition else reason


def field_class(index: Index, step: Step) -> str:
    """The full name of the class a field step (or a step of a class body) is declared in."""
    return f"{index.module_of[step.file]}.{step.symbol}"
