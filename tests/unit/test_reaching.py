"""Which bindings of a name reach a read of it: one that a later binding at the top level of
the function always overwrites does not (`x = f(); x = x // page * page; return x` goes
through both), one inside a branch may not run and does not hide the others. And the spine
goes through the class a factory makes by default, where another class it may make only
under a condition gives a path a step shorter."""

from __future__ import annotations

from tests.conftest import spine_code, trace


def test_a_binding_overwritten_at_the_top_level_does_not_reach_the_read(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/pool.py": """
                class Runner:
                    def size(self, budget, cell, page, capped):
                        tokens = budget // cell
                        tokens = tokens // page * page
                        if capped:
                            tokens = min(tokens, 4096)
                        self.max_tokens = tokens
            """,
        }
    )
    chain = trace(session.graph, "Runner.size.budget", sinks=["max_tokens"])
    assert spine_code(chain) == [
        "budget",
        "tokens = budget // cell",
        "tokens = tokens // page * page",  # always runs: the first binding cannot reach
        "self.max_tokens = tokens",  # the capped one may not run: this one reaches too
    ]
    reads = {e.src: e.kind for e in chain.edges if e.dst == chain.spine[-1] and e.kind == "local"}
    steps = {s.id: s.code for s in chain.steps}
    assert sorted(steps[s] for s in reads) == [
        "tokens = min(tokens, 4096)",
        "tokens = tokens // page * page",
    ]


FACTORY = """
    class Pool:
        def tokens(self, budget):
            raise NotImplementedError


    class DefaultPool(Pool):
        def tokens(self, budget):
            tokens = budget // 64
            tokens = tokens // 16 * 16
            return tokens


    class SlidingPool(Pool):
        def tokens(self, budget):
            return budget // 128


    def make_pool(sliding):
        if sliding:
            return SlidingPool()
        return DefaultPool()


    class Runner:
        def __init__(self, budget, sliding):
            pool = make_pool(sliding)
            self.max_tokens = pool.tokens(budget)
"""


def test_the_spine_takes_the_factorys_default_class_where_another_is_a_step_shorter(
    snippet_session,
):
    session = snippet_session({"pkg/__init__.py": "", "pkg/pool.py": FACTORY})
    chain = trace(session.graph, "Runner.__init__.budget", sinks=["max_tokens"])
    code = spine_code(chain)
    assert code[:3] == ["budget", "self.max_tokens = pool.tokens(budget)", "budget"]
    assert "tokens = tokens // 16 * 16" in code
    assert "return budget // 128" not in code
    reasons = [e.condition for e in chain.edges if e.condition]
    assert "pool is a DefaultPool by default" in reasons


def test_an_if_else_binding_in_each_branch_overwrites_what_came_before(snippet_session):
    """Both branches bind in their own bodies: the binding before the `if` reaches no read
    after it. A branch that binds only in a nested one-line `if` (or an `else:` written on
    the header's line) does not count: a path keeps the old value."""
    from tracer.graph.blocks import covered_before

    session = snippet_session(
        {
            "app.py": """
                def f(a, c):
                    x = 0
                    if a:
                        x = 1
                    else:
                        x = 2
                    return x


                def g(a, c):
                    y = 0
                    if a:
                        if c: y = 1
                    else:
                        y = 2
                    return y


                def h(a):
                    z = 0
                    if a:
                        z = 1
                    else: z = 2
                    return z
            """
        }
    )
    tables = session.graph.file("app.py")
    for scope, name, expected in (("f", "x", 3), ("g", "y", 0), ("h", "z", 0)):
        defs = tables.local_defs.get((scope, name))
        read = max(tables.steps[d].line for d in defs) + 1
        assert covered_before(tables, defs, read) == expected, scope
