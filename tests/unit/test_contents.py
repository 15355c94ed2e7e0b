"""Values kept in containers by constant key or index (tracer/graph/contents.py): the spine's
search and the walks around it take a value out of a dict, list or tuple only at the key or
index it was put in at, through displays, `dict(k=v)`, `d["k"] = v`, returns taken whole and
unpacked, `**kwargs` and `f(**d)`."""

from __future__ import annotations

from tests.conftest import spine_code
from tracer.graph.contents import AS_KEYS, NEW, PUT, REGROUP, TAKE, compatible, step
from tracer.trace.chains import trace

SETTINGS = {
    "app/__init__.py": "",
    "app/main.py": """
        import argparse

        from app.pool import make_pool


        def settings(args):
            return {"fraction": args.fraction, "name": args.name}


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--fraction", type=float, default=0.9)
            parser.add_argument("--name", default="x")
            args = parser.parse_args()
            conf = settings(args)
            label = conf["name"]
            print(label)
            budget = conf["fraction"] * 100
            make_pool(budget, label)
    """,
    "app/pool.py": """
        def make_pool(budget, label):
            max_total_num_tokens = int(budget)
            return max_total_num_tokens
    """,
}


def test_a_dict_gives_each_key_its_own_value(snippet_session):
    """`fraction` goes into the dict at "fraction" and out of it at "fraction" to the sink;
    the read at "name" is no step of its chain. `name` never reaches the sink: the dict it
    is kept in reaches it only through another key."""
    session = snippet_session(SETTINGS)
    chain = trace(session.graph, "fraction", sinks=["max_total_num_tokens"])
    assert spine_code(chain) == [
        'parser.add_argument("--fraction", type=float, default=0.9)',
        "args = parser.parse_args()",
        "conf = settings(args)",
        "args",
        'return {"fraction": args.fraction, "name": args.name}',
        "conf = settings(args)",
        'budget = conf["fraction"] * 100',
        "make_pool(budget, label)",
        "budget",
        "max_total_num_tokens = int(budget)",
    ]
    codes = {s.code for s in chain.steps}
    assert 'label = conf["name"]' not in codes
    other = trace(session.graph, "name", sinks=["max_total_num_tokens"])
    assert spine_code(other) == ['parser.add_argument("--name", default="x")']
    # (Six steps on: the flag, the namespace, `settings(args)`, its parameter, the dict
    # returned, the result, the read.)
    around = trace(session.graph, "name", branch_depth=6).steps
    assert 'label = conf["name"]' in {s.code for s in around}


def test_a_key_that_is_no_constant_may_be_read_at_any_key(snippet_session):
    """`{f"{kind}_limit": limit}`: the key is not known, so the value may come out at any
    key; `{**defaults}` keeps the keys defaults has."""
    session = snippet_session(
        {
            "app.py": """
                def limits(kind, limit, size):
                    defaults = {"size": size}
                    table = {f"{kind}_limit": limit, **defaults}
                    cap = table["decode_limit"] * 2
                    width = table["size"] + 1
                    other = table["name"]
                    return cap, width, other
            """
        }
    )
    ahead = trace(session.graph, "limits.limit", direction="forward", sinks=["cap"])
    assert spine_code(ahead)[-1] == 'cap = table["decode_limit"] * 2'
    sized = trace(session.graph, "limits.size", direction="forward", sinks=["width"])
    assert spine_code(sized)[-1] == 'width = table["size"] + 1'
    kept = {s.code for s in trace(session.graph, "limits.size", direction="forward").steps}
    assert 'other = table["name"]' not in kept


PACKED = {
    "pkg/__init__.py": "",
    "pkg/run.py": """
        def sizes(fraction, name):
            return fraction * 2, name


        def unpacked(fraction, name):
            both = sizes(fraction, name)
            tokens, label = both
            max_total_num_tokens = tokens
            return label


        def keyed(**options):
            max_total_num_tokens = options["fraction"]
            page_size = options.get("name")
            return page_size


        def splat(fraction, name):
            bundle = dict(fraction=fraction, name=name)
            return keyed(**bundle)


        def stored(fraction, name):
            box = {}
            box["name"] = name
            box["fraction"] = fraction
            use(box["name"])
            cap = box["fraction"]
            max_total_num_tokens = cap
            return cap


        def use(value):
            print(value)
    """,
}


def test_tuples_kwargs_and_stores_keep_their_keys(snippet_session):
    """A pair returned and unpacked gives each name its position; `**options` filled by
    keyword (and by `**bundle` of `dict(k=v)`) gives `options["k"]` only the k argument;
    `box["k"] = v` puts v at k."""
    session = snippet_session(PACKED)
    graph = session.graph
    chain = trace(graph, "name", sinks=["max_total_num_tokens"])
    # No route to the token count: without one, the spine ends where `name` is returned.
    assert spine_code(chain) == [
        "name",
        "both = sizes(fraction, name)",
        "name",
        "return fraction * 2, name",
        "both = sizes(fraction, name)",
        "tokens, label = both",
        "return label",
    ]
    codes = {s.code for s in trace(graph, "name", branch_depth=4).steps}
    assert {'page_size = options.get("name")', 'use(box["name"])'} <= codes
    assert not {s for s in codes if s.startswith(("max_total_num_tokens", "cap ="))}
    fraction = trace(graph, "fraction", sinks=["max_total_num_tokens"])
    assert spine_code(fraction)[-2:] == ["tokens, label = both", "max_total_num_tokens = tokens"]
    codes = {s.code for s in trace(graph, "fraction", branch_depth=4).steps}
    assert {'max_total_num_tokens = options["fraction"]', 'cap = box["fraction"]'} <= codes
    assert 'page_size = options.get("name")' not in codes
    assert 'use(box["name"])' not in codes


MOVED = {
    "pkg/__init__.py": "",
    "pkg/moved.py": """
        def moved(fraction, name):
            given = {"fraction": fraction, "name": name}
            kept = {}
            kept["size"] = given.get("fraction")
            kept["label"] = given["name"]
            max_total_num_tokens = kept["size"] * 2
            page_size = kept["label"]
            return max_total_num_tokens, page_size
    """,
}


def test_an_item_store_puts_what_its_value_takes_out(snippet_session):
    """`kept["size"] = given.get("fraction")` takes the value out of one dict at "fraction"
    and puts it into another at "size": it is read back at "size" only, not at "label"."""
    session = snippet_session(MOVED)
    codes = {s.code for s in trace(session.graph, "fraction", branch_depth=6).steps}
    assert 'kept["size"] = given.get("fraction")' in codes
    assert 'max_total_num_tokens = kept["size"] * 2' in codes
    assert 'page_size = kept["label"]' not in codes
    codes = {s.code for s in trace(session.graph, "name", branch_depth=6).steps}
    assert 'page_size = kept["label"]' in codes
    assert 'max_total_num_tokens = kept["size"] * 2' not in codes


STORED_BY_METHOD = {
    "pkg/__init__.py": "",
    "pkg/build.py": """
        class Pool:
            def __init__(self, size=1, label=""):
                self.max_total_num_tokens = size * 2
                self.label = label


        def build(fraction, name):
            options = {}
            options.update(size=fraction)
            options.update({"label": name})
            names = []
            names.append(name)
            first = names[0]
            return Pool(**options), first
    """,
}


def test_a_method_that_stores_into_a_container_keeps_the_key(snippet_session):
    """`options.update(size=fraction)` puts the value in `options` at "size" (and
    `update({"label": name})` at "label", `names.append(name)` at an index not known): the
    later `Pool(**options)` gives `size` only the first, forward and backward."""
    session = snippet_session(STORED_BY_METHOD)
    graph = session.graph
    chain = trace(graph, "build.fraction", sinks=["max_total_num_tokens"])
    assert spine_code(chain) == [
        "fraction",
        "options.update(size=fraction)",
        "return Pool(**options), first",
        "size=1",
        "self.max_total_num_tokens = size * 2",
    ]
    name = {s.code for s in trace(graph, "build.name", branch_depth=6).steps}
    assert {"self.label = label", "first = names[0]"} <= name
    assert "self.max_total_num_tokens = size * 2" not in name
    back = {s.code for s in trace(graph, "Pool.max_total_num_tokens", "backward").steps}
    assert {"options.update(size=fraction)", "fraction"} <= back
    assert "name" not in back


def test_keys_along_an_edge():
    """Forward, a put pushes and a take pops its own key; backward the other way round; a
    key not known matches any; a new value keeps no key; the search halves meet only where
    their keys agree."""
    put_k, take_k, take_j = ((PUT, "k"),), ((TAKE, "k"),), ((TAKE, "j"),)
    assert step((), put_k, True) == (True, ("k",))
    assert step(("k",), take_k, True) == (True, ())
    assert step(("k",), take_j, True) == (False, ())
    assert step((), take_j, True) == (True, ())  # the container itself is read
    assert step(("k",), ((TAKE, None),), True) == (True, ())
    assert step((), take_k, False) == (True, ("k",))
    assert step(("k",), put_k, False) == (True, ())
    assert step(("j",), put_k, False) == (False, ())
    assert step(("k",), ((NEW, None),), True) == (True, ())
    assert step((), ((TAKE, "k"), (NEW, None)), False) == (True, ("k",))
    assert compatible(("k",), ("k",)) and compatible((), ("k",))
    assert not compatible(("j",), ("k",))


def test_zip_and_enumerate_keep_the_index_an_element_had():
    """`zip(a, b)`: what sits at a[i] comes out at [i][0], b[i] at [i][1] (a REGROUP at the
    argument's position); backward, a value sought at [i][1] is looked for at [i] of the
    second argument and not in the first; an argument whose index is not known gives its
    elements at [any][position]."""
    first, second = ((REGROUP, 0),), ((REGROUP, 1),)
    assert step((1,), second, True) == (True, (1, 1))  # keys innermost last: [1][1]
    assert step((), second, True) == (True, (1, None))
    assert step((1, 0), second, False) == (True, (0,))  # [0][1] sought: b's [0]
    assert step((1, 0), first, False) == (False, ())  # ... not a's
    assert step((0,), first, False) == (True, (0,))  # [0] whole: a's [0] is in it


def test_zipped_tuples_give_each_argument_its_place(snippet_session):
    """The i-th tuple of `zip(a, b)` holds a[i] at 0 and b[i] at 1; `enumerate(xs)`'s i-th
    pair holds xs[i] at 1."""
    session = snippet_session(
        {
            "app.py": """
                SECRET = "secret"


                def sink(value):
                    pass


                def pairs():
                    left = (SECRET, "plain")
                    right = ("plain", "plain")
                    zipped = list(zip(left, right))
                    sink(zipped[0][0])
                    sink(zipped[1][0])
                    sink(zipped[0][1])
                    counted = list(enumerate(["plain", SECRET]))
                    sink(counted[1][1])
                    sink(counted[0][1])
            """
        }
    )
    chain = trace(session.graph, "SECRET", direction="forward", max_depth=60, branch_depth=60)
    steps = {s.id: s for s in chain.steps}
    sink = next(s.id for s in chain.steps if s.kind == "param" and s.symbol == "sink")
    reached = sorted(steps[e.src].line for e in chain.edges if e.dst == sink)
    assert reached == [12, 16]


def test_attributes_as_keys_of_their_names():
    """`vars(o)` (and `{k: getattr(o, k) for k in names}`): what o keeps at the attribute
    `.f` comes out at the key "f"; backward, a value sought at "f" is at `.f`; a dict's key
    or an index has no attribute to come from."""
    rekey = ((AS_KEYS, None),)
    assert step((".rate",), rekey, True) == (True, ("rate",))
    assert step(("rate",), rekey, True) == (False, ())
    assert step((None,), rekey, True) == (True, (None,))
    assert step((), rekey, True) == (True, ())  # the object itself
    assert step(("rate",), rekey, False) == (True, (".rate",))
    assert step((".rate",), rekey, False) == (False, ())


def test_a_namespace_copied_by_name_fills_the_parameter_of_that_name(snippet_session):
    """`Settings(**{k: getattr(ns, k) for k in names})` and `Settings(**ns.__dict__)`: each
    attribute of ns goes to the parameter of its own name, not to the others."""
    session = snippet_session(
        {
            "app.py": """
                import types


                class Settings:
                    def __init__(self, rate=1, size=2):
                        self.rate = rate
                        self.size = size


                def build(ns, names):
                    return Settings(**{k: getattr(ns, k) for k in names if hasattr(ns, k)})


                def copy(ns):
                    return Settings(**ns.__dict__)


                def main(source):
                    ns = types.SimpleNamespace()
                    ns.rate = source * 2
                    ns.size = 5
                    built = build(ns, ["rate", "size"])
                    copied = copy(ns)
                    return built, copied
            """
        }
    )
    chain = trace(session.graph, "source", direction="forward", max_depth=40, branch_depth=40)
    params = {(s.symbol, s.name) for s in chain.steps if s.kind == "param"}
    assert ("Settings.__init__", "rate") in params
    assert ("Settings.__init__", "size") not in params
    writes = [s.code for s in chain.steps if s.kind == "attr_write"]
    assert "self.rate = rate" in writes and "self.size = size" not in writes
    into_rate = [e for e in chain.edges if e.dst.endswith("__init__.rate")]
    assert len({e.src for e in into_rate}) == 2  # from both constructor calls


def test_a_for_loop_over_a_library_call_takes_each_element_at_its_place(snippet_session):
    """`for i, x in enumerate(xs)`, `for k, v in conf.items()`, `for a, b in zip(xs, ys)`: each
    element of what the call makes, then the target's place in it: the value reaches x, v
    and a, not i, k or b."""
    session = snippet_session(
        {
            "app.py": """
                def sink(value):
                    pass


                def loops(budget):
                    sizes = [budget]
                    for i, x in enumerate(sizes):
                        sink(i)
                        sink(x)
                    conf = {"budget": budget}
                    for k, v in conf.items():
                        sink(k)
                        sink(v)
                    for a, b in zip(sizes, [1]):
                        sink(a)
                        sink(b)
            """
        }
    )
    chain = trace(session.graph, "budget", direction="forward", max_depth=40, branch_depth=40)
    steps = {s.id: s for s in chain.steps}
    sink = next(s.id for s in chain.steps if s.kind == "param" and s.symbol == "sink")
    given = sorted(steps[e.src].code for e in chain.edges if e.dst == sink)
    assert given == ["sink(a)", "sink(v)", "sink(x)"]


def test_a_dict_made_from_pairs_and_keywords_keeps_each_key(snippet_session):
    """`dict([("rate", budget), ("name", "x")], size=budget)`: the value is at "rate" and
    "size" (each a way of its own), not at "name"."""
    session = snippet_session(
        {
            "app.py": """
                def sink(value):
                    pass


                def build(budget):
                    conf = dict([("rate", budget), ("name", "x")], size=budget)
                    sink(conf["rate"])
                    sink(conf["name"])
                    sink(conf["size"])
            """
        }
    )
    chain = trace(session.graph, "budget", direction="forward", max_depth=40, branch_depth=40)
    steps = {s.id: s for s in chain.steps}
    sink = next(s.id for s in chain.steps if s.kind == "param" and s.symbol == "sink")
    given = sorted(steps[e.src].code for e in chain.edges if e.dst == sink)
    assert given == ['sink(conf["rate"])', 'sink(conf["size"])']


def test_a_storing_method_whose_result_is_used_still_stores(snippet_session):
    """`first = d.setdefault("budget", budget)`: the value is in `first` and in d at
    "budget", read there later (`d["budget"]`, `d.setdefault("budget", 0)`), not at "name"."""
    session = snippet_session(
        {
            "app.py": """
                def sink(value):
                    pass


                def build(budget):
                    d = {"name": "x"}
                    first = d.setdefault("budget", budget)
                    sink(first)
                    sink(d["budget"])
                    sink(d.setdefault("budget", 0))
                    sink(d["name"])
            """
        }
    )
    chain = trace(session.graph, "budget", direction="forward", max_depth=40, branch_depth=40)
    steps = {s.id: s for s in chain.steps}
    sink = next(s.id for s in chain.steps if s.kind == "param" and s.symbol == "sink")
    given = sorted(steps[e.src].code for e in chain.edges if e.dst == sink)
    assert given == ['sink(d.setdefault("budget", 0))', 'sink(d["budget"])', "sink(first)"]
