"""What the dataflow engine must answer about Python's values: one small program of our own for
each pattern sgtrace gets wrong today, as measured by tests/bench/bench_codeql.py against
CodeQL's dataflow tests (the category names are that measurement's). tests/unit/
test_dataflow_cases.py asserts which hold (and that the others still fail, so the list of those
that hold is the engine's measured state); `python -m tests.bench.bench_codeql --cases` shows
the lines.

Each case is traced forward from `SECRET` (`sgtrace trace FOLDER SECRET --direction forward`,
the program alone in FOLDER), and read as bench_codeql reads CodeQL's files: a line holding a
call `sink(...)` is reached when an edge of the answer passes the value from a step on that line
into `sink`'s parameter. A line marked `# reached` must be reached, one marked `# not reached`
must not; the marks are read into `reached` and `not_reached` when the module loads.
"""

from __future__ import annotations

from dataclasses import dataclass
from textwrap import dedent


@dataclass(frozen=True, slots=True)
class Case:
    """A program (SOURCE, the only file of its folder), the NAME traced forward from, and the
    lines whose `sink(...)` call the value must reach and must not."""

    category: str
    source: str
    traced: str
    reached: tuple[int, ...]
    not_reached: tuple[int, ...]


def case(category: str, source: str, traced: str = "SECRET") -> Case:
    """A Case of SOURCE (dedented), its lines read from the marks ending them."""
    text = dedent(source).lstrip("\n")
    reached, not_reached = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.endswith("# not reached"):
            not_reached.append(number)
        elif line.endswith("# reached"):
            reached.append(number)
    return Case(category, text, traced, tuple(reached), tuple(not_reached))


CASES: tuple[Case, ...] = (
    case(
        "container holding every value put in it",
        """
        SECRET = "secret"


        def sink(value):
            pass


        def positions():
            pair = (SECRET, "plain")
            first, second = pair
            sink(first)  # reached
            sink(second)  # not reached
            sink(pair[1])  # not reached
            rows = [("plain", SECRET)]
            for left, right in rows:
                sink(right)  # reached
                sink(left)  # not reached
            flipped = list(reversed([SECRET, "plain"]))
            sink(flipped[1])  # reached
            sink(flipped[0])  # not reached
            zipped = list(zip([SECRET], ["plain"]))
            sink(zipped[0][0])  # reached
            sink(zipped[0][1])  # not reached
        """,
    ),
    case(
        "container taken for its contents",
        """
        SECRET = "secret"


        def sink(value):
            pass


        def wrappers():
            box = [SECRET]
            sink(box[0])  # reached
            sink(box)  # not reached
            table = {"k": SECRET}
            sink(table["k"])  # reached
            sink(table)  # not reached
            head, *rest = ("plain", SECRET)
            sink(rest[0])  # reached
            sink(rest)  # not reached
        """,
    ),
    case(
        "read before the write",
        """
        SECRET = "secret"


        def sink(value):
            pass


        class Holder:
            def __init__(self):
                self.value = "plain"


        def fill(holder):
            holder.value = SECRET


        def in_order():
            holder = Holder()
            sink(holder.value)  # not reached
            holder.value = SECRET
            sink(holder.value)  # reached


        def across_a_call():
            holder = Holder()
            sink(holder.value)  # not reached
            fill(holder)
            sink(holder.value)  # reached
        """,
    ),
    case(
        "overwrite not clearing",
        """
        SECRET = "secret"


        def sink(value):
            pass


        class Holder:
            pass


        def overwrites():
            name = SECRET
            kept = name
            name = "plain"
            sink(kept)  # reached
            sink(name)  # not reached
            holder = Holder()
            holder.value = SECRET
            holder.value = "plain"
            sink(holder.value)  # not reached
            table = {"k": SECRET}
            table["k"] = "plain"
            sink(table["k"])  # not reached
        """,
    ),
    case(
        "attributes joined by name across objects",
        """
        SECRET = "secret"


        def sink(value):
            pass


        class Box:
            def __init__(self, content):
                self.content = content


        class Label:
            def __init__(self):
                self.content = "plain"


        secret_box = Box(SECRET)
        plain_box = Box("plain")
        sink(secret_box.content)  # reached
        sink(plain_box.content)  # not reached
        sink(Label().content)  # not reached
        """,
    ),
    case(
        "class attributes",
        """
        SECRET = "secret"


        def sink(value):
            pass


        class Settings:
            token = SECRET
            name = "plain"

            class Nested:
                inner = SECRET

            def show(self):
                sink(self.token)  # reached
                sink(self.name)  # not reached

            @classmethod
            def build(cls):
                sink(cls.token)  # reached


        class Outer:
            value = "plain"

            class Inner:
                value = SECRET


        def from_a_function():
            sink(Outer.Inner.value)  # reached
            sink(Outer.value)  # not reached


        sink(Settings.token)  # reached
        sink(Settings().token)  # reached
        sink(Settings.Nested.inner)  # reached
        sink(Settings.name)  # not reached
        """,
    ),
    case(
        "dict methods",
        """
        SECRET = "secret"


        def sink(value):
            pass


        def methods():
            table = {}
            got = table.setdefault("k", SECRET)
            sink(got)  # reached
            sink(table["k"])  # reached
            sink(table.setdefault("k", "plain"))  # reached
            for key, value in table.items():
                sink(value)  # reached
                sink(key)  # not reached
            sink(list(table.values())[0])  # reached
            last = table.popitem()
            sink(last[1])  # reached
            sink(last[0])  # not reached
            built = dict([("a", SECRET), ("b", "plain")])
            sink(built["a"])  # reached
            sink(built["b"])  # not reached
        """,
    ),
    case(
        "map and filter callbacks",
        """
        SECRET = "secret"


        def sink(value):
            pass


        def keep(item):
            sink(item)  # reached
            return True


        def second(item, other):
            sink(other)  # not reached
            return other


        kept = list(filter(keep, [SECRET]))
        sink(kept[0])  # reached
        paired = list(map(second, [SECRET], ["plain"]))
        sink(paired[0])  # not reached
        """,
    ),
    case(
        "functions passed as values",
        """
        SECRET = "secret"


        def sink(value):
            pass


        def show(text):
            sink(text)  # reached


        def hide(text):
            sink(text)  # not reached


        def apply(function, argument):
            function(argument)


        apply(show, SECRET)
        apply(hide, "plain")
        sink((lambda: SECRET)())  # reached
        """,
    ),
    case(
        "closures",
        """
        SECRET = "secret"


        def sink(value):
            pass


        def writes_into_captured():
            box = {}

            def fill():
                box["k"] = SECRET

            fill()
            sink(box["k"])  # reached


        def updates_captured():
            options = {}

            def fill():
                options.update(k=SECRET)

            sink(options["k"])  # not reached
            fill()
            sink(options["k"])  # reached


        def reads_at_call_time():
            value = SECRET

            def read():
                return value

            value = "plain"
            sink(read())  # not reached


        def never_called():
            value = SECRET

            def unused():
                sink(value)  # not reached

            return None
        """,
    ),
    case(
        "global and nonlocal",
        """
        SECRET = "secret"


        def sink(value):
            pass


        current = "plain"


        def set_current():
            global current
            current = SECRET


        def counter():
            total = "plain"

            def bump():
                nonlocal total
                total = SECRET

            bump()
            sink(total)  # reached


        def untouched():
            kept = "plain"

            def never():
                nonlocal kept
                kept = SECRET

            sink(kept)  # not reached


        def read_current():
            sink(current)  # reached


        def deeper():
            found = "plain"

            def middle():
                def inner():
                    nonlocal found
                    found = SECRET

                inner()

            middle()
            sink(found)  # reached


        def overwritten_after():
            seen = "plain"

            def fill():
                nonlocal seen
                seen = SECRET

            fill()
            seen = "plain"
            sink(seen)  # not reached


        def read_before_the_call():
            early = "plain"

            def fill():
                nonlocal early
                early = SECRET

            sink(early)  # not reached
            fill()


        def handed_on(run):
            later = "plain"

            def fill():
                nonlocal later
                later = SECRET

            sink(later)  # not reached
            run(fill)
            sink(later)  # reached


        def store(value):
            global stored
            stored = value


        def fetch():
            return stored


        def through_a_global():
            store(SECRET)
            sink(fetch())  # reached


        REGISTRY = {}


        def register(key, value):
            REGISTRY[key] = value


        def lookup(key):
            return REGISTRY[key]


        register("model", SECRET)
        sink(lookup("model"))  # reached
        set_current()
        sink(current)  # reached
        """,
    ),
    case(
        "match statements",
        """
        SECRET = "secret"


        def sink(value):
            pass


        def dispatch(command):
            match (command, SECRET):
                case ("run", token):
                    sink(token)  # reached
                case (other, _):
                    sink(other)  # not reached
            match {"key": SECRET, "mode": "plain"}:
                case {"key": found, "mode": mode}:
                    sink(found)  # reached
                    sink(mode)  # not reached
            match SECRET:
                case str() as text if sink(text):  # reached
                    pass
        """,
    ),
    case(
        "getattr and setattr by a constant name",
        """
        SECRET = "secret"


        def sink(value):
            pass


        class Holder:
            pass


        holder = Holder()
        setattr(holder, "value", SECRET)
        sink(holder.value)  # reached
        sink(getattr(holder, "value"))  # reached
        sink(getattr(holder, "other", "plain"))  # not reached
        """,
    ),
    case(
        "conditions decided by constants",
        """
        SECRET = "secret"


        def sink(value):
            pass


        sink(SECRET if True else "plain")  # reached
        sink("plain" if True else SECRET)  # not reached
        sink(SECRET if False else "plain")  # not reached
        """,
    ),
    case(
        "comprehensions keep their elements' parts",
        """
        SECRET = "secret"


        def sink(value):
            pass


        def rows():
            pairs = [(SECRET, "plain") for _ in range(3)]
            sink(pairs[0][0])  # reached
            sink(pairs[2][1])  # not reached
            plain = "plain"
            built = list((plain, SECRET) for _ in range(3))
            sink(built[1][1])  # reached
            sink(built[1][0])  # not reached


        def lambdas_called_in_place(xs):
            made = [(lambda x: SECRET)(x) for x in xs]
            sink(made[0])  # reached
            sink((lambda x: x)(SECRET))  # reached
        """,
    ),
    case(
        "a mutation through an alias",
        """
        SECRET = "secret"


        def sink(value):
            pass


        def fill(mapping):
            mapping["k"] = SECRET


        def aliases():
            inner = {"k": "plain"}
            holders = [inner]
            fill(holders[0])
            sink(inner["k"])  # reached
            other = {"k": "plain"}
            sink(other["k"])  # not reached
        """,
    ),
    case(
        "starred nested unpacking",
        """
        SECRET = "secret"


        def sink(value):
            pass


        head, *(middle, last) = (SECRET, "plain", SECRET)
        sink(head)  # reached
        sink(last)  # reached
        sink(middle)  # not reached
        """,
    ),
    case(
        "a receiver of several classes",
        """
        SECRET = "secret"


        def sink(value):
            pass


        class Left:
            def put(self, value):
                self.left = value


        class Right:
            def put(self, value):
                self.right = value


        def either(flag):
            if flag:
                target = Left()
            else:
                target = Right()
            target.put(SECRET)
            sink(target.left)  # reached
            sink(target.right)  # reached
        """,
    ),
    case(
        "dict keys as values",
        """
        SECRET = "secret"


        def sink(value):
            pass


        def first_option(**options):
            return list(options)[0]


        def keys():
            index = {SECRET: "plain"}
            for key in index:
                sink(key)  # reached
            for value in index.values():
                sink(value)  # not reached
            sink(first_option(**{SECRET: "plain"}))  # reached
        """,
    ),
    case(
        "call contexts merged",
        """
        SECRET = "secret"


        def sink(value):
            pass


        def second(first, other):
            return other


        sink(second("plain", SECRET))  # reached
        sink(second(SECRET, "plain"))  # not reached
        """,
    ),
    case(
        "loop-carried values",
        """
        SECRET = "secret"


        def sink(value):
            pass


        def loop():
            value = "plain"
            for step in range(2):
                if step == 1:
                    sink(value)  # reached
                value = SECRET
        """,
    ),
)
