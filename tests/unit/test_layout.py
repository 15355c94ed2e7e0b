"""The house: the packages of tracer/ are the stages of the flow, each importing only from the
stages below it, and no module imports itself back through others. Read from the code's own
import statements (every one: at the top, inside functions, under TYPE_CHECKING)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
# The stages, lowest first. A module may import from its own stage and those below it.
STAGES = [
    ["tracer.errors", "tracer.versions", "tracer.queries"],
    ["tracer.extract"],
    ["tracer.sources"],
    ["tracer.store"],
    ["tracer.index"],
    ["tracer.graph"],
    ["tracer.trace", "tracer.session"],
    ["tracer.analyses"],
    ["tracer.views"],
    ["tui"],
    ["tracer.cli"],
]
ENGINE = [p for stage in STAGES[: STAGES.index(["tracer.views"])] for p in stage]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports() -> nx.DiGraph:
    """Module -> the modules of this project it imports."""
    files = sorted([*ROOT.glob("tracer/**/*.py"), *ROOT.glob("tui/**/*.py")])
    modules = {module_name(path): path for path in files}
    graph = nx.DiGraph()
    for name, path in modules.items():
        graph.add_node(name)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                    base = f"{base}.{node.module}" if node.module else base
                targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
            for target in targets:
                # `from pkg import module` names a module; `from mod import name` a name in it.
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph.add_edge(name, target)
    return graph


def stage_of(module: str) -> int:
    for number, stage in enumerate(STAGES):
        if any(module == p or module.startswith(p + ".") for p in stage):
            return number
    raise AssertionError(f"{module} belongs to no stage: add it to STAGES")


def test_no_module_imports_itself_back() -> None:
    cycles = [sorted(c) for c in nx.strongly_connected_components(imports()) if len(c) > 1]
    assert cycles == []


def test_each_stage_imports_only_from_the_stages_below_it() -> None:
    upward = [f"{a} -> {b}" for a, b in imports().edges if stage_of(b) > stage_of(a)]
    assert upward == []


def test_the_resolver_never_asks_the_value_follower() -> None:
    """tracer/index/calls/ asks the resolver; the rest of the index never asks it back."""
    graph = imports()
    follower = "tracer.index.calls"
    index = [m for m in graph if m.startswith("tracer.index.") and not m.startswith(follower)]
    assert (
        "tracer.index.resolve" in index
        and ("tracer.index.calls.rules", "tracer.index.resolve") in graph.edges
    )
    back = [f"{a} -> {b}" for a in index for b in graph.successors(a) if b.startswith(follower)]
    assert back == []


def test_the_engine_imports_nothing_of_the_views_the_cli_or_the_tui() -> None:
    graph = imports()
    engine = [m for m in graph if any(m == p or m.startswith(p + ".") for p in ENGINE)]
    assert len(engine) > 30 and ("tracer.graph.flow", "tracer.store.facts") in graph.edges
    outside = [
        f"{a} -> {b}"
        for a in engine
        for b in graph.successors(a)
        if b.startswith(("tracer.views", "tracer.cli", "tui"))
    ]
    assert outside == []


def test_every_package_is_installed() -> None:
    """`pip install .` installs the packages pyproject.toml lists: a new one left out of the
    list works in a checkout and fails in every install."""
    text = (ROOT / "pyproject.toml").read_text()
    listed = set(
        re.findall(r'"((?:tracer|tui)(?:\.\w+)*)"', text.split("packages = [", 1)[1].split("]")[0])
    )
    folders = {
        module_name(init)
        for init in [*ROOT.glob("tracer/**/__init__.py"), *ROOT.glob("tui/**/__init__.py")]
    }
    assert folders - listed == set()
