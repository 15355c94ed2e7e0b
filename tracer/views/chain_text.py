"""Chains as text for people, and as JSON for programs in the contract of docs/DESIGN.md
("The trace JSON contract")."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from tracer.graph.steps import Edge, Step, edge_reason, surest
from tracer.trace.chains import Chain
from tracer.views.schemas import TRACE
from tracer.views.terminal import json_text, visible

KIND_COLOURS = {
    "cli_flag": "35",  # magenta
    "field": "36",  # cyan
    "attr_write": "33",  # yellow
    "formula": "1;31",  # bold red
    "return": "32",  # green
    "param": "34",  # blue
    "call_arg": "34",
    "local_assign": "37",
    "sink": "1;33",
}
SPINE_CODE_LINES = 4
ROUTES_SHOWN_WHOLE = 3  # the spine and the next routes step by step; the others in a line


def chain_json(chain: Chain, source: str) -> dict[str, object]:
    spine = set(chain.spine)
    return {
        "schema": TRACE,
        "source": source,
        "param": chain.param,
        "direction": chain.direction,
        "to": list(chain.sinks),
        "to_reached": chain.sink_reached,
        "spine": list(chain.spine),
        "routes": [list(route) for route in chain.routes or (chain.spine,)],
        "nodes": [
            {
                "id": step.id,
                "file": step.file,
                "line": step.line,
                "end_line": step.end_line,
                "kind": step.kind,
                "symbol": step.symbol,
                "code": step.code,
                "name": step.name,
                "on_spine": step.id in spine,
            }
            for step in chain.steps
        ],
        "edges": [
            {"src": e.src, "dst": e.dst, "kind": e.kind, "confidence": e.confidence}
            | ({"attribute": e.label} if e.label else {})
            | ({"condition": e.condition} if e.condition else {})
            for e in chain.edges
        ],
    }


def unreached(chain: Chain) -> str | None:
    """What to say when the value never reaches the sinks asked for (`--to`); None when it
    does, or none was asked."""
    if chain.sink_reached is not False:
        return None
    steps = {s.id: s for s in chain.steps}
    last = steps[chain.spine[-1]]
    names = " or ".join(visible(name) for name in chain.sinks)
    return (
        f"{visible(chain.param)} does not reach {names}: the spine shown ends at "
        f"{visible(last.file)}:{last.line} ({visible(last.symbol)})"
    )


def dumps(chain: Chain, source: str) -> str:
    return json_text(chain_json(chain, source), indent=2)


def shown(chain: Chain) -> Chain:
    """CHAIN with the text it took from the tree (files, functions, code, names, and the
    attributes and conditions of its edges) made `visible`; ids and kinds as they were."""
    return replace(
        chain,
        param=visible(chain.param),
        steps=tuple(
            replace(
                step,
                file=visible(step.file),
                symbol=visible(step.symbol),
                code=visible(step.code),
                name=visible(step.name),
            )
            for step in chain.steps
        ),
        edges=tuple(
            replace(edge, label=visible(edge.label), condition=visible(edge.condition))
            for edge in chain.edges
        ),
    )


class Paint:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.enabled and code else text


def chain_text(chain: Chain, source: str, colour: bool = False) -> str:
    """CHAIN for people, safe on a terminal: what it holds from outside made `visible` before
    the colours (COLOUR) are added."""
    chain, source = shown(chain), visible(source)
    paint = Paint(colour)
    steps = {s.id: s for s in chain.steps}
    incoming: dict[str, list[Edge]] = defaultdict(list)
    links: dict[str, list[Edge]] = defaultdict(list)
    for edge in chain.edges:
        incoming[edge.dst].append(edge)
        links[edge.dst].append(edge)
        links[edge.src].append(edge)
    files = {s.file for s in chain.steps}
    lines = [
        paint(f"{chain.param}", "1")
        + f" in {source}: {len(chain.steps)} steps in {len(files)} files, "
        f"spine of {len(chain.spine)}"
    ]
    lines.append("")
    lines.append(paint("Spine", "1") + " (origin first)")
    width = len(str(max(len(route) for route in chain.routes or (chain.spine,))))
    lines.extend(route_lines(chain.spine, 1, steps, incoming, width, paint))
    on_routes = set(chain.spine)
    for number, route in enumerate(chain.routes[1:], 2):
        shared = 0
        while shared < min(len(route), len(chain.spine)) and route[shared] == chain.spine[shared]:
            shared += 1
        end = steps[route[-1]]
        if number > ROUTES_SHOWN_WHOLE:
            # Past the first few, a route in one line: where it leaves the spine and its end.
            if number == ROUTES_SHOWN_WHOLE + 1:
                lines.append("")
                lines.append(
                    paint("Other ends", "1")
                    + " (a route in a line: its steps after the spine, its end)"
                )
            first = end.code.splitlines()[0].strip() if end.code else end.name
            lines.append(
                f"  Route {number} to {location(end)}  {end.symbol}: "
                f"{len(route) - shared} steps after step {shared}: {first}"
            )
            on_routes.update(route)
            continue
        lines.append("")
        lines.append(
            paint(f"Route {number}", "1")
            + f" to {location(end)}: steps 1-{shared} of the spine, then"
            if shared
            else paint(f"Route {number}", "1") + f" to {location(end)}"
        )
        lines.extend(
            route_lines(
                route[shared:],
                shared + 1,
                steps,
                incoming,
                width,
                paint,
                route[shared - 1] if shared else None,
            )
        )
        on_routes.update(route)
    rest = [s for s in chain.steps if s.id not in on_routes]
    if rest:
        lines.append("")
        lines.append(paint("Around the spine", "1") + " (other writes, reads and inputs, by file)")
        by_file: dict[str, list[Step]] = defaultdict(list)
        for step in rest:
            by_file[step.file].append(step)
        for file in sorted(by_file):
            lines.append(paint(file, "4"))
            for step in sorted(by_file[file], key=lambda s: (s.line, s.id)):
                # How sure the chain is of this step: its surest link to the rest.
                guess = max((e.confidence for e in links[step.id]), default=1.0)
                mark = paint(f"  [guess {guess:.1f}]", "2") if guess < 1.0 else ""
                first = step.code.splitlines()[0] if step.code else ""
                lines.append(
                    f"  {step.line:>5} {kind_label(step, paint)} {first}"
                    + paint(f"  ({step.symbol})", "2")
                    + mark
                )
    return "\n".join(lines)


def route_lines(
    route: tuple[str, ...],
    first: int,
    steps: dict[str, Step],
    incoming: dict[str, list[Edge]],
    width: int,
    paint: Paint,
    previous: str | None = None,
) -> list[str]:
    """ROUTE's steps numbered from FIRST, each with the reason it follows the one before
    (PREVIOUS, for the first)."""
    lines = []
    for number, step_id in enumerate(route, first):
        step = steps[step_id]
        if previous is not None:
            joining = [e for e in incoming[step_id] if e.src == previous]
            edge = surest(joining)  # the surest reason
            if edge is not None:
                lines.append(" " * (width + 3) + paint(f"| {why(edge)}", "2"))
        lines.append(
            f" {number:>{width}}. {kind_label(step, paint)} {location(step)}  "
            + paint(step.symbol, "2")
        )
        for code_line in step.code.splitlines()[:SPINE_CODE_LINES]:
            lines.append(" " * (width + 6) + code_line)
        previous = step_id
    return lines


def kind_label(step: Step, paint: Paint) -> str:
    return paint(f"{step.kind:<12}", KIND_COLOURS.get(step.kind, ""))


def location(step: Step) -> str:
    span = f"{step.line}" if step.end_line == step.line else f"{step.line}-{step.end_line}"
    return f"{step.file}:{span}"


def why(edge: Edge) -> str:
    reason = edge_reason(edge)
    if edge.confidence < 1.0:
        return f"{reason} (guess, confidence {edge.confidence:.1f})"
    return reason
