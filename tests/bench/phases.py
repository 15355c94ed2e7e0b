"""One benchmark phase, run alone in a fresh process; prints its measurements as JSON.

    python -m tests.bench.phases PHASE --version 0.5.23 --cache DIR [--profile-out FILE]

PHASE is `parse`, `cold`, `warm` or `trace` (see `tests.bench.bench_index`, which starts
these processes). Output on stdout: `{"rows": {row: {"seconds": s, "peak_rss_mb": m}},
"info": {...}}`. Peak RSS is the process's peak so far when the row ended, so in the trace
phase each query's figure includes the loaded index before it.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import resource
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import tracer
from tracer.cli.presets import SINKS
from tracer.extract.parse import parser
from tracer.session import Session, index_snapshot
from tracer.sources import Snapshot, open_source
from tracer.store.cache import FactCache
from tracer.store.workers import worker_count
from tracer.trace.chains import trace
from tracer.versions import KINDS

FIRST_NAME = "mem_fraction_static"
SECOND_NAME = "max_total_num_tokens"

Rows = dict[str, dict[str, float]]


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Recorder:
    """Times named stretches of work, each with the process's peak RSS when it ended;
    one stretch (PROFILED) may run under cProfile, its stats written to PROFILE_OUT."""

    def __init__(self, profiled: str | None = None, profile_out: Path | None = None) -> None:
        self.rows: Rows = {}
        self.profiled = profiled
        self.profile_out = profile_out

    @contextmanager
    def row(self, name: str) -> Iterator[None]:
        profile = cProfile.Profile() if name == self.profiled else None
        start = time.perf_counter()
        if profile is not None:
            profile.enable()
        yield
        if profile is not None:
            profile.disable()
        seconds = time.perf_counter() - start
        self.rows[name] = {"seconds": seconds, "peak_rss_mb": peak_rss_mb()}
        if profile is not None and self.profile_out is not None:
            profile.dump_stats(str(self.profile_out))


def open_release(version: str, recorder: Recorder) -> Snapshot:
    """The release from the user cache (downloaded on first use): walk and hash every file."""
    with recorder.row("open"):
        return open_source(f"pypi:sglang=={version}")


def parse_alone(snapshot: Snapshot, recorder: Recorder) -> dict[str, Any]:
    """(a) Every file read into memory first; only `parser().parse` is timed."""
    sources = [snapshot.read(path) for path in snapshot.files]
    parse = parser().parse
    with recorder.row("parse"):
        for data in sources:
            parse(data)  # the tree is dropped at once, as the indexer drops it
    return {"files": len(sources), "bytes": sum(map(len, sources))}


def index_once(snapshot: Snapshot, cache: Path, row: str, recorder: Recorder) -> Session:
    """(b) or (c): `index_snapshot` against the fact cache under CACHE."""
    with recorder.row(row):
        session = index_snapshot(snapshot, FactCache(cache))
    return session


def index_info(session: Session) -> dict[str, Any]:
    """Files parsed and summaries held; the worker processes a cold index ran (see
    tracer/store/workers.py) and the peak RSS of the largest, not in the row's own."""
    parsed = session.facts.parsed_files
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {
        "parsed_files": parsed,
        "summaries": len(session.facts.summaries),
        "workers": worker_count(parsed) if parsed > 1 else 1,
        "worker_peak_rss_mb": children,
    }


def trace_queries(session: Session, recorder: Recorder) -> dict[str, Any]:
    """(d) Three queries on one loaded session: a first, another name backward, the first again."""
    with recorder.row("trace_first"):
        first = trace(session.graph, FIRST_NAME, sinks=SINKS)
    reached_by_first = len(session.graph.tables)
    units_by_first = sum(len(tables.built) for tables in session.graph.tables.values())
    flows_by_first = len(session.facts.flows_by_path)
    with recorder.row("trace_second"):
        trace(session.graph, SECOND_NAME, direction="backward", sinks=SINKS)
    with recorder.row("trace_again"):
        again = trace(session.graph, FIRST_NAME, sinks=SINKS)
    return {
        "first_steps": len(first.steps),
        "first_spine": len(first.spine),
        "again_same": again == first,
        "files_reached_first": reached_by_first,
        "units_built_first": units_by_first,
        "flows_loaded_first": flows_by_first,
        "files_reached_both": len(session.graph.tables),
        "files_parsed": session.facts.parsed_files,
        "files_grepped": len(session.facts.snapshot.contents),
    }


def run_phase(phase: str, version: str, cache: Path, recorder: Recorder) -> dict[str, Any]:
    """Run PHASE; returns what it learnt besides times (file counts, cache hits)."""
    snapshot = open_release(version, recorder)
    if phase == "parse":
        return parse_alone(snapshot, recorder)
    if phase in ("cold", "warm"):
        return index_info(index_once(snapshot, cache, phase, recorder))
    if phase == "trace":
        session = index_once(snapshot, cache, "trace_load", recorder)
        return index_info(session) | trace_queries(session, recorder)
    raise ValueError(f"unknown phase {phase!r}")


PHASES: tuple[str, ...] = ("parse", "cold", "warm", "trace")
PROFILED_ROW: dict[str, str] = {"warm": "warm", "trace": "trace_first"}


def main(argv: list[str] | None = None, out: Callable[[str], None] = print) -> None:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("phase", choices=PHASES)
    cli.add_argument("--version", required=True)
    cli.add_argument("--cache", type=Path, required=True, help="fact cache folder")
    cli.add_argument("--profile-out", type=Path, help="cProfile the phase's main row into FILE")
    args = cli.parse_args(argv)
    profiled = PROFILED_ROW.get(args.phase, args.phase) if args.profile_out else None
    recorder = Recorder(profiled, args.profile_out)
    start_rss = peak_rss_mb()
    info = run_phase(args.phase, args.version, args.cache, recorder)
    info |= {
        "start_rss_mb": start_rss,
        "code": tracer.__path__[0],
        "versions": {k.name: k.version for k in KINDS},
    }
    out(json.dumps({"rows": recorder.rows, "info": info}))


if __name__ == "__main__":
    main()
