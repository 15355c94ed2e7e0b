"""`global` and `nonlocal`: which function declares which name, and whose variable it is then
(the module's, or the nearest function around that binds it itself)."""

from __future__ import annotations

from textwrap import dedent

from tracer.extract.facts import MODULE_SCOPE
from tracer.extract.parse import parse
from tracer.extract.symbols import summarize
from tracer.trace.chains import trace

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


CONFIG_TREE = {
    "pkg/__init__.py": "from .conf import LIMIT\n",
    "pkg/conf.py": """
        LIMIT = 4096
        CURRENT = None

        def install(value):
            global CURRENT
            CURRENT = value
    """,
    "main.py": """
        import pkg.conf
        from pkg import LIMIT
        from pkg.conf import CURRENT

        def sizes(budget):
            pkg.conf.install(budget)
            seen = pkg.conf.CURRENT
            copied = CURRENT
            doubled = LIMIT * 2
            return seen, copied, doubled
    """,
}


def reads_of(session, name: str, direction: str) -> set[tuple[str, int]]:
    chain = trace(session.graph, name, direction=direction, max_depth=20, branch_depth=20)
    steps = {s.id: s for s in chain.steps}
    return {(steps[e.dst].file, steps[e.dst].line) for e in chain.edges if e.dst in steps}


def test_a_module_global_is_read_where_it_is_imported_or_read_as_an_attribute(snippet_session):
    session = snippet_session(CONFIG_TREE)  # its files dedented, their first line the code's
    # `from pkg import LIMIT` (re-exported by the package) reads conf's own binding.
    assert ("main.py", 9) in reads_of(session, "LIMIT", "forward")
    found = reads_of(session, "budget", "forward")
    # `pkg.conf.CURRENT` is read after install ran: it sees the function's global write;
    # `from pkg.conf import CURRENT` took what conf's module code bound at import: it does not.
    assert ("main.py", 7) in found
    assert ("main.py", 8) not in found
    # Both ways: backward from `seen`, the function's write and the module's own binding.
    chain = trace(session.graph, "seen", direction="backward", max_depth=20, branch_depth=20)
    assert {(s.file, s.line) for s in chain.steps} >= {("pkg/conf.py", 2), ("pkg/conf.py", 6)}
    chain = trace(session.graph, "copied", direction="backward", max_depth=20, branch_depth=20)
    assert ("pkg/conf.py", 6) not in {(s.file, s.line) for s in chain.steps}


def test_a_function_storing_into_a_name_it_never_binds_stores_into_the_scope_around(
    snippet_session,
):
    source = """
        REGISTRY = {}

        def register(key, value):
            REGISTRY[key] = value
            make()[key] = value  # into a call's result: no name
            holder.table[key] = value  # into an attribute: no name

        def outer():
            seen = {}
            local = {}

            def note(key):
                seen[key] = True
                seen.update(last=key)
                local = {}
                local["x"] = key

            note("a")
            return seen
    """
    tables = snippet_session({"m.py": source}).graph.file("m.py")
    assert tables.mutated == {("register", "REGISTRY"), ("outer.note", "seen")}
    assert tables.declared == {
        ("register", "REGISTRY"): MODULE_SCOPE,
        ("outer.note", "seen"): "outer",
    }


def test_stores_aliases_and_the_order_of_the_functions_that_store(snippet_session):
    session = snippet_session(
        {
            "reg.py": """
                REG = {}
                REG.update(base=1)

                def reg_c(value):
                    REG["c"] = value

                def reg_a(value):
                    REG["a"] = value

                def reg_b(value):
                    REG["b"] = value
            """,
            "use.py": """
                from reg import REG as TABLE

                def read():
                    got = TABLE
                    return got
            """,
        }
    )
    tables = session.graph.file("reg.py")
    # In a fixed order, whatever the hash seed (the functions' names sorted).
    assert tables.declarers[(MODULE_SCOPE, "REG")] == ["reg_a", "reg_b", "reg_c"]
    # `from reg import REG as TABLE`: read under its alias, both ways, with the module's
    # own store (`REG.update(...)`) and the functions' stores.
    forward = reads_of(session, "REG", "forward")
    assert ("use.py", 4) in forward
    chain = trace(session.graph, "got", direction="backward", max_depth=20, branch_depth=20)
    lines = {(s.file, s.line) for s in chain.steps}
    assert {("reg.py", 1), ("reg.py", 2), ("reg.py", 5)} <= lines


def test_a_function_declaring_a_name_reads_the_other_bindings_of_it_too(snippet_session):
    """A cache and a registry: the declaring (storing) function's own reads take the
    module's binding and the other functions' writes, besides its own; a `global x` read in
    a function nested in one binding `x` reads the module's `x`, not the enclosing one."""
    source = """
        _value = None
        _cache = {}
        x = 1

        def set_value(v):
            global _value
            _value = v

        def get_value():
            global _value
            if _value is None:
                _value = 5
            return _value

        def put(key, val):
            _cache[key] = val

        def get(key):
            if key not in _cache:
                _cache[key] = 0
            return _cache[key]

        def outer(secret):
            x = secret

            def inner():
                global x
                return x

            return inner()
    """
    session = snippet_session({"m.py": source})
    graph = session.graph
    tables = graph.file("m.py")
    returns = {
        tables.steps[s].line: s for s in list(tables.steps) if tables.steps[s].kind == "return"
    }

    def sources(line: int) -> set[int]:
        return {tables.steps[e.src].line for e in graph.edges(returns[line], False)}

    def readers(line: int) -> set[int]:
        made = [s for s in list(tables.steps) if tables.steps[s].line == line]
        return {tables.steps[e.dst].line for s in made for e in graph.edges(s, True)}

    assert sources(13) == {1, 7, 12}  # _value: the module's, set_value's, its own
    assert sources(21) == {2, 16, 20}  # _cache: the module's, put's store, its own
    assert sources(28) == {3}  # the module's x only
    assert 13 in readers(7) and 21 in readers(16) and 28 not in readers(24)
