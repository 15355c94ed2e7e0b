"""What the tracer must resolve, one case at a time: a snippet tree in, the chain out.

Steps are written (file, line, kind); lines count from the first line of each snippet.
"""

from __future__ import annotations

import pytest

from tests.conftest import spine_code, spine_of, trace
from tracer.errors import NameNotFound
from tracer.index.resolve import DYNAMIC
from tracer.trace.chains import Chain

Place = tuple[str, int, str]

RUNNER = """
    class Runner:
        def __init__(self, fraction: float):
            self.fraction = fraction

        def size(self, total):
            self.tokens = total * self.fraction
"""

# `start(fraction)` -> `Runner(fraction)` -> `self.fraction` -> `self.tokens = ...`
RUNNER_SPINE = [
    ("pkg/runner.py", 2, "param"),
    ("pkg/runner.py", 3, "attr_write"),
    ("pkg/runner.py", 6, "formula"),
]


def place(chain: Chain, step_id: str) -> Place:
    step = next(s for s in chain.steps if s.id == step_id)
    return (step.file, step.line, step.kind)


def edges_of(chain: Chain) -> set[tuple[Place, Place, str, float]]:
    """Every edge of the chain as (source place, target place, edge kind, confidence)."""
    return {(place(chain, e.src), place(chain, e.dst), e.kind, e.confidence) for e in chain.edges}


def places(chain: Chain) -> set[Place]:
    return {(s.file, s.line, s.kind) for s in chain.steps}


def seeds_of(chain: Chain) -> set[Place]:
    return {place(chain, s) for s in chain.seeds}


# -- imports ---------------------------------------------------------------------------------


def test_absolute_import_of_a_module(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/runner.py": RUNNER,
            "pkg/worker.py": """
                import pkg.runner

                def start(fraction):
                    return pkg.runner.Runner(fraction=fraction)
            """,
        }
    )
    chain = trace(session.graph, "start.fraction", sinks=["tokens"])
    assert spine_of(session, chain) == [
        ("pkg/worker.py", 3, "param"),
        ("pkg/worker.py", 4, "call_arg"),
        *RUNNER_SPINE,
    ]


def test_relative_import_of_a_sibling_module(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/runner.py": RUNNER,
            "pkg/worker.py": """
                from . import runner

                def start(fraction):
                    return runner.Runner(fraction)
            """,
        }
    )
    chain = trace(session.graph, "start.fraction", sinks=["tokens"])
    assert spine_of(session, chain) == [
        ("pkg/worker.py", 3, "param"),
        ("pkg/worker.py", 4, "call_arg"),
        *RUNNER_SPINE,
    ]


def test_relative_import_from_a_parent_package_picks_that_class(snippet_session):
    # pkg/app has a Runner of its own; `..core.runner` names the other one.
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/core/__init__.py": "",
            "pkg/core/runner.py": RUNNER,
            "pkg/app/__init__.py": "",
            "pkg/app/runner.py": """
                class Runner:
                    def __init__(self, fraction):
                        self.share = fraction
            """,
            "pkg/app/worker.py": """
                from ..core.runner import Runner

                def start(fraction):
                    return Runner(fraction=fraction)
            """,
        }
    )
    chain = trace(session.graph, "start.fraction", sinks=["tokens"])
    assert spine_of(session, chain) == [
        ("pkg/app/worker.py", 3, "param"),
        ("pkg/app/worker.py", 4, "call_arg"),
        ("pkg/core/runner.py", 2, "param"),
        ("pkg/core/runner.py", 3, "attr_write"),
        ("pkg/core/runner.py", 6, "formula"),
    ]
    assert not any(s.file == "pkg/app/runner.py" for s in chain.steps)


def test_aliased_module_import(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/runner.py": RUNNER,
            "pkg/worker.py": """
                import pkg.runner as rn

                def start(fraction):
                    return rn.Runner(fraction=fraction)
            """,
        }
    )
    chain = trace(session.graph, "start.fraction", sinks=["tokens"])
    assert spine_of(session, chain) == [
        ("pkg/worker.py", 3, "param"),
        ("pkg/worker.py", 4, "call_arg"),
        *RUNNER_SPINE,
    ]


def test_aliased_name_import(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/runner.py": RUNNER,
            "pkg/worker.py": """
                from pkg.runner import Runner as ModelRunner

                def start(fraction):
                    return ModelRunner(fraction=fraction)
            """,
        }
    )
    chain = trace(session.graph, "start.fraction", sinks=["tokens"])
    assert spine_of(session, chain) == [
        ("pkg/worker.py", 3, "param"),
        ("pkg/worker.py", 4, "call_arg"),
        *RUNNER_SPINE,
    ]


def test_import_under_type_checking_types_an_annotation(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/runner.py": RUNNER,
            "pkg/worker.py": """
                from typing import TYPE_CHECKING

                if TYPE_CHECKING:
                    from pkg.runner import Runner


                def grow(runner: "Runner", total):
                    runner.size(total)
            """,
        }
    )
    chain = trace(session.graph, "grow.total", sinks=["tokens"])
    assert spine_of(session, chain) == [
        ("pkg/worker.py", 7, "param"),
        ("pkg/worker.py", 8, "call_arg"),
        ("pkg/runner.py", 5, "param"),
        ("pkg/runner.py", 6, "formula"),
    ]
    # Resolved through the type, not guessed from the method name.
    assert (
        ("pkg/worker.py", 8, "call_arg"),
        ("pkg/runner.py", 5, "param"),
        "arg_to_param",
        1.0,
    ) in edges_of(chain)


@pytest.mark.parametrize(
    "init",
    ["from pkg.core.runner import Runner\n", "from .core.runner import Runner\n"],
    ids=["absolute", "relative"],
)
def test_reexport_through_package_init(snippet_session, init):
    session = snippet_session(
        {
            "pkg/__init__.py": init,
            "pkg/core/__init__.py": "",
            "pkg/core/runner.py": RUNNER,
            "app.py": """
                from pkg import Runner

                def start(fraction):
                    return Runner(fraction=fraction)
            """,
        }
    )
    chain = trace(session.graph, "start.fraction", sinks=["tokens"])
    assert spine_of(session, chain) == [
        ("app.py", 3, "param"),
        ("app.py", 4, "call_arg"),
        ("pkg/core/runner.py", 2, "param"),
        ("pkg/core/runner.py", 3, "attr_write"),
        ("pkg/core/runner.py", 6, "formula"),
    ]


# -- classes -------------------------------------------------------------------------------


def test_self_method_found_in_a_base_class(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/base.py": """
                class Base:
                    def reserve(self, budget):
                        self.reserved = budget * 2
            """,
            "pkg/runner.py": """
                from pkg.base import Base


                class Runner(Base):
                    def start(self, budget):
                        self.reserve(budget)
            """,
        }
    )
    chain = trace(session.graph, "Runner.start.budget", sinks=["reserved"])
    assert spine_of(session, chain) == [
        ("pkg/runner.py", 5, "param"),
        ("pkg/runner.py", 6, "call_arg"),
        ("pkg/base.py", 2, "param"),
        ("pkg/base.py", 3, "formula"),
    ]
    assert edges_of(chain) == {
        (("pkg/runner.py", 5, "param"), ("pkg/runner.py", 6, "call_arg"), "local", 1.0),
        (("pkg/runner.py", 6, "call_arg"), ("pkg/base.py", 2, "param"), "arg_to_param", 1.0),
        (("pkg/base.py", 2, "param"), ("pkg/base.py", 3, "formula"), "local", 1.0),
    }


def test_self_method_overridden_in_a_subclass_reaches_both(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/base.py": """
                class Base:
                    def run(self, budget):
                        self.hook(budget)

                    def hook(self, budget):
                        self.kept = budget
            """,
            "pkg/child.py": """
                from pkg.base import Base


                class Child(Base):
                    def hook(self, budget):
                        self.kept = budget * 2
            """,
        }
    )
    chain = trace(session.graph, "Base.run.budget", direction="forward", sinks=["kept"])
    assert spine_of(session, chain) == [
        ("pkg/base.py", 2, "param"),
        ("pkg/base.py", 3, "call_arg"),
        ("pkg/base.py", 5, "param"),
        ("pkg/base.py", 6, "attr_write"),
    ]
    # `self` may be a Child: its override runs too, less surely than the method itself.
    bound = {
        (dst, confidence)
        for src, dst, kind, confidence in edges_of(chain)
        if kind == "arg_to_param"
    }
    assert {dst for dst, _ in bound} == {
        ("pkg/base.py", 5, "param"),
        ("pkg/child.py", 5, "param"),
    }
    assert dict(bound)[("pkg/base.py", 5, "param")] == 1.0
    assert 0 < dict(bound)[("pkg/child.py", 5, "param")] < 1.0


MIXIN = """
    from __future__ import annotations

    from typing import TYPE_CHECKING

    if TYPE_CHECKING:
        from pkg.runner import Runner


    class CacheMixin:
        def profile(self: Runner, total):
            rest = total * (1 - self.fraction)
            return rest
"""


def test_mixin_reads_an_attribute_set_by_the_class_that_mixes_it_in(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/mixin.py": MIXIN,
            "pkg/runner.py": """
                from pkg.mixin import CacheMixin


                class Runner(CacheMixin):
                    def __init__(self, fraction):
                        self.fraction = fraction

                    def init_pool(self, total):
                        self.max_tokens = self.profile(total)
            """,
        }
    )
    chain = trace(session.graph, "Runner.fraction", sinks=["max_tokens"])
    assert spine_of(session, chain) == [
        ("pkg/runner.py", 5, "param"),
        ("pkg/runner.py", 6, "attr_write"),
        ("pkg/mixin.py", 11, "formula"),
        ("pkg/mixin.py", 12, "return"),
        ("pkg/runner.py", 9, "attr_write"),
    ]
    assert (
        ("pkg/runner.py", 6, "attr_write"),
        ("pkg/mixin.py", 11, "formula"),
        "attr",
        1.0,
    ) in edges_of(chain)


def test_mixin_calls_a_method_of_its_annotated_self_class(snippet_session):
    # `profile` is not on the mixin: only `self: Runner` says where it is.
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/mixin.py": """
                from __future__ import annotations

                from typing import TYPE_CHECKING

                if TYPE_CHECKING:
                    from pkg.runner import Runner


                class PoolMixin:
                    def init_pool(self: Runner, total):
                        self.max_tokens = self.profile(total)
            """,
            "pkg/runner.py": """
                from pkg.mixin import PoolMixin


                class Runner(PoolMixin):
                    def profile(self, total):
                        return total // 2
            """,
        }
    )
    chain = trace(session.graph, "PoolMixin.init_pool.total", sinks=["max_tokens"])
    assert spine_of(session, chain) == [
        ("pkg/mixin.py", 10, "param"),
        ("pkg/mixin.py", 11, "call_arg"),
        ("pkg/runner.py", 5, "param"),
        ("pkg/runner.py", 6, "return"),
        ("pkg/mixin.py", 11, "attr_write"),
    ]
    assert edges_of(chain) == {
        (("pkg/mixin.py", 10, "param"), ("pkg/mixin.py", 11, "call_arg"), "local", 1.0),
        (("pkg/mixin.py", 11, "call_arg"), ("pkg/runner.py", 5, "param"), "arg_to_param", 1.0),
        (("pkg/runner.py", 5, "param"), ("pkg/runner.py", 6, "return"), "local", 1.0),
        (
            ("pkg/runner.py", 6, "return"),
            ("pkg/mixin.py", 11, "attr_write"),
            "return_to_result",
            1.0,
        ),
    }


def test_constructor_call_binds_to_an_inherited_init(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/base.py": """
                class Base:
                    def __init__(self, fraction):
                        self.fraction = fraction
            """,
            "pkg/runner.py": """
                from pkg.base import Base


                class Runner(Base):
                    def size(self, total):
                        self.tokens = total * self.fraction
            """,
            "pkg/worker.py": """
                from pkg.runner import Runner


                def start(fraction):
                    return Runner(fraction)
            """,
        }
    )
    chain = trace(session.graph, "start.fraction", sinks=["tokens"])
    assert spine_of(session, chain) == [
        ("pkg/worker.py", 4, "param"),
        ("pkg/worker.py", 5, "call_arg"),
        ("pkg/base.py", 2, "param"),
        ("pkg/base.py", 3, "attr_write"),
        ("pkg/runner.py", 6, "formula"),
    ]


def test_super_init_call_binds_to_the_base_init(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/base.py": """
                class Base:
                    def __init__(self, fraction):
                        self.fraction = fraction
            """,
            "pkg/runner.py": """
                from pkg.base import Base


                class Runner(Base):
                    def __init__(self, fraction, total):
                        super().__init__(fraction=fraction)
                        self.tokens = total * self.fraction
            """,
        }
    )
    chain = trace(session.graph, "Runner.__init__.fraction", sinks=["tokens"])
    assert spine_of(session, chain) == [
        ("pkg/runner.py", 5, "param"),
        ("pkg/runner.py", 6, "call_arg"),
        ("pkg/base.py", 2, "param"),
        ("pkg/base.py", 3, "attr_write"),
        ("pkg/runner.py", 7, "formula"),
    ]


CONFIG = """
    from dataclasses import dataclass


    @dataclass
    class Config:
        name: str
        fraction: float = 0.9
"""


def test_dataclass_init_binds_keyword_argument_to_field(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/config.py": CONFIG,
            "pkg/main.py": """
                from pkg.config import Config


                def build(name, fraction):
                    return Config(
                        name,
                        fraction=fraction,
                    )


                def size(total, config: Config):
                    tokens = total * config.fraction
                    return tokens
            """,
        }
    )
    chain = trace(session.graph, "build.fraction", sinks=["tokens"])
    assert spine_of(session, chain) == [
        ("pkg/main.py", 4, "param"),
        ("pkg/main.py", 7, "call_arg"),
        ("pkg/config.py", 7, "field"),
        ("pkg/main.py", 12, "formula"),
    ]
    edges = edges_of(chain)
    assert (
        ("pkg/main.py", 7, "call_arg"),
        ("pkg/config.py", 7, "field"),
        "arg_to_field",
        1.0,
    ) in edges
    assert (("pkg/config.py", 7, "field"), ("pkg/main.py", 12, "formula"), "attr", 1.0) in edges


def test_dataclass_init_binds_positional_arguments_to_fields_in_order(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/config.py": CONFIG,
            "pkg/main.py": """
                from pkg.config import Config


                def size(total, label, fraction):
                    config = Config(label, fraction)
                    tokens = total * config.fraction
                    return tokens
            """,
        }
    )
    chain = trace(session.graph, "size.fraction", sinks=["tokens"])
    # The field is read from the object the call made: the carrier step between.
    assert spine_of(session, chain) == [
        ("pkg/main.py", 4, "param"),
        ("pkg/main.py", 5, "call_arg"),
        ("pkg/config.py", 7, "field"),
        ("pkg/main.py", 5, "local_assign"),
        ("pkg/main.py", 6, "formula"),
    ]
    # The first positional argument lands in the first field.
    label = trace(session.graph, "size.label", direction="forward", sinks=["name"])
    assert spine_of(session, label) == [
        ("pkg/main.py", 4, "param"),
        ("pkg/main.py", 5, "call_arg"),
        ("pkg/config.py", 6, "field"),
    ]


# -- attribute types -----------------------------------------------------------------------

ARGS = """
    from dataclasses import dataclass


    @dataclass
    class Args:
        value: int = 4
"""

# Another class with a `value` attribute: a name-only match would be ambiguous.
DECOY = """
    class Counter:
        def __init__(self):
            self.value = 0
"""


def test_attribute_type_from_self_assignment_of_an_annotated_parameter(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/args.py": ARGS,
            "pkg/counter.py": DECOY,
            "pkg/worker.py": """
                from pkg.args import Args


                class Worker:
                    def __init__(self, args: Args):
                        self.args = args

                    def run(self, total):
                        self.budget = total * self.args.value
            """,
        }
    )
    chain = trace(session.graph, "Args.value", sinks=["budget"])
    assert spine_of(session, chain) == [
        ("pkg/args.py", 6, "field"),
        ("pkg/worker.py", 9, "formula"),
    ]
    assert (("pkg/args.py", 6, "field"), ("pkg/worker.py", 9, "formula"), "attr", 1.0) in (
        edges_of(chain)
    )


def test_attribute_type_from_a_class_level_annotation(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/args.py": ARGS,
            "pkg/counter.py": DECOY,
            "pkg/worker.py": """
                from pkg.args import Args


                class Worker:
                    args: Args

                    def run(self, total):
                        self.budget = total * self.args.value
            """,
        }
    )
    chain = trace(session.graph, "Args.value", sinks=["budget"])
    assert spine_of(session, chain) == [
        ("pkg/args.py", 6, "field"),
        ("pkg/worker.py", 8, "formula"),
    ]
    assert (("pkg/args.py", 6, "field"), ("pkg/worker.py", 8, "formula"), "attr", 1.0) in (
        edges_of(chain)
    )


# -- arguments -----------------------------------------------------------------------------

GROW = """
    def grow(
        total,
        limit,
        scale=1,
    ):
        result = total * limit * scale
        return result


    def main(a, b, c):
        return grow(a, scale=c, limit=b)
"""


@pytest.mark.parametrize(
    ("name", "param_line"),
    [("main.a", 2), ("main.b", 3), ("main.c", 4)],
    ids=["positional", "keyword", "keyword-for-defaulted"],
)
def test_arguments_bind_by_position_and_keyword(snippet_session, name, param_line):
    session = snippet_session({"pkg/__init__.py": "", "pkg/m.py": GROW})
    chain = trace(session.graph, name, sinks=["result"])
    assert spine_of(session, chain) == [
        ("pkg/m.py", 10, "param"),
        ("pkg/m.py", 11, "call_arg"),
        ("pkg/m.py", param_line, "param"),
        ("pkg/m.py", 6, "formula"),
    ]
    bound = {
        (src, dst)
        for src, dst, kind, confidence in edges_of(chain)
        if kind == "arg_to_param" and confidence == 1.0
    }
    assert bound == {(("pkg/m.py", 11, "call_arg"), ("pkg/m.py", param_line, "param"))}


DEFAULTED = """
    LIMIT = 8


    def grow(total, limit=LIMIT):
        result = total * limit
        return result


    def main(total):
        size = grow(total)
        return size
"""


def test_defaulted_parameter_flows_to_the_call_result_when_omitted(snippet_session):
    session = snippet_session({"pkg/__init__.py": "", "pkg/m.py": DEFAULTED})
    chain = trace(session.graph, "grow.limit", direction="forward", sinks=["size"])
    assert spine_of(session, chain) == [
        ("pkg/m.py", 4, "param"),
        ("pkg/m.py", 5, "formula"),
        ("pkg/m.py", 6, "return"),
        ("pkg/m.py", 10, "local_assign"),
    ]


def test_default_value_is_the_origin_of_a_parameter(snippet_session):
    session = snippet_session({"pkg/__init__.py": "", "pkg/m.py": DEFAULTED})
    chain = trace(session.graph, "grow.limit", direction="backward")
    assert spine_of(session, chain) == [
        ("pkg/m.py", 1, "local_assign"),
        ("pkg/m.py", 4, "param"),
    ]


def test_module_constant_flows_through_a_default_into_the_function(snippet_session):
    session = snippet_session({"pkg/__init__.py": "", "pkg/m.py": DEFAULTED})
    chain = trace(session.graph, "LIMIT", direction="forward", sinks=["size"])
    assert spine_of(session, chain) == [
        ("pkg/m.py", 1, "local_assign"),
        ("pkg/m.py", 4, "param"),
        ("pkg/m.py", 5, "formula"),
        ("pkg/m.py", 6, "return"),
        ("pkg/m.py", 10, "local_assign"),
    ]


def test_keyword_argument_lands_in_a_kwargs_parameter(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/m.py": """
                def grow(total, **kwargs):
                    result = total * kwargs["limit"]
                    return result


                def main(limit):
                    size = grow(4, limit=limit)
                    return size
            """,
        }
    )
    chain = trace(session.graph, "main.limit", sinks=["result"])
    assert spine_of(session, chain) == [
        ("pkg/m.py", 6, "param"),
        ("pkg/m.py", 7, "call_arg"),
        ("pkg/m.py", 1, "param"),
        ("pkg/m.py", 2, "formula"),
    ]
    kwargs = next(s for s in chain.steps if s.id.endswith("#p:grow.kwargs"))
    (into_kwargs,) = [e for e in chain.edges if e.dst == kwargs.id]
    # The keyword is not a named parameter: bound to **kwargs, less than certain.
    assert into_kwargs.kind == "arg_to_param"
    assert 0 < into_kwargs.confidence < 1.0


def test_kwargs_dict_binds_the_parameters_it_names(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/m.py": """
                def grow(
                    total,
                    limit,
                ):
                    result = total * limit
                    return result


                def main(limit):
                    options = {"limit": limit}
                    size = grow(4, **options)
                    return size
            """,
        }
    )
    chain = trace(session.graph, "main.limit", sinks=["result"])
    assert spine_of(session, chain) == [
        ("pkg/m.py", 9, "param"),
        ("pkg/m.py", 10, "local_assign"),
        ("pkg/m.py", 11, "call_arg"),
        ("pkg/m.py", 3, "param"),
        ("pkg/m.py", 5, "formula"),
    ]


# -- assignments and returns ---------------------------------------------------------------


def test_tuple_unpacking_of_a_tuple_follows_positions(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/m.py": """
                def main(free, used):
                    avail, spent = free, used
                    budget = avail * 2
                    other = spent * 3
                    return budget
            """,
        }
    )
    chain = trace(session.graph, "main.free", sinks=["budget"])
    assert spine_of(session, chain) == [
        ("pkg/m.py", 1, "param"),
        ("pkg/m.py", 2, "local_assign"),
        ("pkg/m.py", 3, "formula"),
    ]
    assert places(chain) == {
        ("pkg/m.py", 1, "param"),
        ("pkg/m.py", 2, "local_assign"),
        ("pkg/m.py", 3, "formula"),
        ("pkg/m.py", 5, "return"),
    }
    assert {s.name for s in chain.steps if s.line == 2} == {"avail"}


UNPACK_CALL = """
    def measure(free):
        used = 2
        return free, used


    def main(free):
        avail, used = measure(free)
        budget = avail * 2
        return budget
"""


def test_tuple_unpacking_of_a_call_result(snippet_session):
    session = snippet_session({"pkg/__init__.py": "", "pkg/m.py": UNPACK_CALL})
    chain = trace(session.graph, "main.free", sinks=["budget"])
    assert spine_of(session, chain) == [
        ("pkg/m.py", 6, "param"),
        ("pkg/m.py", 7, "call_arg"),
        ("pkg/m.py", 1, "param"),
        ("pkg/m.py", 3, "return"),
        ("pkg/m.py", 7, "local_assign"),
        ("pkg/m.py", 8, "formula"),
    ]
    spine = set(chain.spine)
    assert [s.name for s in chain.steps if s.id in spine and s.kind == "local_assign"] == ["avail"]


def test_tuple_unpacking_of_a_call_result_follows_positions(snippet_session):
    session = snippet_session({"pkg/__init__.py": "", "pkg/m.py": UNPACK_CALL})
    chain = trace(session.graph, "main.free", sinks=["budget"])
    # `free` is the first item returned: only `avail` receives it, `used` does not.
    assert {s.name for s in chain.steps if s.line == 7 and s.kind == "local_assign"} == {"avail"}


def test_augmented_assignment_combines_both_values(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/m.py": """
                def main(free, extra):
                    budget = free
                    budget += extra
                    size = budget
                    return size
            """,
        }
    )
    chain = trace(session.graph, "main.extra", sinks=["size"])
    assert spine_of(session, chain) == [
        ("pkg/m.py", 1, "param"),
        ("pkg/m.py", 3, "formula"),
        ("pkg/m.py", 4, "local_assign"),
    ]
    edges = edges_of(chain)
    # `x += y` reads x as well as y.
    assert (("pkg/m.py", 2, "local_assign"), ("pkg/m.py", 3, "formula"), "local", 1.0) in edges
    assert (("pkg/m.py", 1, "param"), ("pkg/m.py", 3, "formula"), "local", 1.0) in edges


def test_return_value_becomes_the_call_result(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/m.py": """
                def measure(free):
                    avail = free - 1
                    return avail


                class Runner:
                    def init(self, free):
                        self.budget = measure(free)
            """,
        }
    )
    chain = trace(session.graph, "measure.free", sinks=["budget"])
    assert spine_of(session, chain) == [
        ("pkg/m.py", 7, "param"),
        ("pkg/m.py", 8, "call_arg"),
        ("pkg/m.py", 1, "param"),
        ("pkg/m.py", 2, "formula"),
        ("pkg/m.py", 3, "return"),
        ("pkg/m.py", 8, "attr_write"),
    ]
    assert (
        ("pkg/m.py", 3, "return"),
        ("pkg/m.py", 8, "attr_write"),
        "return_to_result",
        1.0,
    ) in edges_of(chain)


# -- command-line flags --------------------------------------------------------------------

FLAG_ARGS = """
    import argparse
    from dataclasses import dataclass


    @dataclass
    class Args:
        mem_frac: float = 0.9

        @staticmethod
        def add_cli_args(parser: argparse.ArgumentParser):
            parser.add_argument("--mem-frac", type=float, default=Args.mem_frac)
"""

READER = """
    from pkg.args import Args


    def size(args: Args, total):
        tokens = total * args.mem_frac
        return tokens
"""


def test_argparse_flag_sets_the_dataclass_field_of_the_same_name(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/args.py": FLAG_ARGS,
            "pkg/run.py": READER,
        }
    )
    chain = trace(session.graph, "Args.mem_frac", sinks=["tokens"])
    assert spine_of(session, chain) == [
        ("pkg/args.py", 11, "cli_flag"),
        ("pkg/args.py", 7, "field"),
        ("pkg/run.py", 5, "formula"),
    ]
    assert (
        ("pkg/args.py", 11, "cli_flag"),
        ("pkg/args.py", 7, "field"),
        "flag_to_field",
        1.0,
    ) in edges_of(chain)


def test_argparse_dest_names_the_field(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/args.py": """
                from dataclasses import dataclass


                @dataclass
                class Args:
                    mem_frac: float = 0.9


                def add_cli_args(parser):
                    parser.add_argument(
                        "--fraction", "-f", dest="mem_frac", type=float, default=Args.mem_frac
                    )
            """,
            "pkg/run.py": READER,
        }
    )
    chain = trace(session.graph, "Args.mem_frac", sinks=["tokens"])
    assert spine_of(session, chain) == [
        ("pkg/args.py", 10, "cli_flag"),
        ("pkg/args.py", 6, "field"),
        ("pkg/run.py", 5, "formula"),
    ]
    flag = next(s for s in chain.steps if s.kind == "cli_flag")
    assert (flag.line, flag.end_line) == (10, 12)


def test_flags_generated_from_dataclass_fields(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/args.py": """
                import dataclasses
                from dataclasses import dataclass


                @dataclass
                class Args:
                    mem_frac: float = 0.9
                    max_tokens: int = 128


                def add_fields(parser, cls):
                    for f in dataclasses.fields(cls):
                        parser.add_argument(f"--{f.name.replace('_', '-')}", default=f.default)


                def make_parser(parser):
                    add_fields(parser, Args)
            """,
            "pkg/run.py": READER,
        }
    )
    chain = trace(session.graph, "Args.mem_frac", sinks=["tokens"])
    # The flag is made where the generator is called with the class.
    assert spine_of(session, chain) == [
        ("pkg/args.py", 17, "cli_flag"),
        ("pkg/args.py", 7, "field"),
        ("pkg/run.py", 5, "formula"),
    ]
    (generated,) = [e for e in chain.edges if e.kind == "generated_flag"]
    assert place(chain, generated.dst) == ("pkg/args.py", 7, "field")
    assert 0 < generated.confidence < 1.0


def test_flags_generated_from_the_fields_a_record_merges_from_namespace_classes(snippet_session):
    """A record assembled at import time from the fields of namespace classes (its
    `__annotations__` merged with theirs, then the record made again): the flags generated
    from it set the namespace class's field, where the value is declared and read."""
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/spaces.py": """
                from dataclasses import dataclass


                @dataclass
                class Schedule:
                    mem_frac: float = 0.9


                @dataclass
                class Model:
                    path: str = ""
            """,
            "pkg/args.py": """
                import dataclasses
                from dataclasses import dataclass

                from pkg.spaces import Model, Schedule


                @dataclass
                class Args:
                    port: int = 30000


                def add_fields(parser, cls):
                    for f in dataclasses.fields(cls):
                        parser.add_argument(f"--{f.name.replace('_', '-')}", default=f.default)


                def make_parser(parser):
                    add_fields(parser, Args)


                def collect(spaces):
                    found = {}
                    for space in spaces:
                        found.update(space.__annotations__)
                    return found


                NAMESPACES = [Model, Schedule]
                merged = collect(NAMESPACES)
                Args.__annotations__ = {**merged, **Args.__annotations__}
                Args = dataclass(type("Args", (), {"__annotations__": Args.__annotations__}))
            """,
            "pkg/run.py": """
                from pkg.spaces import Schedule


                def size(schedule: Schedule, total):
                    tokens = total * schedule.mem_frac
                    return tokens
            """,
        }
    )
    chain = trace(session.graph, "Schedule.mem_frac", sinks=["tokens"])
    assert spine_of(session, chain) == [
        ("pkg/args.py", 18, "cli_flag"),
        ("pkg/spaces.py", 6, "field"),
        ("pkg/run.py", 5, "formula"),
    ]
    assert session.graph.flags.merged_classes("pkg.args.Args") == [
        "pkg.spaces.Model",
        "pkg.spaces.Schedule",
    ]


# -- values carried inside result objects --------------------------------------------------

MEMORY = """
    from dataclasses import dataclass


    @dataclass
    class MemoryResult:
        total: int
        used: int


    def measure(free){returns}:
        total = free * 2
        return MemoryResult(total=total, used=0)
"""

MEMORY_READER = """
    from pkg.memory import measure


    class Runner:
        def init(self, free):
            result = measure(free)
            self.budget = result.total - 1
"""

MEMORY_SPINE = [
    ("pkg/runner.py", 5, "param"),
    ("pkg/runner.py", 6, "call_arg"),
    ("pkg/memory.py", 10, "param"),
    ("pkg/memory.py", 11, "formula"),
    ("pkg/memory.py", 12, "call_arg"),
    ("pkg/memory.py", 6, "field"),
    # the object that holds the field, returned and kept in a local, then read
    ("pkg/memory.py", 12, "return"),
    ("pkg/runner.py", 6, "local_assign"),
    ("pkg/runner.py", 7, "formula"),
]


def test_value_carried_in_a_returned_dataclass(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/memory.py": MEMORY.format(returns=""),
            "pkg/runner.py": MEMORY_READER,
        }
    )
    chain = trace(session.graph, "measure.free", sinks=["budget"])
    assert spine_of(session, chain) == MEMORY_SPINE


def test_value_carried_in_a_returned_dataclass_typed_by_the_return_annotation(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/memory.py": MEMORY.format(returns=" -> MemoryResult"),
            "pkg/runner.py": MEMORY_READER,
        }
    )
    chain = trace(session.graph, "measure.free", sinks=["budget"])
    assert spine_of(session, chain) == MEMORY_SPINE
    assert (
        ("pkg/memory.py", 6, "field"),
        ("pkg/runner.py", 7, "formula"),
        "attr",
        1.0,
    ) in edges_of(chain)


def test_value_carried_in_a_returned_dataclass_typed_by_the_returned_constructor(
    snippet_session,
):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/memory.py": MEMORY.format(returns=""),
            "pkg/runner.py": MEMORY_READER,
        }
    )
    chain = trace(session.graph, "measure.free", sinks=["budget"])
    assert (
        ("pkg/memory.py", 6, "field"),
        ("pkg/runner.py", 7, "formula"),
        "attr",
        1.0,
    ) in edges_of(chain)


# -- confidence ----------------------------------------------------------------------------

POOL = """
    class Pool:
        def reserve(self, size):
            self.reserved = size * 2
"""


def test_name_only_call_is_a_guess_with_confidence_below_one(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/pool.py": POOL,
            "pkg/run.py": """
                def start(pool, size):
                    pool.reserve(size)
            """,
        }
    )
    chain = trace(session.graph, "start.size", sinks=["reserved"])
    assert spine_of(session, chain) == [
        ("pkg/run.py", 1, "param"),
        ("pkg/run.py", 2, "call_arg"),
        ("pkg/pool.py", 2, "param"),
        ("pkg/pool.py", 3, "formula"),
    ]
    guessed = [e for e in chain.edges if e.confidence < 1.0]
    assert [(place(chain, e.src), place(chain, e.dst), e.kind) for e in guessed] == [
        (("pkg/run.py", 2, "call_arg"), ("pkg/pool.py", 2, "param"), "arg_to_param")
    ]
    assert 0 < guessed[0].confidence < 1.0


def test_typed_call_is_certain(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/pool.py": POOL,
            "pkg/run.py": """
                from pkg.pool import Pool


                def start(pool: Pool, size):
                    pool.reserve(size)
            """,
        }
    )
    chain = trace(session.graph, "start.size", sinks=["reserved"])
    assert {e.confidence for e in chain.edges} == {1.0}


def test_class_field_is_not_a_module_local(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/args.py": """
                from dataclasses import dataclass


                @dataclass
                class Args:
                    limit: int = 4


                limit = 10
                size = limit * 2
            """,
        }
    )
    chain = trace(session.graph, "size", direction="backward")
    assert places(chain) == {
        ("pkg/args.py", 9, "local_assign"),
        ("pkg/args.py", 10, "formula"),
    }


BAG = """
    class Bag:
        \"\"\"Filled by setattr: binds none of the names read through it.\"\"\"

        def __getattr__(self, name):
            return self.__dict__[name]


    def get_schedule() -> Bag:
        return Bag()
"""
FIELDS = """
    from dataclasses import dataclass


    @dataclass
    class PoolConfig:
        fraction: float = 0.0


    @dataclass
    class Schedule:
        fraction: float = 0.9
"""


BOTH_FIELDS = {("pkg/fields.py", 6, "field"), ("pkg/fields.py", 11, "field")}


@pytest.mark.parametrize(
    ("receiver", "fields", "confidence"),
    [
        # No word of the accessor's name chooses a class (`get_schedule` is not `Schedule`):
        # every declared field, guesses (the one a flag sets is trusted: test_bags).
        ("get_schedule().fraction", BOTH_FIELDS, DYNAMIC),
        ("bag.fraction", BOTH_FIELDS, DYNAMIC),
    ],
)
def test_read_through_a_setattr_bag_comes_from_the_declared_fields_of_its_name(
    snippet_session, receiver, fields, confidence
):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/bag.py": BAG,
            "pkg/fields.py": FIELDS,
            "pkg/run.py": f"""
                from pkg.bag import Bag, get_schedule


                def start(bag: Bag):
                    fraction = {receiver}
                    tokens = fraction * 100
            """,
        }
    )
    # Traced from the local of the field's name: a field reached by a guess is its origin.
    chain = trace(session.graph, "start.fraction", sinks=["tokens"])
    read = ("pkg/run.py", 5, "local_assign")
    into_read = {(place(chain, e.src), e.kind, e.confidence) for e in chain.edges}
    assert {edge for edge in into_read if edge[0][2] == "field"} == {
        (field, "attr", confidence) for field in fields
    }
    spine = spine_of(session, chain)
    assert spine[0] in fields
    assert spine[1:] == [read, ("pkg/run.py", 6, "formula")]
    # The same edges found forward, from each field: PoolConfig's reaches no named read.
    for field, klass in (
        (("pkg/fields.py", 6, "field"), "PoolConfig"),
        (("pkg/fields.py", 11, "field"), "Schedule"),
    ):
        ahead = trace(session.graph, f"{klass}.fraction", direction="forward", sinks=["tokens"])
        reached = (field, read, "attr", confidence) in edges_of(ahead)
        assert reached == (field in fields)


# -- qualified names -----------------------------------------------------------------------

TWO_CLASSES = """
    class Runner:
        def __init__(self, limit):
            self.limit = limit

        def start(self, limit):
            self.cap = limit * 2


    class Other:
        def __init__(self, limit):
            self.limit = limit + 1


    def start(limit):
        return limit
"""


def test_bare_name_seeds_every_binding(snippet_session):
    session = snippet_session({"pkg/__init__.py": "", "pkg/a.py": TWO_CLASSES})
    chain = trace(session.graph, "limit", direction="forward")
    assert seeds_of(chain) == {
        ("pkg/a.py", 2, "param"),
        ("pkg/a.py", 3, "attr_write"),
        ("pkg/a.py", 5, "param"),
        ("pkg/a.py", 10, "param"),
        ("pkg/a.py", 11, "formula"),
        ("pkg/a.py", 14, "param"),
    }


def test_class_attribute_name_seeds_only_that_class(snippet_session):
    session = snippet_session({"pkg/__init__.py": "", "pkg/a.py": TWO_CLASSES})
    chain = trace(session.graph, "Other.limit", direction="backward")
    assert seeds_of(chain) == {("pkg/a.py", 11, "formula")}
    assert spine_of(session, chain) == [
        ("pkg/a.py", 10, "param"),
        ("pkg/a.py", 11, "formula"),
    ]


def test_method_parameter_name_seeds_only_that_parameter(snippet_session):
    session = snippet_session({"pkg/__init__.py": "", "pkg/a.py": TWO_CLASSES})
    chain = trace(session.graph, "Runner.start.limit", direction="forward")
    assert seeds_of(chain) == {("pkg/a.py", 5, "param")}
    assert spine_of(session, chain) == [
        ("pkg/a.py", 5, "param"),
        ("pkg/a.py", 6, "formula"),
    ]


def test_unknown_name_raises_name_not_found(snippet_session):
    session = snippet_session({"pkg/__init__.py": "", "pkg/a.py": TWO_CLASSES})
    with pytest.raises(NameNotFound):
        trace(session.graph, "Runner.nothing_here")


# -- origins ---------------------------------------------------------------------------------

MEASURE = """
    import psutil
    import torch


    def free_memory(device, gpu_id, distributed):
        if device == "cuda":
            if torch.cuda.get_device_properties(gpu_id).is_integrated:
                free = psutil.virtual_memory().available
            else:
                free, _ = torch.cuda.mem_get_info(gpu_id)
        elif device == "hpu":
            free, total = torch.hpu.mem_get_info()
        if distributed:
            tensor = torch.tensor(free)
            free = tensor.item()
        return free / (1 << 30)
"""


def test_origin_of_a_measured_value_is_the_measurement_of_the_input(snippet_session):
    """Branches that measure start the value, not `torch.tensor(free)` of one of them; the
    one that measures from an input (`mem_get_info(gpu_id)`) before those that take none."""
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/measure.py": MEASURE,
            "pkg/runner.py": """
                from pkg.measure import free_memory


                class Runner:
                    def start(self, gpu_id):
                        total_gpu_memory = free_memory("cuda", gpu_id, True)
                        self.tokens = total_gpu_memory * 2
            """,
        }
    )
    chain = trace(session.graph, "total_gpu_memory", sinks=["tokens"])
    assert spine_code(chain) == [
        "free, _ = torch.cuda.mem_get_info(gpu_id)",
        "return free / (1 << 30)",
        'total_gpu_memory = free_memory("cuda", gpu_id, True)',
        "self.tokens = total_gpu_memory * 2",
    ]


def test_a_record_field_filled_once_carries_the_value_it_is_filled_with(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/boot.py": """
                from dataclasses import dataclass

                import torch


                @dataclass
                class Booted:
                    free_memory: float


                def boot(gpu_id) -> Booted:
                    free_memory = torch.cuda.mem_get_info(gpu_id)[0]
                    return Booted(free_memory=free_memory)
            """,
            "pkg/runner.py": """
                from pkg.boot import boot


                class Runner:
                    def start(self, gpu_id):
                        result = boot(gpu_id)
                        self.free_memory = result.free_memory
                        self.tokens = self.free_memory * 2
            """,
        }
    )
    chain = trace(session.graph, "free_memory", sinks=["tokens"])
    assert spine_code(chain) == [
        "free_memory = torch.cuda.mem_get_info(gpu_id)[0]",
        "return Booted(free_memory=free_memory)",
        "free_memory: float",
        "return Booted(free_memory=free_memory)",
        "result = boot(gpu_id)",
        "self.free_memory = result.free_memory",
        "self.tokens = self.free_memory * 2",
    ]


def test_a_value_updated_by_its_own_name_is_traced_to_where_it_was_first_set(snippet_session):
    """`x += y` carries x: the spine goes on back through it (the update is written first,
    so the search from the sink meets it first)."""
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/runner.py": """
                import torch


                class Runner:
                    def grow(self, extra):
                        self.free_memory += extra

                    def start(self, gpu_id):
                        self.free_memory = torch.cuda.mem_get_info(gpu_id)[0]

                    def size(self):
                        self.tokens = self.free_memory * 2
            """,
        }
    )
    chain = trace(session.graph, "free_memory", sinks=["tokens"])
    assert spine_code(chain) == [
        "self.free_memory = torch.cuda.mem_get_info(gpu_id)[0]",
        "self.free_memory += extra",
        "self.tokens = self.free_memory * 2",
    ]


def test_a_property_is_typed_by_its_return_annotation(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/runner.py": """
                class Runner:
                    def __init__(self, size):
                        self.tokens = size * 2
            """,
            "pkg/worker.py": """
                from typing import TYPE_CHECKING

                if TYPE_CHECKING:
                    from pkg.runner import Runner


                class Worker:
                    @property
                    def runner(self) -> "Runner":
                        return self._runner

                    def start(self):
                        self.tokens = self.runner.tokens
            """,
        }
    )
    chain = trace(session.graph, "Runner.__init__.size", sinks=["tokens"])
    assert (
        ("pkg/runner.py", 3, "formula"),
        ("pkg/worker.py", 13, "attr_write"),
        "attr",
        1.0,
    ) in edges_of(chain)


def test_backward_spine_runs_from_the_flag_to_the_last_binding_of_the_name(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/args.py": FLAG_ARGS,
            "pkg/runner.py": """
                from pkg.args import Args


                class Runner:
                    def __init__(self, mem_frac: float):
                        self.mem_frac = mem_frac

                    def size(self, total):
                        self.tokens = total * self.mem_frac


                def start(args: Args):
                    return Runner(mem_frac=args.mem_frac)
            """,
        }
    )
    chain = trace(session.graph, "mem_frac", direction="backward", sinks=["tokens"])
    assert spine_of(session, chain) == [
        ("pkg/args.py", 11, "cli_flag"),
        ("pkg/args.py", 7, "field"),
        ("pkg/runner.py", 13, "call_arg"),
        ("pkg/runner.py", 5, "param"),
        ("pkg/runner.py", 6, "attr_write"),
    ]
    # A sink's own name is traced back from its one binding here: the formula.
    sink = trace(session.graph, "tokens", direction="backward", sinks=["tokens"])
    assert spine_of(session, sink)[-1] == ("pkg/runner.py", 9, "formula")


def test_a_sinks_own_name_is_traced_from_the_binding_the_others_copy(snippet_session):
    """Several objects keep the sink's value (a worker, a stats record); the spine explains the
    one they copy: the runner's, computed by its formula. The record's field (`= 0`, declared
    first) is no origin of it, nor is the worker's copy."""
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/stats.py": """
                class Stats:
                    tokens: int = 0
            """,
            "pkg/runner.py": """
                from pkg.stats import Stats


                class Runner:
                    def profile(self, free, fraction):
                        rest = free * fraction
                        return int(rest // 2)

                    def size(self, free, fraction):
                        self.tokens = self.profile(free, fraction)


                class Worker:
                    def __init__(self, runner: Runner):
                        self.runner = runner
                        self.stats = Stats()
                        self.tokens = runner.tokens
                        self.stats.tokens = self.tokens
            """,
        }
    )
    chain = trace(session.graph, "tokens", direction="backward", sinks=["tokens"])
    assert spine_of(session, chain) == [
        ("pkg/runner.py", 6, "formula"),  # `int(rest // 2)` carries rest, which combines two
        ("pkg/runner.py", 7, "return"),
        ("pkg/runner.py", 10, "attr_write"),
    ]


def test_an_override_or_the_settings_value_is_one_value_from_either_place(snippet_session):
    """`x if x is not None else cfg.x` chooses between two places of the same value; it
    does not combine values: the origin is found behind it (the settings' field), where a
    sum of two values (`a.x + b.x`) would stop the way back."""
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/m.py": """
                from dataclasses import dataclass


                @dataclass
                class Settings:
                    context_length: int = 4096


                class Model:
                    def __init__(self, context_length):
                        self.context_len = context_length


                def make(cfg: Settings, context_length=None):
                    return Model(
                        context_length=(
                            context_length if context_length is not None else cfg.context_length
                        )
                    )
            """,
        }
    )
    chain = trace(session.graph, "Model.__init__.context_length", direction="backward")
    assert spine_code(chain)[0] == "context_length: int = 4096"


def test_names_that_stand_for_a_definition_named_otherwise(snippet_session):
    # Renamed by the package's `__init__` (the importer spells no `as`), by an alias
    # assignment, by `import ... as`; the others keep their definition's name.
    session = snippet_session(
        {
            "pkg/__init__.py": "from pkg.core.runner import Runner as ModelRunner\n",
            "pkg/core/__init__.py": "",
            "pkg/core/runner.py": RUNNER + "\nLegacyRunner = Runner\n",
            "app.py": """
                import pkg.core.runner as rn
                from pkg import ModelRunner
                from pkg.core.runner import LegacyRunner, Runner

                def start(fraction):
                    return ModelRunner(fraction=fraction)
            """,
        }
    )
    index = session.graph.index
    names = ["ModelRunner", "LegacyRunner", "Runner", "rn", "start"]
    assert index.renamed("app", names) == {"ModelRunner", "LegacyRunner", "rn"}
    assert {"ModelRunner", "LegacyRunner", "rn"} <= index.renamed_to
    assert not {"Runner", "start"} & index.renamed_to


@pytest.mark.parametrize(
    "init",
    [
        "from pkg.core.runner import Runner as ModelRunner\n",
        "from pkg.core import runner\nModelRunner = runner.Runner\n",
    ],
    ids=["import-as", "alias"],
)
def test_callers_by_a_name_the_package_gives_a_class_are_found_backward(snippet_session, init):
    # The caller spells neither the class's own name nor an `as` of its own.
    session = snippet_session(
        {
            "pkg/__init__.py": init,
            "pkg/core/__init__.py": "",
            "pkg/core/runner.py": RUNNER,
            "app.py": """
                from pkg import ModelRunner

                def start(fraction):
                    return ModelRunner(fraction=fraction)
            """,
        }
    )
    chain = trace(session.graph, "Runner.fraction", direction="backward")
    assert spine_of(session, chain)[:3] == [
        ("app.py", 3, "param"),
        ("app.py", 4, "call_arg"),
        ("pkg/core/runner.py", 2, "param"),
    ]


def test_a_type_inferred_through_a_cycle_is_the_same_whichever_name_is_asked_first(
    snippet_session,
):
    """`a` is first bound to what `b` holds, `b` to what `a` holds: inferring one meets the
    other being inferred (unknown there). `a` is a Box by its second binding; `b` then by
    `a`. Asked `a` first, `b` was inferred while `a` was (and found nothing): that is not
    kept as `b`'s type, which is inferred again when asked."""
    code = """
        class Box:
            pass

        def run(flag):
            a = b
            a = Box()
            b = a
            return b
        """
    for first, then in (("a", "b"), ("b", "a")):
        session = snippet_session({"app.py": code})
        types = session.graph.resolver.types
        found = {name: types.ref_type("app.py", "run", name) for name in (first, then)}
        assert found == {"a": "app.Box", "b": "app.Box"}, first


def test_an_attribute_that_a_base_and_its_subclasses_write_has_one_owner(snippet_session):
    """`x.pool` on an x nothing types is joined to the writes of `pool` (a guess) when one
    class family owns it: here a base and six subclasses, each writing it. Whichever owner
    a set gives first, the family that holds them all is the base's (a subclass's holds its
    bases, not its siblings)."""
    subclasses = "".join(
        f"""
class Pool{i}(Base):
    def __init__(self):
        self.pool = {i}
"""
        for i in range(6)
    )
    code = f"""
class Base:
    def __init__(self):
        self.pool = None
{subclasses}

def size(x):
    return x.pool
"""
    session = snippet_session({"app.py": code})
    slots = session.graph.slots
    assert len(slots.slot_owners("pool")) == 7
    assert slots.single_owner("pool")
