"""Names a value is expected to end at (the presets' sinks) hint, they do not override: the
spine ends where the engine's own rule puts the value's end; a route to a hinted name is one
more route when the main end is elsewhere. A sink asked for (`--to`) says whether it was
reached."""

from __future__ import annotations

from tests.conftest import spine_code, trace

SETTINGS = {
    "pkg/__init__.py": "",
    "pkg/settings.py": """
        import argparse
        from dataclasses import dataclass


        @dataclass
        class Settings:
            fraction: float = 0.9
            chunk: int = 8192

            def __post_init__(self):
                reserved = self.chunk * 1.5
                self.fraction = self.fraction - reserved / 1e6


        def parse(argv):
            parser = argparse.ArgumentParser()
            parser.add_argument("--fraction", type=float, default=Settings.fraction)
            parser.add_argument("--chunk", type=int, default=Settings.chunk)
            args = parser.parse_args(argv)
            return Settings(fraction=args.fraction, chunk=args.chunk)
    """,
    "pkg/runner.py": """
        from pkg.settings import Settings


        class Runner:
            def __init__(self, settings: Settings, free: float):
                self.settings = settings
                self.budget = free * settings.fraction
                self.tokens = int(self.budget // 64)
                self.slice_limit = settings.chunk * 2
    """,
}


def test_a_hint_the_value_reaches_by_its_own_way_ends_the_spine(snippet_session):
    # Without a hint the value ends at the nearest attribute computed from it; the hinted
    # name is reached by the value's own way (no other setting on it): it is the main end.
    session = snippet_session(SETTINGS)
    plain = trace(session.graph, "Settings.fraction")
    hinted = trace(session.graph, "Settings.fraction", hints=["tokens"])
    assert spine_code(plain)[-1] == "self.budget = free * settings.fraction"
    assert spine_code(hinted)[-1] == "self.tokens = int(self.budget // 64)"
    assert hinted.sink_reached is None  # nothing was asked


def test_a_hint_reached_only_through_another_settings_default_is_not_the_spine(snippet_session):
    # The chunk size is an input of the fraction's default: that setting's, not where the
    # chunk size ends up; the value's own end is the runner's slice limit.
    session = snippet_session(SETTINGS)
    chain = trace(session.graph, "Settings.chunk", hints=["tokens"])
    assert spine_code(chain)[-1] == "self.slice_limit = settings.chunk * 2"
    ends = [spine_code_of(chain, route)[-1] for route in chain.routes]
    assert ends[0] == "self.slice_limit = settings.chunk * 2"
    assert ends[-1] == "self.tokens = int(self.budget // 64)"  # the hinted route, listed last


def test_a_sink_asked_for_ends_the_spine_and_says_so(snippet_session):
    session = snippet_session(SETTINGS)
    chain = trace(session.graph, "Settings.chunk", sinks=["tokens"])
    assert spine_code(chain)[-1] == "self.tokens = int(self.budget // 64)"
    assert chain.sink_reached is True


def test_a_sink_the_value_never_reaches_is_said_unreached(snippet_session):
    session = snippet_session(SETTINGS)
    chain = trace(session.graph, "Settings.chunk", sinks=["settings"])
    assert chain.sink_reached is False
    assert spine_code(chain)[-1] == "self.slice_limit = settings.chunk * 2"


def spine_code_of(chain, route):
    steps = {s.id: s for s in chain.steps}
    return [steps[i].code.splitlines()[0].strip() for i in route]
