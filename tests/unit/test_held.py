"""Objects followed by value (tracer/graph/held.py): a value stored in an object's attribute
rides in the object (through names, calls, returns, a constructor's result, the object a
method is called on) to the reads of that attribute on it; in a function, a store reaches the
reads after it, and a read takes the stores before it; a record's field is in the objects its
constructor makes, the object the value's own constructor call made first."""

from __future__ import annotations

from tests.conftest import spine_code, trace

# No annotation anywhere: the name join of `self.budget` to `self.config.budget` is a guess.
UNTYPED = """
    class Config:
        def __init__(self, budget, other):
            self.budget = budget
            self.other = other


    class Worker:
        def __init__(self, config):
            self.config = config

        def size(self):
            self.pool = self.config.budget * 2


    def make(budget):
        cfg = Config(budget, 3)
        return cfg


    def launch(cfg):
        w = Worker(cfg)
        w.size()


    def main(budget):
        c = make(budget)
        launch(c)
"""


def test_an_untyped_object_is_followed_where_the_name_join_only_guesses(snippet_session):
    session = snippet_session({"app.py": UNTYPED})
    chain = trace(session.graph, "main.budget", sinks=["pool"])
    assert spine_code(chain) == [
        "budget",
        "c = make(budget)",
        "budget",
        "cfg = Config(budget, 3)",
        "budget",
        "self.budget = budget",
        "cfg = Config(budget, 3)",  # the object the constructor made holds it, at .budget
        "return cfg",
        "c = make(budget)",
        "launch(c)",
        "cfg",
        "w = Worker(cfg)",
        "config",
        "self.config = config",
        "w = Worker(cfg)",  # ... inside the worker, at .config.budget
        "self",  # `w.size()`: the object the method runs on
        "self.pool = self.config.budget * 2",
    ]
    on_spine = set(zip(chain.spine, chain.spine[1:], strict=False))
    kinds = {e.kind for e in chain.edges if (e.src, e.dst) in on_spine}
    assert {"store", "receiver", "read"} <= kinds
    assert all(e.confidence == 1.0 for e in chain.edges if (e.src, e.dst) in on_spine)


ORDERED = """
    SECRET = "secret"


    def sink(value):
        pass


    class Box:
        def set(self, value):
            self.value = value


    def in_order(box):
        sink(box.value)  # not reached
        box.value = SECRET
        sink(box.value)  # reached
        box.value = "plain"
        sink(box.value)  # not reached


    def by_a_method(box):
        sink(box.value)  # not reached
        box.set(SECRET)
        sink(box.value)  # reached


    def handed_on(box):
        box.value = SECRET
        read(box)


    def read(other):
        sink(other.value)  # reached


    def overwritten(box):
        box.value = SECRET
        box.value = "plain"
        show(box)


    def show(shown):
        sink(shown.value)  # not reached


    def came_with(box):
        box.value = SECRET
        replace(box)


    def replace(given):
        given.value = "plain"
        sink(given.value)  # not reached


    def next_round(box):
        for _ in range(3):
            sink(box.value)  # reached (the next time round)
            box.value = SECRET


    def fresh_each_round(items):
        for item in items:
            peek(item)
            item.value = SECRET


    def peek(each):
        sink(each.value)  # not reached


    def as_a_dict():
        given = {"value": SECRET}
        dump(given)


    def dump(mapping):
        sink(mapping.value)  # not reached: a dict's key is no attribute


    def computed(box):
        box.value = SECRET
        text = repr(box)
        sink(text)  # not reached: computed from the object, not what it holds


    class Base:
        def __init__(self, value):
            self.value = value


    class Child(Base):
        def __init__(self, value):
            super().__init__(value)


    def through_super():
        child = Child(SECRET)
        sink(child.value)  # reached (stored by the base's __init__)


    def deeper(box):
        box.inner = SECRET
        sink(box.inner.size)  # reached (read out of what was stored)
"""


def surely_reached(session, name: str) -> set[str]:
    """The calls `sink(...)` the value of NAME reaches along sure edges (a name join of an
    untyped `box.value` is a guess: shown, and marked so)."""
    chain = trace(session.graph, name, direction="forward", max_depth=20, branch_depth=20)
    steps = {s.id: s for s in chain.steps}
    return {
        steps[e.dst].code
        for e in chain.edges
        if e.dst in steps and steps[e.dst].code.startswith("sink(") and e.confidence >= 0.8
    }


def test_a_store_reaches_the_reads_after_it_until_another_store_replaces_it(snippet_session):
    session = snippet_session({"ordered.py": ORDERED})
    assert surely_reached(session, "SECRET") == {
        "sink(box.value)  # reached",
        "sink(other.value)  # reached",
        "sink(box.value)  # reached (the next time round)",
        "sink(box.inner.size)  # reached (read out of what was stored)",
        "sink(child.value)  # reached (stored by the base's __init__)",
    }


FIELDS = """
    from dataclasses import dataclass


    @dataclass
    class Limits:
        tokens: int


    class Pool:
        def __init__(self, limits):
            self.size = limits.tokens


    def serve(tokens):
        limits = Limits(tokens=tokens)
        return Pool(limits)


    def spare():
        other = Limits(tokens=8)
        return Pool(other)
"""


def test_a_field_is_in_the_object_its_constructor_call_made(snippet_session):
    session = snippet_session({"fields.py": FIELDS})
    chain = trace(session.graph, "serve.tokens", sinks=["size"])
    assert spine_code(chain) == [
        "tokens",
        "limits = Limits(tokens=tokens)",
        "tokens: int",
        "limits = Limits(tokens=tokens)",
        "return Pool(limits)",
        "limits",
        "self.size = limits.tokens",
    ]
    # The object `spare` makes is another one: nothing of this value is in it (its argument
    # is shown as another input of the field).
    assert [s.kind for s in chain.steps if s.code == "other = Limits(tokens=8)"] == ["call_arg"]


NAMESPACE = """
    import argparse


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--rate", type=float)
        args = parser.parse_args()
        scaled = args.rate * 2
        return scaled
"""


def test_a_value_read_out_of_an_object_a_library_made_goes_no_further_back(snippet_session):
    """`args.rate` is read out of what `parse_args()` made: the parser it was called on is
    not where the value comes from (the flag is)."""
    session = snippet_session({"cli.py": NAMESPACE})
    chain = trace(session.graph, "scaled", direction="backward")
    assert spine_code(chain) == [
        'parser.add_argument("--rate", type=float)',
        "args = parser.parse_args()",
        "scaled = args.rate * 2",
    ]


def test_the_bound_on_states_inside_an_object_does_not_cut_a_dicts_contents(snippet_session):
    """MAX_INSIDE counts the states with the value inside an object only: a dict handed to
    more functions than the bound is followed into each of them."""
    readers = "".join(f"def read_{i}(given):\n    sink(given['k'])\n\n\n" for i in range(400))
    calls = "".join(f"    read_{i}(box)\n" for i in range(400))
    source = f"SECRET = 's'\n\n\ndef sink(value):\n    pass\n\n\n{readers}def main():\n"
    session = snippet_session({"many.py": source + "    box = {'k': SECRET}\n" + calls})
    assert len(surely_reached(session, "SECRET")) == 1  # the one line text, in 400 places
    chain = trace(session.graph, "SECRET", direction="forward", max_depth=20, branch_depth=20)
    assert sum(s.code == "sink(given['k'])" for s in chain.steps) == 400
