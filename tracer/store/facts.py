"""Facts for a Snapshot: summaries of every file, flows of the files a query reaches.

Both are cached by content hash (each kind under its version, tracer/versions.py), so a
second run parses nothing.
"""

from __future__ import annotations

import gc
import hashlib
import os
import pickle
import re
from collections.abc import Callable
from functools import cached_property, partial
from typing import Any

from tracer.extract.facts import FileFlows, FileSummary
from tracer.extract.flows import extract_flows
from tracer.extract.parse import parse
from tracer.extract.symbols import summarize
from tracer.sources.cache import content_hash
from tracer.sources.sealed import pickle_sealed, seal, unpickle_sealed, unseal
from tracer.sources.snapshot import Snapshot
from tracer.store.cache import FactCache, PackReader
from tracer.store.names import READS, FileNames, names_parts, read_names
from tracer.store.partial import PartialParts
from tracer.store.parts import Parts, Remake, pack_entry
from tracer.store.rows import METHOD_CALLS, UNIT_ROWS, FileRows, decode_flows, encode_flows
from tracer.store.words import WordIndex, make_index
from tracer.store.workers import flows_made, summaries_made, worker_count
from tracer.versions import FLOWS, GREPS, NAMES, SUMMARIES, WORDS, CachedKind

Progress = Callable[[int, int], None]
# The parts of an entry read with its directory: the tables most queries ask of a file (its
# rows' units and where they are, its callees and called names; its names' attribute writes).
# The rest (the calls' texts, the rarer tables, each unit's rows; the attributes' reads) is
# read part by part when first asked.
ROWS_AT_ONCE = METHOD_CALLS
NAMES_AT_ONCE = READS
# Making the word index of a tree costs about as much as this many byte searches of it
# (measured on SGLang 0.5.23: 1.5 s against 34 ms), so it is made once that many were made.
SCANS_PER_INDEX = 40


class Facts:
    def __init__(self, snapshot: Snapshot, cache: FactCache | None = None) -> None:
        self.snapshot = snapshot
        self.cache = cache or FactCache()
        self.summaries: dict[str, FileSummary] = {}
        self.rows_by_path: dict[str, FileRows] = {}  # the flows as cached, by path
        self.flows_by_path: dict[str, FileFlows] = {}  # facts over them, for those asked
        self.names_by_path: dict[str, FileNames] = {}
        self.held: int | None = None  # at most how many files' flows are kept (None: all)
        self.parsed_files = 0
        self.greps: dict[str, list[str]] | None = None
        self.new_greps = False
        self.words: WordIndex | None = None
        self.words_looked_for = False
        self.scans = 0  # byte searches of every file made without the word index

    def key(self, path: str) -> str:
        """PATH's key in the cache: the hash of its content."""
        return self.snapshot.files[path]

    @cached_property
    def snapshot_key(self) -> str:
        """Names this exact set of files (paths and contents)."""
        manifest = hashlib.blake2b(digest_size=16)
        for path, content in self.snapshot.files.items():
            manifest.update(f"{path}\0{content}\n".encode())
        return manifest.hexdigest()

    def cached(self, kind: CachedKind, key: str) -> Any | None:
        """The value kept for KEY of KIND; None when there is none, or it is damaged: every
        entry is sealed (tracer/sources/sealed.py), so what it holds, down to the parts
        unpickled lazily later, is what was kept, or is computed again."""
        return unpickle_sealed(self.cache.get_bytes(kind, key))

    def entry_parts(self, kind: CachedKind, key: str, at_once: int, remake: Remake) -> Parts | None:
        """The parts of the entry of KEY of KIND (see `PartialParts`): the first AT_ONCE read
        now, the others when first asked; None when there is none, or it is damaged."""
        where = self.cache.entry_path(kind, key)
        return None if where is None else PartialParts.open(where, at_once, remake)

    def keep(self, kind: CachedKind, key: str, value: Any) -> None:
        """Keep VALUE for KEY of KIND, sealed, for the next run."""
        if self.cache.enabled:
            self.cache.put_bytes(kind, key, pickle_sealed(value))

    def source(self, path: str) -> bytes:
        """The bytes of PATH in the snapshot (for the few questions rows do not answer)."""
        return self.snapshot.read(path)

    def mentioning(self, word: str) -> list[str]:
        """Files whose bytes contain WORD; answers are kept with the snapshot's facts."""
        if self.greps is None:
            found = self.cached(GREPS, self.snapshot_key)
            self.greps = found if isinstance(found, dict) else {}
        paths = self.greps.get(word)
        if paths is None:
            paths = self.greps[word] = self.search(word)
            self.new_greps = True
        return paths

    @cached_property
    def paths(self) -> list[str]:
        """The snapshot's files in order: the word index numbers them so."""
        return list(self.snapshot.files)

    def search(self, word: str) -> list[str]:
        """Files whose bytes contain WORD, as `Snapshot.grep` finds them: by the word index
        when there is one (see `word_index`), else by reading every file."""
        index = self.word_index()
        numbers = None if index is None else index.candidates(word)
        if index is None or numbers is None:
            self.scans += 1
            return self.snapshot.grep(word)
        paths = self.paths
        found = [paths[n] for n in sorted(numbers)]
        if index.is_exact(word):
            return found
        needle = word.encode()
        return [path for path in found if needle in self.snapshot.read(path)]

    def word_index(self) -> WordIndex | None:
        """The snapshot's word index: the cached one, else one made once the byte searches
        made would have paid for it (SCANS_PER_INDEX; a question that greps a few words of a
        tree never makes it), then kept for the next run."""
        if self.words is None and not self.words_looked_for:
            self.words_looked_for = True
            found = self.cached(WORDS, self.snapshot_key)
            if isinstance(found, WordIndex) and found.files == len(self.snapshot.files):
                self.words = found
        if self.words is None and self.scans >= SCANS_PER_INDEX:
            snapshot = self.snapshot
            self.words = make_index(snapshot.read(path) for path in snapshot.files)
            self.keep(WORDS, self.snapshot_key, self.words)
        return self.words

    def matching(self, word: str, pattern: bytes) -> list[str]:
        """Files that mention WORD and match the regular expression PATTERN (multi-line):
        a finer filter than the word alone, kept like the greps."""
        key = f"{word}\0{pattern.decode('latin-1')}"
        if self.greps is None:
            self.mentioning(word)
        assert self.greps is not None
        paths = self.greps.get(key)
        if paths is None:
            regex = re.compile(pattern, re.MULTILINE)
            found = [p for p in self.mentioning(word) if regex.search(self.snapshot.read(p))]
            paths = self.greps[key] = found
            self.new_greps = True
        return paths

    def flush(self) -> None:
        """Keep what this run learnt that the next one can reuse (the greps)."""
        if self.new_greps and self.greps is not None:
            self.keep(GREPS, self.snapshot_key, self.greps)
            self.new_greps = False

    def load_summaries(self, progress: Progress | None = None) -> dict[str, FileSummary]:
        """Summaries of every file: one cache read for an unchanged snapshot, else per file."""
        # Summaries form no cycles: a cyclic collection while they pile up finds nothing.
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self.read_summaries(progress)
        finally:
            if collecting:
                gc.enable()

    def read_summaries(self, progress: Progress | None) -> dict[str, FileSummary]:
        snapshot_key = self.snapshot_key
        # The snapshot's entry holds each file's pickled summary as stored in the packs (there
        # sealed one by one, here under one seal), so a cold index pickles every summary once,
        # and a warm one reads and checks one file.
        whole = self.cached(SUMMARIES, snapshot_key)
        if isinstance(whole, dict) and whole.keys() == self.snapshot.files.keys():
            loaded = self.load_all(whole)
            if loaded is not None:
                self.summaries = loaded
                return loaded
        # Else each file's summary from the packs of earlier runs (the same file in another
        # release or another checkout is parsed once), the others parsed and packed anew.
        total = len(self.snapshot.files)
        packed = self.cache.packed(SUMMARIES)
        reader = PackReader()
        by_key: dict[str, tuple[FileSummary, bytes]] = {}
        todo: dict[str, str] = {}  # a content not summarized yet -> the first path with it
        for path in self.snapshot.files:
            key = self.key(path)
            if key in by_key or key in todo:
                continue
            where = packed.get(key)
            kept = unseal(reader.read(where)) if where is not None else None
            data = None if kept is None else bytes(kept)
            summary = loaded_summary(data) if data is not None else None
            if summary is None or data is None:
                todo[key] = path
            else:
                by_key[key] = (summary, data)
        done = total - len(todo)
        new: dict[str, bytes] = {}
        paths = list(todo.values())
        made = summaries_made(paths, self.snapshot.read, worker_count(len(paths)))
        for path, summary, data in made:
            self.parsed_files += 1
            summary = summary or loaded_summary(data)
            assert summary is not None  # made by this very code
            by_key[self.key(path)] = (summary, data)
            new[self.key(path)] = data
            done += 1
            if progress is not None:
                progress(done, total)
        pickled: dict[str, bytes] = {}
        for path in self.snapshot.files:
            self.summaries[path], pickled[path] = by_key[self.key(path)]
        if progress is not None:
            progress(total, total)
        if self.cache.enabled:
            self.cache.put_pack(SUMMARIES, {key: seal(data) for key, data in new.items()})
        self.keep(SUMMARIES, snapshot_key, pickled)
        return self.summaries

    @staticmethod
    def load_all(pickled: dict[str, object]) -> dict[str, FileSummary] | None:
        """PICKLED's summaries, or None if one is not a summary (an older cache layout)."""
        try:
            loaded = {path: pickle.loads(data) for path, data in pickled.items()}  # type: ignore[arg-type]
        except (TypeError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
            return None
        if all(type(summary) is FileSummary for summary in loaded.values()):
            return loaded
        return None

    def summary(self, path: str) -> FileSummary:
        """PATH's summary, extracted now."""
        self.parsed_files += 1
        return summarize(parse(self.snapshot.read(path)))

    def hold_at_most(self, files: int | None) -> None:
        """Keep the flows (and names) of at most FILES files, for work that reads the whole
        tree: the file read first goes first, and is read again from the cache when asked
        again (its facts made again, equal to those made before). Measured on a tree of
        4,700 files, a file asked often gains nothing from being kept longer: the passes
        come back to a file after reading hundreds of others, so keeping the files asked
        last (and moving a file at each ask) cost more than it saved. Only with the cache
        on: without it a file let go would be parsed again. None: keep every file."""
        self.held = files if self.cache.enabled else None

    def make_flows(self, paths: list[str]) -> None:
        """Make and cache the flows of those of PATHS not cached yet, in worker processes when
        they are many (`SGTRACE_JOBS`): for work that reads every file (the call graph), so
        that this process parses nothing. Nothing without the cache."""
        if not self.cache.enabled:
            return
        todo = [p for p in paths if not self.cached_flows(p)]
        for path, parts in flows_made(todo, self.snapshot.read, worker_count(len(todo))):
            if parts is not None:
                self.parsed_files += 1
                self.cache.put_bytes(FLOWS, self.key(path), pack_entry(parts))

    def cached_flows(self, path: str) -> bool:
        """Is there an entry for PATH's flows in the cache (whole or not: read when asked)?"""
        where = self.cache.entry_path(FLOWS, self.key(path))
        return where is not None and os.path.exists(where)

    def flows(self, path: str) -> FileFlows:
        """PATH's flows, each fact made when first read (see `rows`)."""
        found = self.flows_by_path.get(path)
        if found is None:
            found = self.flows_by_path[path] = decode_flows(self.rows(path))
        return found

    def rows(self, path: str) -> FileRows:
        """PATH's flows as cached: by unit, with the tables that locate them (what most files
        a query reaches are asked: their facts are not made)."""
        held = self.rows_by_path
        found = held.get(path)
        if found is not None:
            return found
        parts = self.entry_parts(
            FLOWS, self.key(path), ROWS_AT_ONCE, partial(self.remade_rows, path)
        )
        if parts is None or len(parts) < UNIT_ROWS:  # none, damaged, or not ours: redo
            parts = Parts.made(self.remade_rows(path))
        found = held[path] = FileRows(parts)
        if self.held is not None and len(held) > self.held:
            oldest = next(iter(held))  # the dict keeps the order files were first asked in
            del held[oldest]
            self.flows_by_path.pop(oldest, None)
            self.names_by_path.pop(oldest, None)
        return found

    def remade_rows(self, path: str) -> list[bytes]:
        """PATH's flows extracted now, as the parts of their entry (cached)."""
        parsed = parse(self.snapshot.read(path))
        self.parsed_files += 1
        summary = self.summaries.get(path) or summarize(parsed)
        parts = encode_flows(extract_flows(parsed, summary), summary)
        if self.cache.enabled:
            self.cache.put_bytes(FLOWS, self.key(path), pack_entry(parts))
        return parts

    def has_flows(self, path: str) -> bool:
        """Are PATH's flows in memory already?"""
        return path in self.rows_by_path

    def names(self, path: str) -> FileNames:
        """What PATH binds, writes, reads and calls by name; cached apart from its flows,
        so that ruling a file out never loads them."""
        found = self.names_by_path.get(path)
        if found is not None:
            return found
        # The names hold step ids, and an id holds its file's path: a file of the same
        # content at another path (moved in another release) has names of its own.
        key = content_hash(f"{path}\0{self.key(path)}".encode())
        parts = self.entry_parts(NAMES, key, NAMES_AT_ONCE, partial(self.remade_names, path))
        found = None if parts is None else read_names(parts)
        if found is None:  # none, damaged, or not ours: redo
            found = read_names(Parts.made(self.remade_names(path)))
            assert found is not None
        self.names_by_path[path] = found
        return found

    def remade_names(self, path: str) -> list[bytes]:
        """PATH's names made now, as the parts of their entry (cached)."""
        summary = self.summaries.get(path) or self.summary(path)
        parts = names_parts(path, summary, self.flows(path))
        if self.cache.enabled:
            key = content_hash(f"{path}\0{self.key(path)}".encode())
            self.cache.put_bytes(NAMES, key, pack_entry(parts))
        return parts

    def warnings(self) -> list[str]:
        found = list(self.snapshot.warnings)
        for path, summary in self.summaries.items():
            found.extend(f"{path}: {warning}" for warning in summary.warnings)
        return found


def loaded_summary(data: bytes) -> FileSummary | None:
    """The summary DATA pickles, or None if it holds no summary (another version's)."""
    try:
        found = pickle.loads(data)
    except (EOFError, pickle.UnpicklingError, AttributeError, ImportError, ValueError, TypeError):
        return None
    return found if type(found) is FileSummary else None
