"""Programs traced forward from SECRET: `sink(...)` lines marked `# reached` must receive the
value, those marked `# not reached` must not. An object made in the function that reads it is
followed in order: a store reaches the reads after it, a later store replaces it where it always
runs first, a method or function given the object stores into it from the call on, another
object of the same class is another object; a container handed on whole is no use of what it
holds; calls are matched to their returns; a nested function reads its closure only if it may
run (called, handed on, decorated); a store at a constant key replaces the one before it at that
key; a statement reads before it binds (a swap); a class body's assignment is a field holding
its value; a store on an instance is not read on its class; a closure called only where it is
defined reads what its names hold at those calls; an `if`/`else` storing in each branch
overwrites what came before."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import trace

# What every program starts with: the value followed, and the function it must reach.
PRELUDE = """
SECRET = "secret"


def sink(value):
    pass


"""

PROGRAMS = {
    "in order": """
        class Holder:
            def __init__(self):
                self.value = "plain"

            def fill(self, value):
                self.value = value


        def fill(holder, value):
            holder.value = value


        def direct():
            box = Holder()
            sink(box.value)  # not reached
            box.value = SECRET
            sink(box.value)  # reached
            box.value = "plain"
            sink(box.value)  # not reached


        def branches(cond):
            box = Holder()
            box.value = SECRET
            if cond:
                box.value = "plain"
                sink(box.value)  # not reached
            sink(box.value)  # reached


        def by_method():
            first = Holder()
            second = Holder()
            sink(first.value)  # not reached
            first.fill(SECRET)
            sink(first.value)  # reached
            sink(second.value)  # not reached


        def by_function():
            box = Holder()
            sink(box.value)  # not reached
            fill(box, SECRET)
            sink(box.value)  # reached


        def by_bound_method():
            box = Holder()
            put = box.fill
            sink(box.value)  # not reached
            put(SECRET)
            sink(box.value)  # reached


        def in_a_loop(rows):
            box = Holder()
            for row in rows:
                sink(box.value)  # reached
                box.value = SECRET
    """,
    "handed elsewhere": """
        class Holder:
            def __init__(self):
                self.value = "plain"


        def aliased():
            box = Holder()
            other = box
            other.value = SECRET
            sink(box.value)  # reached
    """,
    "a key stored again": """
        def keys(flag):
            box = {}
            box["key"] = SECRET
            sink(box["key"])  # reached
            box["other"] = "plain"
            sink(box["key"])  # reached
            if flag:
                box["key"] = "plain"
            sink(box["key"])  # reached
            box["key"] = "plain"
            sink(box["key"])  # not reached
    """,
    "a swap": """
        def swap():
            first = SECRET
            second = "plain"
            first, second = second, first
            sink(first)  # not reached
            sink(second)  # reached
    """,
    "closures that run": """
        def runner(work):
            work()


        def outer():
            held = SECRET

            def called():
                sink(held)  # reached

            def handed():
                sink(held)  # reached

            @runner
            def decorated():
                sink(held)  # reached

            def never():
                # `never` is only defined here: it never runs
                sink(held)  # not reached

            def around():
                def inner():
                    sink(held)  # not reached

            called()
            runner(handed)
            around()
    """,
    # Around the spine, a container holding the value is shown where the value is put in and
    # where it comes back out, not where it is only handed on: sink(box) reads no value.
    "a container handed on whole": """
        def boxes():
            box = [SECRET]
            sink(box)  # not reached
            sink(box[0])  # reached
            bag = set()
            bag.add(SECRET)
            sink(bag.pop())  # reached
            sink(bag)  # not reached
    """,
    # A value that enters a function (or a constructor) by one call leaves it by that call
    # only: the other calls' results, and the other objects the constructor makes, hold it not.
    "calls matched to their returns": """
        def second(a, b):
            return b


        class Box:
            def __init__(self, value):
                self.value = value


        def calls():
            sink(second("plain", SECRET))  # reached
            sink(second(SECRET, "plain"))  # not reached
            kept = Box(SECRET)
            other = Box("plain")
            sink(kept.value)  # reached
            sink(other.value)  # not reached
    """,
    # A call that surely runs one function whose body stores into the object on every path
    # replaces what was stored before, where the call always runs first; one that stores on
    # some paths only (in a branch, after a `return`) adds and replaces nothing.
    "an overwrite by a call": """
        class Holder:
            def __init__(self):
                self.value = "plain"

            def put(self, value):
                self.value = value

            def maybe(self, value):
                if value:
                    self.value = value

            def unless(self, value):
                if value is None:
                    return
                self.value = value


        def put(holder, value):
            holder.value = value


        def by_function():
            box = Holder()
            put(box, SECRET)
            sink(box.value)  # reached
            put(box, "plain")
            sink(box.value)  # not reached


        def by_bound_method():
            box = Holder()
            store = box.put
            store(SECRET)
            sink(box.value)  # reached
            store("plain")
            sink(box.value)  # not reached


        def on_some_paths():
            box = Holder()
            box.put(SECRET)
            box.maybe("plain")
            sink(box.value)  # reached
            box.unless("plain")
            sink(box.value)  # reached
    """,
    # A nested function only called where it is defined reads the names around it as they
    # are bound at those calls; one handed on (returned, passed) may run after any binding.
    "a closure reads at its calls": """
        def at_the_call():
            value = SECRET

            def read():
                sink(value)  # not reached

            value = "plain"
            read()


        def before_the_call():
            value = "plain"

            def show():
                sink(value)  # reached

            value = SECRET
            show()


        def handed_on(run):
            value = "plain"

            def later():
                sink(value)  # reached

            run(later)
            value = SECRET
            return later
    """,
    # An `if` with an `else` that stores (or binds) in each branch's own body overwrites
    # what came before it, for the lines after it; without an `else`, or with a store nested
    # deeper in a branch, a path keeps the old value.
    "both branches store": """
        class Holder:
            pass


        def attributes(flag):
            box = Holder()
            box.value = SECRET
            if flag:
                box.value = "plain"
            elif flag is None:
                box.value = "other"
            else:
                box.value = "plain"
            sink(box.value)  # not reached


        def names(flag):
            value = SECRET
            if flag:
                value = "plain"
            else:
                value = "other"
            sink(value)  # not reached


        def no_else(flag):
            value = SECRET
            if flag:
                value = "plain"
            sink(value)  # reached


        def nested(flag, items):
            value = SECRET
            if flag:
                value = "plain"
            else:
                for item in items:
                    value = item
            sink(value)  # reached
    """,
    # In a loop, a read before a binding takes it the next time round, unless a binding
    # earlier in the loop's body always runs before the read.
    "a loop's next round": """
        def carried(items):
            value = "plain"
            for item in items:
                sink(value)  # reached
                value = SECRET


        def overwritten_first(items):
            value = "plain"
            for item in items:
                value = "other"
                sink(value)  # not reached
                value = SECRET
    """,
    # A class body's `name = value` is a field holding the value, at its keys; the class, its
    # instances and its subclasses read it until one stores its own.
    "class attributes": """
        class Pair:
            pair = (SECRET, "plain")

            def first(self):
                sink(self.pair[0])  # reached

            def second(self):
                sink(self.pair[1])  # not reached

            @classmethod
            def on_class(cls):
                sink(cls.pair[0])  # reached
                sink(cls.pair[1])  # not reached


        def outside():
            sink(Pair.pair[0])  # reached
            sink(Pair.pair[1])  # not reached
    """,
    # A store on an object made where it is stored, and handed nowhere after, is read there
    # only; a store on an instance is never read on the class.
    "a store on an instance": """
        class Box:
            value = "plain"

            def show(self):
                sink(self.value)  # not reached

            @classmethod
            def show_class(cls):
                sink(cls.value)  # not reached


        class Shown:
            value = "plain"

            def show(self):
                sink(self.value)  # reached


        def kept_here():
            box = Box()
            box.value = SECRET
            sink(box.value)  # reached
            sink(Box.value)  # not reached
            Box.show_class()


        def handed_on():
            shown = Shown()
            shown.value = SECRET
            shown.show()
    """,
}


def marked(text: str, mark: str) -> list[int]:
    return [n for n, line in enumerate(text.splitlines(), 1) if line.endswith(f"# {mark}")]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_value_reaches_the_sinks_marked_reached_only(snippet_session, name: str) -> None:
    text = PRELUDE.lstrip("\n") + textwrap.dedent(PROGRAMS[name]).lstrip("\n")
    session = snippet_session({"prog.py": text})
    chain = trace(session.graph, "SECRET", direction="forward", max_depth=60, branch_depth=60)
    steps = {s.id: s for s in chain.steps}
    sink_param = next(s.id for s in chain.steps if s.kind == "param" and s.symbol == "sink")
    reached = sorted(
        line
        for e in chain.edges
        if e.dst == sink_param and e.src in steps
        for line in range(steps[e.src].line, steps[e.src].end_line + 1)
    )
    assert [n for n in marked(text, "reached") if n in reached] == marked(text, "reached")
    assert [n for n in marked(text, "not reached") if n in reached] == []
