"""What some callables outside the tree do with the functions they are given: they run them
later, with arguments given beside them. A process or a thread runs `target(*args, **kwargs)`
(`multiprocessing.Process(target=run, args=(settings,))`): the value `settings` reaches
`run`'s first parameter, in another process; `map(f, xs)` and `filter(f, xs)` run f with each
element of xs. Standard library knowledge, by the dotted name
the index resolves the callee to; nothing of any analysed project."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Launcher:
    """A callable that runs the function given as TARGET (by keyword, or at TARGET_POSITION)
    with the tuple given as ARGS and the dict given as KWARGS; or, with EACH_FROM, with an
    element of each positional argument from that position on, in order (`map(f, xs, ys)`
    runs `f(x, y)` for each x of xs and y of ys)."""

    target: str
    target_position: int
    args: str
    kwargs: str
    each_from: int | None = None


PROCESS = Launcher(target="target", target_position=1, args="args", kwargs="kwargs")
EACH = Launcher(target="", target_position=0, args="", kwargs="", each_from=1)

LAUNCHERS = {
    "multiprocessing.Process": PROCESS,
    "multiprocessing.context.Process": PROCESS,
    "multiprocessing.process.BaseProcess": PROCESS,
    "torch.multiprocessing.Process": PROCESS,
    "threading.Thread": PROCESS,
    "<builtin>.map": EACH,  # f(x, y) for the elements of the iterables after f
    "<builtin>.filter": EACH,  # f(x) for each element of the iterable
}
LAUNCHER_NAMES = frozenset(name.rpartition(".")[2] for name in LAUNCHERS)
# Calls that return a context of a module: its attributes are the module's
# (`multiprocessing.get_context("spawn").Process` is a `multiprocessing.Process`).
CONTEXTS = {
    "multiprocessing.get_context": "multiprocessing",
    "multiprocessing.context.get_context": "multiprocessing",
    "torch.multiprocessing.get_context": "torch.multiprocessing",
}


# Decorators that wrap a function where it is defined and keep it nowhere else (a descriptor,
# a cache, a marker): the function runs only through the name they bind, unlike a registering
# decorator (`@app.route(...)`, `@register`), which may keep it in a table of its own. By the
# dotted name the index resolves the decorator to; `@x.setter` (a property's) by its last name.
KEEPING_NOTHING = frozenset(
    {
        "<builtin>.property",
        "<builtin>.staticmethod",
        "<builtin>.classmethod",
        "abc.abstractmethod",
        "functools.cached_property",
        "functools.lru_cache",
        "functools.cache",
        "functools.wraps",
        "typing.overload",
        "typing.override",
        "typing_extensions.override",
    }
)
PROPERTY_PARTS = frozenset({"setter", "getter", "deleter"})


# Methods of the builtin containers that store a value they are given into the object they
# are called on (`d.update({...})`, `xs.append(v)`, `ss.add(v)`, `q.appendleft(v)`): the
# chains' contents (tracer/graph/contents.py) and the call graph's (tracer/index/calls/
# contents.py) both read this one set; where in the receiver each puts the value is theirs.
STORING_METHODS = frozenset(
    {"update", "append", "appendleft", "insert", "add", "extend", "setdefault"}
)


def storing_receiver(callee: str) -> str | None:
    """The plain name a call of CALLEE stores into, when CALLEE is one of STORING_METHODS
    called on a plain name (`d.setdefault`, `items.append`: d, items); else None."""
    base, _, method = callee.rpartition(".")
    return base if method in STORING_METHODS and base.isidentifier() else None


# Methods of the builtin containers that give one value they hold: given a constant key as
# their first argument, the value at that key (`d.get("k")`, `d.pop("k", None)`); given no
# argument, an element at an index not known (`xs.pop()`, `q.popleft()`). Read by both models.
KEY_GETTERS = frozenset({"get", "pop", "setdefault"})
ELEMENT_TAKERS = frozenset({"pop", "popleft"})

# Callables that make an empty container of the display form named when given no argument
# (or only a factory for missing keys: `defaultdict(list)`): what the stores into it put in
# is what it holds (`ss = set(); ss.add(f)`). Each: (form, how many leading arguments are no
# contents).
EMPTY_CONTAINERS = {
    "<builtin>.list": ("list", 0),
    "<builtin>.set": ("set", 0),
    "<builtin>.dict": ("dict", 0),
    "collections.deque": ("list", 0),
    "collections.OrderedDict": ("dict", 0),
    "collections.defaultdict": ("dict", 1),
}


# -- what callables outside the tree make of the values they are given ------------------------

# Each row: the callable (the dotted name the index resolves it to; `.name` for a method of a
# receiver the tree does not define), which argument (its position; `*` any positional one, at
# its own position; `receiver` the object the method is called on), where the value is in that
# argument, and where it is in the result. A place is a path of subscripts, outermost first:
# `[]` an element at an index or key not known, `[1]` index 1, `[*]` the argument's position,
# `[i]` the index the element had in the argument (the same one in both places: zip's i-th
# tuple holds each argument's i-th element); `[.a]` an attribute and `[a]` the key of the same
# name (`vars(o)`); empty: the value itself. Rows are data: a library
# is added by adding rows.
FLOW_ROWS: tuple[tuple[str, str, str, str], ...] = (
    # callable               argument    from    into
    ("<builtin>.list", "0", "", ""),  # a copy: each element where it was
    ("<builtin>.tuple", "0", "", ""),
    ("<builtin>.set", "0", "[]", "[]"),
    ("<builtin>.frozenset", "0", "[]", "[]"),
    ("<builtin>.sorted", "0", "[]", "[]"),
    ("<builtin>.reversed", "0", "[]", "[]"),
    ("<builtin>.iter", "0", "[]", "[]"),
    ("<builtin>.next", "0", "[]", ""),
    ("<builtin>.enumerate", "0", "[i]", "[i][1]"),
    ("<builtin>.zip", "*", "[i]", "[i][*]"),
    ("<builtin>.filter", "1", "[]", "[]"),
    (".copy", "receiver", "", ""),  # a shallow copy: each value where it was
    (".values", "receiver", "[]", "[]"),
    (".items", "receiver", "[]", "[][1]"),
    (".popitem", "receiver", "[]", "[1]"),  # (key, value): the value at 1
    ("<builtin>.vars", "0", "[.a]", "[a]"),  # each attribute, at the key of its name
)


@dataclass(frozen=True, slots=True)
class Flow:
    """A row of FLOW_ROWS read: the part FROM of the argument ARGUMENT (None: any positional
    one; -1: the receiver) is the part INTO of the result. A part is its keys, outermost
    first: None for one not known, an index, or ANY_POSITION for the argument's position."""

    argument: int | None
    take: tuple[int | None, ...]
    put: tuple[int | None, ...]


ANY_POSITION = -1  # in a Flow's INTO: the position of the argument the value came in by
SAME_INDEX = -2  # in both places: the index the element had in the argument
ANY_ATTRIBUTE = -3  # in FROM: an attribute, whatever its name
SAME_NAME = -4  # in INTO: the key named as that attribute


def parse_place(text: str) -> tuple[int | None, ...]:
    """`[][1]` -> (None, 1); `[*]` -> (ANY_POSITION,); `[i]` -> (SAME_INDEX,); `[.a]` ->
    (ANY_ATTRIBUTE,); `[a]` -> (SAME_NAME,); "" -> ()."""
    named = {"": None, "*": ANY_POSITION, "i": SAME_INDEX, ".a": ANY_ATTRIBUTE, "a": SAME_NAME}
    found: list[int | None] = []
    for part in text.split("]")[:-1]:
        key = part.lstrip("[")
        found.append(named[key] if key in named else int(key))
    return tuple(found)


def read_flows(rows: tuple[tuple[str, str, str, str], ...]) -> dict[str, tuple[Flow, ...]]:
    """FLOW_ROWS by callable."""
    flows: dict[str, list[Flow]] = {}
    for name, argument, taken, put in rows:
        position = None if argument == "*" else -1 if argument == "receiver" else int(argument)
        flows.setdefault(name, []).append(Flow(position, parse_place(taken), parse_place(put)))
    return {name: tuple(found) for name, found in flows.items()}


FLOWS = read_flows(FLOW_ROWS)
