"""Functions run by a callable outside the tree with each element of an iterable
(tracer/index/library.py's EACH: `map(f, xs, ys)` runs `f(x, y)` for the elements of xs and
ys, `filter(f, xs)` runs `f(x)`): the value in the iterable reaches the parameter at its
place, and only that one."""

from __future__ import annotations

from tests.conftest import spine_code, trace

SIZES = {
    "app.py": """
        def scale(size, factor):
            scaled = size * factor
            return scaled


        def keep(size):
            kept = size > 0
            return kept


        def sizes(budget):
            wanted = [budget, 16]
            factors = [2, 3]
            grown = list(map(scale, wanted, factors))
            chosen = list(filter(keep, wanted))
            return grown, chosen
    """,
}


def test_map_and_filter_run_the_function_with_each_element(snippet_session):
    """`budget` is in the first iterable: it reaches `scale`'s first parameter (not
    `factor`) and `keep`'s only one."""
    session = snippet_session(SIZES)
    chain = trace(session.graph, "budget", direction="forward", branch_depth=12)
    params = {(s.symbol, s.name) for s in chain.steps if s.kind == "param"}
    assert {("scale", "size"), ("keep", "size")} <= params
    assert ("scale", "factor") not in params
    to_scaled = trace(session.graph, "budget", sinks=["scaled"])
    assert spine_code(to_scaled) == [
        "budget",
        "wanted = [budget, 16]",
        "grown = list(map(scale, wanted, factors))",
        "size",
        "scaled = size * factor",
    ]


def test_backward_from_the_function_to_the_iterable(snippet_session):
    """Backward, `kept` comes from the element `filter` passes: the iterable, then `budget`."""
    session = snippet_session(SIZES)
    chain = trace(session.graph, "kept", direction="backward")
    codes = {s.code for s in chain.steps}
    assert "chosen = list(filter(keep, wanted))" in codes
    assert "wanted = [budget, 16]" in codes


CONTEXTS = {
    "app/__init__.py": "",
    "app/procs.py": """
        import multiprocessing


        def spawn_context():
            return multiprocessing.get_context("spawn")


        def run(fraction, rank=0):
            budget = fraction * 1000
            return budget


        def launch(fraction):
            context = spawn_context()
            process = context.Process(target=run, kwargs={"fraction": fraction, "rank": 1})
            process.start()
    """,
}


def test_a_process_made_by_a_multiprocessing_context_runs_its_target(snippet_session):
    """`context.Process(target=run, kwargs={...})`, the context returned by a function of
    the tree that returns `multiprocessing.get_context(...)`: a context's `Process` is
    multiprocessing's, so the value given at "fraction" reaches `run`'s parameter of that
    name."""
    session = snippet_session(CONTEXTS)
    chain = trace(session.graph, "launch.fraction", direction="forward", sinks=["budget"])
    assert spine_code(chain) == [
        "fraction",
        'process = context.Process(target=run, kwargs={"fraction": fraction, "rank": 1})',
        "fraction",
        "budget = fraction * 1000",
    ]


SHARED = {
    "app/__init__.py": "",
    "app/procs.py": """
        import multiprocessing


        def run(fraction, rank=0):
            budget = fraction * 1000
            return budget


        def launch(fraction, ranks):
            shared = {"fraction": fraction}
            for rank in range(ranks):
                process = multiprocessing.Process(target=run, kwargs=shared | {"rank": rank})
                process.start()


        def launch_spread(fraction):
            shared = {"fraction": fraction}
            multiprocessing.Process(target=run, kwargs={**shared, "rank": 1}).start()
    """,
}


def test_a_launcher_passes_the_items_of_a_dict_it_is_given_united_with_another(snippet_session):
    """`kwargs=shared | {"rank": rank}` is the dict `{**shared, "rank": rank}` (a dict
    union): the process's target is given `shared`'s items too, each at its key, where
    `shared` was written; so is a display spreading `**shared`."""
    session = snippet_session(SHARED)
    for start in ("launch.fraction", "launch_spread.fraction"):
        chain = trace(session.graph, start, direction="forward", sinks=["budget"])
        codes = spine_code(chain)
        assert codes[:2] == ["fraction", 'shared = {"fraction": fraction}'], start
        assert codes[-2:] == ["fraction", "budget = fraction * 1000"], start
    rank = trace(session.graph, "launch.rank", direction="forward", sinks=["budget"])
    assert "budget = fraction * 1000" not in spine_code(rank)  # "rank" is not "fraction"


METHOD_TARGET = {
    "app/__init__.py": "",
    "app/engine.py": """
        class Engine:
            @staticmethod
            def run_engine(*args, rank=0, **kwargs):
                config = kwargs["config"]
                limit = config * 2
                return limit
    """,
    "app/procs.py": """
        import multiprocessing


        def launch(config):
            from app.engine import Engine

            shared = {"config": config}
            multiprocessing.Process(target=Engine.run_engine, kwargs=shared | {"rank": 1}).start()
    """,
}


def test_a_launcher_runs_a_method_named_through_its_class(snippet_session):
    """`target=Engine.run_engine`, the class imported inside the function: the target holds
    what a call `Engine.run_engine(...)` there would run, and the value at "config" goes
    into its `**kwargs` and out at that key."""
    session = snippet_session(METHOD_TARGET)
    chain = trace(session.graph, "launch.config", direction="forward", sinks=["limit"])
    assert spine_code(chain) == [
        "config",
        'shared = {"config": config}',
        "**kwargs",
        'config = kwargs["config"]',
        "limit = config * 2",
    ]
