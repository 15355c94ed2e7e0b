"""Which entry's parse a flag's value is followed from, where several scripts parse the
settings' flags and none is imported by the package: the settings' own entry, not a tool that
gives its parser flags of its own (SGLang 0.3's `launch_server.py`, not `bench_latency.py`)."""

from __future__ import annotations

from tests.conftest import spine_code, trace

SETTINGS = """
    import argparse
    from dataclasses import dataclass, fields


    @dataclass
    class Settings:
        fraction: float = 0.9

        @staticmethod
        def add_cli_args(parser):
            parser.add_argument("--fraction", type=float, default=Settings.fraction)

        @classmethod
        def from_cli_args(cls, args):
            names = [f.name for f in fields(cls)]
            return cls(**{name: getattr(args, name) for name in names})
"""

SERVER = """
    class Runner:
        def __init__(self, settings):
            self.tokens = 1000 * settings.fraction


    def launch(settings):
        Runner(settings)
"""

# A tool beside the entry, first by name: it adds flags of its own and sizes its own runner.
BENCH = """
    import argparse

    from pkg.server import Runner
    from pkg.settings import Settings


    class BenchArgs:
        @staticmethod
        def add_cli_args(parser):
            parser.add_argument("--batch", type=int, default=1)


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        Settings.add_cli_args(parser)
        BenchArgs.add_cli_args(parser)
        args = parser.parse_args()
        settings = Settings.from_cli_args(args)
        Runner(settings)
"""

LAUNCH = """
    import argparse

    from pkg.server import launch
    from pkg.settings import Settings

    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        Settings.add_cli_args(parser)
        args = parser.parse_args()
        settings = Settings.from_cli_args(args)
        launch(settings)
"""


def test_the_flag_is_followed_from_the_settings_own_entry(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/settings.py": SETTINGS,
            "pkg/server.py": SERVER,
            "pkg/bench_tool.py": BENCH,
            "pkg/launch.py": LAUNCH,
        }
    )
    chain = trace(session.graph, "fraction", sinks=["tokens"])
    code = spine_code(chain)
    assert code[:2] == [
        'parser.add_argument("--fraction", type=float, default=Settings.fraction)',
        "args = parser.parse_args()",
    ]
    steps = {s.id: s for s in chain.steps}
    assert steps[chain.spine[1]].file == "pkg/launch.py"
    assert "launch(settings)" in code  # the entry's object, handed to the server
    assert not any(steps[s].file == "pkg/bench_tool.py" for s in chain.spine)
