"""Open a source and index it: the one call every command starts with."""

from __future__ import annotations

import gc
from dataclasses import dataclass

from tracer.graph.flow import FlowGraph
from tracer.index.index import Index
from tracer.sources import NO_PACKAGE, PackageHint, Snapshot, open_source
from tracer.store.cache import FactCache
from tracer.store.facts import Facts, Progress

GC_THRESHOLD = 100_000


@dataclass
class Session:
    snapshot: Snapshot
    facts: Facts
    index: Index
    graph: FlowGraph

    def warnings(self) -> list[str]:
        return self.facts.warnings()


def open_session(
    spec: str,
    cache: FactCache | None = None,
    progress: Progress | None = None,
    ssh_options: object | None = None,
    fetch_progress: object | None = None,
    hint: PackageHint = NO_PACKAGE,
) -> Session:
    """SPEC as the user typed it (`pypi:sglang==0.5.9`, a folder, `host:/path`) -> an
    indexed session; HINT is the package a host holds (looked for where no path is given)."""
    snapshot = open_source(spec, ssh_options, fetch_progress, hint)
    return index_snapshot(snapshot, cache, progress)


def index_snapshot(
    snapshot: Snapshot, cache: FactCache | None = None, progress: Progress | None = None
) -> Session:
    # Facts are millions of small objects that never form cycles; with the default threshold
    # the cyclic collector rescans them over and over (measured: 30-40% of a trace).
    gc.set_threshold(GC_THRESHOLD, 50, 1000)
    facts = Facts(snapshot, cache)
    facts.load_summaries(progress)
    index = Index(facts.summaries)
    return Session(snapshot, facts, index, FlowGraph(index, facts))
