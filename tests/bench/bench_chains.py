"""Benchmark: how much of each chain written by hand from the code (tests/integration/chains/)
the spine of `sgtrace trace SOURCE NAME --json` holds, run as a user runs it (no `--to`), and
again with `--to` the name the chain ends in (does a sink help?).

Run from the repo root (each release is fetched once into the user cache; vLLM's wheel is
320 MB):

    python -m tests.bench.bench_chains [--chain NAME]... [--show-steps] [--json PATH]
    python -m tests.bench.bench_chains --against REV     # beside the code at git revision REV

A chain file (NAME.txt) starts with `#` lines: `# source: pypi:sglang==0.5.9`, `# name: NAME`
(what is traced), `# to: NAME` (the name bound at the chain's last step, given to `--to`), and
prose saying where the chain starts and ends and why. Then one step a line, origin first:
`PATH:LINE  KIND  CODE` (two spaces or more between the three), PATH relative to the release
root, LINE the first line of the statement (of the argument, for an argument written on a line
of its own; of the parameter, for a parameter), CODE that line stripped (a parameter: the
parameter as written, without its trailing comma), KIND one of the trace contract's step kinds.

Scoring. A hand step is held by a spine step when both name the same file, their code is the same
(first line, stripped, runs of blanks as one) and their lines are at most DRIFT apart (the line
may drift a little between how a step is written by hand and where sgtrace puts it). A chain's
score is k of n: the most hand steps held by spine steps in the same order (a longest common
subsequence; each spine step holds one hand step at most, so a line that is two steps, an
argument and a return, needs two spine steps). `k` counts a carrier's steps the spine walks for
another value than the chain's (a record that holds both) as held; two figures do not: `trail`,
the hand steps held before the spine leaves the chain (its first step, past the first held one,
that holds no hand step: the spine may skip hand steps and still follow the chain, but not take
a step of its own), and `prefix`, the hand steps from the first that are all held. Reported with
them: the first hand step not held, and the spine step where the spine leaves the chain. A trace
that fails holds nothing: its error's last line is reported.

Each trace is one run of `python -m tracer.cli trace ...` (the `sgtrace` command) in a new process,
with the user's cache; its seconds include indexing the release the first time.

`--against REV` runs this benchmark on the tracer at git revision REV (a copy of its `tracer/`
and `queries/`, in a new process, over today's chain files) and prints its figures beside
today's.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tests.bench.revision import tracer_at

REPO_ROOT = Path(__file__).resolve().parents[2]
CHAINS = REPO_ROOT / "tests" / "integration" / "chains"
DRIFT = 3  # lines a held step may be away from the hand step
STEP_LINE = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+)\s{2,}(?P<kind>\w+)\s{2,}(?P<code>\S.*)$")
HEADER = re.compile(r"^#\s*(?P<key>source|name|to):\s*(?P<value>\S+)\s*$")
COUNT = re.compile(r"^#\s*(?P<count>\d+) steps\.\s*$")
RUNS = ("user", "sink")  # as a user runs it; with --to the chain's last name


# -- chains -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Step:
    """One step: a hand step of a chain, or a step of sgtrace's spine."""

    path: str
    line: int
    kind: str
    code: str  # the first line, stripped

    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True, slots=True)
class Chain:
    name: str  # the file's stem
    source: str
    param: str
    to: str
    steps: tuple[Step, ...]


class ChainFileError(ValueError):
    """A chain file that does not read: which file, which line, what is wrong."""


def read_chain(path: Path) -> Chain:
    """The chain in PATH; a ChainFileError naming the line that does not read, a header line
    missing, or a count (`# N steps.`) that is not the number of steps."""
    header: dict[str, str] = {}
    steps = []
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if text.startswith("#"):
            if found := HEADER.match(text):
                header[found["key"]] = found["value"]
            elif found := COUNT.match(text):
                header["count"] = found["count"]
            continue
        if not text.strip():
            continue
        found = STEP_LINE.match(text.strip())
        if not found:
            raise ChainFileError(f"{path.name}:{number}: not PATH:LINE  KIND  CODE: {text!r}")
        steps.append(Step(found["path"], int(found["line"]), found["kind"], found["code"]))
    missing = [key for key in ("source", "name", "to") if key not in header]
    if missing:
        raise ChainFileError(f"{path.name}: no `# {missing[0]}:` line")
    if not steps:
        raise ChainFileError(f"{path.name}: no step")
    if "count" in header and int(header["count"]) != len(steps):
        raise ChainFileError(f"{path.name}: says {header['count']} steps, holds {len(steps)}")
    return Chain(path.stem, header["source"], header["name"], header["to"], tuple(steps))


def chain_files(folder: Path, names: Sequence[str] | None = None) -> list[Path]:
    """The chain files in FOLDER, by name; only NAMES (stems) if given."""
    files = sorted(folder.glob("*.txt"))
    return [f for f in files if not names or f.stem in names]


# -- scoring ----------------------------------------------------------------------------------


def same_code(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def on_its_line(step: Step, line: str) -> bool:
    """Whether LINE (of the release) is STEP's: the line stripped is its code; for a parameter,
    the line holds the parameter whole (after `(`, `,` or a blank; before `,`, `)`, `=` or the
    end)."""
    if step.kind != "param":
        return same_code(line.strip(), step.code)
    whole = r"(?:^|[(,\s])" + re.escape(step.code) + r"\s*(?:[,)=]|$)"
    return re.search(whole, line.strip()) is not None


def holds(spine_step: Step, hand_step: Step) -> bool:
    """Whether SPINE_STEP is HAND_STEP: same file, same code, lines at most DRIFT apart."""
    return (
        spine_step.path == hand_step.path
        and abs(spine_step.line - hand_step.line) <= DRIFT
        and same_code(spine_step.code, hand_step.code)
    )


def alignment(hand: Sequence[Step], spine: Sequence[Step]) -> list[tuple[int, int]]:
    """(hand index, spine index) pairs of a longest in-order matching of HAND to SPINE; of the
    longest ones, the one that holds the earliest hand steps, each as early in the spine as it
    can."""
    rest = [[0] * (len(spine) + 1) for _ in range(len(hand) + 1)]  # best over hand[i:], spine[j:]
    for i in range(len(hand) - 1, -1, -1):
        for j in range(len(spine) - 1, -1, -1):
            took = rest[i + 1][j + 1] + 1 if holds(spine[j], hand[i]) else 0
            rest[i][j] = max(took, rest[i + 1][j], rest[i][j + 1])
    pairs, i, j = [], 0, 0
    while i < len(hand) and j < len(spine):
        if holds(spine[j], hand[i]) and rest[i][j] == rest[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif rest[i][j + 1] == rest[i][j]:  # hand[i] may still be held further on
            j += 1
        else:
            i += 1
    return pairs


@dataclass(frozen=True, slots=True)
class Score:
    """One chain against one spine; indexes are 0-based."""

    steps: int  # n, the hand steps
    held: int  # k
    trail: int  # held before the spine first leaves the chain
    prefix: int  # hand steps from the first, all held
    spine: int  # the spine's length
    first_miss: int | None = None  # the first hand step not held
    leave: int | None = None  # the spine step where the spine leaves the chain
    pairs: tuple[tuple[int, int], ...] = ()  # (hand step, spine step) held
    error: str = ""
    seconds: float = 0.0


def score(hand: Sequence[Step], spine: Sequence[Step]) -> Score:
    """How much of HAND the spine SPINE holds, in order. The spine leaves the chain at its first
    step past the first held one that holds no hand step (the spine may skip hand steps
    without leaving: it still goes from one hand step to a later one)."""
    pairs = alignment(hand, spine)
    held = {i for i, _ in pairs}
    holding = {j for _, j in pairs}
    first_miss = next((i for i in range(len(hand)) if i not in held), None)
    start = pairs[0][1] if pairs else len(spine)
    leave = next((j for j in range(start, len(spine)) if j not in holding), None)
    trail = sum(1 for _, j in pairs if leave is None or j < leave)
    prefix = first_miss if first_miss is not None else len(hand)
    return Score(len(hand), len(pairs), trail, prefix, len(spine), first_miss, leave, tuple(pairs))


# -- running sgtrace --------------------------------------------------------------------------


def spine_of(trace: dict[str, Any]) -> list[Step]:
    """The spine of a `sgtrace trace --json` answer, as steps."""
    nodes = {n["id"]: n for n in trace["nodes"]}
    spine = []
    for step_id in trace["spine"]:
        node = nodes[step_id]
        lines = node["code"].splitlines()
        spine.append(
            Step(node["file"], node["line"], node["kind"], lines[0].strip() if lines else "")
        )
    return spine


def traced(chain: Chain, to: str | None, code_root: Path) -> tuple[list[Step], str, float]:
    """The spine of `sgtrace trace SOURCE NAME --json [--to TO]` run by the tracer in
    CODE_ROOT, in a new process; an error's first line instead when it fails; seconds taken."""
    command = [sys.executable, "-m", "tracer.cli", "trace", chain.source, chain.param, "--json"]
    command += ["--to", to] if to else []
    start = time.perf_counter()
    done = subprocess.run(command, cwd=code_root, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    # Exit status 1 with a document whose `to_reached` is false: --to was not reached, and the
    # chain it has is printed all the same (docs/DESIGN.md): scored, not an error.
    unreached = done.returncode == 1 and bool(to) and done.stdout.lstrip().startswith("{")
    if done.returncode != 0 and not unreached:
        lines = done.stderr.strip().splitlines()
        return [], lines[-1] if lines else f"exit status {done.returncode}", seconds
    try:
        document = json.loads(done.stdout)
        if unreached and document.get("to_reached") is not False:
            return [], f"exit status 1: {done.stderr.strip()[:200]}", seconds
        return spine_of(document), "", seconds
    except (ValueError, KeyError) as error:
        return [], f"unreadable JSON: {error}", seconds


@dataclass
class Result:
    chain: Chain
    scores: dict[str, Score] = field(default_factory=dict)  # by run: user, to
    spines: dict[str, list[Step]] = field(default_factory=dict)


def run_chain(chain: Chain, code_root: Path) -> Result:
    result = Result(chain)
    for run in RUNS:
        spine, error, seconds = traced(chain, chain.to if run == "sink" else None, code_root)
        result.scores[run] = replace(score(chain.steps, spine), error=error, seconds=seconds)
        result.spines[run] = spine
    return result


def run_against(rev: str, folder: Path, names: Sequence[str] | None) -> dict[str, Any]:
    """The report of this benchmark run on the tracer at git revision REV, in a new process."""
    with tempfile.TemporaryDirectory(prefix="sgtrace-bench-chains-against-") as tmp:
        code = tracer_at(rev, Path(tmp), Path(__file__))
        out = Path(tmp) / "report.json"
        command = [sys.executable, "-m", "tests.bench.bench_chains", "--chains", str(folder)]
        command += ["--json", str(out)]
        for name in names or ():
            command += ["--chain", name]
        done = subprocess.run(command, cwd=code, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"the benchmark at {rev} failed:\n{done.stderr.strip()}")
        report = json.loads(out.read_text())
        if not report["engine"].startswith(str(code.resolve())):
            sys.exit(f"the benchmark at {rev} ran the tracer in {report['engine']}, not its copy")
    return {**report, "revision": short_revision(rev)}


# -- the report -------------------------------------------------------------------------------


def totals(results: Iterable[Result]) -> dict[str, list[int]]:
    """[k, n] summed over the chains, by run."""
    sums = {run: [0, 0] for run in RUNS}
    for result in results:
        for run in RUNS:
            sums[run][0] += result.scores[run].held
            sums[run][1] += result.scores[run].steps
    return sums


def step_json(step: Step) -> dict[str, Any]:
    return {"where": step.where(), "kind": step.kind, "code": step.code}


def score_json(found: Score, chain: Chain, spine: Sequence[Step]) -> dict[str, Any]:
    """FOUND as JSON, steps numbered from 1."""
    data: dict[str, Any] = {
        "held": found.held,
        "steps": found.steps,
        "trail": found.trail,
        "prefix": found.prefix,
        "spine": found.spine,
        "seconds": round(found.seconds, 2),
        "pairs": [[i + 1, j + 1] for i, j in found.pairs],
    }
    if found.error:
        data["error"] = found.error
    if found.first_miss is not None:
        data["first_miss"] = {
            "step": found.first_miss + 1,
            **step_json(chain.steps[found.first_miss]),
        }
    if spine and (not found.pairs or found.pairs[0][1] > 0):  # the spine starts off the chain
        data["start"] = {"step": 1, **step_json(spine[0])}
    if found.leave is not None:
        after = [i for i, j in found.pairs if j < found.leave]
        data["leave"] = {"step": found.leave + 1, **step_json(spine[found.leave])}
        data["leave"]["after_hand_step"] = after[-1] + 1 if after else None
    return data


def report_json(
    results: list[Result], revision: str, against: dict[str, Any] | None
) -> dict[str, Any]:
    import tracer

    chains = []
    for result in results:
        chain = result.chain
        runs = {run: score_json(result.scores[run], chain, result.spines[run]) for run in RUNS}
        chains.append(
            {"chain": chain.name, "source": chain.source, "name": chain.param, "to": chain.to}
            | runs
        )
    return {
        "revision": revision,
        "engine": str(Path(tracer.__file__).resolve().parent),
        "drift": DRIFT,
        "chains": chains,
        "total": totals(results),
        "against": against,
    }


COLUMNS = ("held", "trail", "prefix")


def cells(run: dict[str, Any], columns: Sequence[str]) -> str:
    return "  ".join(f"{run[c]:>{max(len(c), 4)}}" for c in columns)


def table_text(report: dict[str, Any], show_steps: bool, results: list[Result]) -> str:
    against = report["against"]
    before = {c["chain"]: c for c in against["chains"]} if against else {}
    width = max([len(c["chain"]) for c in report["chains"]] + [5])
    names = "  ".join(f"{c:>{max(len(c), 4)}}" for c in COLUMNS)
    header = f"{'chain':<{width}}  {'steps':>5}  {names}  |  {names}"
    if against:
        header += f"  ||  {names}  |  {names}"
    lines = [f"Hand chains against sgtrace's spine; code {report['revision']}"]
    over = f"{'':<{width}}  {'':>5}  {'no --to':<{len(names)}}  |  {'--to NAME':<{len(names)}}"
    if against:
        over += f"  ||  at {against['revision']}: no --to, then --to NAME"
    lines += [over.rstrip(), header, "-" * len(header)]
    for chain in report["chains"]:
        row = f"{chain['chain']:<{width}}  {chain['user']['steps']:>5}  "
        row += cells(chain["user"], COLUMNS) + "  |  " + cells(chain["sink"], COLUMNS)
        was = before.get(chain["chain"])
        if was:
            row += "  ||  " + cells(was["user"], COLUMNS) + "  |  " + cells(was["sink"], COLUMNS)
        lines.append(row)
    lines.append("-" * len(header))
    total = report["total"]
    row = f"{'total held':<{width}}  {total['user'][1]:>5}  {total['user'][0]:>4}"
    row += f"  {'':<{len(names) - 4}}|  {total['sink'][0]:>4}"
    if against:
        row += f"  {'':<{len(names) - 4}}||  {against['total']['user'][0]:>4}"
        row += f"  {'':<{len(names) - 4}}|  {against['total']['sink'][0]:>4}"
    lines.append(row)
    for chain in report["chains"]:
        lines.append("")
        lines.append(f"{chain['chain']} ({chain['source']} {chain['name']}, --to {chain['to']})")
        for run, label in (("user", "no --to"), ("sink", f"--to {chain['to']}")):
            lines += miss_lines(chain[run], label)
    if show_steps:
        for result in results:
            lines += steps_lines(result)
    return "\n".join(lines)


def miss_lines(run: dict[str, Any], label: str) -> list[str]:
    lines = [
        f"  {label}: {run['held']} of {run['steps']} held, trail {run['trail']}, "
        f"prefix {run['prefix']}, spine of {run['spine']}, {run['seconds']:.1f} s"
    ]
    if "error" in run:
        lines.append(f"    error: {run['error']}")
    if "first_miss" in run:
        miss = run["first_miss"]
        lines.append(f"    first miss: hand step {miss['step']} {miss['where']} {miss['kind']}")
        lines.append(f"        {miss['code']}")
    if "start" in run:
        start = run["start"]
        lines.append(f"    starts off the chain: spine step 1 {start['where']} {start['kind']}")
        lines.append(f"        {start['code']}")
    if "leave" in run:
        leave = run["leave"]
        after = leave["after_hand_step"]
        lines.append(
            f"    leaves the chain after hand step {after}: spine step {leave['step']} "
            f"{leave['where']} {leave['kind']}"
        )
        lines.append(f"        {leave['code']}")
    return lines


def steps_lines(result: Result) -> list[str]:
    """Every hand step, marked with the spine step that holds it (no --to), then each spine,
    every step marked with the hand step it holds."""
    name = result.chain.name
    pairs = result.scores["user"].pairs
    held = dict(pairs)
    lines = ["", f"{name}: hand steps (+ N: held by spine step N, no --to)"]
    for i, step in enumerate(result.chain.steps):
        mark = f"+ {held[i] + 1:>3}" if i in held else "-    "
        lines.append(f"  {mark} {i + 1:>3}. {step.where()}  {step.kind}  {step.code}")
    for run, label in (("user", "no --to"), ("sink", f"--to {result.chain.to}")):
        holding = {j: i for i, j in result.scores[run].pairs}
        lines.append(f"{name}: spine, {label} (+ N: holds hand step N)")
        for j, step in enumerate(result.spines[run]):
            mark = f"+ {holding[j] + 1:>3}" if j in holding else "-    "
            lines.append(f"  {mark} {j + 1:>3}. {step.where()}  {step.kind}  {step.code}")
    return lines


def short_revision(rev: str) -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", rev], cwd=REPO_ROOT, capture_output=True, text=True
    )
    return done.stdout.strip() or rev


def code_revision() -> str:
    done = subprocess.run(
        ["git", "describe", "--always", "--dirty"], cwd=REPO_ROOT, capture_output=True, text=True
    )
    return done.stdout.strip() or "unknown"


# -- command line -----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    cli = argparse.ArgumentParser(
        description="How much of each hand-written chain sgtrace's spine holds."
    )
    cli.add_argument("--chain", action="append", help="only this chain (file stem, repeatable)")
    cli.add_argument("--chains", type=Path, default=CHAINS, help="the folder of chain files")
    cli.add_argument("--show-steps", action="store_true", help="every hand step, held or not")
    cli.add_argument("--json", type=Path, help="also write the report as JSON to this file")
    cli.add_argument("--against", metavar="REV", help="also score the tracer at git REV")
    args = cli.parse_args(argv)
    files = chain_files(args.chains, args.chain)
    unknown = set(args.chain or ()) - {f.stem for f in files}
    if unknown:
        cli.error(f"no such chain: {', '.join(sorted(unknown))}")
    try:
        chains = [read_chain(f) for f in files]
    except ChainFileError as error:
        cli.error(str(error))
    results = [run_chain(chain, REPO_ROOT) for chain in chains]  # today's tracer, or REV's copy
    against = run_against(args.against, args.chains.resolve(), args.chain) if args.against else None
    report = report_json(results, code_revision(), against)
    print(table_text(report, args.show_steps, results))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
