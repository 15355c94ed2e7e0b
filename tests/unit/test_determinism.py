"""A trace's answer depends on the question only: its JSON is byte-identical from a fresh
process on an empty cache, from a fresh process on the warm cache, and in a process that
answered ten other questions first (among them the ones that meet the same calls found by
value: a function kept in a local, a set, a registry a decorator fills)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.test_contents import SETTINGS
from tracer.session import open_session
from tracer.store.cache import FactCache
from tracer.trace.chains import trace
from tracer.views.chain_text import dumps

TREE = {
    "shop/__init__.py": "",
    "shop/ops.py": """
        HANDLERS = {}


        def handler(kind):
            def keep(function):
                HANDLERS[kind] = function
                return function

            return keep


        def scale(value):
            scaled = value * 2
            return scaled


        @handler("discount")
        def discount(price):
            reduced = price - 1
            return reduced
    """,
    "shop/run.py": """
        import argparse

        from shop.ops import HANDLERS, scale


        class Basket:
            def __init__(self, total):
                self.total = total

            def grown(self):
                return scale(self.total)


        def by_local(amount):
            g = scale
            result = g(amount)
            return result


        def by_set(amount):
            steps = set()
            steps.add(scale)
            for step in steps:
                step(amount)


        def by_kind(kind, amount):
            return HANDLERS[kind](amount)


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--amount", type=int, default=3)
            args = parser.parse_args()
            basket = Basket(by_local(args.amount))
            by_set(args.amount)
            return by_kind("discount", basket.grown())
    """,
}

QUESTIONS = [
    ("value", "backward"),
    ("price", "backward"),
    ("scaled", "both"),
    ("reduced", "both"),
    ("amount", "forward"),
]
OTHERS = ["amount", "total", "kind", "result", "steps", "g", "value", "price", "scaled", "reduced"]
ANSWER = """
import sys
from pathlib import Path
from tracer.session import open_session
from tracer.store.cache import FactCache
from tracer.trace.chains import trace
from tracer.views.chain_text import dumps
root, cache, name, direction = sys.argv[1:]
session = open_session(root, cache=FactCache(Path(cache)))
print(dumps(trace(session.graph, name, direction=direction), root))
"""


@pytest.fixture
def tree(write_tree) -> Path:
    return write_tree(TREE)


def fresh_process(root: Path, cache: Path, name: str, direction: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", ANSWER, str(root), str(cache), name, direction],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.rstrip("\n")


@pytest.mark.parametrize(("name", "direction"), QUESTIONS)
def test_a_trace_is_the_same_whatever_was_asked_before(
    tree: Path, tmp_path: Path, name: str, direction: str
):
    cold = fresh_process(tree, tmp_path / "cold", name, direction)
    warm = fresh_process(tree, tmp_path / "cold", name, direction)
    session = open_session(str(tree), cache=FactCache(tmp_path / "busy"))
    for other in OTHERS:
        for way in ("forward", "backward"):
            trace(session.graph, other, direction=way)
    after = dumps(trace(session.graph, name, direction=direction), str(tree))
    assert '"steps"' not in cold and '"nodes"' in cold  # a trace document, not an error
    assert warm == cold
    assert after == cold


def test_two_reads_out_of_one_object_between_the_same_steps(write_tree, tmp_path: Path):
    """`args.fraction` and `args.name` are read out of one namespace by one step: two edges
    between the same two steps, each taking its own attribute. What one trace learnt of the
    first does not answer for the second in the next trace (it did: `name`'s value was
    taken out at `.fraction` and lost)."""
    root = str(write_tree(SETTINGS))  # (`settings(args)` reads both)
    fresh = open_session(root, cache=FactCache(tmp_path / "fresh"))
    alone = dumps(trace(fresh.graph, "name", branch_depth=6), root)
    busy = open_session(root, cache=FactCache(tmp_path / "busy"))
    trace(busy.graph, "fraction", direction="forward", branch_depth=6)
    after = dumps(trace(busy.graph, "name", branch_depth=6), root)
    assert "label = conf[" in alone  # (the read the value reaches)
    assert after == alone
