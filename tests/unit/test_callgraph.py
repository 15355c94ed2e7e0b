"""The call graph in PyCG's format, on programs like PyCG's micro-benchmark categories."""

from __future__ import annotations

import json

from tracer.analyses.callgraph import CallGraph, call_graph
from tracer.analyses.calls.queries import CallEdge, CallQueries
from tracer.cli.main import main
from tracer.session import open_session
from tracer.store.cache import FactCache


def test_simple_calls_nested_functions_and_module_code(snippet_session):
    session = snippet_session(
        {
            "main.py": """
                def leaf():
                    pass

                def outer():
                    def inner():
                        leaf()
                    inner()

                def unused():
                    pass

                outer()
            """
        }
    )
    assert call_graph(session) == {
        "main": ["main.outer"],
        "main.leaf": [],
        "main.outer": ["main.outer.inner"],
        "main.outer.inner": ["main.leaf"],
        "main.unused": [],
    }


def test_imports_relative_aliased_and_of_modules(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/app.py": """
                from .util import helper as h
                from . import util
                import pkg.sub.deep
                from pkg.sub.deep import work as w

                def run():
                    h()
                    util.helper()
                    pkg.sub.deep.work()
                    w()
            """,
            "pkg/util.py": """
                def helper():
                    pass
            """,
            "pkg/sub/__init__.py": "from .deep import work\n",
            "pkg/sub/deep.py": """
                from ..util import helper

                def work():
                    return helper()
            """,
        }
    )
    assert call_graph(session) == {
        "pkg": [],
        "pkg.app": [],
        "pkg.app.run": ["pkg.sub.deep.work", "pkg.util.helper"],
        "pkg.sub": [],
        "pkg.sub.deep": [],
        "pkg.sub.deep.work": ["pkg.util.helper"],
        "pkg.util": [],
        "pkg.util.helper": [],
    }


def test_methods_self_calls_static_and_class_methods(snippet_session):
    session = snippet_session(
        {
            "main.py": """
                class Counter:
                    def __init__(self, start):
                        self.value = start
                        self.reset()

                    def reset(self):
                        pass

                    @staticmethod
                    def make():
                        return Counter(0)

                    @classmethod
                    def build(cls):
                        return cls.make()

                class Plain:
                    def ping(self):
                        pass

                c = Counter(1)
                c.reset()
                Counter.build()
                p = Plain()
                p.ping()
            """
        }
    )
    assert call_graph(session) == {
        "main": [
            "main.Counter.__init__",
            "main.Counter.build",
            "main.Counter.reset",
            "main.Plain.ping",
        ],
        "main.Counter.__init__": ["main.Counter.reset"],
        "main.Counter.build": ["main.Counter.make"],
        "main.Counter.make": ["main.Counter.__init__"],
        "main.Counter.reset": [],
        "main.Plain.ping": [],
    }


def test_constructor_runs_init_found_along_the_mro_or_none(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/shapes.py": """
                from dataclasses import dataclass

                class Base:
                    def __init__(self):
                        pass

                class Derived(Base):
                    pass

                class NoInit:
                    pass

                @dataclass
                class Point:
                    x: int = 0
            """,
            "pkg/use.py": """
                from pkg.shapes import Derived, NoInit, Point

                def build():
                    Derived()
                    NoInit()
                    Point(x=1)
            """,
        }
    )
    assert call_graph(session) == {
        "pkg": [],
        "pkg.shapes": [],
        "pkg.shapes.Base.__init__": [],
        "pkg.use": [],
        "pkg.use.build": ["pkg.shapes.Base.__init__"],
    }


def test_mro_with_a_shared_superclass_and_super_chain(snippet_session):
    session = snippet_session(
        {
            "main.py": """
                class A:
                    def __init__(self):
                        pass

                    def func(self):
                        pass

                class B(A):
                    def __init__(self):
                        super().__init__()

                class C(A):
                    def func(self):
                        pass

                class D(B, C):
                    pass

                d = D()
                d.func()
            """
        }
    )
    assert call_graph(session) == {
        "<builtin>.super": [],
        "main": ["main.B.__init__", "main.C.func"],
        "main.A.__init__": [],
        "main.A.func": [],
        "main.B.__init__": ["<builtin>.super", "main.A.__init__"],
        "main.C.func": [],
    }


def test_self_call_in_a_base_class_reaches_subclass_overrides(snippet_session):
    session = snippet_session(
        {
            "main.py": """
                class Base:
                    def run(self):
                        return self.step()

                    def step(self):
                        pass

                class Fast(Base):
                    def step(self):
                        pass

                def untyped(thing):
                    thing.run()
            """
        }
    )
    # `thing` has no type: `run` is a name-only guess (confidence 0.5) and is left out.
    assert call_graph(session) == {
        "main": [],
        "main.Base.run": ["main.Base.step", "main.Fast.step"],
        "main.Base.step": [],
        "main.Fast.step": [],
        "main.untyped": [],
    }


def test_lambdas_numbered_per_scope_and_called_through_names(snippet_session):
    session = snippet_session(
        {
            "main.py": """
                square = lambda x: x * x
                twice = lambda x: square(x) + square(x)

                def apply():
                    add = lambda a, b: a + b
                    def inner():
                        return add(1, 2)
                    return inner()

                twice(3)
            """
        }
    )
    assert call_graph(session) == {
        "main": ["main.<lambda2>"],
        "main.<lambda1>": [],
        "main.<lambda2>": ["main.<lambda1>"],
        "main.apply": ["main.apply.inner"],
        "main.apply.<lambda1>": [],
        "main.apply.inner": ["main.apply.<lambda1>"],
    }


def test_calling_what_a_function_returns(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/factory.py": """
                def target():
                    pass

                def make():
                    return target

                def make_lambda():
                    return lambda: target()
            """,
            "pkg/main.py": """
                from pkg.factory import make, make_lambda

                def use(make):
                    make()

                f = make()
                f()
                g = make_lambda()
                g()
            """,
        }
    )
    # In `use`, `make` is a parameter: nothing is known of what it holds.
    assert call_graph(session) == {
        "pkg": [],
        "pkg.factory": [],
        "pkg.factory.make": [],
        "pkg.factory.make_lambda": [],
        "pkg.factory.make_lambda.<lambda1>": ["pkg.factory.target"],
        "pkg.factory.target": [],
        "pkg.main": [
            "pkg.factory.make",
            "pkg.factory.make_lambda",
            "pkg.factory.make_lambda.<lambda1>",
            "pkg.factory.target",
        ],
        "pkg.main.use": [],
    }


def test_builtins_and_calls_out_of_the_tree_keep_their_names(snippet_session):
    session = snippet_session(
        {
            "main.py": """
                import numpy as np
                import os.path
                from ext import Cls, function

                def work(items):
                    print(len(items))
                    np.zeros(3)
                    os.path.join("a", "b")
                    function()
                    items.append(1)

                a = Cls()
                a.fun()
            """
        }
    )
    assert call_graph(session) == {
        "<builtin>.len": [],
        "<builtin>.print": [],
        "ext.Cls": [],
        "ext.Cls.fun": [],
        "ext.function": [],
        "main": ["ext.Cls", "ext.Cls.fun"],
        "main.work": [
            "<builtin>.len",
            "<builtin>.print",
            "ext.function",
            "numpy.zeros",
            "os.path.join",
        ],
        "numpy.zeros": [],
        "os.path.join": [],
    }


def test_methods_inherited_from_a_class_outside_the_tree(snippet_session):
    session = snippet_session(
        {
            "main.py": """
                from torch import nn

                class Layer(nn.Module):
                    def __init__(self, mlp):
                        super().__init__()
                        self.mlp = mlp

                    def forward(self, x):
                        self.register_buffer("x", x)
                        return self.mlp(x)

                class Bare(nn.Module):
                    pass

                Bare()
            """
        }
    )
    # `self.mlp` is an attribute the class sets, not a method of `nn.Module`.
    assert call_graph(session) == {
        "<builtin>.super": [],
        "main": ["torch.nn.Module.__init__"],
        "main.Layer.__init__": ["<builtin>.super", "torch.nn.Module.__init__"],
        "main.Layer.forward": ["torch.nn.Module.register_buffer"],
        "torch.nn.Module.__init__": [],
        "torch.nn.Module.register_buffer": [],
    }


def test_decorators_are_called_where_the_definition_is_made(snippet_session):
    session = snippet_session(
        {
            "main.py": """
                import functools

                def dec(f):
                    return f

                def tagged(name):
                    return dec

                @dec
                def func():
                    pass

                class Service:
                    @tagged("x")
                    def handle(self):
                        func()

                    @functools.lru_cache
                    def cached(self):
                        pass

                func()
            """
        }
    )
    assert call_graph(session) == {
        "main": ["main.dec", "main.func", "main.tagged"],
        "main.Service.cached": [],
        "main.Service.handle": ["main.func"],
        "main.dec": [],
        "main.func": [],
        "main.tagged": [],
    }


def test_cli_prints_the_call_graph_as_json(write_tree, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    tree = write_tree(
        {
            "main.py": """
                from helpers import greet

                greet(len("sgtrace"))
            """,
            "helpers.py": """
                def greet(n):
                    print(n)
            """,
        }
    )
    assert main(["callgraph", str(tree), "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "<builtin>.len": [],
        "<builtin>.print": [],
        "helpers": [],
        "helpers.greet": ["<builtin>.print"],
        "main": ["<builtin>.len", "helpers.greet"],
    }


def test_functions_passed_as_arguments_run_where_the_parameter_is_called(snippet_session):
    session = snippet_session(
        {
            "main.py": """
                def on_done():
                    pass

                def on_error():
                    pass

                def notify(callback):
                    callback()

                def run(job, when_done, when_failed=None):
                    job()
                    notify(when_done)
                    when_failed()

                class Worker:
                    def step(self):
                        pass

                    def repeat(self, action):
                        action()

                def start():
                    run(lambda: 1, on_done, when_failed=on_error)

                worker = Worker()
                worker.repeat(worker.step)
                start()
            """
        }
    )
    graph = call_graph(session)
    assert graph["main.run"] == ["main.notify", "main.on_error", "main.start.<lambda1>"]
    assert graph["main.notify"] == ["main.on_done"]  # passed on through run's parameter
    assert graph["main.Worker.repeat"] == ["main.Worker.step"]  # a bound method
    assert graph["main.start"] == ["main.run"]


def test_names_bound_by_unpacking_a_tuple_of_functions(snippet_session):
    session = snippet_session(
        {
            "main.py": """
                def load():
                    pass

                def save():
                    pass

                def pipeline():
                    read, write = load, save
                    read()
                    write()

                first, *rest = load, save
                first()
            """
        }
    )
    graph = call_graph(session)
    assert graph["main.pipeline"] == ["main.load", "main.save"]
    assert graph["main"] == ["main.load"]  # `first` takes the first element


def test_names_bound_by_functions_that_declare_them_global_or_nonlocal(snippet_session):
    session = snippet_session(
        {
            "main.py": """
                from helpers import save

                handler = None

                def work():
                    pass

                def install():
                    global handler
                    handler = work

                def main():
                    install()
                    handler()

                def outer():
                    step = None

                    def choose():
                        nonlocal step
                        step = save

                    choose()
                    step()

                def shadowed():
                    handler = print
                    handler()

                def install_other():
                    global unbound
                    unbound = work

                def run_other():
                    unbound()  # bound only by the function that declares it global
            """,
            "helpers.py": """
                def save():
                    pass
            """,
        }
    )
    graph = call_graph(session)
    # `None` holds no function: what the declaring function binds is what runs, surely.
    assert graph["main.main"] == ["main.install", "main.work"]
    assert graph["main.outer"] == ["helpers.save", "main.outer.choose"]
    assert graph["main.shadowed"] == ["<builtin>.print"]  # its own local, not the global
    assert graph["main.run_other"] == ["main.work"]


def test_a_class_bodys_field_binds_no_name_of_the_module(snippet_session):
    session = snippet_session(
        {
            "main.py": """
                def run():
                    pass

                def check():
                    pass

                class Options:
                    run: bool = False

                def main(quick):
                    if quick:
                        job = run
                    else:
                        job = check
                    job()
            """
        }
    )
    assert call_graph(session)["main.main"] == ["main.check", "main.run"]


def test_a_function_kept_in_an_attribute_runs_when_the_attribute_is_called(snippet_session):
    session = snippet_session(
        {
            "main.py": """
                def fast_kernel():
                    pass

                class Backend:
                    def __init__(self):
                        self.kernel = fast_kernel
                        self.hook = self.log

                    def log(self):
                        pass

                    def run(self):
                        self.kernel()
                        self.hook()

                class Quiet(Backend):
                    def silence(self):
                        self.hook = self.mute

                    def mute(self):
                        pass

                backend = Backend()
                backend.hook()
            """
        }
    )
    graph = call_graph(session)
    # Any class of the family may have stored its own method (Quiet.mute).
    assert graph["main.Backend.run"] == [
        "main.Backend.log",
        "main.Quiet.mute",
        "main.fast_kernel",
    ]
    assert graph["main"] == ["main.Backend.__init__", "main.Backend.log", "main.Quiet.mute"]


def test_a_decorated_function_is_called_through_the_wrapper_its_decorator_returns(snippet_session):
    session = snippet_session(
        {
            "main.py": """
                def timed(func):
                    def wrapper(*args):
                        return func(*args)
                    return wrapper

                def logged(func):
                    def wrapper(*args):
                        return func(*args)
                    return wrapper

                def retry(times):
                    def decorate(func):
                        def again(*args):
                            return func(*args)
                        return again
                    return decorate

                @timed
                @logged
                def work():
                    pass

                @retry(3)
                def flaky():
                    pass

                def main():
                    work()
                    flaky()
            """
        }
    )
    graph = call_graph(session)
    # work = timed(logged(work)): the call runs timed's wrapper, which runs logged's.
    assert graph["main.main"] == ["main.flaky", "main.timed.wrapper"]
    assert graph["main.timed.wrapper"] == ["main.logged.wrapper"]
    assert graph["main.logged.wrapper"] == ["main.work"]
    # `@retry(3)`: a factory. The call of flaky stays (the wrapper `decorate` returns is not
    # followed), but what `retry(3)` returns, `decorate`, is given flaky: `again` runs it.
    assert graph["main.retry.decorate.again"] == ["main.flaky"]


def test_a_method_of_an_object_of_an_outside_class_passed_as_an_argument(snippet_session):
    session = snippet_session(
        {
            "main.py": """
                from requests import Session

                def retrying(send):
                    send()

                session = Session()
                retrying(session.get)
            """
        }
    )
    graph = call_graph(session)
    assert graph["main.retrying"] == ["requests.Session.get"]
    assert graph["main"] == ["main.retrying", "requests.Session"]


def test_a_for_loop_over_an_object_calls_its_iterator_methods(snippet_session):
    session = snippet_session(
        {
            "main.py": """
                def step():
                    pass

                class Steps:
                    def __iter__(self):
                        return self

                    def __next__(self):
                        return step

                def run(plan: Steps):
                    for action in plan:
                        action()

                for number in range(3):
                    pass
            """
        }
    )
    graph = call_graph(session)
    assert graph["main.run"] == ["main.Steps.__iter__", "main.Steps.__next__", "main.step"]
    assert graph["main"] == ["<builtin>.range"]


ONE_AT_A_TIME = {
    "main.py": """
        from torch import nn


        def timed(func):
            def wrapper(*args):
                return func(*args)

            return wrapper


        @timed
        def work():
            pass


        def on_done():
            pass


        def notify(callback):
            callback()


        class Steps:
            def __iter__(self):
                return self

            def __next__(self):
                return on_done


        class Layer(nn.Module):
            def __init__(self):
                super().__init__()
                self.hook = self.log

            def log(self):
                pass

            def forward(self, steps: Steps):
                self.hook()
                for step in steps:
                    step()
                work()
                notify(on_done)
                notify(lambda: print(len("x")))


        def untyped(thing):
            thing.log()


        layer = Layer()
        layer.forward(Steps())
    """
}


def test_one_function_at_a_time_by_the_rules_of_the_whole_graph(snippet_session):
    """`export --scope calls` asks the call graph one function at a time (CallQueries): each
    scope's callees are the whole graph's; its callers are too, but for those a query finds
    from the caller's side only."""
    session = snippet_session(ONE_AT_A_TIME)
    whole = call_graph(session)
    queries = CallQueries(session)
    in_tree = [name for name in whole if queries.place(name) is not None]
    assert {n: sorted({e.callee for e in queries.callees(n) if e.kept}) for n in in_tree} == {
        n: whole[n] for n in in_tree
    }
    forward = [(e.callee, e.line, e.confidence) for e in queries.callees("main.Layer.forward")]
    assert forward == [
        ("main.Layer.log", 41, 1.0),  # self.hook holds self.log
        ("main.on_done", 43, 1.0),  # what Steps.__next__ returns
        ("main.timed.wrapper", 44, 1.0),  # work() runs the wrapper @timed returns
        ("main.notify", 45, 1.0),
        ("main.notify", 46, 1.0),
        ("main.Steps.__iter__", 42, 1.0),  # the for loop
        ("main.Steps.__next__", 42, 1.0),
    ]
    assert queries.callees("main") == [
        CallEdge("main", "main.Layer.__init__", 53, 1.0),
        CallEdge("main", "main.Layer.forward", 54, 1.0),
        CallEdge("main", "main.timed", 12, 1.0),  # @timed, applied where work is defined
    ]
    # Below the call graph's threshold, the same rule's guess: `thing` has no type.
    assert queries.callees("main.untyped") == [CallEdge("main.untyped", "main.Layer.log", 50, 0.5)]
    assert whole["main.untyped"] == []

    callers = {
        f: sorted({e.caller for e in queries.callers(f) if e.kept}) for f in session.index.functions
    }
    called_by = {f: sorted(k for k, v in whole.items() if f in v) for f in session.index.functions}
    left_out = {
        "main.Layer.log": ["main.Layer.forward"],  # through self.hook
        "main.on_done": ["main.Layer.forward"],  # through the loop variable
        "main.Steps.__iter__": ["main.Layer.forward"],  # the for loop
        "main.Steps.__next__": ["main.Layer.forward"],
        "main.timed.wrapper": ["main.Layer.forward"],  # through work()
    }
    assert callers == {
        f: [c for c in found if c not in left_out.get(f, [])] for f, found in called_by.items()
    }
    assert callers["main.work"] == ["main.timed.wrapper"]  # the wrapper calls what it wraps
    assert callers["main.on_done"] == ["main.notify"]  # passed by name
    assert callers["main.Layer.forward.<lambda1>"] == ["main.notify"]  # passed as a lambda


# Functions that reach their calls through parameters, containers and attributes of other
# files: the passes come back to each file after reading the others.
SPREAD_TREE = {
    "pkg/__init__.py": "",
    "pkg/run.py": """
        def apply(fn, x):
            return fn(x)

        def each(fns, x):
            for fn in fns:
                fn(x)
    """,
    "pkg/ops.py": """
        def scale(x):
            return 2 * x

        def shift(x):
            return x + 1

        class Box:
            def open(self, x):
                return x
    """,
    "pkg/use.py": """
        from pkg.ops import Box, scale, shift
        from pkg.run import apply, each

        def main():
            apply(scale, 3)
            each([shift], 4)
            box = Box()
            apply(box.open, 5)
    """,
    "pkg/later.py": """
        from pkg import run, ops

        def go():
            handlers = {"s": ops.shift}
            run.apply(handlers["s"], 6)
    """,
}


def test_the_call_graph_is_the_same_when_few_files_are_held_at_once(snippet_session):
    whole = CallGraph(snippet_session(SPREAD_TREE), held_files=1_000_000).build()
    session = snippet_session(SPREAD_TREE)
    held = CallGraph(session, held_files=1).build()
    assert held == whole
    assert whole["pkg.run.apply"] == ["pkg.ops.Box.open", "pkg.ops.scale", "pkg.ops.shift"]
    assert whole["pkg.run.each"] == ["pkg.ops.shift"]
    # One file's flows were kept at a time: the others were read again when asked again.
    assert list(session.facts.rows_by_path) == list(session.facts.flows_by_path)
    assert len(session.facts.rows_by_path) == 1


def test_files_are_held_at_most_n_only_with_the_cache_on(write_tree, tmp_path):
    root = write_tree(SPREAD_TREE)
    uncached = open_session(str(root), cache=FactCache(tmp_path / "off", enabled=False))
    uncached.facts.hold_at_most(1)
    assert uncached.facts.held is None  # a file let go would be parsed again: all are kept
    assert CallGraph(uncached, held_files=1).build()["pkg.run.each"] == ["pkg.ops.shift"]
    assert len(uncached.facts.rows_by_path) == len(SPREAD_TREE)
    cached = open_session(str(root), cache=FactCache(tmp_path / "on"))
    cached.facts.hold_at_most(2)
    for path in sorted(SPREAD_TREE):
        cached.facts.flows(path)
    # The two files read last are held, in the order they were read.
    assert list(cached.facts.rows_by_path) == sorted(SPREAD_TREE)[-2:]
    assert list(cached.facts.flows_by_path) == sorted(SPREAD_TREE)[-2:]
