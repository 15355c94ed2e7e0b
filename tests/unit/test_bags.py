"""Objects filled by name ("bags"): a settings object whose attributes are set by a method
given the name and the value (`object.__setattr__(self, name, value)`), filled from a record
by reading each field by a name held in a variable, and read through an accessor that returns
a module-level holder's bag. The chain goes from the flag through the record, into the bag,
and out through the accessor; a name-only guess stays a guess where no such route exists."""

from __future__ import annotations

from tests.conftest import spine_code, trace
from tracer.graph.bags import setters
from tracer.graph.objects import guards, has_default
from tracer.graph.steps import Step
from tracer.views.chain_text import chain_text

ARGS = """
    import argparse
    from dataclasses import dataclass, fields


    @dataclass
    class Settings:
        fraction: float = 0.9
        page: int = 16

        @staticmethod
        def add_cli_args(parser):
            parser.add_argument("--fraction", type=float, default=Settings.fraction)
            parser.add_argument("--page", type=int, default=Settings.page)

        @classmethod
        def from_cli_args(cls, args):
            names = [f.name for f in fields(cls)]
            return cls(**{name: getattr(args, name) for name in names})


    def prepare_settings(argv):
        parser = argparse.ArgumentParser()
        Settings.add_cli_args(parser)
        raw_args = parser.parse_args(argv)
        return Settings.from_cli_args(raw_args)
"""

CONTEXT = """
    from dataclasses import fields


    class _Bag:
        def __init__(self, path):
            object.__setattr__(self, "_path", path)

        def _set(self, name, value):
            object.__setattr__(self, name, value)


    def _build_bags(settings):
        tops = {}
        for field in fields(type(settings)):
            value = getattr(settings, field.name, None)
            bag = tops.get("main")
            if bag is None:
                bag = tops["main"] = _Bag("main")
            bag._set(field.name, value)
        return tops


    class Context:
        def __init__(self):
            self._bags = {}

        def set_settings(self, settings):
            self._bags = _build_bags(settings)

        def bag(self, name) -> _Bag:
            bags = self._bags
            return bags[name]


    _CONTEXT = Context()


    def _configure(context, settings):
        context.set_settings(settings)


    def publish(settings):
        _configure(_CONTEXT, settings)


    def get_main() -> _Bag:
        return _CONTEXT.bag("main")
"""

MAIN = """
    import sys

    from pkg.args import prepare_settings
    from pkg.context import get_main, publish
    from pkg.encoder import serve_encoder


    def launch(settings):
        publish(settings)
        return size(1000)


    def run(settings, encoder):
        if encoder:
            serve_encoder(settings)
        else:
            launch(settings)


    def size(total):
        tokens = total * get_main().fraction
        return tokens


    if __name__ == "__main__":
        run(prepare_settings(sys.argv[1:]), False)
"""

ENCODER = """
    from pkg.context import publish


    def serve_encoder(settings):
        publish(settings)
"""


def package() -> dict[str, str]:
    return {
        "pkg/__init__.py": "",
        "pkg/args.py": ARGS,
        "pkg/context.py": CONTEXT,
        "pkg/main.py": MAIN,
        "pkg/encoder.py": ENCODER,
    }


def test_a_bags_read_goes_through_the_record_the_bag_is_filled_from(snippet_session):
    session = snippet_session(package())
    chain = trace(session.graph, "fraction", sinks=["tokens"])
    code = spine_code(chain)
    assert code[0] == 'parser.add_argument("--fraction", type=float, default=Settings.fraction)'
    # the record made from the parsed flags, handed on by default (not to the encoder,
    # which only a flag selects), published, read out by name into the bag
    start = code.index("fraction: float = 0.9")
    assert code[start:] == [
        "fraction: float = 0.9",
        "return cls(**{name: getattr(args, name) for name in names})",
        "return Settings.from_cli_args(raw_args)",
        "run(prepare_settings(sys.argv[1:]), False)",
        "settings",
        "launch(settings)",
        "settings",
        "publish(settings)",
        "settings",
        "_configure(_CONTEXT, settings)",
        "settings",
        "context.set_settings(settings)",
        "settings",
        "self._bags = _build_bags(settings)",
        "settings",
        "value = getattr(settings, field.name, None)",
        "bag._set(field.name, value)",
        "value",
        'bag = tops["main"] = _Bag("main")',
        "return tops",
        "self._bags = _build_bags(settings)",
        "bags = self._bags",
        "return bags[name]",
        'return _CONTEXT.bag("main")',
        "tokens = total * get_main().fraction",
    ]
    kinds = {e.kind for e in chain.edges}
    assert {"read_by_name", "filled_by_name"} <= kinds
    text = chain_text(chain, "tree")
    assert "read out of this object by a name held in a variable, as .fraction" in text
    assert "kept in the object this step makes, under the name it is given" in text


def test_a_class_filled_by_a_setter_given_the_name_is_a_bag(snippet_session):
    session = snippet_session(package())
    found = setters(session.graph, "pkg.context._Bag")
    assert [(s.function, s.key, s.value) for s in found] == [("pkg.context._Bag._set", 1, 2)]
    # `__init__` sets a constant name: no setter by name
    assert setters(session.graph, "pkg.context.Context") == []


def test_a_module_level_holder_and_a_helpers_parameter_are_typed(snippet_session):
    """`_CONTEXT.bag(...)` in a function: the module binds `_CONTEXT = Context()`; the
    helper `_configure(context, ...)`, called in its own file only with `_CONTEXT`, gets
    `context`'s class from there: both calls resolve surely."""
    session = snippet_session(package())
    resolver = session.graph.resolver
    path = "pkg/context.py"
    assert resolver.types.ref_type(path, "get_main", "_CONTEXT") == "pkg.context.Context"
    assert resolver.types.ref_type(path, "_configure", "context") == "pkg.context.Context"
    targets = resolver.targets(path, "_configure", "context.set_settings")
    assert [(t.function, t.confidence) for t in targets] == [
        ("pkg.context.Context.set_settings", 1.0)
    ]


def test_a_parameter_passed_two_classes_stays_untyped(snippet_session):
    files = package()
    files["pkg/other.py"] = """
        class Other:
            def set_settings(self, settings):
                self.kept = settings


        def _configure(context, settings):
            context.set_settings(settings)


        def both(settings):
            _configure(Other(), settings)
            _configure(object(), settings)
    """
    session = snippet_session(files)
    assert session.graph.resolver.types.ref_type("pkg/other.py", "_configure", "context") is None


def test_a_branch_with_a_default_else_is_a_dispatch_one_that_raises_is_not():
    lines = [
        "def run(settings):",
        "    if settings.encoder:",
        "        serve_encoder(settings)",
        "    elif settings.grpc:",
        "        serve_grpc(settings)",
        "    else:",
        "        launch(settings)",
        "    if settings.device == 'cuda':",
        "        size(settings)",
        "    else:",
        "        raise RuntimeError('unsupported')",
        "    if settings.debug:",
        "        dump(settings)",
        "    if settings.pool is None:",
        "        make_pool(settings)",
        "    else:",
        "        # shared with the main worker",
        "        assert settings.draft",
    ]

    def line(number: int) -> str | None:
        return lines[number - 1] if 0 < number <= len(lines) else None

    assert has_default(line, 2, 4) and has_default(line, 4, 4)
    assert not has_default(line, 8, 4)  # its else only raises
    assert not has_default(line, 12, 4)  # no else at all
    assert not has_default(line, 14, 4)  # its else only checks (a comment before)


def test_a_line_counts_the_dispatch_branches_around_it_up_to_its_function(snippet_session):
    source = "\n".join(
        [
            "def run(settings, mode):",  # 1
            "    if mode == 'a':",  # 2
            "        if settings.encoder:",  # 3
            "            serve_encoder(settings)",  # 4: two branches with a default
            "            # a comment",  # 5
            "        else:",  # 6
            "            launch(settings)",  # 7: the default of the inner chain
            "    elif mode == 'b':",  # 8
            "        if settings.debug:",  # 9
            "            dump(settings)",  # 10: in an if with no else
            "    else:",  # 11
            "        launch(settings)",  # 12
            "    size(settings)",  # 13: no branch
            "if FLAG:",  # 14
            "    def inner(settings):",  # 15
            "        if settings.x:",  # 16
            "            run(settings)",  # 17: the def stops the count
            "        else:",  # 18
            "            raise RuntimeError('no')",  # 19
            "",
        ]
    )
    session = snippet_session({"pkg/__init__.py": "", "pkg/run.py": source})
    graph = session.graph

    def counted(line: int) -> int:
        step = Step("pkg/run.py#x", "call_arg", "pkg/run.py", line, line, "run", "", "settings")
        return guards(graph, step)

    assert [counted(n) for n in (4, 7, 10, 12, 13, 17, 19)] == [2, 1, 1, 0, 0, 0, 0]
    # Asked again, in another order, from the headers kept with the file's lines.
    assert [counted(n) for n in (19, 13, 12, 10, 7, 4)] == [0, 0, 0, 1, 1, 2]
