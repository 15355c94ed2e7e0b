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

MAX_GIVEN = 1e15
CANDIDATES = 3  # releases tried: the last uploaded before the log
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
    from tracer.views.terminal import json_text

    if args.tokens is not None and args.tokens <= 0:
        raise SgtraceError(
            f"--tokens {args.tokens}: a token count is positive", "e.g. --tokens 200000"
        )
    given = given_values(args.set)
    log = open_log(args, trees.ssh)
    source, said = choose_source(args, trees, log)
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
    text = (
        json_text(explanation_json(explanation), indent=2)
        if args.json
        else explanation_text(explanation)
    )
    try:
        if said:
            say("\n".join(said), flush=True)
        say(text, flush=True)
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (stdout is closed at exit)
    # 0 when the explanation reproduces the logged number, 1 when not (its first line says
    # where it parts from the log); bad input is an SgtraceError, 2.
    return 0 if verdict(explanation).reproduced else 1


def choose_source(args: argparse.Namespace, trees: Trees, log: Log) -> tuple[str, list[str]]:
    """The source to explain the log with, and what to say of the choice first: the given
    SOURCE (and the best-fitting release when it fits poorly), or the best-fitting release."""
    from tracer.analyses.explain.fit import fit

    fits = ReleaseFits(trees, log)
    if args.source is not None and args.release is None:
        given = fit(trees.session(args.source), log)
        if given.score >= POOR_FIT:
            return args.source, []
        best, tried = best_release(fits, log)
        return args.source, [
            f"{args.source} fits the log poorly ({given.shown}); "
            f"{best.label} fits it best ({best.shown}); {fits.told(tried)}"
        ]
    if args.source is not None:
        raise SgtraceError(
            "give SOURCE or --release auto, not both", "leave out SOURCE to pick the release"
        )
    best, tried = best_release(fits, log)
    return best.label, [f"Release: {best.label}, the best fit ({best.shown}); {fits.told(tried)}"]


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

    def told(self, tried: list[Fit]) -> str:
        """The releases tried, each with its score, and how many this run opened."""
        scores = ", ".join(f"{f.label.rsplit('==', 1)[-1]} {f.score:.0%}" for f in tried)
        return (
            f"tried {len(tried)} ({self.opened} opened now, {len(tried) - self.opened} "
            f"kept from an earlier run): {scores}"
        )


def best_release(fits: ReleaseFits, lines: Log) -> tuple[Fit, list[Fit]]:
    """The final release of the package whose logging calls fit LINES best (ties: the newer,
    and the newest post-release of the version that could have printed the log),
    and the fits of those tried: the release the log names first, kept when it fits; then
    those uploaded last before the log's dates, or, for a log without dates, samples of every
    minor series refined within the best one."""
    from tracer.analyses.explain.fit import log_dates, named_version, newest_best, search_undated
    from tracer.sources.pypi_releases import releases

    known = [r for r in releases(presets.PACKAGE) if is_final(r.version)]
    versions = [r.version for r in known]
    if not versions:
        raise SgtraceError(
            f"no final release of {presets.PACKAGE} on the index",
            "give SOURCE: pypi:NAME==VERSION, a folder or host:/path",
        )
    tried: dict[str, Fit] = {}
    named = named_version(lines, presets.PACKAGE)
    if named is not None:
        version = nearest(named, versions)
        tried[version] = fits(version)
        if tried[version].score >= POOR_FIT:
            return tried[version], list(tried.values())
    dates = log_dates(lines)
    if dates is None:
        tried |= search_undated(versions, fits)
    else:
        before = sorted(
            (r for r in known if r.uploaded and r.uploaded <= dates[1]), key=lambda r: r.uploaded
        )
        if not before and not tried:
            raise SgtraceError(
                f"no release of {presets.PACKAGE} on the index is older than the log",
                "give SOURCE: pypi:NAME==VERSION, a folder or host:/path",
            )
        tried |= {r.version: fits(r.version) for r in before[-CANDIDATES:]}
    best = newest_best(versions, tried)
    # A post-release uploaded after the log's dates did not print it.
    possible = [r.version for r in known if dates is None or (r.uploaded or "") <= dates[1]]
    tried |= later_posts(best, possible, tried, fits)
    return tried[newest_best(versions, tried)], list(tried.values())


def later_posts(
    best: str, versions: list[str], tried: dict[str, Fit], fits: ReleaseFits
) -> dict[str, Fit]:
    """The post-releases of BEST's version among VERSIONS newer than it (0.4.2.post4 beside
    0.4.2.post3), when another post-release of that version fits as well as BEST: a tie
    between post-releases, which differ in fixes rather than in what they log, goes to the
    newest."""
    base = best.split(".post")[0]
    same = [v for v in versions if v == base or v.startswith(base + ".post")]
    if best not in same:
        return {}
    top = tried[best].score
    if not any(v != best and v in same and tried[v].score == top for v in tried):
        return {}
    out: dict[str, Fit] = {}
    for version in same[same.index(best) + 1 :]:
        if version not in tried:
            out[version] = fits(version)
    return out


def nearest(named: str, versions: list[str]) -> str:
    """The release of VERSIONS (in order) that NAMED is, or the newest before it (a build not
    on the index: a nightly, a dev or rc build), or the oldest when all are newer."""
    from tracer.sources.pypi_index import version_key, version_order

    exact = [v for v in versions if version_key(v) == version_key(named)]
    if exact:
        return exact[0]
    older = [v for v in versions if version_order(v) <= version_order(named)]
    same = [v for v in versions if version_key(v)[0] == version_key(named)[0]]
    if same and (not older or older[-1] not in same):  # 0.5.10.dev0: a build of 0.5.10
        return same[0]
    return older[-1] if older else versions[0]


def is_final(version: str) -> bool:
    return not any(mark in version for mark in ("rc", "a", "b", "dev"))
