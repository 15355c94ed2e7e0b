"""One answer to "what does this call run", for the chains and `sgtrace callgraph` alike
(`ValueStatements.targets`): a function kept in a local, in a list, a set or a deque filled
by a method (and taken out of it by `pop()`), is run where the name that holds it is called,
in the call graph and in the chain, which goes on into the function's parameters."""

from __future__ import annotations

from tests.conftest import spine_code
from tracer.analyses.callgraph import call_graph
from tracer.trace.chains import trace

TREE = {
    "calc/__init__.py": "",
    "calc/ops.py": """
        def scale(value):
            scaled = value * 2
            return scaled
    """,
    "calc/run.py": """
        from collections import deque

        from calc.ops import scale


        def by_local(amount):
            g = scale
            total = g(amount)
            return total


        def by_set(amount):
            steps = set()
            steps.add(scale)
            for step in steps:
                step(amount)


        def by_deque(amount):
            queue = deque()
            queue.appendleft(scale)
            while queue:
                queue.pop()(amount)


        def by_list(amount):
            steps = []
            steps.append(scale)
            for step in steps:
                step(amount)


        def untouched(amount):
            steps = set()
            for step in steps:
                step(amount)
    """,
}


def test_a_function_kept_in_a_local_or_a_container_is_in_the_call_graph(snippet_session):
    graph = call_graph(snippet_session(TREE))
    for caller in ("by_local", "by_set", "by_deque", "by_list"):
        assert "calc.ops.scale" in graph[f"calc.run.{caller}"], caller
    assert "calc.ops.scale" not in graph["calc.run.untouched"]


def test_the_chain_enters_a_function_called_through_a_local(snippet_session):
    session = snippet_session(TREE)
    chain = trace(session.graph, "amount", direction="forward", sinks=["scaled"])
    assert spine_code(chain) == [
        "amount",
        "total = g(amount)",
        "value",
        "scaled = value * 2",
    ]


def test_the_chain_enters_a_function_taken_out_of_a_set(snippet_session):
    session = snippet_session(TREE)
    chain = trace(session.graph, "amount", direction="forward", max_depth=12, branch_depth=4)
    steps = {step.id: step for step in chain.steps}
    into_scale = [
        (steps[edge.src].line, steps[edge.dst].name)
        for edge in chain.edges
        if steps[edge.dst].kind == "param" and steps[edge.dst].file == "calc/ops.py"
    ]
    run_lines = {"by_local": 8, "by_set": 16, "by_list": 30}
    for caller, line in run_lines.items():
        assert (line, "value") in into_scale, caller


SCOPES = {
    "kern/__init__.py": "",
    "kern/blocks.py": """
        def helper(size):
            return size + 1


        class Kernel:
            def compute(self, size):
                return size * 2

            def schedule(self, compute, size):
                return compute(size)

            def nested(self, size):
                def inner(value):
                    return helper(value)

                return inner(size)

            def step(self, size):
                def compute(value):
                    return value - 1

                return compute(size)
    """,
}


def test_a_plain_name_in_a_method_never_names_a_method_of_its_class(snippet_session):
    """Python looks a name up in the function, the functions around it and the module: a
    class body is no scope of its methods' names, and a parameter shadows every outer
    name. `compute(size)` of a parameter runs what the callers pass, not `Kernel.compute`;
    a nested `def compute` runs itself; `inner` and `helper` are found as before."""
    session = snippet_session(SCOPES)
    resolver, path = session.graph.resolver, "kern/blocks.py"
    flows = session.facts.flows(path)

    def runs(scope: str, callee: str) -> list[str | None]:
        call = next(c for c in flows.calls if c.scope == scope and c.callee == callee)
        return [t.function for t in resolver.resolve_call(path, call)]

    assert runs("Kernel.schedule", "compute") == []
    assert runs("Kernel.step", "compute") == ["kern.blocks.Kernel.step.compute"]
    assert runs("Kernel.nested", "inner") == ["kern.blocks.Kernel.nested.inner"]
    assert runs("Kernel.nested.inner", "helper") == ["kern.blocks.helper"]


CLOSURE = {
    "kern/__init__.py": "",
    "kern/copies.py": """
        def copy(value):
            return value


        def producer(copy, size):
            def run(step):
                return copy(step)

            return run(size)
    """,
}


def test_a_parameter_of_the_function_around_a_closure_shadows_a_module_function(
    snippet_session,
):
    session = snippet_session(CLOSURE)
    path = "kern/copies.py"
    call = next(c for c in session.facts.flows(path).calls if c.callee == "copy")
    assert session.graph.resolver.resolve_call(path, call) == []


DEFAULTED = {
    "app/__init__.py": "",
    "app/engine.py": """
        class Manager:
            def __init__(self, args):
                self.args = args


        def launch(args, manager_class=None):
            manager_class = manager_class or Manager
            return manager_class(args)
    """,
}


def test_a_parameter_assigned_again_runs_what_the_assignment_gives(snippet_session):
    """`manager_class = manager_class or Manager`: the call runs `Manager`'s constructor in
    the call graph as in the chain (the parameter is no longer only what callers give)."""
    session = snippet_session(DEFAULTED)
    assert call_graph(session)["app.engine.launch"] == ["app.engine.Manager.__init__"]
    chain = trace(session.graph, "launch.args", direction="forward", branch_depth=4)
    steps = {step.id: step for step in chain.steps}
    assert any(
        steps[edge.src].code.startswith("return manager_class(args)")
        and steps[edge.dst].symbol == "Manager.__init__"
        for edge in chain.edges
    )
