"""A tree and a log full of terminal control sequences (an OSC that sets the window's title,
CSIs that clear the screen and switch to the alternate one, their C1 forms, DEL, a bidi
override) in comments, strings, identifiers and file names: every command, in every format
it prints, shows them as escapes (`\\x1b`) and lets none reach the terminal, on stdout or on
stderr. The walk is tried in a real terminal (tests/tui/test_terminal_hostile.py)."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from tests.unit.test_explain_snippets import LOG, TREE
from tracer.cli.main import main
from tracer.views.terminal import json_text, visible

TITLE = "\x1b]0;OWNED\x07"  # OSC 0: the window's title
CLEAR = "\x1b[2J\x1b[?1049h"  # CSI: clear the screen, then the alternate screen
C1 = "\u009b2J\u009d0;OWNED\u009c"  # the same as C1 controls (CSI, OSC, ST)
OTHERS = "\x7f\r\u202e"  # DEL, a carriage return alone, a right-to-left override
HOSTILE = TITLE + CLEAR + C1 + OTHERS
SHOWN = "\\x1b]0;OWNED\\x07\\x1b[2J\\x1b[?1049h\\x9b2J\\x9d0;OWNED\\x9c\\x7f\\r\\u202e"
# What a terminal acts on: C0 controls but the tab and the line feed, DEL, C1 controls.
CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
OUR_COLOURS = re.compile(r"\x1b\[[0-9;]*m")

RUN = f"""\
def start(fraction):  # {HOSTILE}
    tokens = fraction * 2  # {HOSTILE}
    label = "{HOSTILE}"
    odd{TITLE} = fraction
    return tokens
"""


def controls(text: str) -> list[str]:
    """The characters of TEXT a terminal would act on (line breaks are text)."""
    return CONTROLS.findall(text.replace("\r\n", "\n"))


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The explain snippets' tree and log, each line a step or the log quotes salted with
    HOSTILE; a copy of it changed on a spine line, to audit; files and a folder whose names
    hold control sequences."""
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    files = {rel: textwrap.dedent(text).lstrip("\n") for rel, text in TREE.items()}
    runner = files["pkg/runner.py"]
    for line in ("rest = avail - total * (1 - self.fraction)", "return free"):
        runner = runner.replace(line, f"{line}  # {HOSTILE}")
    files["pkg/runner.py"] = runner
    files["pkg/run.py"] = RUN
    files[f"pkg/esc{CLEAR}.py"] = RUN
    files[f"pkg/title{TITLE}/mod.py"] = RUN
    root, target = tmp_path / "tree", tmp_path / "target"
    for folder, changed in ((root, RUN), (target, RUN.replace("* 2", "* 3"))):
        for rel, text in {**files, "pkg/run.py": changed}.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text)
    log = tmp_path / "server.log"
    log.write_text(
        LOG.replace("Args(fraction=0.85)", f"Args(fraction=0.85) {HOSTILE}").replace(
            "Load end. avail mem=29.00 GB", f"Load end. avail mem=29.00 GB {HOSTILE}"
        )
    )
    return {"root": root, "target": target, "log": log}


def commands(paths: dict[str, Path]) -> list[tuple[int, list[str]]]:
    """Every command, in every format it prints to stdout, with the status it ends with."""
    root, target, log = (str(paths[key]) for key in ("root", "target", "log"))
    trace = ["trace", root, "fraction", "--to", "tokens"]
    export = ["export", root, "fraction", "--to", "tokens"]
    explain = ["explain", root, "--log", log, "--param", "fraction", "--to", "size"]
    audit = ["audit", target, "--against", root, "--param", "fraction", "--to", "tokens"]
    return [
        (0, [*trace, "--warnings"]),
        (0, [*trace, "--json"]),
        (0, [*trace, "--color", "always"]),
        (2, ["trace", root, f"fraction{TITLE}"]),  # an error quoting what it was given
        *((0, [*export, "-f", form]) for form in ("dot", "graphml", "json", "mermaid", "svg")),
        (0, [*export, "--scope", "calls", "-f", "mermaid"]),
        (0, [*export, "--scope", "file", "--file", "pkg/run.py", "-f", "dot"]),
        (0, ["callgraph", root, "--warnings"]),
        (1, explain),  # 1: the log's count is 12% off the formula's
        (1, [*explain, "--json"]),
        *((1, [*audit, "--format", form]) for form in ("text", "markdown", "json")),
    ]


def test_no_command_lets_a_control_character_of_the_tree_or_the_log_through(
    hostile: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    shown: dict[str, str] = {}
    for status, args in commands(hostile):
        code = main(args)
        out, err = capsys.readouterr()
        said = " ".join(args[:1] + args[2:]).replace(str(hostile["log"]), "LOG")
        assert code == status, (said, err)
        if "--color" in args:
            # Its own colours are the only sequences it writes: without them, the plain text.
            plain = main([a for a in args if a not in ("--color", "always")])
            assert (plain, OUR_COLOURS.sub("", out)) == (code, capsys.readouterr().out), said
            out = OUR_COLOURS.sub("", out)
        assert controls(out) == [], said
        assert controls(err) == [], said
        shown[said] = out + err
    # Shown, not dropped: the escapes stand where the sequences were.
    assert shown["trace fraction --to tokens --warnings"].count(SHOWN) == 2
    warnings = shown["trace fraction --to tokens --warnings"].splitlines()
    assert "warning: pkg/esc\\x1b[2J\\x1b[?1049h.py: a name with control characters; skipped" in (
        warnings
    )
    assert shown[f"trace fraction{TITLE}"] == (
        "sgtrace: error: 'fraction\\x1b]0;OWNED\\x07' is bound nowhere in the source: check the "
        "spelling; try the attribute or parameter name alone\n"
        "sgtrace: 3 file(s) had problems and were indexed in part: pkg/title\\x1b]0;OWNED\\x07, "
        "pkg/esc\\x1b[2J\\x1b[?1049h.py and 1 more (--warnings lists them)\n"
    )
    assert (
        "tokens = fraction * 2  #35; \\x1b]0;OWNED"
        in shown["export fraction --to tokens -f mermaid"]
    )
    assert (
        "Load end. avail mem=29.00 GB \\x1b]0;OWNED"
        in shown["explain --log LOG --param fraction --to size"]
    )


def test_json_printed_holds_no_control_character_and_reads_back_whole(
    hostile: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """JSON escapes the controls itself (DEL and C1 too, in ASCII): a program reads the code
    as it is."""
    root = str(hostile["root"])
    assert main(["trace", root, "fraction", "--to", "tokens", "--json"]) == 0
    out = capsys.readouterr().out
    assert controls(out) == [] and "\\u007f" in out
    codes = [node["code"] for node in json.loads(out)["nodes"]]
    assert f"tokens = fraction * 2  # {HOSTILE}" in codes


@pytest.mark.parametrize(
    ("text", "shown_as"),
    [
        (HOSTILE, SHOWN),
        ("tabs\tand\nlines\r\nkept, é and 中 too", "tabs\tand\nlines\r\nkept, é and 中 too"),
        ("\x00\x08\x0b\x0c\x1b\x7f\x80\x9f", "\\x00\\x08\\x0b\\x0c\\x1b\\x7f\\x80\\x9f"),
        (
            "a name's byte \udcff, a zero width joiner \u200d",
            "a name's byte \\xff, a zero width joiner \\u200d",
        ),
    ],
)
def test_visible_shows_what_a_terminal_would_act_on(text: str, shown_as: str) -> None:
    assert visible(text) == shown_as
    assert visible(shown_as) == shown_as  # once is enough
    assert controls(json_text({"text": text})) == []
    assert json.loads(json_text({"text": text})) == {"text": text}
