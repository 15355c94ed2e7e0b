"""Values kept inside containers, by constant key or index: where an edge puts the value it
moves into a dict, list or tuple (`{"k": v}`, `dict(k=v)`, `d["k"] = v`, `(v, w)`, `return
a, b` taken whole, `f(k=v)` into `**kwargs`), and where it takes one out (`d["k"]`,
`d.get("k")`, `a, b = pair`, `for x in xs`, `f(**d)` into the parameter `k`).

The spine's search carries, beside the calls a value is inside of, the keys it is kept at in
the value of the step it has reached (its access path, innermost first, at most DEPTH of them:
a longer one forgets its innermost keys, and a container it may then be in is followed whole).
A take must match the key on top (see `step`); an edge that computes a new value from the
container (a formula, a call outside the tree) leaves the keys behind. Edges this module says
nothing of move the container whole, keys and all."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from tracer.graph.steps import CARRYING, Edge
from tracer.index.library import (
    ANY_ATTRIBUTE,
    ANY_POSITION,
    ELEMENT_TAKERS,
    FLOWS,
    KEY_GETTERS,
    SAME_INDEX,
    SAME_NAME,
    STORING_METHODS,
    storing_receiver,
)
from tracer.store import step_ids
from tracer.store.rows import (
    ARG_VALUE,
    CALL_ARGS,
    CALLEE,
    VALUE_CALLS,
    VALUE_LITERAL,
    VALUE_REFS,
    VALUE_SHAPE,
    row_at,
)

if TYPE_CHECKING:
    from tracer.graph.file_steps import FileTables
    from tracer.graph.steps import Step


class FlowGraph(Protocol):
    """What this module asks of the flow graph (`tracer.graph.flow.FlowGraph`)."""

    def file(self, path: str) -> FileTables: ...

    def step(self, step_id: str) -> Step: ...


Key = str | int | None  # a dict's constant key, a sequence's index; None: a key not known
ATTRIBUTE = "."  # an object's attribute `f` is kept at the key ".f" (no dict's key is read so)
Keys = tuple[Key, ...]  # an access path: the keys a value is kept at, outermost last
# (PUT, k): put in at k; (TAKE, k): take out from k; (NEW, None); (EXCEPT, (k, ...)): the
# container passes but for what it keeps at those keys (`case {"a": x, **rest}`)
Op = tuple[int, Key | tuple[Key, ...]]
PUT, TAKE, NEW, EXCEPT, SAME = 1, 0, 2, 3, 4  # SAME: what arrives, as it was (a copy)
# (REGROUP, k): the element at index i comes out at [i][k] (zip's i-th tuple, at k, holds
# each argument's i-th element)
REGROUP = 5
# (AS_KEYS, None): an attribute comes out at the key of its name (`vars(o)`)
AS_KEYS = 6
MAKES_NEW: tuple[Op, ...] = ((NEW, None),)  # a value computed from the one that arrives
SAME_VALUE: tuple[Op, ...] = ((SAME, None),)  # through a call that hands it on as it was
DEPTH = 3
KEEP: tuple[Op, ...] = ()  # the container moves whole
# Edges along which a value that is kept in a container stays in it (moved or bound whole);
# along any other edge, what arrives is a new value made from it.
WHOLE = CARRYING | {
    "local_via_call",
    "attr_via_call",
    "store",
    "read",
    "read_by_name",
    "filled_by_name",
    "receiver",
}
# Edges into a step that reads the value as an attribute of an object (`x.attr`).
ATTRIBUTE_READS = frozenset({"attr", "attr_via_call", "read"})
# Steps that compute a new value from what they read.
COMPUTING = frozenset({"formula"})


def step(keys: Keys, ops: tuple[Op, ...], forward: bool) -> tuple[bool, Keys]:
    """Along an edge with OPS, from a step reached with KEYS: may the value go, and with
    which keys does it arrive? Going forward a put pushes its key and a take pops a matching
    one; going backward (KEYS: where the value sought is inside the later step's value) a
    take pushes and a put pops. A take (forward) or put (backward) with no keys left is the
    container itself being read or made: allowed, and the keys stay none. A value made
    anew from the one that arrives is kept at no key; going backward, a value sought inside
    one made anew (by a call outside the tree) is not followed into what it was made of, nor,
    forward, a value inside an object into what is computed from the object.
    An except lets the value by, either way, unless it is kept at one of the keys named."""
    for code, key in ops if forward else reversed(ops):
        if code == SAME:
            continue
        if code == AS_KEYS:
            found = as_keys(keys, forward)
            if found is None:
                return False, ()
            keys = found
            continue
        if code == REGROUP:
            found = regroup(keys, key, forward)  # type: ignore[arg-type]
            if found is None:
                return False, ()
            keys = found
            continue
        if code == NEW:
            if keys and not forward:
                return False, ()  # kept in a value made anew: where it was put is not seen
            if in_object(keys):
                return False, ()  # what is computed from an object is not what it holds
            keys = ()
        elif code == EXCEPT:
            if keys and keys[-1] in key:
                return False, ()
        elif (code == PUT) == forward:
            keys = (*keys, key)[-DEPTH:]
        elif keys:
            if not matches(keys[-1], key):
                return False, ()
            keys = keys[:-1]
    return True, keys


def as_keys(keys: Keys, forward: bool) -> Keys | None:
    """Along an (AS_KEYS, None) op: forward, a value at the attribute `.f` of the argument
    comes out at the key "f" (a key not known stays so; the object itself is the argument
    whole); backward, one sought at "f" is at `.f`. None where no attribute is (`vars` of a
    dict's key or an index)."""
    if not keys or keys[-1] is None:
        return keys
    top = keys[-1]
    if not isinstance(top, str):
        return None
    if forward:
        return (*keys[:-1], top[len(ATTRIBUTE) :]) if top.startswith(ATTRIBUTE) else None
    return None if top.startswith(ATTRIBUTE) else (*keys[:-1], ATTRIBUTE + top)


def in_object(keys: Keys) -> bool:
    """Is a value kept at KEYS inside an object (at an attribute, perhaps of an object in a
    list or a dict), not only in dicts and lists?"""
    return any(isinstance(key, str) and key.startswith(ATTRIBUTE) for key in keys)


def regroup(keys: Keys, inner: Key, forward: bool) -> Keys | None:
    """Along a (REGROUP, INNER) op: forward, a value at index i of the argument comes out at
    [i][INNER] (with no keys, one of the argument's elements: at [index not known][INNER]);
    backward, a value sought at [i][k] of the result is at [i] of the argument when k
    matches INNER (None: it is not there), and one sought in [i] whole may be at [i]."""
    if forward:
        return (*keys[:-1], inner, keys[-1] if keys else None)[-DEPTH:]
    if len(keys) >= 2:
        return (*keys[:-2], keys[-1]) if matches(keys[-2], inner) else None
    return keys


def sure_by_key(keys: Keys, ops: tuple[Op, ...]) -> bool:
    """Going forward with KEYS, does an edge with OPS take out exactly the key the value is
    kept at (`f(**d)` into the parameter k, where d is known to keep the value at k)? Then it
    is as sure as that key, however unsure the edge is for other values."""
    return (
        len(ops) == 1 and ops[0][0] == TAKE and ops[0][1] is not None and keys[-1:] == (ops[0][1],)
    )


def matches(kept: Key, asked: Key) -> bool:
    return kept is None or asked is None or kept == asked


def compatible(ahead: Keys, behind: Keys) -> bool:
    """May a value reached forward with keys AHEAD be the one a step reached backward with
    keys BEHIND needs? Yes when the keys both know of, from the outermost in, are the same."""
    return all(matches(a, b) for a, b in zip(reversed(ahead), reversed(behind), strict=False))


class Contents:
    """What each edge does with containers, remembered per edge (`ops`)."""

    def __init__(self, graph: FlowGraph) -> None:
        self.graph = graph
        self.known: dict[tuple[str, str, str, str], tuple[Op, ...]] = {}
        self.several: dict[tuple[str, str, str, str], tuple[tuple[Op, ...], ...]] = {}

    def ops(self, edge: Edge) -> tuple[Op, ...]:
        """The puts, takes and new values along EDGE, in order."""
        key = (edge.src, edge.dst, edge.kind, edge.label)
        found = self.known.get(key)
        if found is None:
            found = self.known[key] = self.find(edge)
        return found

    def alternatives(self, edge: Edge) -> tuple[tuple[Op, ...], ...]:
        """The ways along EDGE: one (`ops`), but where the step reads the name at several
        places of a display (`[v, w, v]`, `{"a": v, "b": v}`), one way to each place."""
        key = (edge.src, edge.dst, edge.kind, edge.label)
        found = self.several.get(key)
        if found is None:
            found = self.several[key] = self.find_several(edge) or (self.ops(edge),)
        return found

    def find_several(self, edge: Edge) -> tuple[tuple[Op, ...], ...] | None:
        if edge.kind not in ("local", "local_via_call"):
            return None
        graph = self.graph
        src_tables = graph.file(step_ids.file_of(edge.src))
        dst_tables = graph.file(step_ids.file_of(edge.dst))
        name = src_tables.bound.get(edge.src) or store_target(src_tables, edge.src)
        name = name or src_tables.steps[edge.src].name
        found = value_row(dst_tables, edge.dst)
        if found is None:
            return None
        value, _, pattern, _ = found
        if value[VALUE_SHAPE] is not None:
            paths = paths_in(value[VALUE_SHAPE], name)
        elif not value[VALUE_REFS] and len(value[VALUE_CALLS]) == 1:
            call = row_at(dst_tables.flows.calls, value[VALUE_CALLS][0])
            if call[CALLEE] != "dict":
                return None
            paths = [((PUT, key),) for key in dict_places(call[CALL_ARGS], name)]
        else:
            return None
        if len(paths) < 2:
            return None
        if pattern is not None and pattern[0] == "item" and not refers_shape(pattern[1], name):
            paths = [(*ops, (PUT, constant(pattern[2]))) for ops in paths]
        if dst_tables.steps[edge.dst].kind in COMPUTING:
            paths = [(*ops, *MAKES_NEW) for ops in paths]
        return tuple(dict.fromkeys(paths))

    def find(self, edge: Edge) -> tuple[Op, ...]:
        if edge.kind == "parsed" and edge.label:
            return ((PUT, ATTRIBUTE + edge.label),)  # the flag's value, at its dest
        if edge.kind not in WHOLE:
            return MAKES_NEW
        graph = self.graph
        dst_tables = graph.file(step_ids.file_of(edge.dst))
        ops: tuple[Op, ...] = KEEP
        if edge.kind in ("local", "local_via_call"):
            src_tables = graph.file(step_ids.file_of(edge.src))
            source = src_tables.steps[edge.src]
            name = src_tables.bound.get(edge.src) or store_target(src_tables, edge.src)
            name = name or source.name
            found = read_ops(dst_tables, edge.dst, name)
            opaque = edge.kind == "local_via_call" or name in dst_tables.opaque.get(edge.dst, ())
            if opaque and not found:
                return MAKES_NEW  # passed to a call outside the tree: its result is new
            ops = found or KEEP
        elif edge.kind == "store" and edge.label:
            # Put in the object at the attribute (`x.a.f = v`: at .f of .a).
            return tuple((PUT, ATTRIBUTE + key) for key in reversed(edge.label.split(".")))
        elif edge.kind == "read" and edge.label:
            # Taken out of the object at the attribute, then read as the step reads it.
            takes = tuple((TAKE, ATTRIBUTE + key) for key in edge.label.split("."))
            found = read_ops(dst_tables, edge.dst, "." + edge.label.rpartition(".")[2])
            if found is None:
                return (*takes, *MAKES_NEW)
            ops = (*takes, *found)
        elif edge.kind in ATTRIBUTE_READS:
            # Read as an attribute of any object that holds it (a read edge names it).
            attr = "." + (edge.label or graph.step(edge.src).name)
            found = read_ops(dst_tables, edge.dst, attr)
            if edge.kind == "attr_via_call" and not found:
                return MAKES_NEW
            ops = found or KEEP
        elif edge.kind in ("arg_to_param", "arg_to_field"):
            ops = binding_ops(graph, edge)
        elif edge.kind == "return_to_result":
            src_tables = graph.file(step_ids.file_of(edge.src))
            given = src_tables.position.get(edge.src)
            taken = dst_tables.position.get(edge.dst)
            if given is not None and taken is None:
                ops = ((PUT, given),)  # `return a, b` taken whole
            elif given is None and taken is not None:
                ops = ((TAKE, taken),)  # `a, b = f()` of a returned pair
        if dst_tables.steps[edge.dst].kind in COMPUTING:
            return (*ops, *MAKES_NEW)
        return ops


def value_row(tables: FileTables, step_id: str) -> tuple[Any, int | None, Any, str] | None:
    """The value a step reads (a Value's row), the position of its target in a tuple pattern
    taken whole, the target's pattern (`d["k"]`, nested or starred tuples) and the
    assignment's operator; None for a step made from no row of its own."""
    where = step_ids.address(step_id)
    flows = tables.flows
    if where.kind == "a":
        scope, targets, value, items, op, *_ = row_at(flows.assigns, where.number)
        position = tables.position.get(step_id)
        if position is not None and len(items) == len({t[1] for t in targets}):
            return items[position], None, None, op  # `a, b = x, y`: each its own
        return value, position, flows.patterns.get(where.number), op
    if where.kind == "f" and (number := tables.field_value.get(step_id)) is not None:
        _, targets, value, items, op, *_ = row_at(flows.assigns, number)
        name = tables.steps[step_id].name
        position = next((t[1] for t in targets if t[0] == name), None)
        if position is not None and len(items) == len({t[1] for t in targets}):
            return items[position], None, None, op  # `a, b = x, y` in a class body
        return value, position, flows.patterns.get(number), op
    if where.kind == "r":
        _, value, items, *_ = row_at(flows.returns, where.number)
        position = tables.position.get(step_id)
        return (items[position] if position is not None else value), None, None, "return"
    if where.kind == "u":
        return row_at(flows.uses, where.number)[1], None, None, "use"
    if where.kind == "c" and (position := step_ids.argument_position(step_id)) is not None:
        args = row_at(flows.calls, where.number)[CALL_ARGS]
        return args[position][ARG_VALUE], None, None, "arg"
    return None


def store_target(tables: FileTables, step_id: str) -> str | None:
    """The local a call whose result is thrown away stores into (`conf.update(k=v)`,
    `items.append(v)`): the container keeps what it is given, like `d["k"] = v`; else None."""
    if not step_ids.is_discarded_call(step_id):
        return None
    return storing_receiver(row_at(tables.flows.calls, step_ids.call_of(step_id))[CALLEE])


def store_ops(tables: FileTables, step_id: str, name: str) -> tuple[Op, ...]:
    """Where the store call STEP_ID puts the local NAME: `update(k=NAME)` and
    `update({"k": NAME})` at k, `setdefault("k", NAME)` at k, `append(NAME)` at an index
    not known; the container itself (its receiver) is kept whole."""
    call = row_at(tables.flows.calls, step_ids.address(step_id).number)
    method = call[CALLEE].rpartition(".")[2]
    for keyword, _, star, value, *_ in call[CALL_ARGS]:
        if star == 2 or not (holds_only(value, name) or paths_in(value[VALUE_SHAPE], name)):
            continue
        if method == "update" and keyword:
            return ((PUT, keyword),)
        if method == "update":
            inside = paths_in(value[VALUE_SHAPE], name)
            return inside[0] if len(inside) == 1 else KEEP
        if method == "setdefault":
            first = call[CALL_ARGS][0][ARG_VALUE]
            return ((PUT, first[VALUE_LITERAL] if isinstance(first[VALUE_LITERAL], str) else None),)
        if method == "extend":
            return KEEP
        return ((PUT, None),)
    return KEEP


def read_ops(tables: FileTables, step_id: str, name: str) -> tuple[Op, ...] | None:
    """What the step STEP_ID does with the container the local NAME holds when it reads it:
    puts it in at a key, takes a key out, or nothing (KEEP); None when it reads NAME only
    as the input of a call outside the tree that is no dict's getter or `dict(...)`. An item
    store (`d["k"] = conf.get("j")`) puts what its value gives at its key, last."""
    found = value_row(tables, step_id)
    if found is None:
        if store_target(tables, step_id) not in (None, name):
            return store_ops(tables, step_id, name)
        return KEEP
    value, position, pattern, op = found
    ops = value_ops(tables, value, position, pattern, op, name)
    if ops is None:
        return None
    if op == "for" and iterates_call(tables, value, name):
        # `for i, x in enumerate(xs)`: each element of what the call makes, then the
        # target's place in it.
        ops = (*ops, (TAKE, None))
        if pattern is not None and pattern[0] in UNPACKING:
            ops = (*ops, *unpacking_takes(pattern, tables.steps[step_id].name, position))
        elif position is not None:
            ops = (*ops, (TAKE, position))
    if pattern is not None and pattern[0] in UNPACKING and unpacks(value, name):
        # `a, (b, c) = t`: the target's place in the pattern, from the outermost in.
        ops = (*ops, *unpacking_takes(pattern, tables.steps[step_id].name, position))
    if pattern is not None and pattern[0] == "item" and not refers_shape(pattern[1], name):
        ops = (*ops, (PUT, constant(pattern[2])))  # `d["k"] = v`
    return ops or KEEP


UNPACKING = frozenset({"tuple", "list"})


def iterates_call(tables: FileTables, value: Any, name: str) -> bool:
    """Is VALUE (a `for` statement's iterable) one call outside the tree the library table
    knows, given the local NAME (`enumerate(name)`, `name.items()`, `zip(name, other)`)?"""
    refs, calls = value[VALUE_REFS], value[VALUE_CALLS]
    return not refs and len(calls) == 1 and bool(library_ops(tables, calls[0], name))


def unpacks(value: Any, name: str) -> bool:
    """Is VALUE (a Value's row) the name NAME alone, unpacked by a target pattern?"""
    refs = value[VALUE_REFS]
    return len(refs) == 1 and refers(refs[0], name) and not value[VALUE_CALLS]


def unpacking_takes(pattern: Any, target: str, position: int | None) -> tuple[Op, ...]:
    """The takes by which the target name TARGET of an unpacking PATTERN gets its part of the
    value (`a, (b, c) = t`: b is t[1][0]; after a `*rest`, at an index not known; `*rest`
    itself holds the elements it gathers at indexes not known); the take of its top-level
    POSITION when the pattern does not name it once."""
    paths = paths_in(pattern, target)
    if len(paths) != 1:
        return ((TAKE, position),) if position is not None else ()
    takes = tuple((TAKE, key) for code, key in reversed(paths[0]) if code == PUT)
    if starred(pattern, target):  # a list of the elements gathered, each at an index not known
        return (*takes, (PUT, None))
    return takes


def starred(pattern: Any, target: str) -> bool:
    """Is TARGET the name of a `*name` element somewhere in PATTERN?"""
    if not isinstance(pattern, tuple) or not pattern:
        return False
    if pattern[0] == "star":
        return pattern[1] == ("name", target) or starred(pattern[1], target)
    if pattern[0] in UNPACKING:
        return any(starred(element, target) for element in pattern[1])
    return False


def value_ops(
    tables: FileTables, value: Any, position: int | None, pattern: Any, op: str, name: str
) -> tuple[Op, ...] | None:
    """The puts and takes by which the value of a step (a Value's row, taken whole or at
    POSITION of a tuple) is made from the local NAME; None as in `read_ops`."""
    shape = value[VALUE_SHAPE]
    if shape is not None:
        inside = paths_in(shape, name)
        return inside[0] if len(inside) == 1 else KEEP
    refs, calls = value[VALUE_REFS], value[VALUE_CALLS]
    if not refs and len(calls) == 1:
        return call_ops(tables, calls[0], name)
    if refs == (f"{name}.__dict__",) and not calls:
        return ((AS_KEYS, None),)  # what `vars(name)` gives
    alone = len(refs) == 1 and refers(refs[0], name) and not calls
    ops: list[Op] = []
    if op == "for" and alone:
        ops.append((TAKE, None))  # each element in turn
    if position is not None and pattern is None and alone:
        ops.append((TAKE, position))  # `a, b = pair`
    return tuple(ops)


def call_ops(tables: FileTables, call_id: int, name: str) -> tuple[Op, ...] | None:
    """`dict(k=NAME)`: put at k; `NAME.get("k")`: take k; a callable outside the tree the
    library table knows (`zip(NAME, other)`, `list(reversed(NAME))`, `NAME.items()`,
    `NAME.copy()`): what it makes of the value; another method outside the tree called on
    NAME: a new value made from it; another call outside the tree (the edge is an opaque
    one): None; a call in the tree: KEEP (its binding says)."""
    found = library_ops(tables, call_id, name)
    if found:
        return found
    call = row_at(tables.flows.calls, call_id)
    callee, args = call[CALLEE], call[CALL_ARGS]
    if callee == "dict":
        places = dict_places(args, name)
        if not places:
            return None
        # (Where it is at several keys, each is a way of its own: `Contents.alternatives`.)
        return ((PUT, places[0] if len(places) == 1 else None),)
    base, _, method = callee.rpartition(".")
    if refers(base, name) and method in ELEMENT_TAKERS and not args:
        return ((TAKE, None),)  # `items.pop()`: an element, at a key not known
    if refers(base, name) and method in KEY_GETTERS and args and args[0][0] is None:
        given = args[0][ARG_VALUE]
        literal = given[VALUE_LITERAL]
        return ((TAKE, literal if literal is not None else constant(given[VALUE_SHAPE])),)
    if refers(base, name) and method not in STORING_METHODS and not tables.targets[call_id]:
        return MAKES_NEW  # `parser.parse_args()`: what a method outside the tree makes of it
    return KEEP


def dict_places(args: Any, name: str) -> list[Key]:
    """The keys at which `dict(...)` given ARGS (a call's rows) keeps the local NAME: each
    keyword NAME is given by (`dict(k=NAME)`), and the key of each pair of a display whose
    value it is (`dict([("k", NAME)])`); a key not known is None."""
    places: dict[Key, None] = {}
    for keyword, _, star, value, *_ in args:
        if star:
            continue
        if keyword is None:
            places.update(dict.fromkeys(pair_keys(value[VALUE_SHAPE], name)))
        elif holds_only(value, name):
            places[keyword] = None
    return list(places)


def pair_keys(shape: Any, name: str) -> list[Key]:
    """The keys of the pairs of a list or tuple display (`[("k", NAME), ("j", other)]`, as
    `dict(...)` is given them) whose value is NAME: each the constant the key is, or None
    (a key not known)."""
    if not isinstance(shape, tuple) or shape[:1] not in (("list",), ("tuple",)):
        return []
    found = []
    for element in shape[1]:
        if isinstance(element, tuple) and element[:1] in (("tuple",), ("list",)):
            parts = element[1]
            if len(parts) == 2 and refers_shape(parts[1], name):
                found.append(constant(parts[0]))
    return found


def library_ops(tables: FileTables, call_id: int, name: str) -> tuple[Op, ...] | None:
    """Where the call CALL_ID, of a callable outside the tree that tracer/index/library.py's
    table knows, puts the value the local NAME holds (given to it, or to a call of such a
    callable nested in its arguments): the takes out of the argument, then the puts into the
    result; None when the table says nothing of it."""
    call = row_at(tables.flows.calls, call_id)
    callee, args = call[CALLEE], call[CALL_ARGS]
    base, _, method = callee.rpartition(".")
    if base and refers(base, name) and f".{method}" in FLOWS and not tables.targets[call_id]:
        given: list[tuple[int, tuple[Op, ...]]] = [(-1, ())]
        flows = FLOWS[f".{method}"]
    else:
        resolver = tables.resolver
        symbol = resolver.index.resolve(resolver.index.module_of[tables.path], callee)
        if symbol is None or symbol.kind != "external" or symbol.name not in FLOWS:
            return None
        flows = FLOWS[symbol.name]
        given = []
        positional = [a for a in args if a[0] is None]
        for position, arg in enumerate(positional):
            value = arg[ARG_VALUE]
            if arg[2]:  # `*xs`, `**d`: the positions after it are not known
                break
            if holds_only(value, name):
                given.append((position, ()))
            elif value[VALUE_SHAPE] is not None:  # `reversed([NAME, other])`
                inside = paths_in(value[VALUE_SHAPE], name)
                if len(inside) == 1:
                    given.append((position, inside[0]))
            elif not value[VALUE_REFS] and len(value[VALUE_CALLS]) == 1:
                inner = library_ops(tables, value[VALUE_CALLS][0], name)
                if inner:
                    given.append((position, inner))
    for position, inner in given:
        for flow in flows:
            if flow.argument is not None and flow.argument != position:
                continue
            if flow.take[:1] == (ANY_ATTRIBUTE,) and flow.put[:1] == (SAME_NAME,):
                return (*inner, (AS_KEYS, None))
            if flow.take[:1] == (SAME_INDEX,) and flow.put[:1] == (SAME_INDEX,):
                at = flow.put[1] if len(flow.put) > 1 else None
                return (*inner, (REGROUP, position if at == ANY_POSITION else at))
            takes = tuple((TAKE, key) for key in flow.take)
            puts = tuple(
                (PUT, position if key == ANY_POSITION else key) for key in reversed(flow.put)
            )
            return (*inner, *takes, *puts) or SAME_VALUE
    return None


def holds_only(value: Any, name: str) -> bool:
    """Is VALUE (a Value's row) the name NAME and nothing else?"""
    refs = value[VALUE_REFS]
    return (
        len(refs) == 1
        and refers(refs[0], name)
        and not value[VALUE_CALLS]
        and value[VALUE_SHAPE] is None
    )


def refers_shape(shape: Any, name: str) -> bool:
    return isinstance(shape, tuple) and shape[:1] == ("name",) and refers(shape[1], name)


def constant(shape: Any) -> Key:
    """The constant a key's shape is (a string or an integer), else None (not known)."""
    if isinstance(shape, tuple) and shape and shape[0] == "const":
        return shape[1] if isinstance(shape[1], str | int) else None
    return None


def paths_in(shape: Any, name: str) -> list[tuple[Op, ...]]:
    """Where NAME sits in SHAPE: for each place it is an element of a display or an item
    read out of, the puts and takes that lead there (innermost first)."""
    if not isinstance(shape, tuple) or not shape:
        return []
    kind = shape[0]
    if kind == "parts":
        return [path for item in shape[1] for path in paths_in(item, name)]
    if kind == "name":
        return [()] if refers(shape[1], name) else []
    if kind == "item":
        return [(*ops, (TAKE, constant(shape[2]))) for ops in paths_in(shape[1], name)]
    if kind == "as_keys":  # `{k: getattr(o, k) for k in names}`
        return [(*ops, (AS_KEYS, None)) for ops in paths_in(shape[1], name)]
    if kind == "except":  # the container but for its constant keys shape[2]
        return [(*ops, (EXCEPT, shape[2])) for ops in paths_in(shape[1], name)]
    found: list[tuple[Op, ...]] = []
    if kind == "dict":
        for key, element in shape[1]:
            if key is None and isinstance(element, tuple) and element[:1] == ("star",):
                found.extend(paths_in(element[1], name))  # `{**d}`: d's keys kept as they are
                continue
            # (A key no constant: `{f"{a}_x": v}`, constant() is None: at a key not known.)
            found.extend((*ops, (PUT, constant(key))) for ops in paths_in(element, name))
    elif kind == "each":  # `[(a, b) for ...]`: the element's parts, at every index
        found.extend((*ops, (PUT, None)) for ops in paths_in(shape[1], name))
    elif kind in ("tuple", "list", "set"):
        known = kind != "set"
        for i, element in enumerate(shape[1]):
            if isinstance(element, tuple) and element and element[0] == "star":
                known = False  # what follows a `*xs` sits at an index not known
                found.extend((*ops, (PUT, None)) for ops in paths_in(element[1], name))
                continue
            index: Key = i if known else None
            found.extend((*ops, (PUT, index)) for ops in paths_in(element, name))
    return found


def refers(read: str, name: str) -> bool:
    """Is READ (a dotted name) the local NAME, or an attribute `.ATTR` on any object?"""
    return read == name or (name[:1] == "." and read.endswith(name))


def binding_ops(graph: FlowGraph, edge: Edge) -> tuple[Op, ...]:
    """An argument bound to a parameter or field: `f(**d)` to the parameter or field k takes
    k out of d; a keyword argument k into `**kwargs` puts it at k; a positional one into
    `*args`, or an element of `*xs` into a parameter, at an index not known."""
    tables = graph.file(step_ids.file_of(edge.src))
    if tables.elements.get(edge.src) is not None:
        # A value a launcher passes: bound as it is, or each element of it (`map(f, xs)`).
        return ((TAKE, None),) if launches_each(tables, edge.src) else KEEP
    call_id = step_ids.call_of(edge.src)
    arg = next((a for a, s in tables.arguments(call_id) if s == edge.src), None)
    if arg is None:
        # An argument of a call found by value (tracer/graph/call_values.py): its step's id
        # names its place as a resolved call's does.
        position = step_ids.argument_position(edge.src)
        args = tables.calls[call_id].args
        if position is None or position >= len(args):
            return KEEP
        arg = args[position]
    collects = collecting(graph, edge.dst)
    if arg.star == 2:
        return KEEP if collects == 2 else ((TAKE, graph.step(edge.dst).name),)
    if arg.star == 1:
        return KEEP if collects == 1 else ((TAKE, None),)
    if collects == 2 and arg.keyword:
        return ((PUT, arg.keyword),)
    if collects == 1:
        return ((PUT, None),)
    return KEEP


def launches_each(tables: FileTables, element: str) -> bool:
    """Is ELEMENT (a value a launcher passes) an iterable whose elements the launcher passes
    one by one (`map(f, xs)`: library.py's EACH)?"""
    call_id = tables.elements[element][0]
    scope, callee = tables.rows.call_head(call_id)
    launcher = tables.resolver.launcher(tables.path, scope, callee)
    return launcher is not None and launcher.each_from is not None


def collecting(graph: FlowGraph, param: str) -> int:
    """1 when PARAM is a `*args` parameter, 2 for `**kwargs`, else 0 (a field too)."""
    where = step_ids.address(param)
    if where.kind != "p":
        return 0
    tables = graph.file(step_ids.file_of(param))
    name = graph.step(param).name
    for function in tables.summary.functions:
        if function.qualname == where.owner:
            for p in function.params:
                if p.name == name:
                    return {"varargs": 1, "kwargs": 2}.get(p.kind, 0)
    return 0
