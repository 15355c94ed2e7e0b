"""`global` and `nonlocal`: which function declares which name, and whose variable it is then
(the module's, or the nearest function around that binds it itself)."""

from __future__ import annotations

from textwrap import dedent

from tracer.extract.facts import MODULE_SCOPE
from tracer.extract.parse import parse
from tracer.extract.symbols import summarize

SOURCE = """
    count = 0

    def bump():
        global count, seen
        count += 1

    def outer(limit):
        total = 0

        def middle():
            def inner():
                nonlocal total, limit
                total = limit

            inner()

        class Holder:
            global count

        middle()
        return total
"""


def test_each_function_declares_the_names_its_own_body_declares() -> None:
    summary = summarize(parse(dedent(SOURCE).encode()))
    declared = {f.qualname: f.declared for f in summary.functions}
    assert declared["bump"] == (("count", "global"), ("seen", "global"))
    assert declared["outer.middle.inner"] == (("total", "nonlocal"), ("limit", "nonlocal"))
    # A class body's declaration is none of the function around it.
    assert declared["outer"] == ()
    assert declared["outer.middle"] == ()


def test_a_declared_name_is_the_variable_of_the_scope_that_binds_it(snippet_session) -> None:
    session = snippet_session({"m.py": dedent(SOURCE)})
    tables = session.graph.file("m.py")
    assert tables.declared == {
        ("bump", "count"): MODULE_SCOPE,
        ("bump", "seen"): MODULE_SCOPE,
        # middle binds neither: the variables are outer's (a parameter is bound too).
        ("outer.middle.inner", "total"): "outer",
        ("outer.middle.inner", "limit"): "outer",
    }
    assert tables.declarers[("outer", "total")] == ["outer.middle.inner"]
