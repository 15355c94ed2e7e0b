"""Values that cross a process launch, and holders kept per process. A launcher given its
arguments as a local tuple bound in each branch beside its own target passes each branch's
values to that branch's function; a binding always run before a read (the rest of its block)
hides the earlier ones; a settings bag filled in the launching process and again in the
launched one is read, in the launched process, from what that process put there."""

from __future__ import annotations

from tests.conftest import spine_code, trace
from tests.unit.test_bags import ARGS, CONTEXT
from tracer.graph.objects import constructions, route_back

SERVER = """
    import multiprocessing as mp

    from pkg.context import publish
    from pkg.worker import run_worker, run_worker_with_pipe


    def launch_workers(settings, with_pipe):
        if with_pipe:
            target = run_worker_with_pipe
            args = (run_worker, None)
        else:
            target = run_worker
            args = (settings, 0)
        proc = mp.Process(target=target, args=args)
        proc.start()


    def launch(settings):
        publish(settings)
        launch_workers(settings, False)
"""

WORKER = """
    from pkg.context import get_main, publish
    from pkg.settings_args import Settings


    class Sizer:
        settings: Settings

        def __init__(self, settings: Settings):
            self.settings = settings

        def size(self, total):
            tokens = total * get_main().fraction
            return tokens


    class Runner:
        def __init__(self, settings):
            self.sizer = Sizer(settings=settings)
            self.tokens = self.sizer.size(1000)


    def run_worker(settings, rank):
        publish(settings)
        Runner(settings)


    def run_worker_with_pipe(run, pipe):
        settings, rank = pipe.recv()
        run(settings, rank)
"""

MAIN = """
    import sys

    from pkg.settings_args import prepare_settings
    from pkg.server import launch


    if __name__ == "__main__":
        launch(prepare_settings(sys.argv[1:]))
"""


def package() -> dict[str, str]:
    return {
        "pkg/__init__.py": "",
        "pkg/settings_args.py": ARGS,
        "pkg/context.py": CONTEXT,
        "pkg/server.py": SERVER,
        "pkg/worker.py": WORKER,
        "pkg/main.py": MAIN,
    }


def test_a_launchers_local_tuple_goes_to_its_own_branchs_target(snippet_session):
    """`args = (settings, 0)` is bound beside `target = run_worker`: its values go to
    run_worker's parameters, not to run_worker_with_pipe's (the other branch's target)."""
    session = snippet_session(package())
    graph = session.graph
    server = graph.file("pkg/server.py")
    assert graph.seeds("args")  # the bindings of `args`, in the function that launches
    elements = [s for s, _ in server.elements.items()]  # (every unit built)
    assert elements  # one step per value of each tuple `args` is bound to
    bound = {
        code: sorted(
            e.dst.rpartition(":")[2]
            for s in elements
            if graph.step(s).code.strip() == code
            for e in graph.edges(s, True)
        )
        for code in ("args = (settings, 0)", "args = (run_worker, None)")
    }
    assert bound == {
        "args = (settings, 0)": ["run_worker.rank", "run_worker.settings"],
        "args = (run_worker, None)": ["run_worker_with_pipe.pipe", "run_worker_with_pipe.run"],
    }


def test_a_bag_is_read_from_what_the_readers_own_process_put_there(snippet_session):
    """The bag is filled in the launching process (`launch`: publish) and again in the worker
    process (`run_worker`: publish). The reader runs in the worker (its object holds the
    settings that came there through the launch): the route takes the worker's publication."""
    session = snippet_session(package())
    chain = trace(session.graph, "fraction", sinks=["tokens"])
    code = spine_code(chain)
    assert "args = (settings, 0)" in code  # through the launch
    assert code.index("args = (settings, 0)") < code.index("publish(settings)")
    publish = [
        s for s in chain.steps if s.id in chain.spine and s.code.strip() == "publish(settings)"
    ]
    assert [s.file for s in publish] == ["pkg/worker.py"]
    assert code[-3:] == [
        "tokens = total * get_main().fraction",
        "return tokens",
        "self.tokens = self.sizer.size(1000)",
    ]


def test_a_binding_in_one_branch_never_reaches_a_read_in_its_sibling(snippet_session):
    """`x = a` in the `if` branch and `x = b` then a read in the `else` branch: the read
    takes `x = b` only; after the `if`, both reach."""
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/m.py": """
                def pick(a, b, c):
                    if c:
                        x = a
                        y = x + 1
                    else:
                        x = b
                        y = x + 2
                    z = x * 3
                    return y, z
            """,
        }
    )
    graph = session.graph
    tables = graph.file("pkg/m.py")
    reads = {graph.step(s).code.strip(): s for s in tables.steps if graph.step(s).kind == "formula"}
    sources = {
        code: sorted(graph.step(e.src).code.strip() for e in graph.edges(step, False))
        for code, step in reads.items()
        if code.startswith(("y =", "z ="))
    }
    assert sources == {
        "y = x + 1": ["x = a"],
        "y = x + 2": ["x = b"],
        "z = x * 3": ["x = a", "x = b"],
    }


def test_an_objects_way_back_through_a_splat_keeps_to_its_key(snippet_session):
    """`Worker(**kwargs)` after `kwargs = dict(settings=self.settings, spare=spare)`: the
    worker's `settings` comes from the key `settings`, not from `spare` (a fresh Settings made
    one step before, nearer than the object the server was given)."""
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/m.py": """
                class Settings:
                    pass


                class Worker:
                    def __init__(self, settings: Settings, spare: Settings):
                        self.settings = settings


                class Server:
                    def __init__(self, settings: Settings):
                        self.settings = settings

                    def start(self):
                        spare = Settings()
                        kwargs = dict(settings=self.settings, spare=spare)
                        return Worker(**kwargs)


                def main():
                    made = Settings()
                    return Server(made).start()
            """,
        }
    )
    graph = session.graph
    start = "pkg/m.py#p:Worker.__init__.settings"
    route = route_back(graph, [start], lambda s: bool(constructions(graph, s, 0.8)))
    assert [graph.step(e.dst).code.strip() for e in route][0] == "made = Settings()"
    assert "spare = Settings()" not in [graph.step(e.dst).code.strip() for e in route]


def test_an_objects_way_back_out_of_a_tuple_keeps_to_its_position(snippet_session):
    """`first, second = pair` after `pair = (spare, made)`: `second` is `made`, not `spare`
    (the way back carries the access path, as the spine's search does)."""
    session = snippet_session(
        {
            "m.py": """
                class Settings:
                    pass


                class Server:
                    def __init__(self, settings: Settings):
                        self.settings = settings


                def main():
                    spare = Settings()
                    made = Settings()
                    pair = (spare, made)
                    first, second = pair
                    return Server(second)
            """,
        }
    )
    graph = session.graph
    start = "m.py#p:Server.__init__.settings"
    route = route_back(graph, [start], lambda s: bool(constructions(graph, s, 0.8)))
    codes = [graph.step(e.dst).code.strip() for e in route]
    assert codes[0] == "made = Settings()"
    assert "spare = Settings()" not in codes
