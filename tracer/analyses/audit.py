"""Audit: what a patched tree changes in the traced chains. Pure: two indexed sessions (the
reference and the target) in, a report out: the files that differ, the patch as hunks, and for
each parameter its chain in both trees and their difference."""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, cast

from tracer.errors import NameNotFound
from tracer.graph.steps import Step
from tracer.trace.chains import Chain, trace

if TYPE_CHECKING:
    from tracer.graph.flow import FlowGraph
    from tracer.session import Session
    from tracer.sources.snapshot import Snapshot

CONTEXT = 3  # lines of context around a hunk, as `diff -u`
StepKey = tuple[str, str, str, str, str]


@dataclass(frozen=True, slots=True)
class FileChange:
    path: str
    status: str  # "modified", "added" or "removed"


@dataclass(frozen=True, slots=True)
class Hunk:
    """One group of changed lines of a file (as a `diff -u` hunk). The ranges are the changed
    lines only (1-based, inclusive); an insertion has an empty range: start = end + 1."""

    file: str
    ref_start: int
    ref_end: int
    tgt_start: int
    tgt_end: int
    text: str  # the hunk as `diff -u` prints it, header and context included
    params: tuple[str, ...]  # the chains it touches

    @property
    def added(self) -> int:
        return sum(1 for line in self.text.splitlines()[1:] if line.startswith("+"))

    @property
    def removed(self) -> int:
        return sum(1 for line in self.text.splitlines()[1:] if line.startswith("-"))


@dataclass(frozen=True, slots=True)
class StepChanges:
    added: tuple[Step, ...]  # in the target only
    removed: tuple[Step, ...]  # in the reference only
    changed: tuple[tuple[Step, Step], ...]  # (before, after): same place, other code

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)


@dataclass(frozen=True, slots=True)
class ParamDiff:
    param: str
    reference: Chain | None  # None: the name is bound nowhere in that tree
    target: Chain | None
    spine: StepChanges  # along the spines
    steps: StepChanges  # the steps around the spines
    hunks: tuple[Hunk, ...]  # the hunks that touch either chain

    @property
    def changed(self) -> bool:
        return bool(self.spine or self.steps or self.hunks)


@dataclass(frozen=True, slots=True)
class Audit:
    target: str
    reference: str
    how: str  # how the reference was chosen, said for people
    files: tuple[FileChange, ...]
    hunks: tuple[Hunk, ...]  # every hunk of the patch, by file and line
    params: tuple[ParamDiff, ...]
    versions: tuple[str, str] = ("", "")  # (reference, target) releases, "" when unknown

    @property
    def changed(self) -> bool:
        return any(p.changed for p in self.params)


# -- files and hunks -----------------------------------------------------------------------


def file_changes(reference: Snapshot, target: Snapshot) -> tuple[FileChange, ...]:
    """The files whose contents differ, are only in the target, or only in the reference."""
    found = [
        FileChange(path, "modified" if path in reference.files else "added")
        for path, digest in target.files.items()
        if reference.files.get(path) != digest
    ]
    found += [FileChange(p, "removed") for p in reference.files if p not in target.files]
    return tuple(sorted(found, key=lambda c: c.path))


def lines_of(snapshot: Snapshot, path: str) -> list[str]:
    if path not in snapshot.files:
        return []
    return snapshot.read(path).decode("utf-8", "replace").splitlines()


def file_hunks(path: str, before: list[str], after: list[str]) -> list[Hunk]:
    """The hunks of the change from BEFORE to AFTER, as `diff -u` groups them."""
    hunks = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for group in matcher.get_grouped_opcodes(CONTEXT):
        changes = [op for op in group if op[0] != "equal"]
        if not changes:  # the bytes differ but not the lines (line endings, a final newline)
            continue
        first, last = changes[0], changes[-1]
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        text = [f"@@ -{unified_range(i1, i2)} +{unified_range(j1, j2)} @@"]
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                text += [" " + line for line in before[a1:a2]]
                continue
            text += ["-" + line for line in before[a1:a2]]
            text += ["+" + line for line in after[b1:b2]]
        hunks.append(Hunk(path, first[1] + 1, last[2], first[3] + 1, last[4], "\n".join(text), ()))
    return hunks


def unified_range(start: int, end: int) -> str:
    length = end - start
    if length == 0:
        return f"{start},0"
    return f"{start + 1}" if length == 1 else f"{start + 1},{length}"


def touches(start: int, end: int, step: Step) -> bool:
    """Changed lines START..END (or an insertion before START, when END < START) meet STEP."""
    if end < start:  # lines inserted between end and start: inside the step, or not at all
        return step.line <= end and start <= step.end_line
    return start <= step.end_line and step.line <= end


def hunk_touches(hunk: Hunk, reference: Chain | None, target: Chain | None) -> bool:
    ref = reference.steps if reference else ()
    tgt = target.steps if target else ()
    return any(
        s.file == hunk.file and touches(hunk.ref_start, hunk.ref_end, s) for s in ref
    ) or any(s.file == hunk.file and touches(hunk.tgt_start, hunk.tgt_end, s) for s in tgt)


# -- chains --------------------------------------------------------------------------------


def step_key(step: Step) -> StepKey:
    """What a step is, wherever its lines moved: file, symbol, kind, name and its code with
    whitespace collapsed."""
    return (step.file, step.symbol, step.kind, step.name, " ".join(step.code.split()))


def compare_steps(before: Sequence[Step], after: Sequence[Step]) -> StepChanges:
    """Steps of AFTER not in BEFORE and the reverse (as multisets of keys); a removed and an
    added step at the same place (file, symbol, kind, name) are one step whose code changed."""
    removed = without(before, after)
    added = without(after, before)
    changed: list[tuple[Step, Step]] = []
    for old in list(removed):
        place = step_key(old)[:4]
        new = next((s for s in added if step_key(s)[:4] == place), None)
        if new is not None:
            changed.append((old, new))
            removed.remove(old)
            added.remove(new)
    return StepChanges(tuple(added), tuple(removed), tuple(changed))


def without(steps: Sequence[Step], others: Sequence[Step]) -> list[Step]:
    """STEPS less those matched, key for key, by OTHERS (a multiset difference, in order)."""
    left = Counter(step_key(s) for s in others)
    kept = []
    for step in steps:
        key = step_key(step)
        if left[key]:
            left[key] -= 1
        else:
            kept.append(step)
    return kept


def spine_steps(chain: Chain | None) -> list[Step]:
    if chain is None:
        return []
    steps = {s.id: s for s in chain.steps}
    return [steps[i] for i in chain.spine]


def around_steps(chain: Chain | None) -> list[Step]:
    if chain is None:
        return []
    spine = set(chain.spine)
    return [s for s in chain.steps if s.id not in spine]


def chain_of(
    session: Session, name: str, sinks: Iterable[str], hints: Iterable[str] = ()
) -> Chain | None:
    if not session.graph.seeds(name):
        return None
    return trace(session.graph, name, sinks=tuple(sinks), hints=tuple(hints))


class FromStep:
    """A flow graph in which every name is bound at one step only: what trace() starts from.
    The rest of the graph is the graph itself."""

    def __init__(self, graph: FlowGraph, step_id: str) -> None:
        self.graph = graph
        self.step_id = step_id

    def seeds(self, name: str) -> list[str]:
        return [self.step_id]

    def __getattr__(self, attr: str) -> object:
        return getattr(self.graph, attr)


def chains_of(
    session: Session, names: Sequence[str], sinks: Sequence[str], hints: Sequence[str] = ()
) -> dict[str, Chain | None]:
    """The chain of each of NAMES bound in SESSION (None where it is bound nowhere). A name
    that is itself a sink (or a hint, without sinks) is traced back from where its value is
    computed: the step of that name the other chains end at (most of them), not the first
    place it is bound (often `= None`)."""
    ends = set(sinks or hints)
    chains: dict[str, Chain | None] = {
        name: chain_of(session, name, sinks, hints) for name in names if name not in ends
    }
    for name in names:
        if name not in ends:
            continue
        ends = Counter(
            c.spine[-1]
            for c in chains.values()
            if c is not None and session.graph.step(c.spine[-1]).name == name
        )
        if ends:
            graph = cast("FlowGraph", FromStep(session.graph, ends.most_common(1)[0][0]))
            chains[name] = trace(graph, name, direction="backward")
        else:  # no chain reaches it: from where it is bound, as `sgtrace trace` does
            chains[name] = chain_of(session, name, sinks, hints)
    return {name: chains[name] for name in names}


def compare_param(
    param: str, reference: Chain | None, target: Chain | None, hunks: Sequence[Hunk]
) -> ParamDiff:
    return ParamDiff(
        param=param,
        reference=reference,
        target=target,
        spine=compare_steps(spine_steps(reference), spine_steps(target)),
        steps=compare_steps(around_steps(reference), around_steps(target)),
        hunks=tuple(h for h in hunks if hunk_touches(h, reference, target)),
    )


# -- the whole audit -----------------------------------------------------------------------


def audit(
    reference: Session,
    target: Session,
    params: Sequence[str],
    sinks: Iterable[str] = (),
    required: Sequence[str] = (),
    how: str = "",
    labels: tuple[str, str] | None = None,
    versions: tuple[str, str] = ("", ""),
    hints: Iterable[str] = (),
) -> Audit:
    """Compare TARGET with REFERENCE: files, hunks, and the chain of each of PARAMS bound in
    either tree (names of REQUIRED bound in neither are an error; the others are skipped).
    LABELS name (reference, target) in the report, else their snapshots' labels do; VERSIONS
    are their releases, as far as known."""
    sinks, hints = tuple(sinks), tuple(hints)
    files = file_changes(reference.snapshot, target.snapshot)
    hunks: list[Hunk] = []
    for change in files:
        before = lines_of(reference.snapshot, change.path)
        hunks += file_hunks(change.path, before, lines_of(target.snapshot, change.path))
    names = list(dict.fromkeys([*params, *required]))
    ref_chains = chains_of(reference, names, sinks, hints)
    # One tree audited against itself (a clean checkout) is traced once.
    tgt_chains = ref_chains if target is reference else chains_of(target, names, sinks, hints)
    diffs: list[ParamDiff] = []
    for param in names:
        ref_chain, tgt_chain = ref_chains[param], tgt_chains[param]
        if ref_chain is None and tgt_chain is None:
            if param in required:
                raise NameNotFound(
                    f"{param!r} is bound nowhere in {target.snapshot.label} or its reference",
                    "check the spelling of --param",
                )
            continue
        diffs.append(compare_param(param, ref_chain, tgt_chain, hunks))
    tagged = {h: replace(h, params=tuple(d.param for d in diffs if h in d.hunks)) for h in hunks}
    diffs = [replace(d, hunks=tuple(tagged[h] for h in d.hunks)) for d in diffs]
    return Audit(
        target=labels[1] if labels else target.snapshot.label,
        reference=labels[0] if labels else reference.snapshot.label,
        how=how,
        files=files,
        hunks=tuple(tagged[h] for h in hunks),
        params=tuple(diffs),
        versions=versions,
    )
