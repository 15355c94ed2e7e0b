"""The walk driven key by key (Textual's Pilot) over SGLang 0.4.6: what each pane shows.

The spine of mem_fraction_static there, 27 steps: flag (server_args.py:563); the namespace the
parser returns, `raw_args = parser.parse_args(argv)` (:1261), passed to
`ServerArgs.from_cli_args(raw_args)` (:1262) as its `args` (:1208) and copied into the field by
`cls(**{attr: getattr(args, attr) ...})` (:1213); the field (:69); then the ServerArgs object's
route: made and returned there (:1213), `server_args = ServerArgs.from_cli_args(raw_args)`
(:1262), `return server_args`
(:1263), launch_server.py (:11, :14), http_server.py, engine.py (the scheduler process's args),
scheduler.py (run_scheduler_process, Scheduler.__init__, the worker made at :262), the
parameter of TpModelWorker.__init__ (tp_worker.py:47); then the value itself: argument
(tp_worker.py:77), parameter (model_runner.py:109), attribute write (:121), formula (:707),
local (:710), return (:711), sink `self.max_total_num_tokens = ...` (:734)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import networkx as nx
import pytest
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static

from tests.tui.conftest import SIZE, SOURCE, settled
from tests.unit.test_carriers import TWO_ROUTES
from tracer.graph.steps import Step
from tui.app import WalkApp
from tui.outline import Outline
from tui.widgets.chain_tree import ChainTree
from tui.widgets.details import Details, EdgeList
from tui.widgets.export_screen import ExportScreen
from tui.widgets.help_screen import HelpScreen
from tui.widgets.search_screen import SearchScreen
from tui.widgets.source_view import SourceView

pytestmark = pytest.mark.release

SERVER_ARGS = "sglang/srt/server_args.py"
LAUNCH_SERVER = "sglang/launch_server.py"
TP_WORKER = "sglang/srt/managers/tp_worker.py"
MODEL_RUNNER = "sglang/srt/model_executor/model_runner.py"

Scenario = Callable[[Pilot], object]
Where = tuple[str, str, int]  # a step as (kind, file, line)

FLAG: Where = ("cli_flag", SERVER_ARGS, 563)
PARSED: Where = ("local_assign", SERVER_ARGS, 1261)  # the namespace the parser returns
PASSED: Where = ("call_arg", SERVER_ARGS, 1262)  # ServerArgs.from_cli_args(raw_args)
NAMESPACE: Where = ("param", SERVER_ARGS, 1208)  # from_cli_args's `args`
COPIED: Where = ("call_arg", SERVER_ARGS, 1213)  # cls(**{attr: getattr(args, attr) ...})
FIELD: Where = ("field", SERVER_ARGS, 69)
MADE: Where = ("return", SERVER_ARGS, 1213)  # return cls(...): the object made from the namespace
FROM_CLI_ARGS: Where = ("local_assign", SERVER_ARGS, 1262)  # the object the field is kept in
RETURNED: Where = ("return", SERVER_ARGS, 1263)
IN_LAUNCH_SERVER: Where = ("local_assign", LAUNCH_SERVER, 11)
ARGUMENT: Where = ("call_arg", TP_WORKER, 77)  # the value taken out of the object
PARAM: Where = ("param", MODEL_RUNNER, 109)
SINK: Where = ("attr_write", MODEL_RUNNER, 734)  # self.max_total_num_tokens = ...
SPINE: list[Where] = [
    FLAG,
    PARSED,
    PASSED,
    NAMESPACE,
    COPIED,
    FIELD,
    MADE,
    FROM_CLI_ARGS,
    RETURNED,
    IN_LAUNCH_SERVER,
    ("call_arg", LAUNCH_SERVER, 14),
    ("param", "sglang/srt/entrypoints/http_server.py", 687),
    ("call_arg", "sglang/srt/entrypoints/http_server.py", 706),
    ("param", "sglang/srt/entrypoints/engine.py", 483),
    ("call_arg", "sglang/srt/entrypoints/engine.py", 524),
    ("param", "sglang/srt/managers/scheduler.py", 1979),
    ("call_arg", "sglang/srt/managers/scheduler.py", 2012),
    ("param", "sglang/srt/managers/scheduler.py", 170),
    ("call_arg", "sglang/srt/managers/scheduler.py", 262),
    ("param", TP_WORKER, 47),
    ARGUMENT,
    PARAM,
    ("attr_write", MODEL_RUNNER, 121),
    ("formula", MODEL_RUNNER, 707),
    ("local_assign", MODEL_RUNNER, 710),
    ("return", MODEL_RUNNER, 711),
    SINK,
]


def drive(app: WalkApp, scenario: Callable[[Pilot], object]) -> None:
    """Run APP at the test size, wait for the first chain, then play SCENARIO."""

    async def run() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settled(pilot)
            await scenario(pilot)  # type: ignore[misc]

    asyncio.run(run())


async def soon(condition: Callable[[], bool], within: float = 1.0) -> None:
    """Wait until CONDITION holds, failing after WITHIN seconds."""
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, f"not within {within} s"
        await asyncio.sleep(0.01)


def at(step: Step) -> Where:
    """STEP as (kind, file, line)."""
    return (step.kind, step.file, step.line)


def where(app: WalkApp) -> Where:
    """The selected step as (kind, file, line)."""
    step = app.current_step
    assert step is not None
    return at(step)


def spine(app: WalkApp) -> list[Where]:
    """The spine of the open chain, origin first."""
    assert app.view is not None
    return [at(app.view.step(step_id)) for step_id in app.view.chain.spine]


def downs_to(app: WalkApp, step: Where) -> list[str]:
    """The `down` presses from the selected spine step to STEP, counted on the spine (its
    branches folded)."""
    return ["down"] * (spine(app).index(step) - spine(app).index(where(app)))


def history(app: WalkApp) -> list[Where]:
    """The places backspace goes back to, the latest last."""
    return [at(place.view.step(place.step_id)) for place in app.history]


def source_text(app: WalkApp) -> list[str]:
    """The source pane's rows as shown (gutter and code)."""
    source = app.query_one(SourceView)
    height = source.scrollable_content_region.height
    return [source.render_line(y).text.rstrip() for y in range(height)]


def lit_rows(app: WalkApp) -> list[str]:
    """The rows of the source pane showing the selected step's lines."""
    source = app.query_one(SourceView)
    top = source.scroll_offset.y
    return [
        source.render_line(line - 1 - top).text.rstrip()
        for line in source.highlighted_lines
        if 0 <= line - 1 - top < source.scrollable_content_region.height
    ]


def widget_text(widget: Widget) -> str:
    """What WIDGET shows, rows joined by newlines."""
    region = Region(0, 0, widget.size.width, widget.size.height)
    return "\n".join(strip.text.rstrip() for strip in widget.render_lines(region))


def tree_cursor(app: WalkApp) -> str:
    """The label of the tree's cursor line, without the indent a step with no branch has."""
    node = app.query_one(ChainTree).cursor_node
    assert node is not None
    return str(node.label).lstrip()


def test_opens_on_the_origin_of_the_spine(walk_app: Callable[..., WalkApp]) -> None:
    app = walk_app()

    async def scenario(pilot: Pilot) -> None:
        assert where(app) == FLAG
        assert spine(app) == SPINE
        assert tree_cursor(app).startswith("1 » flag")
        assert "ServerArgs.add_cli_args" in tree_cursor(app)
        tree = app.query_one(ChainTree)
        numbers = [str(node.label).split()[0] for node in tree.root.children]
        assert numbers == [str(number) for number in range(1, 28)]
        assert str(tree.root.children[26].label).startswith("27 ◉ sink    model_runner.py:734")
        source = app.query_one(SourceView)
        assert source.path == SERVER_ARGS
        assert list(source.highlighted_lines) == [563, 564, 565, 566, 567, 568]
        rows = lit_rows(app)
        assert len(rows) == 6
        assert rows[0].startswith("   563 │ ")
        assert '"--mem-fraction-static",' in rows[1]
        status = str(app.query_one("#status", Static).render())
        assert "mem_fraction_static in pypi:sglang==0.4.6" in status
        assert "spine of 27" in status
        details = app.query_one(Details)
        assert details.chosen_link is not None
        assert app.view is not None
        assert at(app.view.step(details.chosen_link.other)) == PARSED  # along the spine

    drive(app, scenario)


def test_down_moves_to_the_next_step(walk_app: Callable[..., WalkApp]) -> None:
    app = walk_app()

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("down")
        await pilot.pause()
        assert where(app) == PARSED
        assert list(app.query_one(SourceView).highlighted_lines) == [1261]
        assert lit_rows(app) == ["  1261 │     raw_args = parser.parse_args(argv)"]
        await pilot.press("up")
        await pilot.pause()
        assert where(app) == FLAG
        marked = [row for row in source_text(app) if row.startswith("■")]
        assert marked == []  # the field is far above the flag: not in view
        await pilot.press(*downs_to(app, FIELD))  # through from_cli_args into the field
        await pilot.pause()
        assert where(app) == FIELD
        assert list(app.query_one(SourceView).highlighted_lines) == [69]
        assert lit_rows(app) == ["    69 │     mem_fraction_static: Optional[float] = None"]
        await pilot.press("down")  # the object the field is kept in, made and returned
        await pilot.pause()
        assert where(app) == MADE
        await pilot.press("down")  # ... into from_cli_args's caller
        await pilot.pause()
        assert where(app) == FROM_CLI_ARGS
        # The argument on the same line (step 3) is marked in the gutter.
        assert lit_rows(app) == ["→ 1262 │     server_args = ServerArgs.from_cli_args(raw_args)"]
        await pilot.press(*downs_to(app, ARGUMENT))  # on to the value taken out of it
        await pilot.pause()
        assert where(app) == ARGUMENT
        assert app.query_one(SourceView).path == TP_WORKER
        assert "mem_fraction_static=server_args.mem_fraction_static," in lit_rows(app)[0]

    drive(app, scenario)


def test_enter_follows_the_edge_and_backspace_goes_back(
    walk_app: Callable[..., WalkApp],
) -> None:
    app = walk_app()

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("enter")  # flag -> the namespace the parser returns, along the spine
        await pilot.pause()
        assert where(app) == PARSED
        await pilot.press("enter", "enter", "enter", "enter")  # through from_cli_args
        await pilot.pause()
        assert where(app) == FIELD
        await pilot.press("enter", "enter")  # field -> the ServerArgs object it is kept in
        await pilot.pause()
        assert where(app) == FROM_CLI_ARGS
        assert tree_cursor(app).startswith("8 = local")
        assert app.view is not None
        assert [place.step_id for place in app.history] == list(app.view.chain.spine[:7])
        assert history(app) == [FLAG, PARSED, PASSED, NAMESPACE, COPIED, FIELD, MADE]
        await pilot.press("enter", "enter")  # returned, into launch_server.py
        await pilot.pause()
        assert where(app) == IN_LAUNCH_SERVER
        assert app.query_one(SourceView).path == LAUNCH_SERVER
        assert lit_rows(app) == ["    11 │     server_args = prepare_server_args(sys.argv[1:])"]
        assert tree_cursor(app).startswith("10 = local")
        assert history(app) == SPINE[:9]
        await pilot.press("backspace")
        await pilot.pause()
        assert where(app) == RETURNED
        assert app.query_one(SourceView).path == SERVER_ARGS
        assert tree_cursor(app).startswith("9 ↩ return")
        assert history(app) == SPINE[:8]
        await pilot.press("backspace", "backspace", "backspace")
        await pilot.pause()
        assert where(app) == FIELD
        assert tree_cursor(app).startswith("6 ■ field")
        assert history(app) == [FLAG, PARSED, PASSED, NAMESPACE, COPIED]
        await pilot.press("backspace", "backspace", "backspace", "backspace")
        await pilot.pause()
        assert where(app) == PARSED
        assert tree_cursor(app).startswith("2 = local")
        assert history(app) == [FLAG]
        await pilot.press("backspace", "backspace")  # the second has nothing to go back to
        await pilot.pause()
        assert where(app) == FLAG
        assert app.history == []
        assert "nothing to go back to" in [n.message for n in app._notifications]

    drive(app, scenario)


def test_the_edge_list_picks_the_edge_enter_follows(walk_app: Callable[..., WalkApp]) -> None:
    app = walk_app()

    async def scenario(pilot: Pilot) -> None:
        # The field: in from the flag and from the namespace's copy (the surest of the two
        # edges from that step, a guess beside it left out); out to the argument, a use and
        # the object it is kept in.
        await pilot.press(*downs_to(app, FIELD))
        await pilot.pause()
        details = app.query_one(Details)
        assert app.view is not None
        assert [
            (link.outgoing, link.edge.kind, at(app.view.step(link.other))) for link in details.links
        ] == [
            (False, "flag_to_field", FLAG),
            (False, "copied_to_field", COPIED),
            (True, "attr", ARGUMENT),
            (True, "attr", ("use", SERVER_ARGS, 224)),
            (True, "store", MADE),
        ]
        assert app.query_one(EdgeList).highlighted == 4  # along the spine
        await pilot.press("tab")
        assert app.focused is app.query_one(EdgeList)
        await pilot.press("up", "enter")  # the use in ServerArgs.__post_init__
        await pilot.pause()
        assert where(app) == ("use", SERVER_ARGS, 224)
        assert len(app.history) == 1
        await pilot.press("backspace")
        await pilot.pause()
        assert where(app) == FIELD

    drive(app, scenario)


def test_f_recentres_forward_and_b_backward(walk_app: Callable[..., WalkApp]) -> None:
    app = walk_app()
    param = f"{MODEL_RUNNER}#p:ModelRunner.__init__.mem_fraction_static"

    async def scenario(pilot: Pilot) -> None:
        await pilot.press(*downs_to(app, PARAM))
        await pilot.pause()
        assert where(app) == PARAM
        await pilot.press("f")
        await settled(pilot)
        assert app.view is not None
        assert app.view.chain.direction == "forward"
        assert app.view.param == "ModelRunner.__init__.mem_fraction_static"
        assert app.step_id == param
        assert app.view.chain.spine[0] == param
        assert where(app) == PARAM
        await pilot.press("b")
        await settled(pilot)
        assert app.view.chain.direction == "backward"
        assert app.view.step(app.view.chain.spine[0]).kind == "cli_flag"
        assert len(app.history) == 2
        await pilot.press("backspace")
        await pilot.pause()
        assert app.view.chain.direction == "forward"
        await pilot.press("backspace")
        await pilot.pause()
        assert app.view.chain.direction == "both"
        assert where(app) == PARAM
        assert tree_cursor(app).startswith("22 ▸ param")

    drive(app, scenario)


def test_slash_searches_with_completion_from_the_index(
    walk_app: Callable[..., WalkApp],
) -> None:
    app = walk_app()

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("slash")
        await pilot.pause()
        assert isinstance(app.screen, SearchScreen)
        await pilot.press(*"total_gpu_mem")
        await pilot.pause()
        matches = app.screen.query_one(OptionList)
        shown = [str(matches.get_option_at_index(i).prompt) for i in range(matches.option_count)]
        assert shown[0] == "total_gpu_memory"
        assert "ModelRunner.init_memory_pool.total_gpu_memory" in shown
        await pilot.press("right")  # accepts the suggestion
        assert app.screen.query_one(Input).value == "total_gpu_memory"
        await pilot.press("enter")
        await settled(pilot)
        assert not isinstance(app.screen, SearchScreen)
        assert app.view is not None
        assert app.view.param == "total_gpu_memory"
        assert app.view.step(app.view.chain.spine[-1]).name == "max_total_num_tokens"
        await pilot.press("backspace")
        await pilot.pause()
        assert app.view.param == "mem_fraction_static"

    drive(app, scenario)


def test_without_a_name_the_search_opens(walk_app: Callable[..., WalkApp]) -> None:
    app = walk_app(name=None)

    async def scenario(pilot: Pilot) -> None:
        assert isinstance(app.screen, SearchScreen)
        await pilot.press("down")  # nothing typed: no match to pick
        await pilot.press(*"ServerArgs.mem_fraction_s")
        await pilot.pause()
        await pilot.press("down", "enter")  # pick the first match from the list
        await settled(pilot)
        assert app.view is not None
        assert app.view.param == "ServerArgs.mem_fraction_static"

    drive(app, scenario)


def test_e_exports_the_chain(walk_app: Callable[..., WalkApp], tmp_path: Path) -> None:
    app = walk_app()
    as_json, as_text = tmp_path / "chain.json", tmp_path / "chain.txt"

    async def export(pilot: Pilot, *keys: str, to: Path) -> None:
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen)
        await pilot.press(*keys)  # the format
        path = app.screen.query_one(Input)
        assert path.value == "sgtrace-mem_fraction_static" + to.suffix
        path.value = str(to)
        path.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, ExportScreen)

    as_graphml = tmp_path / "chain.graphml"
    # The text goes through a link, as every output of sgtrace: its target written, it kept.
    linked = tmp_path / "kept" / "chain.txt"
    linked.parent.mkdir()
    as_text.symlink_to(linked)

    async def scenario(pilot: Pilot) -> None:
        await export(pilot, to=as_json)
        await export(pilot, "down", to=as_text)
        assert "text written to " + str(as_text) in [n.message for n in app._notifications]
        assert as_text.is_symlink() and linked.read_text().startswith("mem_fraction_static")
        await export(pilot, "down", "down", "down", to=as_graphml)

    drive(app, scenario)
    graph = nx.read_graphml(as_graphml)  # the export writers, read back by networkx
    assert graph.number_of_nodes() == len(json.loads(as_json.read_text())["nodes"])
    chain = json.loads(as_json.read_text())
    assert chain["source"] == SOURCE
    assert chain["param"] == "mem_fraction_static"
    assert chain["nodes"][0]["file"] == SERVER_ARGS
    assert chain["nodes"][0]["kind"] == "cli_flag"
    assert len(chain["spine"]) == 27
    text = as_text.read_text()
    assert text.startswith(
        "mem_fraction_static in pypi:sglang==0.4.6: 56 steps in 8 files, spine of 27\n"
    )


def test_question_mark_shows_the_keys(walk_app: Callable[..., WalkApp]) -> None:
    app = walk_app()

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        shown = "\n" + "\n".join(widget_text(static) for static in app.screen.query(Static))
        assert "backspace  go back to where you were before the last jump" in shown
        for key in ("up / down", "enter", "tab", "space", "/", "f", "b", "e", "?", "q"):
            assert f"\n{key}  " in shown
        assert "ƒ formula  formula" in shown
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)

    drive(app, scenario)


def test_the_footer_shows_the_keys(walk_app: Callable[..., WalkApp]) -> None:
    app = walk_app()

    async def scenario(pilot: Pilot) -> None:
        shown = {b.binding.key for b in app.active_bindings.values() if b.binding.show}
        assert {"up", "down", "enter", "backspace", "f", "b", "slash", "e"} <= shown
        assert {"question_mark", "q"} <= shown

    drive(app, scenario)


def test_mouse_clicks_select_steps(walk_app: Callable[..., WalkApp]) -> None:
    app = walk_app()

    async def scenario(pilot: Pilot) -> None:
        tree = app.query_one(ChainTree)
        assert app.view is not None
        param = app.view.chain.spine[spine(app).index(PARAM)]
        row = tree.nodes_by_step[param].line - tree.scroll_offset.y
        await pilot.click(ChainTree, offset=(8, 1 + row))  # below the border
        await pilot.pause()
        assert where(app) == PARAM
        assert tree.cursor_node is tree.nodes_by_step[param]
        # The attribute write two lines below is marked in the gutter; click it.
        rows = source_text(app)
        row = next(i for i, text in enumerate(rows) if text.startswith("✎  121 │"))
        await pilot.click(SourceView, offset=(10, 1 + row))
        await pilot.pause()
        assert where(app) == ("attr_write", MODEL_RUNNER, 121)
        assert len(app.history) == 1

    drive(app, scenario)


def test_q_quits(walk_app: Callable[..., WalkApp]) -> None:
    app = walk_app()

    async def scenario(pilot: Pilot) -> None:
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running

    drive(app, scenario)


def test_errors_are_notifications_not_tracebacks(
    walk_app: Callable[..., WalkApp], tmp_path: Path
) -> None:
    unknown = walk_app(name="no_such_parameter_anywhere")

    async def name_not_found(pilot: Pilot) -> None:
        messages = [n.message for n in unknown._notifications]
        assert any("'no_such_parameter_anywhere' is bound nowhere" in m for m in messages)
        assert unknown.is_running
        assert not unknown.query_one("#progress").display
        assert unknown.walker.complete("mem_fraction_s")[0] == "mem_fraction_static"  # / works

    drive(unknown, name_not_found)

    missing = WalkApp(str(tmp_path / "missing"), "x")

    async def source_not_found(pilot: Pilot) -> None:
        messages = [n.message for n in missing._notifications]
        assert any("missing does not exist" in m for m in messages)
        assert missing.is_running

    drive(missing, source_not_found)


def test_moving_never_waits_on_the_engine(walk_app: Callable[..., WalkApp]) -> None:
    """While a trace runs (here held until the test lets it go, as a big release holds it
    for seconds), the steps of the open chain are walked at once: moving cannot be waiting
    on the engine, which only finishes once the moves are seen."""
    app = walk_app()
    recentre = app.walker.recentre
    release = threading.Event()

    def held_recentre(step: Step, direction: str) -> Outline:
        assert release.wait(60), "the test never let the trace finish"
        return recentre(step, direction)

    app.walker.recentre = held_recentre  # type: ignore[method-assign]

    async def scenario(pilot: Pilot) -> None:
        # Keys as a terminal sends them: Pilot's press() would wait for the app to be idle.
        app.simulate_key("f")
        await soon(lambda: app.query_one("#progress").display)
        for expected in (PARSED, PASSED):
            app.simulate_key("down")
            await soon(lambda: where(app) == expected)  # noqa: B023
        assert app.view is not None
        assert app.view.chain.direction == "both"  # the trace is still held
        release.set()
        await settled(pilot)
        assert app.view.chain.direction == "forward"

    try:
        drive(app, scenario)
    finally:
        release.set()


def test_a_tree_indexed_in_part_is_told_with_its_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.unit.test_cli import broken_tree

    monkeypatch.setenv("SGTRACE_CACHE", str(tmp_path / "cache"))
    app = WalkApp(str(broken_tree(tmp_path / "tree", 3)), "c")

    async def told(pilot: Pilot) -> None:
        await soon(lambda: any("indexed in part" in n.message for n in app._notifications), 5)
        messages = [n.message for n in app._notifications if "indexed in part" in n.message]
        assert messages == [
            "3 file(s) had problems and were indexed in part: pkg/broken0.py, "
            "pkg/broken1.py and 1 more"
        ]

    drive(app, told)


def test_every_route_follows_the_spine_as_its_own_group(snippet_session) -> None:
    """A value that reaches its sink two ways: the spine, then `route 2`, from the step where
    it leaves the spine."""
    session = snippet_session({"pkg/__init__.py": "", "pkg/run.py": TWO_ROUTES})
    app = WalkApp(
        "tree", "Runner.__init__.fraction", "both", session=session, sinks=("max_tokens",)
    )

    async def scenario(pilot: Pilot) -> None:
        tree = app.query_one(ChainTree)
        labels = [str(node.label) for node in tree.root.children]
        assert [label.split()[0] for label in labels[:9]] == [str(n) for n in range(1, 10)]
        group = next(node for node in tree.root.children if str(node.label).startswith("route"))
        assert str(group.label) == "route 2 to run.py:22, leaving the spine after step 2"
        steps = [str(child.label).split() for child in group.children]
        assert [(words[0], words[3], words[-1]) for words in steps] == [
            ("3", "run.py:22", "Runner.resize")
        ]

    drive(app, scenario)
