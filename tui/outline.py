"""A chain laid out for walking: the spine, the branches hanging off it, and each step's
edges in and out. Plain data over the engine's Chain; nothing here knows of Textual."""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from tracer.graph.steps import Edge, Step, edge_reason, surest
from tracer.trace.chains import Chain


@dataclass(frozen=True, slots=True)
class Branch:
    """A step in the chain tree, with the edge that hangs it on its parent (None on the
    spine and for the roots of loose steps)."""

    step_id: str
    via: Edge | None
    children: tuple[Branch, ...]


@dataclass(frozen=True, slots=True)
class Link:
    """An edge seen from one of its ends: where the other end is and why the tracer went."""

    edge: Edge
    other: str  # the step at the other end
    outgoing: bool  # the value flows from this step to OTHER


@dataclass(frozen=True)
class Outline:
    chain: Chain
    source: str
    sinks: frozenset[str]
    steps: dict[str, Step]
    spine: tuple[Branch, ...]
    loose: tuple[Branch, ...]  # steps the edges do not connect to the spine
    links: dict[str, tuple[Link, ...]] = field(repr=False)

    @property
    def param(self) -> str:
        return self.chain.param

    def step(self, step_id: str) -> Step:
        return self.steps[step_id]

    def spine_number(self, step_id: str) -> int | None:
        """1-based position on the spine, None off it."""
        try:
            return self.chain.spine.index(step_id) + 1
        except ValueError:
            return None

    def is_sink(self, step_id: str) -> bool:
        """The last spine step, when it binds one of the sink names."""
        spine = self.chain.spine
        return bool(spine) and spine[-1] == step_id and self.steps[step_id].name in self.sinks

    def kind_of(self, step_id: str) -> str:
        return "sink" if self.is_sink(step_id) else self.steps[step_id].kind

    def confidence(self, step_id: str) -> float:
        """How sure the chain is of a step: its surest link to the rest (as the CLI text)."""
        return max((link.edge.confidence for link in self.links.get(step_id, ())), default=1.0)

    def is_guess(self, step_id: str) -> bool:
        return self.confidence(step_id) < 1.0

    def incoming(self, step_id: str) -> list[Link]:
        return [link for link in self.links.get(step_id, ()) if not link.outgoing]

    def outgoing(self, step_id: str) -> list[Link]:
        return [link for link in self.links.get(step_id, ()) if link.outgoing]

    def default_link(self, step_id: str) -> Link | None:
        """The edge `enter` follows unless another is chosen: along the spine, else the first
        edge out, else the first edge in."""
        spine = self.chain.spine
        if step_id in spine:
            position = spine.index(step_id)
            if position + 1 < len(spine):
                nxt = spine[position + 1]
                for link in self.outgoing(step_id):
                    if link.other == nxt:
                        return link
        found = self.outgoing(step_id) or self.incoming(step_id)
        return found[0] if found else None

    def other_routes(self) -> list[tuple[int, int, tuple[str, ...]]]:
        """The chain's routes after the spine, each as (its number, how many of its first
        steps it shares with the spine, its steps after those), in the chain's order."""
        found = []
        spine = self.chain.spine
        for number, route in enumerate(self.chain.routes[1:], 2):
            shared = 0
            while shared < min(len(route), len(spine)) and route[shared] == spine[shared]:
                shared += 1
            found.append((number, shared, tuple(s for s in route[shared:] if s in self.steps)))
        return found

    def in_file(self, path: str) -> list[Step]:
        return [s for s in self.chain.steps if s.file == path]

    def files(self) -> list[str]:
        return sorted({s.file for s in self.chain.steps})


def outline(chain: Chain, source: str, sinks: Iterable[str] = ()) -> Outline:
    """Lay CHAIN out: the spine in order; every other step hangs from the spine step it is
    nearest to (breadth-first over the edges, either direction), children by file and line."""
    steps = {s.id: s for s in chain.steps}
    # Two steps joined by edges of several kinds (a guess beside a sure one): the surest.
    pairs: dict[tuple[str, str], list[Edge]] = defaultdict(list)
    for edge in chain.edges:
        if edge.src in steps and edge.dst in steps:
            pairs[(edge.src, edge.dst)].append(edge)
    links: dict[str, list[Link]] = defaultdict(list)
    for joined in pairs.values():
        edge = surest(joined)
        assert edge is not None
        links[edge.src].append(Link(edge, edge.dst, True))
        links[edge.dst].append(Link(edge, edge.src, False))
    for found in links.values():
        found.sort(key=lambda link: (-link.edge.confidence, place(steps[link.other])))
    spine_ids = [s for s in chain.spine if s in steps]
    parent = hang(spine_ids, links)
    rest = [s.id for s in chain.steps if s.id not in parent]
    seeds = [s for s in chain.seeds if s in rest]
    loose_parent = hang(seeds + [s for s in rest if s not in seeds], links)
    children: dict[str, list[tuple[str, Edge]]] = defaultdict(list)
    for mapping in (parent, loose_parent):
        for step_id, via in mapping.items():
            if via is not None:
                children[via[0]].append((step_id, via[1]))

    def build(step_id: str, via: Edge | None) -> Branch:
        kids = sorted(children[step_id], key=lambda kid: place(steps[kid[0]]))
        return Branch(step_id, via, tuple(build(k, e) for k, e in kids))

    loose_roots = [s for s, via in loose_parent.items() if via is None]
    return Outline(
        chain=chain,
        source=source,
        sinks=frozenset(sinks),
        steps=steps,
        spine=tuple(build(s, None) for s in spine_ids),
        loose=tuple(build(s, None) for s in sorted(loose_roots, key=lambda s: place(steps[s]))),
        links={k: tuple(v) for k, v in links.items()},
    )


def hang(roots: list[str], links: dict[str, list[Link]]) -> dict[str, tuple[str, Edge] | None]:
    """Breadth-first from ROOTS over edges in either direction: each step reached with the
    step and edge it was reached by (None for the roots)."""
    parent: dict[str, tuple[str, Edge] | None] = dict.fromkeys(roots)
    queue = deque(roots)
    while queue:
        current = queue.popleft()
        for link in links.get(current, ()):
            if link.other not in parent:
                parent[link.other] = (current, link.edge)
                queue.append(link.other)
    return parent


def place(step: Step) -> tuple[str, int, str]:
    return (step.file, step.line, step.id)


def reason(edge: Edge) -> str:
    """Why the tracer went along EDGE, in the words of the CLI text."""
    text = edge_reason(edge)
    if edge.confidence < 1.0:
        return f"{text} (guess, confidence {edge.confidence:.1f})"
    return text


def recentre_names(step: Step) -> list[str]:
    """Names to trace again from STEP, most precise first: `Class.method.param` for a
    parameter or a local, `Class.field` for a field or an attribute, then the plain name."""
    if not step.name or step.name == "return":
        return []
    names = []
    if step.symbol and step.symbol != "<module>":
        names.append(f"{step.symbol}.{step.name}")
        owner = step.symbol.partition(".")[0]
        if step.kind in ("attr_write", "attr_read", "formula") and owner != step.symbol:
            names.append(f"{owner}.{step.name}")
    names.append(step.name)
    return list(dict.fromkeys(names))
