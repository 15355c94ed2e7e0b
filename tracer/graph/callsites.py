"""Where a function is called from: the files that may call it (grepped by its name, or its
class's and subclasses' names for a constructor, or a local a class is kept in), and the calls
there that resolve to it. A collaborator of FlowGraph (`graph.sites`): it asks the graph only
what `SiteQueries` declares (files, greps, the resolver), and keeps which names of a file
stand for definitions named otherwise."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from operator import attrgetter
from typing import TYPE_CHECKING, Protocol

from tracer.index.index import Index
from tracer.index.resolve import CallTarget, Resolver
from tracer.store.facts import Facts

if TYPE_CHECKING:
    from tracer.graph.file_steps import FileTables


class SiteQueries(Protocol):
    """What the call sites ask of the flow graph."""

    index: Index
    facts: Facts
    resolver: Resolver

    def file(self, path: str) -> FileTables: ...

    def mentioning(self, word: str) -> list[str]: ...

    def mentioning_with(self, word: str, classes: list[str]) -> list[str]: ...


ALIAS, NAME = attrgetter("alias"), attrgetter("name")  # an import's and an alias's local name
COMMON_WORD_FILES = 150  # a word in more files than this is searched with its class names
MAX_FAMILY_NAMES = 40


class CallSites:
    """The call sites of functions, for one flow graph."""

    def __init__(self, graph: SiteQueries) -> None:
        self.graph = graph
        self.renames: dict[str, set[str]] = {}  # see renamed
        self.imports_renamed: dict[str, set[str]] = {}
        # Asked again and again in one query (a function's every parameter asks for its
        # callers): the files that may call a function, and its calls in each of them.
        self.files_calling: dict[str, tuple[list[str], set[str]]] = {}
        self.sites: dict[tuple[str, str], list[tuple[int, CallTarget]]] = {}

    def calls_to(
        self,
        path: str,
        words: set[str],
        wanted: Callable[[CallTarget], bool],
        constructs: bool = True,
    ) -> list[int]:
        """Ids of the calls in PATH that resolve to a WANTED target, in order. Only calls whose
        callee's last name is one of WORDS (or a local name for a definition named otherwise:
        a local bound only to classes, when CONSTRUCTS, the WANTED targets being constructors)
        can, and only those are resolved."""
        rows = self.graph.facts.rows(path)
        candidates = sorted(
            head
            for word in words | self.renamed(path, constructs)
            for head in rows.callees.heads(word)
        )
        if not candidates:
            return []
        targets = self.graph.resolver.targets
        again = self.graph.index.imports_again(path)  # names whose import depends on the line
        found = []
        for call_id, scope, callee in candidates:
            line = rows.call_line(call_id) if callee.partition(".")[0] in again else 0
            if any(map(wanted, targets(path, scope, callee, line))):
                found.append(call_id)
        return found

    def renamed(self, path: str, constructs: bool = True) -> set[str]:
        """Names PATH imports or aliases that stand for a definition of another name; with
        CONSTRUCTS, also the locals bound only to classes, then called (`Worker = A if c else
        B; Worker()`): they construct a class, so they matter only to a constructor's calls."""
        imported = self.imports_renamed.get(path)
        if imported is None:
            module = self.graph.index.module_of[path]
            # Only a called name matters here.
            rows = self.graph.facts.rows(path)
            imported = self.graph.index.renamed(module, rows.called_imports)
            self.imports_renamed[path] = imported
        if not constructs:
            return imported
        found = self.renames.get(path)
        if found is None:
            found = set(imported)
            for scope, name in self.graph.facts.rows(path).called_locals:
                if name not in found and self.graph.resolver.class_values(path, scope, name):
                    found.add(name)
            self.renames[path] = found
        return found

    def calling(self, name: str) -> list[str]:
        """Files where NAME is followed by `(`: calls, and `class NAME(` lines."""
        return self.graph.facts.matching(name, rb"\b" + re.escape(name.encode()) + rb"\s*\(")

    def callers(
        self, function: str, within: set[str] | None = None
    ) -> Iterator[tuple[FileTables, int, CallTarget]]:
        """Call sites that may run FUNCTION (full name), found by grepping its name (only in
        the files WITHIN, when given)."""
        paths, callees = self.calling_files(function, within)
        for caller_path in paths:
            sites = self.sites_in(caller_path, function, callees)
            if sites:
                tables = self.graph.file(caller_path)
                for call_id, target in sites:
                    yield tables, call_id, target

    def sites_in(self, path: str, function: str, callees: set[str]) -> list[tuple[int, CallTarget]]:
        """The calls in PATH that may run FUNCTION (named by one of CALLEES), each with the
        target that is FUNCTION, in order."""
        key = (path, function)
        found = self.sites.get(key)
        if found is None:
            constructs = function.endswith(".__init__")
            calls = self.calls_to(path, callees, lambda t: t.function == function, constructs)
            found = []
            if calls:
                # As its unit's build resolves each (its line read only where it counts).
                targets = self.graph.resolver.resolve_call_id
                for call_id in calls:
                    wanted = [t for t in targets(path, call_id) if t.function == function]
                    found += [(call_id, t) for t in wanted]
            self.sites[key] = found
        return found

    def calling_files(
        self, function: str, within: set[str] | None = None
    ) -> tuple[list[str], set[str]]:
        """The files that may call FUNCTION (full name) by name, in order, and the last names
        such calls have (see `files_calling_by_name`). Only files WITHIN, when given."""
        found = self.files_calling.get(function)
        if found is None:
            found = self.files_calling[function] = self.files_calling_by_name(function)
        paths, callees = found
        if within is not None:
            return [path for path in paths if path in within], callees
        return list(paths), callees

    def files_calling_by_name(self, function: str) -> tuple[list[str], set[str]]:
        """The files that may call FUNCTION (full name) by name, in order, and the last names
        such calls have: its name, or for `__init__` its class's and its subclasses' (a
        method's callers mention a class of its family; a common function name's callers
        import its module, or live in it)."""
        path, definition = self.graph.index.functions[function]
        words = [definition.name]
        classes: list[str] = []
        module = self.graph.index.module_of[path]
        within: set[str] | None = None
        if definition.class_qualname:
            klass = f"{module}.{definition.class_qualname}"
            classes = self.graph.index.family(klass)
            if definition.name == "__init__":
                # Constructors are called by class name; super().__init__ sits in subclasses.
                words = [klass.rpartition(".")[2]]
                words += [c.rpartition(".")[2] for c in self.graph.index.descendants(klass)]
                words = words[:MAX_FAMILY_NAMES]
        elif len(self.graph.mentioning(definition.name)) > COMMON_WORD_FILES:
            # A common function name: callers import its module, or live in it.
            within = set(self.graph.mentioning(module.rpartition(".")[2])) | {path}
        # Called by a name an import or alias gives it (`from pkg import Runner as R`, or a
        # package's `__init__` that renamed it): files that spell only that name call it too.
        renames = self.graph.index.renames
        spelled = list(
            dict.fromkeys(w for word in words for w in (word, *sorted(renames.get(word, ()))))
        )
        paths: dict[str, None] = {}
        for word in spelled:
            calls = set(self.calling(word))
            if definition.name == "__init__":
                # A class kept in a local and called by that name (`Worker = A if c else B`).
                calls.update(self.choosing(word))
            for caller_path in self.graph.mentioning_with(word, classes):
                if caller_path in calls and (within is None or caller_path in within):
                    paths[caller_path] = None
        return list(paths), {*spelled, definition.name}

    def choosing(self, klass: str) -> list[str]:
        """Files where the class name KLASS is assigned to a local (`X = KLASS`, `X = A if c
        else KLASS`) that is then called: its constructions under another name."""
        pattern = rb"^\s*\w+\s*=[^=\n(]*\b" + re.escape(klass.encode()) + rb"\b[^(\n]*$"
        return [path for path in self.graph.facts.matching(klass, pattern) if self.renamed(path)]
