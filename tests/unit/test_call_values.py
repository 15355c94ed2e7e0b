"""Calls the resolver names nothing for, followed by value in the chain
(tracer/graph/call_values.py): the call graph's own follower says what the callee may hold
(a class from a registry a decorator fills, a method chosen by a constant name given as an
argument), and the value goes on into the arguments of the call and to the parameters of
what it runs."""

from __future__ import annotations

from tests.conftest import spine_code
from tracer.graph.call_values import keeps_nothing
from tracer.trace.chains import trace

REGISTRY = {
    "app/__init__.py": "",
    "app/main.py": """
        import argparse

        REGISTRY = {}


        def register(name):
            def deco(cls):
                REGISTRY[name] = cls
                return cls

            return deco


        @register("big")
        class BigPool:
            def __init__(self, fraction):
                self.max_total_num_tokens = int(fraction * 1000)


        def get_pool_class(name):
            return REGISTRY[name]


        def dispatch(runner, method, fraction):
            return getattr(runner, method)(fraction)


        class Runner:
            def sized(self, fraction):
                self.page_size = fraction * 10


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--fraction", type=float, default=0.9)
            args = parser.parse_args()
            pool = get_pool_class("big")(args.fraction)
            dispatch(Runner(), "sized", args.fraction)
            return pool
    """,
}


def test_a_class_from_a_registry_is_constructed_with_the_value(snippet_session):
    """`get_pool_class("big")` returns a class a decorator keeps in a dict: the flag's value
    goes into its `__init__` and on to the sink."""
    session = snippet_session(REGISTRY)
    chain = trace(session.graph, "fraction", sinks=["max_total_num_tokens"])
    assert spine_code(chain) == [
        'parser.add_argument("--fraction", type=float, default=0.9)',
        "args = parser.parse_args()",
        'pool = get_pool_class("big")(args.fraction)',
        "fraction",
        "self.max_total_num_tokens = int(fraction * 1000)",
    ]
    kinds = [step.kind for step in chain.steps if step.id in chain.spine]
    assert kinds == ["cli_flag", "local_assign", "call_arg", "param", "attr_write"]


def test_a_method_chosen_by_a_constant_name_given_as_an_argument(snippet_session):
    """`getattr(runner, method)(fraction)`, `method` given "sized" by the only caller: the
    value reaches `Runner.sized`'s parameter."""
    session = snippet_session(REGISTRY)
    chain = trace(session.graph, "fraction", sinks=["page_size"])
    assert spine_code(chain) == [
        'parser.add_argument("--fraction", type=float, default=0.9)',
        "args = parser.parse_args()",
        'dispatch(Runner(), "sized", args.fraction)',
        "fraction",
        "return getattr(runner, method)(fraction)",
        "fraction",
        "self.page_size = fraction * 10",
    ]


MODELS = {
    "lm/__init__.py": "",
    "lm/registry.py": """
        MODEL_REGISTRY = {}


        def register_model(*names):
            def decorate(cls):
                for name in names:
                    MODEL_REGISTRY[name] = cls
                return cls

            return decorate


        def get_model(model_name):
            return MODEL_REGISTRY[model_name]
    """,
    "lm/models.py": """
        from lm.registry import register_model


        class LM:
            @classmethod
            def create(cls, arg_dict):
                return cls(**arg_dict)


        @register_model("hf", "huggingface")
        class HFLM(LM):
            def __init__(self, batch_size=1, device="cuda"):
                self.batch_size_per_gpu = int(batch_size)
                self.device = device
    """,
    "lm/main.py": """
        import argparse

        from lm import registry
        from lm.models import HFLM


        def evaluate(model, batch_size):
            return registry.get_model(model).create({"batch_size": batch_size, "device": "cpu"})


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--batch-size", type=int, default=1)
            args = parser.parse_args()
            local = HFLM.create({"device": "cpu", "batch_size": args.batch_size})
            return local, evaluate("hf", args.batch_size)
    """,
}


def test_a_classmethod_makes_the_class_it_is_called_on_with_the_key_it_is_given(
    snippet_session,
):
    """`HFLM.create({...})`: `cls(**arg_dict)` in `LM.create` makes an HFLM (the follower
    finds `cls` holds it), and `**arg_dict` gives `__init__`'s `batch_size` the value kept
    at "batch_size": a binding the keys of `arg_dict` alone would leave a guess is sure for
    this value."""
    session = snippet_session(MODELS)
    chain = trace(session.graph, "batch_size", sinks=["batch_size_per_gpu"])
    assert spine_code(chain) == [
        'parser.add_argument("--batch-size", type=int, default=1)',
        "args = parser.parse_args()",
        'local = HFLM.create({"device": "cpu", "batch_size": args.batch_size})',
        "arg_dict",
        "return cls(**arg_dict)",
        "batch_size=1",
        "self.batch_size_per_gpu = int(batch_size)",
    ]
    spine = list(chain.spine)
    links = {(e.src, e.dst): e for e in chain.edges}
    assert all(links[pair].confidence == 1.0 for pair in zip(spine, spine[1:], strict=False))
    codes = {step.code for step in chain.steps}
    assert "self.device = device" not in codes


HANDLERS = {
    "plan/__init__.py": "",
    "plan/sizes.py": """
        def doubled(fraction):
            return fraction * 2


        def halved(fraction):
            return fraction / 2


        HANDLERS = {"double": doubled, "halve": halved}


        def plan(mode, fraction):
            handler = HANDLERS[mode]
            budget = handler(fraction)
            max_total_num_tokens = int(budget * 1000)
            return max_total_num_tokens
    """,
}


def test_a_value_comes_back_out_of_a_function_kept_in_a_dict(snippet_session):
    """`HANDLERS[mode](fraction)`: the value goes into each function the dict keeps and comes
    back out of its return to the call's result, forward and backward; the direct way from
    `fraction` to `budget` (a read through a call) is no longer the route taken."""
    session = snippet_session(HANDLERS)
    graph = session.graph
    # A query that reaches the returns before the call is met (from inside the function)
    # does not keep the later queries from taking the returns back to the call.
    trace(graph, "doubled.fraction", direction="forward")
    chain = trace(graph, "plan.fraction", sinks=["max_total_num_tokens"])
    assert spine_code(chain) == [
        "fraction",
        "budget = handler(fraction)",
        "fraction",
        "return fraction * 2",
        "budget = handler(fraction)",
        "max_total_num_tokens = int(budget * 1000)",
    ]
    back = trace(graph, "max_total_num_tokens", direction="backward", branch_depth=6)
    codes = {step.code for step in back.steps}
    assert {"return fraction * 2", "return fraction / 2"} <= codes
    # Back out of the function through the call's argument to the caller's own parameter.
    assert spine_code(back) == [
        "fraction",
        "budget = handler(fraction)",
        "fraction",
        "return fraction * 2",
        "budget = handler(fraction)",
        "max_total_num_tokens = int(budget * 1000)",
    ]


def test_where_a_name_is_written_as_a_value(snippet_session):
    """The callers found by value of a function are looked for where its name is written as
    a value: `return scale`, a global table, a string given to `getattr` in a function; not a
    call, a base class, a comment or a docstring. A method's bare name is a value of its own
    only in its class's body, its name in a string anywhere; a decorator that keeps the
    function nowhere (`@property`, `@functools.cache`) puts it in no table of its file, a
    registering one may."""
    session = snippet_session(
        {
            "app.py": '''
                import functools


                def scale(x):
                    return x


                class Base:
                    pass


                class Child(Base):
                    """Hands scale on."""

                    table = {"s": scale}

                    def size(self, size):
                        return size  # scale here is a comment

                    @property
                    def shown(self):
                        return 1

                    @functools.cache
                    def cached(self):
                        return 2


                def register(f):
                    return f


                @register
                def kept():
                    pass


                def pick():
                    return scale


                def base():
                    return Base, getattr(Child, "size")
            '''
        }
    )
    values = session.graph.values
    assert values.value_scopes("app.py", "scale") == {"<module>", "pick"}
    assert values.value_scopes("app.py", "Base") == {"base"}
    assert values.value_scopes("app.py", "size") == {"Child.size", "base"}
    # In a function a method's bare name is another binding; spelled in a string it is the
    # method's name all the same (`getattr(Child, "size")`).
    assert values.value_scopes("app.py", "size", body_only=True) == {"base"}
    assert values.value_scopes("app.py", "scale", quoted_only=True) == set()
    index = session.index
    assert keeps_nothing(index, "app", "property")
    assert keeps_nothing(index, "app", "functools.cache")
    assert keeps_nothing(index, "app", "shown.setter")
    assert not keeps_nothing(index, "app", "register")


def test_keywords_gathered_and_spread_into_a_function_held_in_a_parameter(snippet_session):
    """`process(read, sql=v)` with `def process(func, **args): func(**args)`: the value kept
    at "sql" in `args` fills `read`'s parameter of that name (the call is found by value: its
    argument's place is read from the step the follower made), not the other one."""
    session = snippet_session(
        {
            "app.py": """
                def keep(value):
                    stored = value
                    return stored


                def read(sql, limit=10):
                    query = keep(sql)
                    return query, limit


                def process(func, **args):
                    return func(**args)


                def main(text):
                    return process(read, sql=text, limit=5)
            """
        }
    )
    chain = trace(session.graph, "text", direction="forward", branch_depth=12)
    params = {(s.symbol, s.name) for s in chain.steps if s.kind == "param"}
    assert ("read", "sql") in params
    assert ("read", "limit") not in params
    # Taken out of the dict there: the value itself goes on (a dict no step takes it out of
    # again would be no use of it).
    assert ("keep", "value") in params
    assert "stored = value" in {s.code for s in chain.steps}
