"""A cap that binds: a setting of the start named like the result (`max_total_tokens` for
`max_total_num_tokens`) whose value is the logged result, so the count is that cap, not what the
formula gives."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from tracer.analyses.explain.logread import LogLine
from tracer.analyses.explain.match import Observation
from tracer.analyses.explain.settings import owner, to_float

# A number given to a setting: `name=8192` in a settings print, `'name': 8192` in a printed
# dict of settings, `--name 8192` on a command line.
SETTING_VALUE = re.compile(
    r"(?:(?<![\w-])(?P<flag>--[a-z][\w-]*)(?:=|\s+)|\b(?P<field>[a-z_]\w*)="
    r"|['\"](?P<key>[a-z_]\w*)['\"]:\s*)"
    r"(?P<v>\d+)(?![\w.])"
)


@dataclass(frozen=True, slots=True)
class Cap:
    """A setting the log shows whose value is the logged result: a cap that binds."""

    name: str  # "ServerArgs.max_total_tokens", "--max-total-tokens"
    value: float
    line: int  # the log line that shows it


def logged_cap(observed: Observation, lines: list[LogLine], sinks: Iterable[str]) -> Cap | None:
    """A setting in LINES named like the result (its words all in the result's name:
    `max_total_tokens` for `max_total_num_tokens`) whose value is the logged result: the count
    is that cap, not the formula's."""
    words = {w for name in (observed.hole.expr, *sinks) for w in words_of(name)}
    for line in lines:
        for found in SETTING_VALUE.finditer(line.message):
            key = found["flag"] or found["field"] or found["key"]
            if not words_of(key) <= words or to_float(found["v"]) != observed.value:
                continue
            if found["field"]:
                printed = owner(line.message, found.start())
                if not printed or not printed[0].isupper():
                    continue
                key = f"{printed}.{key}"
            elif found["key"]:
                printed = owner(line.message, found.start())
                if not printed:
                    continue  # a dict of settings is printed with its label
                key = f"{printed}[{key!r}]"
            return Cap(key, float(found["v"]), line.number)
    return None


def words_of(name: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", name.rsplit(".", 1)[-1].lower()) if w}
