"""`sgtrace explain SOURCE --log FILE`: a server's log bound to the traced formula, which is
evaluated with the logged values."""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import TYPE_CHECKING

from tracer.cli import presets
from tracer.cli.common import SOURCE_FORMS, Trees, add_common, say
from tracer.cli.logs import log_digest, open_log
from tracer.errors import SgtraceError

if TYPE_CHECKING:
    from tracer.analyses.explain.fit import Fit
    from tracer.analyses.explain.logread import Log
    from tracer.analyses.explain.release import Choice

MAX_GIVEN = 1e15
POOR_FIT = 0.6  # a SOURCE printing fewer of the log's server lines fits it poorly


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "explain", help="bind a server's log to the traced formula and evaluate it"
    )
    parser.add_argument(
        "source",
        metavar="SOURCE",
        nargs="?",
        help=SOURCE_FORMS,
    )
    parser.add_argument(
        "--release",
        choices=("auto",),
        help="auto (also without SOURCE): the release on the index whose logging calls fit "
        "the log best",
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--log", metavar="FILE", help="the server's log; - reads standard input")
    where.add_argument(
        "--journal", metavar="UNIT", help="read UNIT's journal on the source's host (journalctl)"
    )
    parser.add_argument(
        "--param",
        default=presets.EXPLAIN_PARAMETER,
        help=f"the parameter whose formula is explained (default {presets.EXPLAIN_PARAMETER})",
    )
    parser.add_argument(
        "--to", action="append", metavar="NAME", help="end the spine where this name is bound"
    )
    parser.add_argument("--rank", help="the rank to explain, as the log tags it: TP3, DP0 TP1")
    parser.add_argument(
        "--start",
        type=int,
        metavar="N",
        help="the server start to explain, 1 for the log's first (default: the last)",
    )
    parser.add_argument(
        "--tokens", type=int, help="also say which value of the parameter gives this many tokens"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a value the log does not show (e.g. --set mem_fraction_static=0.88)",
    )
    parser.add_argument("--json", action="store_true", help="the explanation as JSON")
    add_common(parser)
    parser.set_defaults(func=run)


def given_values(pairs: list[str]) -> dict[str, float]:
    given: dict[str, float] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            number = float(value)
            if not math.isfinite(number) or abs(number) > MAX_GIVEN:
                raise ValueError
            given[name.strip()] = number
        except ValueError:
            raise SgtraceError(
                f"--set {pair!r} is not NAME=NUMBER", "write it as --set mem_fraction_static=0.88"
            ) from None
    return given


def run(args: argparse.Namespace, trees: Trees) -> int:
    from tracer.analyses.explain.check import verdict
    from tracer.analyses.explain.explain import explain
    from tracer.views.explain_report import explanation_json, explanation_text
    from tracer.views.schemas import EXPLAIN
    from tracer.views.terminal import json_text

    if args.tokens is not None and args.tokens <= 0:
        raise SgtraceError(
            f"--tokens {args.tokens}: a token count is positive", "e.g. --tokens 200000"
        )
    given = given_values(args.set)
    log = open_log(args, trees.ssh)
    source, release = choose_source(args, trees, log)
    session = trees.session(source)
    explanation = explain(
        session,
        log,
        args.param,
        args.to or presets.SINKS,
        rank=args.rank,
        tokens=args.tokens,
        given=given,
        start=args.start,
    )
    said = release_lines(release)
    try:
        if args.json:
            document = {"schema": EXPLAIN, **explanation_json(explanation), "release": release}
            if said and not args.quiet:  # a script reads it in the document
                say("\n".join(said), err=True)
            print(json_text(document, indent=2), flush=True)
        else:
            if said:
                say("\n".join(said), flush=True)
            say(explanation_text(explanation), flush=True)
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (stdout is closed at exit)
    # 0 when the explanation reproduces the logged number, 1 when not (its first line says
    # where it parts from the log); bad input is an SgtraceError, 2.
    return 0 if verdict(explanation).reproduced else 1


def choose_source(
    args: argparse.Namespace, trees: Trees, log: Log
) -> tuple[str, dict[str, object]]:
    """The source to explain the log with, and what decided it (as `release` in the JSON):
    the given SOURCE (with the release that fits best, when it fits poorly), or the release
    that printed the log."""
    from tracer.analyses.explain.fit import fit

    if args.source is not None and args.release is not None:
        raise SgtraceError(
            "give SOURCE or --release auto, not both", "leave out SOURCE to pick the release"
        )
    fits = ReleaseFits(trees, log)
    if args.source is not None:
        given = fit(trees.session(args.source), log)
        if given.score >= POOR_FIT:
            return args.source, release_json(args.source, given, ["given as SOURCE"])
        choice = chosen_release(fits, log)
        best = choice.fit
        if best.label == args.source:
            note = f"{args.source} fits the log poorly ({given.shown}); no release fits it better"
        else:
            note = (
                f"{args.source} fits the log poorly ({given.shown}); {best.label} fits it "
                f"best ({best.shown}); {fits.told(choice.tried)}"
            )
        found = release_json(args.source, given, ["given as SOURCE"], note=note)
        found["best"] = release_json(best.label, best, choice.decided, choice)
        return args.source, found
    choice = chosen_release(fits, log)
    return choice.fit.label, release_json(
        choice.fit.label, choice.fit, choice.decided, choice, told=fits.told(choice.tried)
    )


def release_json(
    source: str,
    found: Fit,
    decided: list[str],
    choice: Choice | None = None,
    note: str | None = None,
    told: str | None = None,
) -> dict[str, object]:
    """What decided the source a log is explained with, as `release` in the JSON."""
    return {
        "source": source,
        "decided_by": decided,
        "fit": {
            "exact": found.exact,
            "loose": found.loose,
            "server_lines": found.lines,
            "score": round(found.score, 4),
        },
        "tried": [
            {"source": f.label, "score": round(f.score, 4)}
            for f in (choice.tried if choice else [])
        ],
        "between": list(choice.between) if choice and choice.between else None,
        "newer_than_every_release": bool(choice and choice.newer),
        "note": note,
        "told": told,
    }


def release_lines(release: dict[str, object]) -> list[str]:
    """The release choice as people read it, first: said only when no SOURCE was given, or
    when the one given fits poorly."""
    if release["note"] is not None:
        return [str(release["note"])]
    if release["decided_by"] == ["given as SOURCE"]:
        return []
    fit = release["fit"]
    assert isinstance(fit, dict)
    decided = "; ".join(str(d) for d in release["decided_by"])  # type: ignore[union-attr]
    told = f"; {release['told']}" if release["told"] else ""
    return [f"Release: {release['source']}, decided by {decided} (fit {fit['score']:.0%}){told}"]


class ReleaseFits:
    """How well each release of the package fits one log: kept from an earlier run (by the
    log's content hash, read when a release is first asked for), else scored by opening the
    release (a download and an index when the cache lacks it) and kept."""

    def __init__(self, trees: Trees, log: Log) -> None:
        self.trees, self.log = trees, log
        self.digest = ""
        self.kept: dict[str, tuple[int, int, int]] = {}
        self.opened = 0  # releases opened by this run

    def __call__(self, version: str) -> Fit:
        from tracer.analyses.explain.fit import Fit, fit
        from tracer.sources.pypi_releases import keep_fits, kept_fits

        label = f"pypi:{presets.PACKAGE}=={version}"
        if not self.digest:
            self.digest = log_digest(self.log)
            self.kept = kept_fits(self.digest)
        if version in self.kept:
            return Fit(label, *self.kept[version])
        found = fit(self.trees.session(label), self.log)
        self.opened += 1
        self.kept[version] = (found.exact, found.loose, found.lines)
        keep_fits(self.digest, {version: self.kept[version]})  # each at once: a stop keeps it
        return found

    def fields(self, version: str, name: str) -> list[tuple[str, ...]]:
        """The fields the classes NAME of a release print: the release downloaded when the
        cache lacks it, only the files that define the class read (no index is made)."""
        from tracer.analyses.explain.fingerprint import declared_fields
        from tracer.sources import open_source
        from tracer.store.facts import Facts

        facts = Facts(open_source(f"pypi:{presets.PACKAGE}=={version}"))
        found = declared_fields(facts, name)
        facts.flush()
        return found

    def told(self, tried: list[Fit]) -> str:
        """The releases tried by their fit, each with its score, and how many this run opened."""
        if not tried:
            return ""
        scores = ", ".join(f"{f.label.rsplit('==', 1)[-1]} {f.score:.0%}" for f in tried)
        return (
            f"tried {len(tried)} ({self.opened} opened now, {len(tried) - self.opened} "
            f"kept from an earlier run): {scores}"
        )


def chosen_release(fits: ReleaseFits, log: Log) -> Choice:
    """The final release of the package that printed LOG (tracer/analyses/explain/release.py)."""
    from tracer.analyses.explain.release import Candidate, choose_release, is_final
    from tracer.sources.pypi_releases import releases

    known = [
        Candidate(r.version, r.uploaded) for r in releases(presets.PACKAGE) if is_final(r.version)
    ]
    return choose_release(log, presets.PACKAGE, known, fits, fits.fields, POOR_FIT)
