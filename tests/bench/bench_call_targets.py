"""Benchmark: does the chain take, at every call site of a tree, what `sgtrace callgraph`
says the call runs?

    python -m tests.bench.bench_call_targets [--source pypi:sglang==0.5.23] [--show N]

The call graph is built whole (`CallGraph.build`); what it says a call site runs is the
callees it added for that site (`CallGraph.sites`), kept at its threshold, and its guesses
below it (`CallRules.runs` below `MIN_CONFIDENCE`, and for a call followed by value what the
value follower names as a guess). What the chain takes is what the unit build resolves the
call to (`FileTables.resolve_id`: `CallRules.call_targets`), else what it finds by value
(`CallValues.find`). Only functions of the tree count; a decorated function and the wrapper
its decorator returns count as one. A site agrees when the call graph's edges are among the
chain's targets and the chain's targets among the edges and the guesses. Prints the count of
sites that agree and those that do not, by kind, with examples. Sessions use the cache at
SGTRACE_CACHE (releases downloaded once).
"""

from __future__ import annotations

import argparse
import collections
import time
from dataclasses import dataclass

from tracer.analyses.callgraph import CallGraph
from tracer.session import Session, open_session


@dataclass(frozen=True, slots=True)
class Difference:
    """A call site where the chain and the call graph disagree: how the chain found its
    targets ("build" or "by value"), the functions only the chain takes, those only the call
    graph draws."""

    path: str
    line: int
    callee: str
    how: str
    chain_only: tuple[str, ...]
    graph_only: tuple[str, ...]

    def kind(self) -> tuple[str, ...]:
        return (
            self.how,
            "chain only" if self.chain_only else "",
            "graph only" if self.graph_only else "",
        )


def differences(session: Session) -> tuple[int, list[Difference]]:
    """Every call site of SESSION's tree: how many there are, and those where what the chain
    takes the call to run is not the call graph's edges (at its threshold) with its guesses."""
    graph = CallGraph(session)
    graph.build()
    per_site: dict[tuple[str, int], set[str]] = collections.defaultdict(set)
    for callee, sites in graph.sites.items():
        for path, call_id in sites:
            per_site[(path, call_id)].add(callee)
    functions = session.index.functions
    flow = session.graph
    rules, statements, values = graph.rules, graph.statements, graph.values
    total = 0
    found_apart: list[Difference] = []
    for path in sorted(session.index.module_of):
        tables = flow.file(path)
        for call in session.facts.flows(path).calls:
            total += 1
            found = tables.resolve_id(call.id)
            how = "build"
            if not found:
                found = list(flow.values.find(path, call))
                how = "by value"
            names = {n for t in found if (n := t.function or rules.target_name(t))}
            names &= functions.keys()
            wrapped = {values.wrapper_of(n) for n in names} & functions.keys()
            kept = {c for c in per_site.get((path, call.id), ()) if c in functions}
            guesses = {c.name for c in rules.runs(path, call) if not c.kept}
            named = statements.named(path, call)
            if statements.follows(path, call, named):
                guesses |= statements.guessed(path, call)
                guesses |= {c.name for c in statements.runs(path, call, named) if not c.kept}
            guesses |= {values.wrapper_of(n) for n in guesses}
            if any(kept <= chain <= kept | guesses for chain in (names, wrapped)):
                continue
            found_apart.append(
                Difference(
                    path,
                    call.line,
                    call.callee or "(expression)",
                    how,
                    tuple(sorted(wrapped - kept - guesses)),
                    tuple(sorted(kept - wrapped)),
                )
            )
    return total, found_apart


def compare(source: str, show: int) -> None:
    started = time.perf_counter()
    session = open_session(source)
    total, apart = differences(session)
    print(f"{source}: {total} call sites, {total - len(apart)} agree, {len(apart)} do not")
    print(f"call graph and comparison {time.perf_counter() - started:.1f} s")
    kinds = collections.Counter(d.kind() for d in apart)
    for kind, count in kinds.most_common():
        print(f"{count:8} {' / '.join(part for part in kind if part)}")
        for d in [d for d in apart if d.kind() == kind][:show]:
            print(
                f"           {d.path}:{d.line} {d.callee}: chain {list(d.chain_only[:2])}, "
                f"graph {list(d.graph_only[:2])}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default="pypi:sglang==0.5.23")
    parser.add_argument("--show", type=int, default=3, help="examples shown per kind")
    args = parser.parse_args()
    compare(args.source, args.show)


if __name__ == "__main__":
    main()
