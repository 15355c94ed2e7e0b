"""A file's tables are built one unit (function, method, class body, module code) at a time, in
whatever order queries reach them; what they hold must not depend on that order."""

from __future__ import annotations

from dataclasses import replace

from tracer.extract.facts import MODULE_SCOPE, Assign, Call, FileFlows, FileSummary, Target, Value
from tracer.extract.flows import extract_flows
from tracer.extract.parse import parse
from tracer.extract.symbols import summarize
from tracer.extract.values import NOTHING
from tracer.graph.file_steps import UNREAD, WHOLE, FileTables
from tracer.store.names import crosses_units
from tracer.store.parts import Parts, pack_entry
from tracer.store.rows import FileRows, encode, encode_flows
from tracer.store.units import ROW_KINDS, members_of, spans_of

SOURCE = """
    import cfgmod
    LIMIT = cfgmod.cfg.size

    def scaled(value, size=cfgmod.cfg.size):
        return value * size

    class Pool:
        size: int = 0

        def __init__(self, cfg):
            self.size = cfg.size

        def grow(self, cfg):
            def inner():
                return cfg.size + self.size
            self.size = inner()

    print(cfgmod.cfg.size, LIMIT)
"""


def tables_of(snippet_session, source: str) -> FileTables:
    session = snippet_session({"pkg/__init__.py": "", "pkg/pool.py": source, "cfgmod.py": ""})
    return session.graph.file("pkg/pool.py")


def contents(tables: FileTables) -> dict[str, object]:
    """What the queries read, in the order they read it."""
    return {
        "size reads": [(r.step, r.scope, r.base) for r in tables.attr_reads.get("size", [])],
        "size writes": [(w.step, w.scope, w.base) for w in tables.attr_writes.get("size", [])],
        "binds size": [s.id for s in tables.binding_steps("size")],
        "module reads": [key for key, _ in tables.inner_reads(MODULE_SCOPE)],
        "cfg in grow": tables.local_reads.get(("Pool.grow", "cfg"), []),
        "steps": sorted(tables.steps),  # the same steps; queries never read them in bulk
    }


def test_units_are_the_functions_methods_and_module_code(snippet_session):
    tables = tables_of(snippet_session, SOURCE)
    assert set(tables.units) == {
        MODULE_SCOPE,
        "scaled",
        "Pool",
        "Pool.__init__",
        "Pool.grow",
    }
    tables.attr_reads.get("value", [])  # read nowhere as an attribute: builds nothing
    assert tables.built == set()
    assert [s.id for s in tables.binding_steps("value")] == ["pkg/pool.py#p:scaled.value"]
    assert tables.built == set()  # a parameter is made alone, from the summary
    tables.local_reads.get(("scaled", "value"))  # who reads `value` in `scaled`: its unit
    assert tables.built == {"scaled"}


def test_tables_do_not_depend_on_the_order_units_are_built(snippet_session):
    in_file_order = tables_of(snippet_session, SOURCE)
    in_file_order.ensure_all()
    expected = contents(in_file_order)
    reversed_order = tables_of(snippet_session, SOURCE)
    for unit in reversed(list(reversed_order.units)):
        reversed_order.ensure(unit)
    assert contents(reversed_order) == expected
    on_demand = tables_of(snippet_session, SOURCE)
    assert contents(on_demand) == expected  # each read builds what it needs
    # The order of a whole-file build: parameters, assignments, returns, then calls.
    assert expected["size reads"] == [
        ("pkg/pool.py#p:scaled.size", MODULE_SCOPE, "cfgmod.cfg"),
        ("pkg/pool.py#a0.0", MODULE_SCOPE, "cfgmod.cfg"),
        ("pkg/pool.py#a2.0", "Pool.__init__", "cfg"),
        ("pkg/pool.py#r1", "Pool.grow.inner", "cfg"),
        ("pkg/pool.py#r1", "Pool.grow.inner", "self"),
        ("pkg/pool.py#c1", MODULE_SCOPE, "cfgmod.cfg"),
    ]


def test_a_file_built_whole_holds_the_same_tables(snippet_session):
    session = snippet_session({"pkg/__init__.py": "", "pkg/pool.py": SOURCE, "cfgmod.py": ""})
    facts, path = session.graph.facts, "pkg/pool.py"
    by_units = session.graph.file(path)
    whole = FileTables(
        path,
        facts.summaries[path],
        facts.flows(path),
        replace(facts.names(path), whole=True),
        session.graph.resolver,
        facts.snapshot.read(path),
        session.graph.rules,
    )
    assert list(whole.units) == [WHOLE]
    assert contents(whole) == contents(by_units)


def test_a_call_read_from_another_unit_makes_the_file_whole():
    # The extractors never give this today (a lambda's calls are not read by the statement
    # around it); if they ever do, the file must not be built apart.
    summary = FileSummary(imports=(), classes=(), functions=(), aliases=(), warnings=())
    inner = Call(0, "handle", "work", NOTHING, (), False, 3, 3)
    reading = Assign(MODULE_SCOPE, (Target("x", None),), Value((), (0,)), (), "=", None, 5, 5)
    assert crosses_units(summary, FileFlows((inner,), (reading,), (), ()))
    same_unit = replace(reading, scope="handle")
    assert not crosses_units(summary, FileFlows((inner,), (same_unit,), (), ()))


# -- rows cached by unit -------------------------------------------------------------------


def loaded_rows(tables: FileTables) -> dict[str, list[int]]:
    """Per kind of row, the indices of the rows unpickled so far."""
    loaded = tables.rows.loaded or [[] for _ in ROW_KINDS]
    return {
        kind: [i for i, row in enumerate(rows) if row is not None]
        for kind, rows in zip(ROW_KINDS, loaded, strict=True)
    }


def test_a_unit_is_read_from_the_cache_alone(snippet_session):
    tables_of(snippet_session, SOURCE).ensure_all()  # extracts and caches the file's facts
    tables = tables_of(snippet_session, SOURCE)  # a new session on that cache
    assert loaded_rows(tables) == {"calls": [], "assigns": [], "returns": [], "uses": []}
    tables.local_reads.get(("scaled", "value"))  # read in `scaled`: its unit is built
    # `return value * size` is the only row of `scaled`: nothing of the module code, of
    # `Pool.__init__` or of `Pool.grow` is unpickled.
    assert tables.built == {"scaled"}
    assert loaded_rows(tables) == {"calls": [], "assigns": [], "returns": [0], "uses": []}
    tables.local_reads.get(("Pool.grow", "cfg"))  # `Pool.grow`, with `inner` in it
    assert loaded_rows(tables) == {"calls": [0], "assigns": [3], "returns": [0, 1], "uses": []}


def test_spans_give_back_each_units_members():
    owners = [[0, 0, 1, 1, 0, 2], [], [2, 2, 0]]  # per kind, the unit of each member
    spans = spans_of(owners, 3)
    assert spans == (
        (((0, 2), (4, 5)), (), ((2, 3),)),
        (((2, 4),), (), ()),
        (((5, 6),), (), ((0, 2),)),
    )
    assert [members_of(unit) for unit in spans] == [
        [[0, 1, 4], [], [2]],
        [[2, 3], [], []],
        [[5], [], [0, 1]],
    ]


def test_a_steps_code_is_read_when_the_step_is_asked_for(snippet_session):
    session = snippet_session({"pkg/__init__.py": "", "pkg/pool.py": SOURCE, "cfgmod.py": ""})
    tables = session.graph.file("pkg/pool.py")
    tables.ensure("Pool.__init__")
    assert dict.__getitem__(tables.steps, "pkg/pool.py#a2.0").code == UNREAD  # built, unread
    assert session.graph.step("pkg/pool.py#a2.0").code == "self.size = cfg.size"
    assert dict.__getitem__(tables.steps, "pkg/pool.py#a2.0").code == "self.size = cfg.size"
    multi_line = "def f(x):\n    return g(\n        x,\n    )\n"
    session = snippet_session({"pkg/__init__.py": "", "pkg/f.py": multi_line})
    assert session.graph.step("pkg/f.py#r0").code == "return g(\n    x,\n)"


CALLS = """
    import multiprocessing

    import cfgmod

    def split(cfg, ratio=cfgmod.cfg.ratio):
        head = cfg.size * ratio
        head += 1
        return head, cfg.size - head

    def run(cfg):
        a, b = split(cfg, ratio=0.5)
        cfgmod.report(a, cfg.size)
        if cfg.fast:
            def step(x):
                return x
        else:
            def step(x, y=b):
                return x + y
        return step(a)

    def launch(cfg):
        worker = multiprocessing.Process(target=run, args=(cfg, 1))
        worker.start()
"""


def test_a_step_is_made_alone_as_its_unit_makes_it(snippet_session):
    # A step asked for before its unit is built is made from its row alone; its unit's
    # tables of names, returns and calls are read from the rows: no unit is built.
    for source in (SOURCE, CALLS):
        whole = tables_of(snippet_session, source)
        whole.ensure_all()
        assert bool(whole.elements) == (source is CALLS)  # the values `launch` passes
        alone = tables_of(snippet_session, source)
        for step_id in sorted(whole.steps):
            assert alone.steps[step_id] == whole.steps[step_id]
            tables = ("scope_of", "refs", "opaque", "results", "bound", "position", "elements")
            for table in tables:
                assert getattr(alone, table).get(step_id) == getattr(whole, table).get(step_id)
        for key in list(whole.local_defs.keys()) + [("run", "nowhere")]:
            assert alone.local_defs.get(key) == whole.local_defs.get(key)
        for function in ["run", "split", "run.step", "Pool.grow.inner", "nowhere"]:
            assert alone.returns.get(function) == whole.returns.get(function)
        for call_id in range(len(whole.calls)):
            assert alone.targets[call_id] == whole.targets[call_id]
        for word in ("size", "cfg", "head", "step", "y", "b"):
            assert alone.binding_steps(word) == whole.binding_steps(word)
        assert alone.built == set()
        assert contents(alone) == contents(whole)  # built now: the same


def test_a_files_names_are_read_part_by_part(snippet_session):
    tables_of(snippet_session, SOURCE).ensure_all()  # extracts and caches the file's facts
    session = snippet_session({"pkg/__init__.py": "", "pkg/pool.py": SOURCE, "cfgmod.py": ""})
    names = session.graph.facts.names("pkg/pool.py")  # a new session on that cache
    assert names.binders.loaded is None and names.self_attrs.loaded is None
    assert "size" in names.binders and "other" not in names.binders
    assert names.binders.isdisjoint({"other"}) and not names.binders.isdisjoint({"value", "x"})
    assert names.self_attrs.loaded is None
    # Each attribute's reads are unpickled when that attribute is asked for.
    assert names.reads.get("size") == (
        ("<module>", "cfgmod.cfg"),
        ("Pool.__init__", "cfg"),
        ("Pool.__init__", "self"),
        ("Pool.grow", "self"),
        ("Pool.grow.inner", "cfg"),
        ("Pool.grow.inner", "self"),
    )
    assert names.reads.get("other") == () and list(names.reads.made) == ["size"]
    assert [w[0] for w in names.writes.get("size")] == [
        "pkg/pool.py#f:Pool.size",
        "pkg/pool.py#a2.0",
        "pkg/pool.py#a3.0",
    ]
    assert list(names.writes.made) == ["size"]


def test_a_row_of_a_long_unit_is_read_with_its_chunk_alone():
    # 40 assignments in `setup`, then a call in `other`: each row read where it lies.
    body = "".join(f"    x{i} = {i}\n" for i in range(40))
    source = f"def setup():\n{body}\ndef other():\n    setup()\n"
    parsed = parse(source.encode())
    summary = summarize(parsed)
    flows = extract_flows(parsed, summary)
    parts = Parts.read(pack_entry(encode_flows(flows, summary)), list)
    assert parts is not None
    rows = FileRows(parts)
    assigns = ROW_KINDS.index("assigns")
    assert rows.row(assigns, 20) == encode(flows.assigns[20])
    assert rows.loaded is not None
    assert [i for i, row in enumerate(rows.loaded[assigns]) if row] == list(range(16, 32))
    assert rows.row(ROW_KINDS.index("calls"), 0) == encode(flows.calls[0])
    assert [len(list(filter(None, kind))) for kind in rows.loaded] == [1, 16, 0, 0]
    assert [rows.row(assigns, i) for i in range(40)] == [encode(a) for a in flows.assigns]
