"""Summaries (and flows) made in worker processes: a cold index parses thousands of files, each on
its own, and the machines sgtrace runs on have cores to spare.

A worker is a new interpreter that runs `serve` (started with this package's path, not through
`multiprocessing`, so it never re-runs the caller's main script and needs no shared memory): it
reads chunks of file contents on its stdin and writes their summaries, pickled as the cache
keeps them (or their flows, the parts of the cache's entry: `flows_made`), on its stdout, each
message a length and a pickle. It imports only the extractor (and the rows' encoder) and
shares no state with the index. A thread of the index feeds each worker a chunk at a time;
where a worker cannot start or dies, the files it had are parsed in the index's process."""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from tracer.extract.facts import FileSummary
from tracer.extract.parse import parse
from tracer.extract.symbols import summarize

# Files to summarize before workers pay for their start (a new interpreter each, ~0.2 s).
POOL_AT = 256
MAX_WORKERS = 8
CHUNK = 16  # files sent to a worker at once
JOBS_ENV = "SGTRACE_JOBS"  # the processes that summarize, this one included; 1: this one alone
LENGTH = struct.Struct("<Q")
PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the folder `tracer/` is in
FAILED = b""  # a chunk's result when its worker failed: parsed here instead
TAKEN = b"taken"  # a chunk's result once asked: the pool keeps none


def summary_bytes(source: bytes) -> bytes:
    """SOURCE's summary, pickled as the cache keeps it."""
    return pickle.dumps(summarize(parse(source)), pickle.HIGHEST_PROTOCOL)


def flows_bytes(source: bytes) -> bytes:
    """SOURCE's flows, as the parts of their cache entry (pickled)."""
    from tracer.extract.flows import extract_flows
    from tracer.store.rows import encode_flows

    parsed = parse(source)
    summary = summarize(parsed)
    parts = encode_flows(extract_flows(parsed, summary), summary)
    return pickle.dumps(parts, pickle.HIGHEST_PROTOCOL)


MAKERS: dict[str, Callable[[bytes], bytes]] = {"summaries": summary_bytes, "flows": flows_bytes}


def worker_count(files: int) -> int:
    """How many worker processes summarize FILES files: none (1) for a small tree, else one
    per CPU this process may run on, at most MAX_WORKERS; SGTRACE_JOBS=N says N."""
    asked = os.environ.get(JOBS_ENV, "").strip()
    if asked:
        return max(1, int(asked)) if asked.isdigit() else 1
    if files < POOL_AT:
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cpus or 1, MAX_WORKERS))


def send(stream: BinaryIO, value: object) -> None:
    data = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
    stream.write(LENGTH.pack(len(data)) + data)
    stream.flush()


def receive(stream: BinaryIO) -> object | None:
    """The next message on STREAM, None at its end."""
    head = stream.read(LENGTH.size)
    if len(head) < LENGTH.size:
        return None
    (size,) = LENGTH.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("worker message cut short")
    return pickle.loads(data)


def serve() -> None:
    """A worker's loop: chunks of sources in, their pickled summaries out, until stdin ends.
    Its stdout is kept for the answers; anything else printed goes to stderr."""
    # Ctrl-C is the index's to answer (it reaches the whole process group): a worker ends
    # when its pipe does, quietly, whether the index closed it or is gone.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    try:
        while (request := receive(requests)) is not None:
            assert isinstance(request, tuple)
            kind, chunk = request
            send(answers, [MAKERS[kind](source) for source in chunk])
    except Exception:  # noqa: BLE001 - a pipe gone, or a file that fails: the index parses
        pass  # the chunk again and reports what is wrong once, not a worker's traceback too
    with contextlib.suppress(OSError):
        answers.close()


class Pool:
    """WORKERS worker processes, each fed by a thread, making KIND (a key of MAKERS) of CHUNKS
    of paths."""

    def __init__(
        self,
        chunks: list[list[str]],
        read: Callable[[str], bytes],
        workers: int,
        kind: str = "summaries",
    ) -> None:
        self.kind = kind
        self.chunks = chunks
        self.read = read
        self.results: list[list[bytes] | bytes | None] = [None] * len(chunks)
        self.todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        for i in range(len(chunks)):
            self.todo.put(i)
        self.changed = threading.Condition()
        self.alive = workers
        self.stopped = False
        for _ in range(workers):
            threading.Thread(target=self.feed, daemon=True).start()

    def feed(self) -> None:
        """One worker's thread: start it, then give it chunks until none is left."""
        process = None
        current = None
        try:
            command = [
                sys.executable,
                "-c",
                f"import sys; sys.path.insert(0, {PACKAGE_ROOT!r}); "
                "from tracer.store.workers import serve; serve()",
            ]
            # A session of its own: a Ctrl-C at the terminal reaches the index alone, even
            # while the worker is still importing (before serve() could ignore it).
            process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True
            )
            assert process.stdin is not None and process.stdout is not None
            while not self.stopped:
                try:
                    current = self.todo.get_nowait()
                except queue.Empty:
                    break
                sources = [self.read(path) for path in self.chunks[current]]
                send(process.stdin, (self.kind, sources))
                answer = receive(process.stdout)
                if not isinstance(answer, list) or len(answer) != len(self.chunks[current]):
                    raise EOFError("worker gave no answer")
                self.done(current, answer)
                current = None
        except Exception:  # noqa: BLE001 - any failure: the index's process parses the chunk
            # again and reports what is wrong (a damaged cached file, a bug) as it would alone
            if current is not None:
                self.done(current, FAILED)
        finally:
            if process is not None:
                for stream in (process.stdin, process.stdout):
                    if stream is not None:
                        stream.close()
                process.wait()
            with self.changed:
                self.alive -= 1
                self.changed.notify_all()

    def done(self, chunk: int, result: list[bytes] | bytes) -> None:
        with self.changed:
            self.results[chunk] = result
            self.changed.notify_all()

    def result(self, chunk: int) -> list[bytes] | None:
        """CHUNK's answers (each file's summary or flows, pickled), once a worker has them;
        None when no worker will. The pool lets go of them (each chunk is asked once)."""
        with self.changed:
            while self.results[chunk] is None and self.alive > 0:
                self.changed.wait()
            found = self.results[chunk]
            self.results[chunk] = FAILED if found is None else TAKEN
        return found if isinstance(found, list) else None

    def stop(self) -> None:
        self.stopped = True


def summaries_made(
    paths: list[str], read: Callable[[str], bytes], workers: int
) -> Iterator[tuple[str, FileSummary | None, bytes]]:
    """Each of PATHS with its summary (None when a worker made it: unpickle the bytes) and
    the summary pickled, in order; WORKERS > 1 parses them in that many worker processes."""
    chunks = [paths[i : i + CHUNK] for i in range(0, len(paths), CHUNK)]
    pool = Pool(chunks, read, min(workers, len(chunks))) if workers > 1 and chunks else None
    try:
        for i, chunk in enumerate(chunks):
            made = pool.result(i) if pool is not None else None
            if made is not None:
                yield from ((path, None, data) for path, data in zip(chunk, made, strict=True))
                continue
            for path in chunk:  # no worker: here
                summary = summarize(parse(read(path)))
                yield path, summary, pickle.dumps(summary, pickle.HIGHEST_PROTOCOL)
    finally:
        if pool is not None:
            pool.stop()


def flows_made(
    paths: list[str], read: Callable[[str], bytes], workers: int
) -> Iterator[tuple[str, list[bytes] | None]]:
    """Each of PATHS with the parts of its flows' cache entry, made in WORKERS (more than one)
    worker processes; None for the files no worker made (their flows are made when asked)."""
    chunks = [paths[i : i + CHUNK] for i in range(0, len(paths), CHUNK)]
    if workers < 2 or not chunks:
        yield from ((path, None) for path in paths)
        return
    pool = Pool(chunks, read, min(workers, len(chunks)), "flows")
    try:
        for i, chunk in enumerate(chunks):
            made = pool.result(i)
            for j, path in enumerate(chunk):
                yield path, None if made is None else pickle.loads(made[j])
    finally:
        pool.stop()
