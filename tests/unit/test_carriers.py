"""Values inside objects: the route the carrier object takes between the step that stores a
value in it and the step that reads it back, calls matched to their returns along the spine,
a route to each sink binding the value reaches, and dataclass-like classes made by a
decorator marked `@dataclass_transform`."""

from __future__ import annotations

import json

from tests.conftest import spine_code, trace
from tracer.index.factories import enclosing_branch
from tracer.views.chain_text import chain_json, chain_text

CONFIG = """
    from dataclasses import dataclass


    @dataclass
    class Config:
        fraction: float


    def make(fraction):
        return Config(fraction=fraction)
"""

WORKER = """
    from pkg.config import Config, make


    class Worker:
        def __init__(self, config: Config):
            self.config = config

        def size(self, total):
            self.tokens = total * self.config.fraction


    def main(fraction, total):
        config = make(fraction)
        worker = Worker(config)
        worker.size(total)
"""


def test_the_carrier_objects_route_joins_the_store_to_the_read(snippet_session):
    session = snippet_session(
        {"pkg/__init__.py": "", "pkg/config.py": CONFIG, "pkg/worker.py": WORKER}
    )
    chain = trace(session.graph, "make.fraction", sinks=["tokens"])
    assert spine_code(chain) == [
        "fraction",  # main's, which make() is called with
        "config = make(fraction)",
        "fraction",
        "return Config(fraction=fraction)",
        "fraction: float",
        # the object the constructor made, where it goes until its field is read
        "return Config(fraction=fraction)",
        "config = make(fraction)",
        "worker = Worker(config)",
        "config: Config",
        "self.config = config",
        "self.tokens = total * self.config.fraction",
    ]
    kinds = [(e.kind, e.label) for e in chain.edges if e.kind in ("store", "read")]
    assert sorted(kinds) == [("read", "fraction"), ("store", "fraction")]
    text = chain_text(chain, "tree")
    assert "the value is kept in this object, as .fraction" in text
    assert "taken out of the object here, as .fraction" in text
    stored = [e for e in chain_json(chain, "tree")["edges"] if e["kind"] == "store"]
    assert [e["attribute"] for e in stored] == ["fraction"]


def test_a_field_read_where_no_object_of_its_class_reaches_keeps_the_name_join(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/config.py": CONFIG,
            "pkg/reader.py": """
                from pkg.config import Config


                def use(config: Config, total):
                    tokens = total * config.fraction
                    return tokens
            """,
        }
    )
    chain = trace(session.graph, "make.fraction", sinks=["tokens"])
    assert spine_code(chain) == [
        "fraction",
        "return Config(fraction=fraction)",
        "fraction: float",
        "tokens = total * config.fraction",
    ]
    joined = [e for e in chain.edges if e.dst == chain.spine[-1] and e.src == chain.spine[-2]]
    assert [(e.kind, e.confidence) for e in joined] == [("attr", 1.0)]


IDENTITY = """
    def same(x):
        return x


    class Runner:
        def first(self, a):
            y = same(a)
            self.doubled = y * 2

        def second(self, b):
            z = same(b)
            self.tokens = z
"""


def test_a_value_leaves_a_function_by_the_call_it_entered_by(snippet_session):
    session = snippet_session({"pkg/__init__.py": "", "pkg/run.py": IDENTITY})
    # `a` enters same() from first(): it comes back there, never to second()'s z.
    chain = trace(session.graph, "Runner.first.a", sinks=["tokens"])
    assert "self.tokens = z" not in spine_code(chain)
    assert [s.code for s in chain.steps if s.code == "self.tokens = z"] == []
    chain = trace(session.graph, "Runner.second.b", sinks=["tokens"])
    assert spine_code(chain) == [
        "b",
        "z = same(b)",
        "x",
        "return x",
        "z = same(b)",
        "self.tokens = z",
    ]


TWO_ROUTES = """
    from dataclasses import dataclass


    @dataclass
    class Sizes:
        tokens: int


    def plan(budget):
        return Sizes(tokens=budget // 2)


    class Runner:
        def __init__(self, fraction):
            self.fraction = fraction

        def start(self, total):
            sizes = plan(total * self.fraction)
            self.max_tokens = sizes.tokens

        def resize(self, free):
            self.max_tokens = min(self.max_tokens, int(free * self.fraction))
"""


def test_each_sink_binding_the_value_reaches_is_a_route_the_main_one_first(snippet_session):
    session = snippet_session({"pkg/__init__.py": "", "pkg/run.py": TWO_ROUTES})
    chain = trace(session.graph, "Runner.__init__.fraction", sinks=["max_tokens"])
    assert spine_code(chain) == [
        "fraction",
        "self.fraction = fraction",
        "sizes = plan(total * self.fraction)",
        "budget",
        "return Sizes(tokens=budget // 2)",
        "tokens: int",
        "return Sizes(tokens=budget // 2)",
        "sizes = plan(total * self.fraction)",
        "self.max_tokens = sizes.tokens",
    ]
    steps = {s.id: s for s in chain.steps}
    assert len(chain.routes) == 2
    assert chain.routes[0] == chain.spine
    # the resize only adjusts the value already there (it reads its own target): second
    assert [steps[s].code for s in chain.routes[1]] == [
        "fraction",
        "self.fraction = fraction",
        "self.max_tokens = min(self.max_tokens, int(free * self.fraction))",
    ]
    document = json.loads(json.dumps(chain_json(chain, "tree")))
    assert document["routes"][0] == document["spine"]
    assert len(document["routes"]) == 2
    text = chain_text(chain, "tree")
    assert "Route 2 to pkg/run.py:22: steps 1-2 of the spine, then" in text


def test_a_class_made_by_a_dataclass_transform_decorator_is_a_record(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/base.py": """
                from typing import dataclass_transform


                @dataclass_transform()
                def config(cls):
                    return cls
            """,
            "pkg/cache.py": """
                from pkg.base import config


                @config
                class CacheConfig:
                    utilization: float = 0.9


                def build(utilization, total):
                    cache = CacheConfig(utilization=utilization)
                    budget = total * cache.utilization
                    return budget
            """,
        }
    )
    assert session.index.is_record("pkg.cache.CacheConfig")
    chain = trace(session.graph, "build.utilization", sinks=["budget"])
    assert spine_code(chain) == [
        "utilization",
        "cache = CacheConfig(utilization=utilization)",
        "utilization: float = 0.9",
        "cache = CacheConfig(utilization=utilization)",
        "budget = total * cache.utilization",
    ]


SPLATS = """
    class Runner:
        def __init__(self, fraction, pool_size=None, port=0):
            self.fraction = fraction
            self.pool = pool_size


    def by_call(cfg):
        kwargs = dict(fraction=cfg)
        return Runner(**kwargs)


    def by_display(cfg):
        kwargs = {"fraction": cfg}
        kwargs["pool_size"] = 4
        return Runner(**kwargs)


    def unknown(cfg, extra):
        return Runner(**extra)
"""


def splat_edges(session, function: str) -> list[tuple[str, float]]:
    """The parameters the `**` argument in FUNCTION is bound to, with the confidence."""
    graph = session.graph
    tables = graph.file("pkg/run.py")
    found = []
    for step in tables.binding_steps("cfg") + tables.binding_steps("extra"):
        if step.symbol != function:
            continue
        for call_id, arg_steps in tables.call_args.items():
            for arg, arg_step in zip(tables.calls[call_id].args, arg_steps, strict=True):
                if arg.star == 2 and tables.scope_of[arg_step] == function:
                    found = [
                        (e.dst.rpartition(".")[2], e.confidence)
                        for e in graph.edges(arg_step, True)
                    ]
    return sorted(found)


def test_a_double_star_argument_binds_the_keys_its_dict_is_known_to_hold(snippet_session):
    session = snippet_session({"pkg/__init__.py": "", "pkg/run.py": SPLATS})
    assert splat_edges(session, "by_call") == [("fraction", 1.0)]
    assert splat_edges(session, "by_display") == [("fraction", 1.0), ("pool_size", 1.0)]
    # keys unknown (a parameter's dict): any open parameter, as a guess
    assert splat_edges(session, "unknown") == [("fraction", 0.5), ("pool_size", 0.5), ("port", 0.5)]
    chain = trace(session.graph, "by_call.cfg", sinks=["fraction"])
    assert spine_code(chain) == [
        "cfg",
        "kwargs = dict(fraction=cfg)",
        "return Runner(**kwargs)",
        "fraction",
        "self.fraction = fraction",
    ]


def test_without_a_sink_the_value_ends_where_it_is_kept_and_other_ends_are_routes(
    snippet_session,
):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/engine.py": """
                class Engine:
                    def __init__(self, utilization, total):
                        budget = total * utilization
                        self.budget = budget
                        self.blocks = budget // 16
            """,
        }
    )
    chain = trace(session.graph, "Engine.__init__.utilization")
    steps = {s.id: s for s in chain.steps}
    assert [[steps[s].code for s in route] for route in chain.routes] == [
        ["utilization", "budget = total * utilization", "self.budget = budget"],
        ["utilization", "budget = total * utilization", "self.blocks = budget // 16"],
    ]


REGISTERED = {
    "app/__init__.py": "",
    "app/models.py": """
        REGISTRY = {}


        def register(name):
            def wrap(cls):
                REGISTRY[name] = cls
                return cls

            return wrap


        class Base:
            @classmethod
            def create(cls, options):
                return cls(**options)


        @register("small")
        class Small(Base):
            def __init__(self, batch_size=1, devices=1):
                self.size = int(batch_size)
                self.devices = devices


        @register("large")
        class Large(Base):
            def __init__(self, batch_size=1, **kwargs):
                self.per_device = int(batch_size) // 2
    """,
    "app/main.py": """
        import argparse

        from app.models import REGISTRY


        class Logger:
            def __init__(self, model):
                self.model = model


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--batch-size", type=int, default=1)
            parser.add_argument("--model", default="small")
            args = parser.parse_args()
            model = REGISTRY[args.model].create({"batch_size": args.batch_size})
            Logger(model)
    """,
}


def test_without_a_sink_each_class_a_registry_may_pick_keeps_the_value(snippet_session):
    """No sink: the value ends where each class the registry may make keeps what it computes
    from it (`self.size = int(batch_size)`: a conversion is no plain copy), along sure
    steps (`cls(**options)` into `batch_size` is sure for the value kept at "batch_size").
    Not in `devices`, and not in the logger that keeps the object the call returns (a
    value the call made, reached only through a call found by value)."""
    session = snippet_session(REGISTERED)
    chain = trace(session.graph, "batch_size")
    steps = {s.id: s for s in chain.steps}
    ends = {steps[route[-1]].code for route in chain.routes}
    assert ends == {"self.size = int(batch_size)", "self.per_device = int(batch_size) // 2"}
    for route in chain.routes:
        assert [steps[s].code for s in route][-3:-1] == ["return cls(**options)", "batch_size=1"]


WORKERS = {
    "pkg/__init__.py": "",
    "pkg/config.py": """
        class Config:
            def __init__(self, fraction):
                self.fraction = fraction
    """,
    "pkg/memory.py": """
        def request(fraction, total):
            requested = total * fraction
            return requested
    """,
    "pkg/worker.py": """
        from pkg.config import Config
        from pkg.memory import request


        class Worker:
            def __init__(self, config: Config):
                self.config = config

            def init_device(self):
                self.requested = request(self.config.fraction, 80)
    """,
    "pkg/cpu_worker.py": """
        from pkg.config import Config
        from pkg.worker import Worker


        class CPUWorker(Worker):
            def __init__(self, config: Config):
                self.cpu_memory = config.fraction * 64
    """,
    "pkg/launch.py": "from pkg.worker import Worker\n",
    "pkg/engine.py": "from pkg.worker import Worker\n",
    "pkg/main.py": """
        from pkg.config import Config
        from pkg.cpu_worker import CPUWorker
        from pkg.worker import Worker


        def main(fraction, cpu):
            config = Config(fraction)
            worker = CPUWorker(config) if cpu else Worker(config)
            worker.init_device()
    """,
}


def test_without_a_sink_the_main_end_is_in_the_module_the_others_build_on(snippet_session):
    """The CPU worker keeps a value computed from the fraction two steps nearer than the
    worker it subclasses; the end in the module more modules import (within a few steps of
    the nearest) is the spine's, the nearest another route."""
    session = snippet_session(WORKERS)
    chain = trace(session.graph, "main.fraction")
    steps = {s.id: s for s in chain.steps}
    ends = [steps[route[-1]].code for route in chain.routes]
    assert ends[0] == "self.requested = request(self.config.fraction, 80)"
    assert "self.cpu_memory = config.fraction * 64" in ends[1:]


def test_a_factorys_result_runs_the_method_of_each_class_it_may_make(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/pools.py": """
                class Base:
                    def size(self, budget):
                        raise NotImplementedError


                class Halves(Base):
                    def size(self, budget):
                        return budget // 2


                class Quarters(Base):
                    def size(self, budget):
                        return budget // 4


                class Whole(Base):
                    def size(self, budget):
                        return budget


                def make(kind) -> Base:
                    if kind:
                        return Halves()
                    return Quarters()


                def run(kind, budget):
                    chooser = make(kind)
                    tokens = chooser.size(budget)
                    return tokens
            """,
        }
    )
    targets = session.graph.resolver.targets("pkg/pools.py", "run", "chooser.size")
    # the class it makes when no condition holds (its default) first, then the others
    assert [(t.function, t.confidence, t.why) for t in targets] == [
        ("pkg.pools.Quarters.size", 1.0, "chooser is a Quarters by default"),
        ("pkg.pools.Halves.size", 1.0, "chooser is a Halves when `if kind:`"),
    ]
    chain = trace(session.graph, "run.budget", sinks=["tokens"])
    assert spine_code(chain) == [
        "budget",
        "tokens = chooser.size(budget)",
        "budget",
        "return budget // 4",
        "tokens = chooser.size(budget)",
    ]
    # Each class's method is reached with the factory's branch that makes it as the reason.
    text = chain_text(chain, "tree")
    assert "argument bound to the parameter; chooser is a Quarters by default" in text
    conditions = {e.get("condition") for e in chain_json(chain, "tree")["edges"]}
    assert "chooser is a Halves when `if kind:`" in conditions


def test_a_branch_is_said_with_the_branches_around_it():
    source = b"""def make(kvc):
    if a and b:
        return A()
    if c:
        if d(kvc):
            return D()
        return C()
    else:
        return E()
"""
    assert enclosing_branch(source, 3, 1) == "`if a and b:`"
    assert enclosing_branch(source, 6, 1) == "`if d(kvc):` inside `if c:`"
    assert enclosing_branch(source, 7, 1) == "`if c:`"
    assert enclosing_branch(source, 9, 1) == "`else: (not if c:)`"


def test_cls_called_in_a_classmethod_constructs_its_class(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/args.py": """
                from dataclasses import dataclass


                @dataclass
                class Args:
                    fraction: float = 0.9

                    @classmethod
                    def from_cli(cls, fraction):
                        return cls(fraction=fraction)


                def main(fraction, total):
                    args = Args.from_cli(fraction)
                    tokens = total * args.fraction
                    return tokens
            """,
        }
    )
    targets = session.graph.resolver.targets("pkg/args.py", "Args.from_cli", "cls")
    assert [(t.function, t.klass, t.confidence) for t in targets] == [(None, "pkg.args.Args", 1.0)]
    chain = trace(session.graph, "main.fraction", sinks=["tokens"])
    assert spine_code(chain) == [
        "fraction",
        "args = Args.from_cli(fraction)",
        "fraction",
        "return cls(fraction=fraction)",
        "fraction: float = 0.9",
        "return cls(fraction=fraction)",
        "args = Args.from_cli(fraction)",
        "tokens = total * args.fraction",
    ]


def test_routes_do_not_depend_on_what_was_traced_before(snippet_session):
    session = snippet_session({"pkg/__init__.py": "", "pkg/run.py": TWO_ROUTES})
    first = trace(session.graph, "Runner.__init__.fraction", sinks=["max_tokens"])
    trace(session.graph, "plan.budget", sinks=["max_tokens"])
    again = trace(session.graph, "Runner.__init__.fraction", sinks=["max_tokens"])
    assert again.routes == first.routes and len(first.routes) == 2


LAUNCHED = """
    import multiprocessing as mp
    from dataclasses import dataclass


    @dataclass
    class Args:
        fraction: float = 0.9


    class Worker:
        def __init__(self, args: Args):
            self.tokens = 1000 * args.fraction


    def run_worker(args, port):
        Worker(args)


    def launch(args, run_func=run_worker):
        proc = mp.Process(target=run_func, args=(args, 8000))
        proc.start()


    def main():
        args = Args()
        launch(args)
"""


def test_a_value_given_to_a_process_reaches_the_function_it_runs(snippet_session):
    session = snippet_session({"pkg/__init__.py": "", "pkg/run.py": LAUNCHED})
    graph = session.graph
    # the target is a parameter whose default is the function: followed back to it
    into_args = graph.edges("pkg/run.py#p:run_worker.args", False)
    into_port = graph.edges("pkg/run.py#p:run_worker.port", False)
    code = "proc = mp.Process(target=run_func, args=(args, 8000))"
    assert [(e.kind, graph.step(e.src).code, e.confidence) for e in into_args] == [
        ("arg_to_param", code, 1.0)
    ]
    assert [(e.kind, graph.step(e.src).code) for e in into_port] == [("arg_to_param", code)]
    first, second = into_args[0].src, into_port[0].src
    assert first != second  # each element of the tuple is its own step
    assert [e.dst for e in graph.edges(first, True)] == ["pkg/run.py#p:run_worker.args"]
    chain = trace(graph, "Args.fraction", sinks=["tokens"])
    assert spine_code(chain) == [
        "fraction: float = 0.9",
        "args = Args()",
        "launch(args)",
        "args",
        code,
        "args",
        "Worker(args)",
        "args: Args",
        "self.tokens = 1000 * args.fraction",
    ]


def test_a_settings_bag_read_takes_the_field_a_flag_sets(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/args.py": """
                import argparse
                from dataclasses import dataclass


                @dataclass
                class ServerArgs:
                    fraction: float = 0.9

                    @staticmethod
                    def add_cli_args(parser):
                        parser.add_argument("--fraction", type=float, default=ServerArgs.fraction)


                @dataclass
                class PoolConfig:
                    fraction: float = 0.5


                class _Bag:
                    def _set(self, name, value):
                        object.__setattr__(self, name, value)


                _BAG = _Bag()


                def get_settings() -> _Bag:
                    return _BAG


                def size(total):
                    tokens = total * get_settings().fraction
                    return tokens
            """,
        }
    )
    chain = trace(session.graph, "ServerArgs.fraction", sinks=["tokens"])
    steps = {s.id: s for s in chain.steps}
    assert [steps[s].code.splitlines()[0] for s in chain.spine][-2:] == [
        "fraction: float = 0.9",
        "tokens = total * get_settings().fraction",
    ]
    joined = [e for e in chain.edges if e.src == chain.spine[-2] and e.dst == chain.spine[-1]]
    # not PoolConfig.fraction: no flag sets it
    assert [(e.kind, e.confidence) for e in joined] == [("attr", 0.8)]


def test_a_local_bound_to_a_class_constructs_each_class_it_may_be(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/workers.py": """
                class Worker:
                    def __init__(self, fraction):
                        self.tokens = 1000 * fraction


                class OverlapWorker(Worker):
                    pass


                def start(fraction, overlap):
                    if overlap:
                        worker_class = OverlapWorker
                    else:
                        worker_class = Worker
                    return worker_class(fraction)
            """,
        }
    )
    targets = session.graph.resolver.targets("pkg/workers.py", "start", "worker_class")
    assert [(t.function, t.klass) for t in targets] == [
        ("pkg.workers.Worker.__init__", "pkg.workers.OverlapWorker"),
        ("pkg.workers.Worker.__init__", "pkg.workers.Worker"),
    ]


FLAGS_PACKAGE = {
    "app/__init__.py": "",
    "app/settings.py": """
        import argparse
        import dataclasses
        from dataclasses import dataclass


        @dataclass
        class Settings:
            fraction: float = 0.9

            @staticmethod
            def add_cli_args(parser):
                parser.add_argument("--fraction", type=float, default=Settings.fraction)

            @classmethod
            def from_cli_args(cls, args):
                names = [f.name for f in dataclasses.fields(cls)]
                return cls(**{name: getattr(args, name) for name in names})


        def prepare_settings(argv):
            parser = argparse.ArgumentParser()
            Settings.add_cli_args(parser)
            raw_args = parser.parse_args(argv)
            return Settings.from_cli_args(raw_args)
    """,
    "app/worker.py": """
        class Worker:
            def __init__(self, settings):
                self.settings = settings

            def size(self, total):
                self.tokens = total * self.settings.fraction


        class FastWorker(Worker):
            pass
    """,
    "app/engine.py": """
        from app.worker import FastWorker, Worker


        def start(settings, fast):
            WorkerClass = FastWorker if fast else Worker
            worker = WorkerClass(settings)
            worker.size(100)


        def quick_test():
            # Another object of the class, made by hand: not the flag's.
            from app.settings import Settings

            start(Settings(fraction=0.5), True)
    """,
    "app/serve.py": """
        import sys

        from app.settings import prepare_settings


        def run(settings):
            if settings.fraction > 1:
                from app.other import start

                start(settings)
            else:
                from app.engine import start

                start(settings, False)


        def main():
            settings = prepare_settings(sys.argv[1:])
            run(settings)
    """,
    "app/other.py": """
        def start(settings):
            return settings
    """,
    "app/engine_extra.py": """
        from app.engine import start
        from app.settings import prepare_settings
    """,
    "bench.py": """
        import argparse

        from app.engine import start
        from app.settings import Settings


        def main():
            parser = argparse.ArgumentParser()
            Settings.add_cli_args(parser)
            args = parser.parse_args()
            start(Settings.from_cli_args(args), True)
    """,
}


def test_a_flags_value_rides_in_the_object_made_from_the_parsed_flags(snippet_session):
    """The flag's field is read from the worker's settings: the route is the object made where
    the package's own entry parses (the module most modules import, not the bench script
    beside it, nor the object `quick_test` makes by hand), through the branch of `run` whose
    own import binds `start`, and the class-valued local `WorkerClass`. Before the field, the
    namespace the parser returns, handed to the constructor that copies it. After the field,
    the object's own way, as the search follows it: made by `cls(...)`, returned to where the
    package parses (the bench script calls `from_cli_args` too: not the call the value
    entered by), kept by the worker's constructor, and read in the method called on it."""
    session = snippet_session(FLAGS_PACKAGE)
    chain = trace(session.graph, "fraction", sinks=["tokens"])
    kinds = [e.kind for e in chain.edges if e.kind in ("parsed", "copied_to_field")]
    assert sorted(kinds) == ["copied_to_field", "parsed"]
    assert spine_code(chain) == [
        'parser.add_argument("--fraction", type=float, default=Settings.fraction)',
        # the namespace the parser returns, up to the constructor that copies it by name
        "raw_args = parser.parse_args(argv)",
        "return Settings.from_cli_args(raw_args)",
        "args",
        "return cls(**{name: getattr(args, name) for name in names})",
        "fraction: float = 0.9",
        "return cls(**{name: getattr(args, name) for name in names})",
        "return Settings.from_cli_args(raw_args)",
        "settings = prepare_settings(sys.argv[1:])",
        "run(settings)",
        "settings",
        "start(settings, False)",
        "settings",
        "worker = WorkerClass(settings)",
        "settings",
        "self.settings = settings",
        "worker = WorkerClass(settings)",  # the worker the constructor made keeps it
        "self",  # `worker.size(100)`: the object the method is called on
        "self.tokens = total * self.settings.fraction",
    ]


def test_without_a_sink_a_statement_that_keeps_two_attributes_is_one_end(snippet_session):
    """`self.low, self.high = split(total * utilization)` keeps the value in two attributes of
    one statement: one end, not two routes to the same line."""
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/engine.py": """
                def split(budget):
                    return budget // 2, budget - budget // 2


                class Engine:
                    def __init__(self, utilization, total):
                        self.low, self.high = split(total * utilization)
                        self.blocks = int(utilization * 16)
            """,
        }
    )
    chain = trace(session.graph, "Engine.__init__.utilization")
    steps = {s.id: s for s in chain.steps}
    ends = [(steps[r[-1]].line, steps[r[-1]].code) for r in chain.routes]
    assert len(ends) == len(set(ends)) == 2
