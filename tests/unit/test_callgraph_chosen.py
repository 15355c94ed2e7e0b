"""Values chosen at run time by constant strings, in the call graph
(tracer/index/calls/chosen.py): a module by `import_module("name")`, an attribute by
`getattr(x, "name")`, a class from a dict of classes or a registry filled by a decorator. A
snippet in, the exact edges out."""

from __future__ import annotations

from tracer.analyses.callgraph import call_graph
from tracer.analyses.calls.queries import CallQueries


def graph_of(snippet_session, files: dict[str, str]) -> dict[str, list[str]]:
    """The call graph of FILES, the nodes without edges left out."""
    graph = call_graph(snippet_session(files))
    return {caller: callees for caller, callees in graph.items() if callees}


PLUGINS = """
    class Plugin:
        def __init__(self):
            pass

    def helper():
        pass
    """


def test_a_class_and_a_function_picked_from_a_module_imported_by_name(snippet_session):
    assert graph_of(
        snippet_session,
        {
            "plugins.py": PLUGINS,
            "app.py": """
                import importlib
                from importlib import import_module

                mod = importlib.import_module("plugins")
                getattr(mod, "Plugin")()
                other = import_module("plugins")
                other.helper()
                """,
        },
    ) == {
        "app": [
            "<builtin>.getattr",
            "importlib.import_module",
            "plugins.Plugin.__init__",
            "plugins.helper",
        ]
    }


def test_a_module_name_passed_as_a_constant_to_a_loader(snippet_session):
    assert graph_of(
        snippet_session,
        {
            "plugins.py": PLUGINS,
            "app.py": """
                import importlib

                def load(module, name):
                    return getattr(importlib.import_module(module), name)

                load("plugins", "Plugin")()
                """,
        },
    ) == {
        "app": ["app.load", "plugins.Plugin.__init__"],
        "app.load": ["<builtin>.getattr", "importlib.import_module"],
    }


def test_a_class_picked_from_a_dict_of_classes(snippet_session):
    assert graph_of(
        snippet_session,
        {
            "app.py": """
                class A:
                    def __init__(self):
                        pass

                class B:
                    def __init__(self):
                        pass

                def make(kind):
                    return {"a": A, "b": B}[kind]()

                make("b")
                """
        },
    ) == {"app": ["app.make"], "app.make": ["app.B.__init__"]}


def test_a_registry_filled_by_stores_and_by_a_register_decorator(snippet_session):
    assert graph_of(
        snippet_session,
        {
            "app.py": """
                REGISTRY = {}

                def register(name):
                    def deco(cls):
                        REGISTRY[name] = cls
                        return cls

                    return deco

                @register("fast")
                class Fast:
                    def __init__(self):
                        pass

                class Slow:
                    def __init__(self):
                        pass

                class Unused:
                    def __init__(self):
                        pass

                REGISTRY["slow"] = Slow

                def create(kind):
                    return REGISTRY[kind]()

                create("fast")
                create("slow")
                """
        },
    ) == {
        "app": ["app.create", "app.register"],
        "app.create": ["app.Fast.__init__", "app.Slow.__init__"],
    }


def test_a_method_called_by_a_constant_name(snippet_session):
    assert graph_of(
        snippet_session,
        {
            "app.py": """
                class Worker:
                    def step(self):
                        pass

                    def stop(self):
                        pass

                worker = Worker()
                getattr(worker, "step")()
                action = getattr(Worker(), "stop")
                action()
                """
        },
    ) == {"app": ["<builtin>.getattr", "app.Worker.step", "app.Worker.stop"]}


DISPATCHER = """
    class Scheduler:
        def run(self, name):
            return getattr(self, name)()

        def event_loop_normal(self):
            pass

        def event_loop_overlap(self):
            pass

        def event_loop_pp(self):
            pass

    def start(scheduler: Scheduler):
        scheduler.run("event_loop_normal")
    """


def test_a_dispatcher_given_one_constant_name_runs_that_method(snippet_session):
    assert graph_of(snippet_session, {"app.py": DISPATCHER}) == {
        "app.Scheduler.run": ["<builtin>.getattr", "app.Scheduler.event_loop_normal"],
        "app.start": ["app.Scheduler.run"],
    }


def test_a_dispatcher_given_several_names_runs_each_by_a_guess(snippet_session):
    code = (
        DISPATCHER
        + """
    def start_overlapped(scheduler: Scheduler):
        scheduler.run("event_loop_overlap")
    """
    )
    session = snippet_session({"app.py": code})
    graph = call_graph(session)
    # Which of the two runs depends on the caller: guesses, left out of the call graph...
    assert graph["app.Scheduler.run"] == ["<builtin>.getattr"]
    # ...and drawn as guesses by the export, each below the call graph's confidence.
    edges = CallQueries(session).callees("app.Scheduler.run")
    assert [(e.callee, e.confidence) for e in edges] == [
        ("<builtin>.getattr", 1.0),
        ("app.Scheduler.event_loop_normal", 0.5),
        ("app.Scheduler.event_loop_overlap", 0.5),
    ]


def test_a_name_that_is_no_constant_chooses_nothing(snippet_session):
    assert graph_of(
        snippet_session,
        {
            "app.py": """
                import sys

                class Worker:
                    def step(self):
                        pass

                getattr(Worker(), sys.argv[1])()
                """
        },
    ) == {"app": ["<builtin>.getattr"]}


def test_a_registry_of_factories_each_returning_a_class(snippet_session):
    """`@register("triton")` is a call: its result (`decorator`) is given the factory, and
    leaves it as it is (the factory is no wrapper of `decorator`'s)."""
    assert graph_of(
        snippet_session,
        {
            "registry.py": """
                BACKENDS = {}

                def register(name):
                    def decorator(fn):
                        BACKENDS[name] = fn
                        return fn

                    return decorator

                @register("triton")
                def create_triton():
                    from backends import Triton

                    return Triton

                def backend_named(name):
                    return BACKENDS[name]()
                """,
            "backends.py": """
                class Triton:
                    def __init__(self, size):
                        pass
                """,
            "app.py": """
                from registry import backend_named

                def main():
                    backend = backend_named("triton")
                    backend(1)
                """,
        },
    ) == {
        "app.main": ["backends.Triton.__init__", "registry.backend_named"],
        "registry": ["registry.register"],
        "registry.backend_named": ["registry.create_triton"],
    }


def test_a_function_kept_at_a_key_that_is_no_constant_runs_for_any_key(snippet_session):
    """`{f"{kind}_fast": fast, kind: slow, **more}`: an f-string key is no constant (as a
    name is not), so what it holds may be read at any key; `**more` keeps more's keys."""
    assert graph_of(
        snippet_session,
        {
            "app.py": """
                def fast(x):
                    return x


                def slow(x):
                    return x


                def other(x):
                    return x


                def pick(kind, key, x):
                    more = {"o": other}
                    table = {f"{kind}_fast": fast, kind: slow, **more}
                    return table[key](x)
                """
        },
    ) == {"app.pick": ["app.fast", "app.other", "app.slow"]}
