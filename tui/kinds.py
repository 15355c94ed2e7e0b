"""How each kind of step looks: a glyph, a short word and a colour (Rich style names)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class KindLook:
    glyph: str
    word: str
    colour: str


KIND_LOOKS = {
    "cli_flag": KindLook("»", "flag", "magenta"),
    "field": KindLook("■", "field", "cyan"),
    "attr_write": KindLook("✎", "write", "yellow"),
    "attr_read": KindLook("◇", "read", "bright_cyan"),
    "call_arg": KindLook("→", "arg", "blue"),
    "param": KindLook("▸", "param", "bright_blue"),
    "local_assign": KindLook("=", "local", "white"),
    "return": KindLook("↩", "return", "green"),
    "formula": KindLook("ƒ", "formula", "bold red"),
    "sink": KindLook("◉", "sink", "bold bright_yellow"),
    "use": KindLook("·", "use", "bright_black"),
}
UNKNOWN = KindLook("?", "step", "white")
WORD_WIDTH = max(len(look.word) for look in KIND_LOOKS.values())


def look_of(kind: str) -> KindLook:
    return KIND_LOOKS.get(kind, UNKNOWN)
