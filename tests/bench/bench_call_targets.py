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

from tracer.analyses.callgraph import CallGraph
from tracer.session import open_session


def compare(source: str, show: int) -> None:
    started = time.perf_counter()
    session = open_session(source)
    graph = CallGraph(session)
    graph.build()
    built = time.perf_counter()
    per_site: dict[tuple[str, int], set[str]] = collections.defaultdict(set)
    for callee, sites in graph.sites.items():
        for path, call in sites:
            per_site[(path, call.id)].add(callee)
    functions = session.index.functions
    flow = session.graph
    rules, statements, values = graph.rules, graph.statements, graph.values
    agree = 0
    kinds: collections.Counter[tuple[str, ...]] = collections.Counter()
    examples: dict[tuple[str, ...], list[str]] = collections.defaultdict(list)
    for path in sorted(session.index.module_of):
        tables = flow.file(path)
        for call in session.facts.flows(path).calls:
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
                agree += 1
                continue
            chain = wrapped
            kind = (
                how,
                "chain only" if chain - kept - guesses else "",
                "graph only" if kept - chain else "",
            )
            kinds[kind] += 1
            if len(examples[kind]) < show:
                examples[kind].append(
                    f"{path}:{call.line} {call.callee or '(expression)'}: chain "
                    f"{sorted(chain - kept - guesses)[:2]}, graph {sorted(kept - chain)[:2]}"
                )
    total = agree + sum(kinds.values())
    print(f"{source}: {total} call sites, {agree} agree, {total - agree} do not")
    print(f"call graph {built - started:.1f} s, comparison {time.perf_counter() - built:.1f} s")
    for kind, count in kinds.most_common():
        print(f"{count:8} {' / '.join(part for part in kind if part)}")
        for example in examples[kind]:
            print(f"           {example}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default="pypi:sglang==0.5.23")
    parser.add_argument("--show", type=int, default=3, help="examples shown per kind")
    args = parser.parse_args()
    compare(args.source, args.show)


if __name__ == "__main__":
    main()
