"""The ranking rules of tracer/graph/policies.py, each on a snippet of its own."""

from __future__ import annotations

import pytest

from tests.unit.test_resolution import BAG, FIELDS
from tracer.graph.policies import FLAGGED
from tracer.index.resolve import DYNAMIC

# A flag that sets Schedule.fraction (FIELDS declares `fraction` in PoolConfig and Schedule).
PARSE = """
    import argparse

    from pkg.fields import Schedule


    def parse(argv):
        parser = argparse.ArgumentParser()
        parser.add_argument("--fraction", type=float, default=Schedule.fraction)
        args = parser.parse_args(argv)
        return Schedule(fraction=args.fraction)
"""
READER = """
    from pkg.bag import get_schedule


    def size(total):
        tokens = total * get_schedule().fraction
        return tokens
"""


@pytest.mark.parametrize(
    ("flagged", "expected"),
    [
        # A flag sets Schedule.fraction alone: that field, taken as sure; PoolConfig's is no
        # source.
        (True, {("Schedule", FLAGGED)}),
        # No flag sets either: both, guesses.
        (False, {("Schedule", DYNAMIC), ("PoolConfig", DYNAMIC)}),
    ],
)
def test_a_bag_read_comes_from_the_one_field_a_flag_sets(snippet_session, flagged, expected):
    files = {"pkg/__init__.py": "", "pkg/bag.py": BAG, "pkg/fields.py": FIELDS}
    files["pkg/reader.py"] = READER
    if flagged:
        files["pkg/parse.py"] = PARSE
    graph = snippet_session(files).graph
    (read,) = graph.seeds("size.tokens")
    sources = {
        (graph.step(e.src).symbol, e.confidence)
        for e in graph.edges(read, forward=False)
        if graph.step(e.src).kind == "field"
    }
    assert sources == expected
