"""What a function returned, read from the log when it logs what it returns: a function that
prints its result on one path and returns a constant on the others (a reservation logged
when it reserves, `return 0.0` when it does not) returned that constant when the log holds
no line of its own."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tracer.analyses.explain.arith import statement_value
from tracer.analyses.explain.templates import Template, file_templates
from tracer.extract.parse import text

RETURN = re.compile(r"^[ \t]*return\b(?P<value>[^\n#]*)", re.M)
NUMBER_LITERAL = ("integer", "float")


@dataclass(frozen=True, slots=True)
class LoggedReturns:
    """The logging calls of a function that print a value it returns, and the constants
    its other returns give."""

    function: str
    logs: tuple[Template, ...]  # the calls that print what it returns
    constants: tuple[float, ...]  # what its constant returns give


def logged_returns(function: str, path: str, source: bytes, body: str) -> LoggedReturns | None:
    """FUNCTION (its BODY, from the file PATH holding SOURCE) as LoggedReturns, or None when
    none of its logging calls prints a value it returns."""
    returned: set[str] = set()
    constants: list[float] = []
    for found in RETURN.finditer(body):
        node = statement_value("return " + found["value"].strip())
        if node is None:
            continue
        if node.type in NUMBER_LITERAL:
            constants.append(float(text(node).replace("_", "")))
        else:
            returned.add(flat(text(node)))
    logs = tuple(
        t
        for t in file_templates(path, source)
        if t.symbol.rsplit(".", 1)[-1] == function
        and any(flat(h.expr) in returned for h in t.holes)
    )
    if not logs:
        return None
    return LoggedReturns(function, logs, tuple(dict.fromkeys(constants)))


def flat(expression: str) -> str:
    return "".join(expression.split())
