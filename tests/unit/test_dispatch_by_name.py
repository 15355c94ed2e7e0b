"""A method run by its name handed on as a string (an RPC helper: `rpc("available")` ->
`dispatch(obj, name)` -> `getattr(obj, name)(...)`), on an object that hands lookups on to the
one it wraps (`__getattr__`), whose class is known only by an annotation (`self.worker:
WorkerBase`, `executor_class: type[Executor]`): the call graph says what the call runs (each
method a guess when the name may be several), and the chain takes the method's result back
out through the helper to the caller."""

from __future__ import annotations

from tests.conftest import spine_code
from tracer.analyses.calls.queries import CallQueries
from tracer.trace.chains import trace

RPC = {
    "app/__init__.py": "",
    "app/rpc.py": """
        def dispatch(obj, method, args, kwargs):
            if isinstance(method, str):
                func = getattr(obj, method)
            else:
                func = method
            return func(*args, **kwargs)
    """,
    "app/workers.py": """
        import importlib


        class WorkerBase:
            def __init__(self, fraction):
                self.fraction = fraction

            def available(self):
                raise NotImplementedError


        class GpuWorker(WorkerBase):
            def available(self):
                budget = self.fraction * 1000
                return budget

            def shutdown(self):
                pass


        class Wrapper:
            def __init__(self):
                self.worker: WorkerBase

            def start(self, qualname, fraction):
                module, _, name = qualname.rpartition(".")
                worker_class = getattr(importlib.import_module(module), name)
                self.worker = worker_class(fraction)

            def __getattr__(self, attr):
                return getattr(self.worker, attr)
    """,
    "app/executor.py": """
        from app.rpc import dispatch
        from app.workers import Wrapper


        class Executor:
            def __init__(self, qualname, fraction):
                self.driver = Wrapper()
                self.driver.start(qualname, fraction)

            def collective_rpc(self, method, args=(), kwargs=None):
                result = dispatch(self.driver, method, args, kwargs or {})
                return [result]

            def available(self):
                return self.collective_rpc("available")

            def shutdown(self):
                self.collective_rpc("shutdown")


        class Engine:
            def __init__(self, executor_class: type[Executor], qualname, fraction):
                self.executor = executor_class(qualname, fraction)

            def blocks(self):
                memory = self.executor.available()
                num_blocks = memory[0] // 16
                return num_blocks
    """,
}


def test_the_helper_runs_each_method_named_by_a_guess(snippet_session):
    """`getattr(obj, method)` where obj wraps a worker known by its annotation only and
    method is "available" or "shutdown" (given two calls up): each may run, a guess."""
    session = snippet_session(RPC)
    edges = CallQueries(session).callees("app.rpc.dispatch")
    assert [(e.callee, e.confidence) for e in edges] == [
        ("<builtin>.isinstance", 1.0),
        ("<builtin>.getattr", 1.0),
        ("app.workers.GpuWorker.available", 0.5),
        ("app.workers.GpuWorker.shutdown", 0.5),
        ("app.workers.WorkerBase.available", 0.5),
    ]


def test_a_class_known_by_its_annotation_only_is_made_and_its_methods_run(snippet_session):
    """`executor_class(...)` of a parameter annotated `type[Executor]` makes an Executor;
    its methods run on what it made (`self.executor.available()`)."""
    session = snippet_session(RPC)
    queries = CallQueries(session)
    assert [e.callee for e in queries.callees("app.executor.Engine.__init__")] == [
        "app.executor.Executor.__init__"
    ]
    assert [e.callee for e in queries.callees("app.executor.Engine.blocks")] == [
        "app.executor.Executor.available"
    ]


def test_a_result_comes_back_through_the_helper_to_the_caller(snippet_session):
    """From the worker's return, through the helper's `return func(...)`, the executor's
    `[result]` and its method's return, to the engine's formula."""
    session = snippet_session(RPC)
    chain = trace(session.graph, "GpuWorker.available.budget", sinks=["num_blocks"])
    assert spine_code(chain)[-8:] == [
        "budget = self.fraction * 1000",
        "return budget",
        "return func(*args, **kwargs)",
        "result = dispatch(self.driver, method, args, kwargs or {})",
        "return [result]",
        'return self.collective_rpc("available")',
        "memory = self.executor.available()",
        "num_blocks = memory[0] // 16",
    ]


def test_a_class_chosen_at_run_time_is_guessed_from_what_its_result_is_declared(
    snippet_session,
):
    """`self.worker = worker_class(fraction)`, the class looked up by a name nothing here
    knows, where `self.worker: WorkerBase`: each class of that family may be made (guesses),
    and the value goes on into the constructor."""
    session = snippet_session(RPC)
    edges = CallQueries(session).callees("app.workers.Wrapper.start")
    assert [(e.callee, e.confidence) for e in edges] == [
        ("<builtin>.getattr", 1.0),
        ("importlib.import_module", 1.0),
        ("app.workers.WorkerBase.__init__", 0.5),
    ]
    chain = trace(session.graph, "Engine.__init__.fraction", direction="forward", sinks=["budget"])
    assert spine_code(chain) == [
        "fraction",
        "self.executor = executor_class(qualname, fraction)",
        "fraction",
        "self.driver.start(qualname, fraction)",
        "fraction",
        "self.worker = worker_class(fraction)",
        "fraction",
        "self.fraction = fraction",
        "budget = self.fraction * 1000",
    ]
    # Backward, the constructor's callers include that call, a guess.
    graph = session.graph
    (param,) = graph.seeds("WorkerBase.__init__.fraction")
    into = [(graph.step(e.src).code, e.confidence) for e in graph.edges(param, forward=False)]
    assert into == [("self.worker = worker_class(fraction)", 0.5)]
