"""Step ids: made and read by tracer/store/step_ids.py alone; their text is the JSON contract."""

from __future__ import annotations

from tracer.store import step_ids
from tracer.store.step_ids import Address


def test_each_kind_of_id_reads_back_where_it_points() -> None:
    path = "pkg/sub/mod.py"
    cases = [
        (step_ids.param_id(path, "Runner.__init__", "x"), "pkg/sub/mod.py#p:Runner.__init__.x"),
        (step_ids.field_id(path, "Args", "size"), "pkg/sub/mod.py#f:Args.size"),
        (step_ids.target_id(path, 3, 1), "pkg/sub/mod.py#a3.1"),
        (step_ids.return_id(path, 2), "pkg/sub/mod.py#r2"),
        (step_ids.return_id(path, 2, 1), "pkg/sub/mod.py#r2.1"),
        (step_ids.use_id(path, 7), "pkg/sub/mod.py#u7"),
        (step_ids.argument_id(path, 12, 0), "pkg/sub/mod.py#c12.0"),
        (step_ids.call_id(path, 12), "pkg/sub/mod.py#c12"),
        (step_ids.flag_id(path, 4), "pkg/sub/mod.py#c4:flag"),
        (step_ids.generated_flag_id(path, 4, "size"), "pkg/sub/mod.py#c4:flag:size"),
    ]
    assert [(made, text) for made, text in cases if made != text] == []
    assert {step_ids.file_of(made) for made, _ in cases} == {path}
    assert [step_ids.address(made) for made, _ in cases] == [
        Address("p", "Runner.__init__", -1),
        Address("f", "Args", -1),
        Address("a", "", 3),
        Address("r", "", 2),
        Address("r", "", 2),
        Address("u", "", 7),
        Address("c", "", 12),
        Address("c", "", 12),
        Address("c", "", 4),
        Address("c", "", 4),
    ]
    assert [step_ids.is_param(m) for m, _ in cases[:2]] == [True, False]
    assert [step_ids.is_field(m) for m, _ in cases[:2]] == [False, True]
    assert step_ids.call_of(step_ids.argument_id(path, 12, 3)) == 12


def test_a_path_with_a_hash_in_it_keeps_its_file() -> None:
    made = step_ids.target_id("odd#dir/mod.py", 0, 0)
    assert step_ids.file_of(made) == "odd#dir/mod.py"
    assert step_ids.address(made) == Address("a", "", 0)
