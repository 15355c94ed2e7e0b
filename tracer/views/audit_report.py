"""Audits for people (text, markdown) and for programs (JSON), with one summary table when
several targets were audited."""

from __future__ import annotations

from collections.abc import Sequence

from tracer.analyses.audit import Audit, Hunk, ParamDiff, StepChanges
from tracer.graph.steps import Step
from tracer.views.schemas import AUDIT
from tracer.views.terminal import json_text, visible

Failure = tuple[str, str]  # (target as the user wrote it, the error)
MAX_HUNKS_PER_FILE = 20  # in text and markdown; JSON has every hunk


# -- JSON ------------------------------------------------------------------------------------


def step_json(step: Step) -> dict[str, object]:
    return {
        "file": step.file,
        "line": step.line,
        "end_line": step.end_line,
        "kind": step.kind,
        "symbol": step.symbol,
        "name": step.name,
        "code": step.code,
    }


def changes_json(changes: StepChanges) -> dict[str, object]:
    return {
        "added": [step_json(s) for s in changes.added],
        "removed": [step_json(s) for s in changes.removed],
        "changed": [
            {"before": step_json(old), "after": step_json(new)} for old, new in changes.changed
        ],
    }


def hunk_json(hunk: Hunk) -> dict[str, object]:
    return {
        "file": hunk.file,
        "reference_lines": [hunk.ref_start, hunk.ref_end],
        "target_lines": [hunk.tgt_start, hunk.tgt_end],
        "params": list(hunk.params),
        "diff": hunk.text,
    }


def spine_json(diff: ParamDiff, which: str) -> list[dict[str, object]] | None:
    chain = diff.reference if which == "reference" else diff.target
    if chain is None:
        return None
    steps = {s.id: s for s in chain.steps}
    return [step_json(steps[i]) for i in chain.spine]


def audit_json(audit: Audit) -> dict[str, object]:
    return {
        "target": audit.target,
        "reference": audit.reference,
        "how": audit.how,
        "versions": {"reference": audit.versions[0], "target": audit.versions[1]},
        "changed": audit.changed,
        "files": {
            status: [f.path for f in audit.files if f.status == status]
            for status in ("modified", "added", "removed")
        },
        "params": [
            {
                "param": d.param,
                "changed": d.changed,
                "to_reached": d.target.sink_reached if d.target else None,
                "reference_spine": spine_json(d, "reference"),
                "target_spine": spine_json(d, "target"),
                "spine": changes_json(d.spine),
                "steps": changes_json(d.steps),
                "hunks": [hunk_json(h) for h in d.hunks],
            }
            for d in audit.params
        ],
        "hunks": [hunk_json(h) for h in audit.hunks],
    }


def report_json(audits: Sequence[Audit], failures: Sequence[Failure]) -> str:
    return json_text(
        {
            "schema": AUDIT,
            "changed": any(a.changed for a in audits),
            "audits": [audit_json(a) for a in audits],
            "errors": [{"target": t, "error": e} for t, e in failures],
        },
        indent=2,
    )


# -- text and markdown -------------------------------------------------------------------------


def where(step: Step) -> str:
    lines = f"{step.line}" if step.line == step.end_line else f"{step.line}-{step.end_line}"
    return f"{step.kind} {step.file}:{lines} {step.symbol}"


def code_lines(step: Step, mark: str) -> list[str]:
    return [f"{mark} {line}" for line in step.code.splitlines()]


def hunk_line(hunk: Hunk) -> str:
    return (
        f"{hunk.file}: reference lines {span(hunk.ref_start, hunk.ref_end)}, target lines "
        f"{span(hunk.tgt_start, hunk.tgt_end)} (+{hunk.added} -{hunk.removed})"
    )


def span(start: int, end: int) -> str:
    if end < start:
        return f"none (inserted after {end})"
    return f"{start}" if start == end else f"{start}-{end}"


class Writer:
    """Lines of a report: plain text, or markdown (headings, code blocks, a table)."""

    def __init__(self, markdown: bool) -> None:
        self.markdown = markdown
        self.lines: list[str] = []

    def heading(self, text: str, level: int) -> None:
        if self.markdown:
            blank = [""] if self.lines and self.lines[-1] != "" else []
            self.lines += [*blank, "#" * level + " " + text, ""]
        else:
            self.lines += ["", text] if level > 1 else [text]

    def item(self, text: str, depth: int = 0) -> None:
        self.lines.append(("  " * depth + "- " if self.markdown else "  " * (depth + 1)) + text)

    def block(self, lines: list[str], language: str = "", depth: int = 0) -> None:
        """LINES verbatim, under the list item of DEPTH just written."""
        if self.markdown:
            pad = "  " * (depth + 1)  # inside the item, so the list goes on after it
            self.lines += [pad + line for line in [f"```{language}", *lines, "```"]]
        else:
            self.lines += ["        " + line for line in lines]

    def code(self, text: str) -> str:
        return f"`{text}`" if self.markdown else text


def write_changes(out: Writer, label: str, changes: StepChanges) -> None:
    for step in changes.removed:
        out.item(f"{label} removed: {out.code(where(step))}", 1)
        out.block(code_lines(step, "-"), "diff", 1)
    for step in changes.added:
        out.item(f"{label} added: {out.code(where(step))}", 1)
        out.block(code_lines(step, "+"), "diff", 1)
    for old, new in changes.changed:
        moved = f" (was line {old.line})" if old.line != new.line else ""
        out.item(f"{label} code changed: {out.code(where(new))}{moved}", 1)
        out.block(code_lines(old, "-") + code_lines(new, "+"), "diff", 1)


def write_param(out: Writer, diff: ParamDiff, numbers: dict[Hunk, int]) -> None:
    ref = len(diff.reference.spine) if diff.reference else 0
    tgt = len(diff.target.spine) if diff.target else 0
    sizes = f"spine of {counted(ref)}" if ref == tgt else f"spine of {ref} -> {counted(tgt)}"
    if diff.reference is None:
        sizes = f"bound only in the target, spine of {counted(tgt)}"
    elif diff.target is None:
        sizes = f"bound only in the reference, spine of {counted(ref)}"
    if not diff.changed:
        out.item(f"{out.code(diff.param)}: unchanged ({sizes})")
        return
    out.item(f"{out.code(diff.param)}: CHANGED ({sizes})")
    write_changes(out, "spine step", diff.spine)
    write_changes(out, "step", diff.steps)
    if diff.hunks:
        out.item("touched by hunk " + ", ".join(f"#{numbers[h]}" for h in diff.hunks), 1)


def counted(steps: int) -> str:
    return "1 step" if steps == 1 else f"{steps} steps"


def write_audit(out: Writer, audit: Audit, files: bool = False) -> None:
    """One audit: the verdict, what was compared; the verdict of each traced parameter and
    the hunks that touch a chain; then the files and the other hunks, counted by folder (one
    by one with FILES)."""
    verdict = "traced chains CHANGED" if audit.changed else "no traced chain changed"
    out.heading(f"{audit.target} against {audit.reference}: {verdict}", 2)
    reference, target = audit.versions
    if reference and target and reference != target:
        out.item(
            f"note: the target is version {target}, the reference {reference}: the differences "
            "below are mostly the releases' own"
        )
    out.item(f"reference: {audit.how}" if audit.how else f"reference: {audit.reference}")
    statuses = ("modified", "added", "removed")
    paths = {s: [f.path for f in audit.files if f.status == s] for s in statuses}
    whole = {h.file: h for h in audit.hunks if h.file in {*paths["added"], *paths["removed"]}}
    out.item("files: " + ", ".join(f"{len(paths[s])} {s}" for s in statuses))
    numbers = {hunk: n for n, hunk in enumerate(audit.hunks, 1)}
    out.heading("Traced parameters", 3)
    for diff in audit.params:
        write_param(out, diff, numbers)
    touching = [h for h in audit.hunks if h.params]
    if touching:
        out.heading(f"Hunks that touch a traced chain ({len(touching)})", 3)
        for path, hunks, more in per_file(touching):
            for hunk in hunks:
                out.item(
                    f"#{numbers[hunk]} {out.code(hunk_title(hunk, path in whole))}: "
                    + ", ".join(hunk.params)
                )
                if path not in whole:  # a whole file added or removed: its size, not its lines
                    out.block(hunk.text.splitlines(), "diff")
            write_more(out, path, more)
    if audit.files:
        write_files(out, audit, paths, whole, files)
    quiet = [h for h in audit.hunks if not h.params]
    if quiet:
        out.heading(f"Hunks that touch no traced chain ({len(quiet)})", 3)
        if not files:
            for folder, found in by_folder([h.file for h in quiet]).items():
                files_there = len(set(found))
                out.item(
                    f"{out.code(folder)}: {counted_as(len(found), 'hunk')} in "
                    f"{counted_as(files_there, 'file')}"
                )
            out.item("(--files lists them one by one)")
            return
        for path, hunks, more in per_file(quiet):
            for hunk in hunks:
                out.item(f"#{numbers[hunk]} {out.code(hunk_title(hunk, path in whole))}")
            write_more(out, path, more)


def write_files(
    out: Writer, audit: Audit, paths: dict[str, list[str]], whole: dict[str, Hunk], files: bool
) -> None:
    """The files that differ: counted by folder, or one by one with FILES."""
    out.heading(f"Files ({len(audit.files)})", 3)
    if not files:
        status_of = {f.path: f.status for f in audit.files}
        for folder, found in by_folder([f.path for f in audit.files]).items():
            counts = [(s, sum(status_of[p] == s for p in found)) for s in paths]
            out.item(f"{out.code(folder)}: " + ", ".join(f"{n} {s}" for s, n in counts if n))
        out.item("(--files lists them one by one)")
        return
    for status, listed in paths.items():
        for path in listed:
            hunk = whole.get(path)
            touched = f", touches {', '.join(hunk.params)}" if hunk and hunk.params else ""
            size = f" ({lines_of(hunk)}{touched})" if hunk else ""
            out.item(f"{status}: {out.code(path)}{size}")


def by_folder(paths: list[str]) -> dict[str, list[str]]:
    """PATHS by the folder that holds each (`pkg/sub/`, `./` at the root), folders sorted."""
    found: dict[str, list[str]] = {}
    for path in paths:
        folder = path.rpartition("/")[0]
        found.setdefault(f"{folder}/" if folder else "./", []).append(path)
    return dict(sorted(found.items()))


def counted_as(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def hunk_title(hunk: Hunk, whole: bool) -> str:
    if whole:
        return f"{hunk.file}: {'added' if hunk.added else 'removed'}, {lines_of(hunk)}"
    return hunk_line(hunk)


def lines_of(hunk: Hunk) -> str:
    lines = hunk.added or hunk.removed
    return f"{lines:,} line" + ("" if lines == 1 else "s")


def per_file(hunks: list[Hunk]) -> list[tuple[str, list[Hunk], int]]:
    """HUNKS by file: (file, its first MAX_HUNKS_PER_FILE hunks, how many more it has)."""
    by_file: dict[str, list[Hunk]] = {}
    for hunk in hunks:
        by_file.setdefault(hunk.file, []).append(hunk)
    return [
        (path, found[:MAX_HUNKS_PER_FILE], max(0, len(found) - MAX_HUNKS_PER_FILE))
        for path, found in by_file.items()
    ]


def write_more(out: Writer, path: str, more: int) -> None:
    if more:
        hunks = "hunk" if more == 1 else "hunks"
        out.item(f"… {more} more {hunks} of {out.code(path)} (--format json has them all)")


def summary_rows(audits: Sequence[Audit], failures: Sequence[Failure]) -> list[list[str]]:
    rows = []
    for audit in audits:
        changed = [d.param for d in audit.params if d.changed]
        counts = [sum(f.status == s for f in audit.files) for s in ("modified", "added", "removed")]
        rows.append(
            [
                audit.target,
                audit.reference,
                "{}/{}/{}".format(*counts),
                ", ".join(changed) or "-",
                "CHANGED" if changed else "ok",
            ]
        )
    rows += [[target, "-", "-", "-", f"ERROR: {error}"] for target, error in failures]
    return rows


def write_summary(out: Writer, audits: Sequence[Audit], failures: Sequence[Failure]) -> None:
    head = ["target", "reference", "files mod/add/rm", "chains changed", "status"]
    rows = summary_rows(audits, failures)
    out.heading("Summary", 2)
    if out.markdown:
        out.lines.append("| " + " | ".join(head) + " |")
        out.lines.append("|" + "---|" * len(head))
        out.lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
        return
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head) - 1)]
    for row in [head, *rows]:
        cells = [c.ljust(w) for c, w in zip(row, widths, strict=False)]
        out.lines.append("  " + "  ".join([*cells, row[-1]]))


def report_text(
    audits: Sequence[Audit],
    failures: Sequence[Failure],
    markdown: bool = False,
    files: bool = False,
) -> str:
    """Every audit in turn; a summary table when more than one target was asked; `visible`.
    FILES lists the files and hunks that touch no chain one by one, not by folder."""
    out = Writer(markdown)
    if markdown:
        out.heading("sgtrace audit", 1)
    for audit in audits:
        write_audit(out, audit, files)
    if len(audits) + len(failures) > 1:
        write_summary(out, audits, failures)
    return visible("\n".join(out.lines).strip("\n") + "\n")
