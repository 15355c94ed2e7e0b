"""What containers hold, for the call graph's value follower (tracer/index/calls/
objects.py): the display (`{"a": f}`, `[f, g]`, `(f, g)`) made where it is written, with the
stores into it (`d["k"] = v`, `d.update({...})`, `xs.append(v)`) anywhere in its file. A read
`d["k"]` takes the entries at k (of the same type: `1` is not `"1"`); a key that is not
constant takes every entry; `xs[1:3]` is a container of the elements it slices; `a, (b, *c) =
v` takes the elements of v by position.

Order matters where it is certain: a store at a constant key, in the reader's scope at its top
level (no branch or loop around it), made after the display and before the read, hides what
the key held before it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tracer.extract.facts import Assign, Call, Shape, Value
from tracer.index.calls.answers import Answers
from tracer.index.calls.obj import NONE, UNKNOWN, Follower, Obj, Objs, Where
from tracer.index.library import STORING_METHODS
from tracer.store.facts import Facts


class Contents:
    """The entries of containers, and the stores into them, asked on demand and remembered
    in the follower's ANSWERS."""

    def __init__(self, follower: Follower, facts: Facts, answers: Answers) -> None:
        self.follower = follower
        self.facts = facts
        self.answers = answers
        self.storing: dict[str, list[Call]] = {}  # file -> its calls that may store

    def items(self, containers: Objs, keys: Objs, where: Where) -> Objs:
        """What `c[k]` holds when c may be each of CONTAINERS and k each of KEYS (any key
        when one is not constant)."""
        found: set[Obj] = set()
        consts = {k.key for k in keys if k.kind == "const"}
        any_key = not keys or any(k.kind != "const" for k in keys)
        for box in containers:
            if box.kind == "box":
                for key in (None,) if any_key else sorted(consts, key=repr):
                    found |= self.content(box, key, any_key, where)
        return frozenset(found)

    def content(self, box: Obj, key: object, any_key: bool, where: Where) -> Objs:
        """The entries of BOX at KEY (every entry when ANY_KEY), with the stores into it,
        as seen from WHERE (path, scope, line)."""
        return self.answers.ask(
            ("content", box, key, any_key, where),
            lambda: self.find_content(box, key, any_key, where),
        )

    def find_content(self, box: Obj, key: object, any_key: bool, where: Where) -> Iterable[Obj]:
        path = box.name
        stores = self.stores(box)
        # A store at this key in the reader's scope, at its top level, before the read and
        # after the display, hides what was there before it.
        read_path, read_scope, read_line = where
        hidden_before = 0
        if not any_key and read_path == path and self.follower.straight(path, read_line):
            for store in stores:
                if (
                    store.key == key
                    and store.scope == read_scope
                    and box.line <= store.line < read_line
                    and self.follower.straight(path, store.line)
                ):
                    hidden_before = max(hidden_before, store.line)
        if not hidden_before:
            yield from self.displayed(box, key, any_key)
        for store in stores:
            if store.line < hidden_before and store.scope == read_scope:
                continue
            if any_key or store.key is ANY or store.key == key:
                yield from store.value

    def displayed(self, box: Obj, key: object, any_key: bool) -> Iterable[Obj]:
        """The entries of BOX's display at KEY."""
        path, scope, line = box.name, box.scope, box.line
        form, entries = box.shape
        if form == "dict":
            for entry_key, entry in entries:
                if entry_key is None and entry is not None and entry[0] == "star":  # `**other`
                    inner = self.element(path, scope, entry[1], line)
                    keys = {UNKNOWN} if any_key else {Obj("const", key=key)}
                    yield from self.items(inner, frozenset(keys), (path, scope, line))
                elif any_key or entry_key is None or entry_key[0] != "const" or entry_key[1] == key:
                    yield from self.element(path, scope, entry, line)  # (or at a key not known)
            return
        shifted = False
        for i, entry in enumerate(entries):
            if entry is not None and entry[0] == "star":
                shifted = True
                inner = self.element(path, scope, entry[1], line)
                yield from self.items(inner, frozenset({UNKNOWN}), (path, scope, line))
            elif any_key or shifted or (isinstance(key, int) and key in (i, i - len(entries))):
                yield from self.element(path, scope, entry, line)

    def element(self, path: str, scope: str, entry: Shape | None, line: int) -> Objs:
        """What one entry of a display holds."""
        if entry is not None and entry[0] == "held":  # an element taken from another display
            held = entry[1]
            return self.element(held.name, held.scope, entry[2], held.line)
        if entry is not None and entry[0] == "arg":  # an argument of a call, packed by `*args`
            arg = self.facts.flows(path).calls[entry[1]].args[entry[2]]
            return self.follower.value(path, scope, arg.value, line)
        if entry is not None and entry[0] == "yielded":
            ret = self.facts.flows(path).returns[entry[1]]
            return self.follower.value(path, scope, ret.value, ret.line)
        return self.follower.shape(path, scope, entry, line)

    def sliced(self, containers: Objs, key: Shape) -> Iterable[Obj]:
        """`xs[lo:hi]`: a list of the elements sliced."""
        for box in containers:
            if box.kind == "box" and box.shape[0] in ("list", "tuple"):
                elements = box.shape[1]
                if any(e is not None and e[0] == "star" for e in elements):
                    yield UNKNOWN
                    continue
                part = tuple(held(box, e) for e in elements[key[1] : key[2]])
                yield Obj("box", box.name, box.scope, ("list", part), box.line)

    def stores(self, box: Obj) -> frozenset[Store]:
        """The stores into BOX in its file: `c[k] = v`, `c.update({...})`, `c.append(v)`,
        where c may be BOX."""
        return self.answers.ask(("stores", box), lambda: self.find_stores(box), bounded=False)

    def find_stores(self, box: Obj) -> Iterable[Store]:
        path = box.name
        flows = self.facts.flows(path)
        for index, pattern in flows.patterns.items():
            assign = flows.assigns[index]
            for item, value in stored_items(pattern, assign.value):
                if box not in self.follower.shape(path, assign.scope, item[1], assign.line):
                    continue
                held = self.value_of_part(path, assign, value)
                keys = self.follower.shape(path, assign.scope, item[2], assign.line)
                for key in keys or (UNKNOWN,):  # a key that holds nothing known: any key
                    constant = key.key if key.kind == "const" else ANY
                    yield Store(constant, held, assign.scope, assign.line)
        for call in self.storing_calls(path):
            head, _, method = call.callee.rpartition(".")
            if box in self.follower.name(path, call.scope, head, call.line):
                yield from self.method_stores(path, call, method)

    def storing_calls(self, path: str) -> list[Call]:
        """The calls of PATH that may store into a dict or list (`c.update(...)`), in order."""
        found = self.storing.get(path)
        if found is None:
            callees = self.facts.rows(path).callees
            calls = self.facts.flows(path).calls
            ids = sorted(i for method in STORING_METHODS for i in callees.get(method, ()))
            found = [calls[i] for i in ids if "." in calls[i].callee and calls[i].args]
            self.storing[path] = found
        return found

    def method_stores(self, path: str, call: Call, method: str) -> Iterable[Store]:
        """What `c.update({...})`, `c.append(v)`, `c.extend(vs)`... (CALL) store into c."""
        where = (path, call.scope, call.line)
        arg = call.args[-1 if method in ("insert", "setdefault") else 0]
        value = self.follower.value(path, call.scope, arg.value, call.line)
        if method == "update":
            for inner in value:
                if inner.kind == "box" and inner.shape[0] == "dict":
                    for entry_key, entry in inner.shape[1]:
                        held = self.element(inner.name, inner.scope, entry, inner.line)
                        constant = entry_key[1] if entry_key and entry_key[0] == "const" else ANY
                        yield Store(constant, held, call.scope, call.line)
        elif method == "extend":
            yield Store(ANY, self.items(value, frozenset({UNKNOWN}), where), *where[1:])
        else:
            yield Store(ANY, value, *where[1:])

    def value_of_part(self, path: str, assign: Assign, value: Shape | Value | None) -> Objs:
        if isinstance(value, Value):
            return self.follower.value(path, assign.scope, value, assign.line)
        return self.follower.shape(path, assign.scope, value, assign.line)

    def unpacked_flat(self, path: str, assign: Assign, name: str) -> Objs:
        """NAME of `a, b = value` where the value is no tuple written out."""
        positions = [t.index for t in assign.targets if t.path == name]
        if len(positions) != 1 or positions[0] is None:
            return NONE
        value = self.follower.value(path, assign.scope, assign.value, assign.line)
        keys = frozenset({Obj("const", key=positions[0])})
        return self.items(value, keys, (path, assign.scope, assign.line))

    def unpack(self, value: Objs, pattern: Shape, want: Shape, where: Where) -> set[Obj]:
        """What the part WANT of PATTERN takes when VALUE is stored into PATTERN."""
        if pattern == want:
            return set(value)
        if pattern is None or pattern[0] != "tuple":
            return set()
        parts = pattern[1]
        star = next((i for i, p in enumerate(parts) if p is not None and p[0] == "star"), None)
        found: set[Obj] = set()
        for i, part in enumerate(parts):
            if not contains(part, want):
                continue
            if i == star:
                after = len(parts) - i - 1
                elements = self.positions(value, i, -after if after else None, where)
                found.add(Obj("box", where[0], where[1], ("list", tuple(elements)), where[2]))
                continue
            key = i if star is None or i < star else i - len(parts)
            item = self.items(value, frozenset({Obj("const", key=key)}), where)
            found |= self.unpack(item, part, want, where)
        return found

    def positions(self, value: Objs, start: int, end: int | None, where: Where) -> list[Shape]:
        """The elements START:END of the tuples and lists VALUE may be, as a display."""
        found: list[Shape] = []
        for obj in value:
            if obj.kind == "box" and obj.shape[0] in ("list", "tuple"):
                elements = obj.shape[1]
                if any(e is not None and e[0] == "star" for e in elements):
                    continue
                found += [held(obj, e) for e in elements[start:end]]
        return found


ANY = object()  # a store at a key that is not constant


@dataclass(frozen=True, slots=True)
class Store:
    """VALUE stored at KEY (ANY when not constant) by the statement at LINE of SCOPE."""

    key: object
    value: Objs
    scope: str
    line: int


def held(box: Obj, entry: Shape | None) -> Shape:
    """ENTRY of the display BOX, taken into another display: held by the display it was
    written in (a slice of a slice names no deeper box, so a list sliced round a loop or a
    cycle of questions is one value, not ever deeper ones)."""
    if entry is not None and entry[0] == "held":
        return entry
    return ("held", box, entry)


def contains(pattern: Shape | None, want: Shape) -> bool:
    if pattern == want:
        return True
    if pattern is None:
        return False
    if pattern[0] == "tuple":
        return any(contains(p, want) for p in pattern[1])
    if pattern[0] == "star":
        return contains(pattern[1], want)
    return False


def stored_items(pattern: Shape, value: Value) -> Iterable[tuple[Shape, Shape | Value | None]]:
    """(`c[k]` pattern, what it is given) for each item store in PATTERN given VALUE."""
    if pattern[0] == "item":
        yield pattern, value
    elif pattern[0] == "tuple" and value.shape is not None and value.shape[0] == "tuple":
        parts, given = pattern[1], value.shape[1]
        if len(parts) == len(given):
            for part, element in zip(parts, given, strict=True):
                if part is not None and part[0] == "item":
                    yield part, element
