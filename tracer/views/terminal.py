"""The one way text from outside reaches a terminal. A tree's code, comments, strings and
names, a log's lines, a host's answers: any of them may hold ESC, CSI, OSC or C1 sequences
that would set the window's title, clear the screen or switch to the alternate screen.
Every command, every format printed to stdout and the walk pass such text through `visible`
(JSON through `json_text`), so its control characters are shown, never acted on."""

from __future__ import annotations

import json
import re

from tracer.errors import escaped

# What may need escaping: all but printable ASCII, the tab and a line break (a carriage
# return only before a line feed: alone, it moves back over what the line showed).
SUSPECT = re.compile(r"[^\x20-\x7e\t\n\r]|\r(?!\n)")


def visible(text: str) -> str:
    """TEXT with every character that is not printable (C0 controls but the tab and the line
    break, DEL, C1 controls, bidi overrides, a name's undecodable bytes) written as Python
    writes it in a string, `\\x1b`; printable characters, tabs and lines kept. Showing the
    result again changes nothing."""
    return SUSPECT.sub(shown_char, text)


def shown_char(match: re.Match[str]) -> str:
    char = match[0]
    return char if char.isprintable() else escaped(char)


def json_text(value: object, indent: int | None = None, sort_keys: bool = False) -> str:
    """VALUE as JSON in ASCII: every control character in its strings (C0, DEL and C1, which
    `ensure_ascii=False` would leave raw) written as `\\u001b`, so JSON printed to a terminal
    acts on none, and a program reads the text back whole."""
    return json.dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=True)
