"""Where a chain starts and which object a value computed in the record's own methods stays
in: the parameter's own flag comes before a script's override nearer the sink, and a default
computed from another field in `__post_init__` is kept in the object made from the parsed
flags, not in one some other caller constructs."""

from __future__ import annotations

from tests.conftest import spine_code, trace

SETTINGS = """
    import argparse
    from dataclasses import dataclass, fields


    @dataclass
    class Settings:
        batch: int = 8
        fraction: float = 0.0

        def __post_init__(self):
            reserved = 512
            reserved += self.batch * 2
            self.fraction = reserved / 1024

        @staticmethod
        def add_cli_args(parser):
            parser.add_argument("--batch", type=int, default=Settings.batch)
            parser.add_argument("--fraction", type=float, default=Settings.fraction)

        @classmethod
        def from_cli_args(cls, args):
            names = [f.name for f in fields(cls)]
            return cls(**{name: getattr(args, name) for name in names})


    def prepare(argv):
        parser = argparse.ArgumentParser()
        Settings.add_cli_args(parser)
        raw_args = parser.parse_args(argv)
        return Settings.from_cli_args(raw_args)
"""

RUNNER = """
    from pkg.settings import Settings


    class Runner:
        def __init__(self, settings: Settings):
            self.settings = settings
            self.tokens = 1000 * self.settings.fraction
"""

MAIN = """
    import sys

    from pkg.runner import Runner
    from pkg.settings import prepare


    def serve(settings):
        return Runner(settings)


    if __name__ == "__main__":
        serve(prepare(sys.argv[1:]))
"""

ADAPTER = """
    from pkg.runner import Runner
    from pkg.settings import Settings


    class Adapter:
        def __init__(self, **kwargs):
            self.runner = Runner(Settings(**kwargs))
"""

BENCH = """
    import argparse

    from pkg.main import serve
    from pkg.settings import Settings


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--size", type=int, default=4)
        args = parser.parse_args()
        settings = Settings()
        settings.batch = max(args.size, 1)
        serve(settings)
"""


TEST = """
    from pkg.runner import Runner
    from pkg.settings import Settings


    def make(batch):
        return Runner(Settings(batch=batch))
"""


def package() -> dict[str, str]:
    return {
        "pkg/__init__.py": "",
        "pkg/settings.py": SETTINGS,
        "pkg/runner.py": RUNNER,
        "pkg/main.py": MAIN,
        "pkg/adapter.py": ADAPTER,
        "bench.py": BENCH,
        "tests/test_runner.py": TEST,
    }


def test_the_parameters_flag_comes_before_a_scripts_override(snippet_session):
    """`settings.batch = max(args.size, 1)` in a bench script is a binding of `batch` nearer
    the sink than the flag; the chain still starts at `--batch`, and the default computed
    from it in `__post_init__` rides in the object `prepare` makes from the parsed flags
    (not the one the adapter makes with `Settings(**kwargs)`)."""
    session = snippet_session(package())
    chain = trace(session.graph, "batch", sinks=["tokens"])
    code = spine_code(chain)
    assert code[0] == 'parser.add_argument("--batch", type=int, default=Settings.batch)'
    assert "reserved += self.batch * 2" in code
    after = code[code.index("self.fraction = reserved / 1024") + 1 :]
    assert after[0] == "return Settings.from_cli_args(raw_args)"
    assert "self.runner = Runner(Settings(**kwargs))" not in code
    assert code[-1] == "self.tokens = 1000 * self.settings.fraction"


def test_test_code_starts_no_chain_where_the_package_binds_the_name(snippet_session):
    """`make(batch)` in a test binds `batch` too: it is no seed of the chain (tests make their
    own values), so neither it nor what it alone leads to is shown."""
    session = snippet_session(package())
    graph = session.graph
    assert "tests/test_runner.py" in {graph.step(s).file for s in graph.seeds("batch")}
    chain = trace(graph, "batch", sinks=["tokens"])
    assert not [s.code for s in chain.steps if s.file.startswith("tests/") and s.kind == "param"]
