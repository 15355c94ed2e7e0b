"""The engine is general Python: no name of the code it was built to trace. The identifiers of
the hand-checked routes (tests/integration/chains/: SGLang, vLLM, transformers) and of the
command line's presets (tracer/cli/presets.py) appear nowhere in the engine's modules
(extract, store, index, graph, trace), not even in a comment: the engine's rules come from
Python and its libraries, and SGLang knowledge lives in the presets, which only hint."""

from __future__ import annotations

import ast
import builtins
import keyword
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ("extract", "store", "index", "graph", "trace")
CHAINS = ROOT / "tests" / "integration" / "chains"
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A name of that code, not of Python: snake_case of two words or more, or CamelCase.
DISTINCT = re.compile(r"_?[a-z0-9]+(?:_[a-z0-9]+)+|_?(?:[A-Z][a-z0-9]+){2,}[A-Za-z0-9]*")
# Names that code shares with Python's standard library (argparse, dataclasses): the engine
# models those libraries, so it may name them.
LIBRARY = frozenset(
    {"add_parser", "parse_args", "default_factory", "add_argument", "parse_known_args"}
)


def route_names() -> set[str]:
    """The distinctive identifiers of the hand chains' code and of the presets' strings."""
    found: set[str] = set()
    for path in sorted(CHAINS.glob("*.txt")):
        for line in path.read_text().splitlines():
            parts = line.split(None, 3)
            if line.startswith("#") or len(parts) < 4:
                continue
            found.update(WORD.findall(parts[3]))
    presets = ast.parse((ROOT / "tracer" / "cli" / "presets.py").read_text())
    for node in ast.walk(presets):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.update(WORD.findall(node.value))
    return {
        name
        for name in found
        if DISTINCT.fullmatch(name)
        and len(name) >= 8
        and not keyword.iskeyword(name)
        and not hasattr(builtins, name)
        and name not in LIBRARY
    }


def test_the_routes_names_are_many() -> None:
    names = route_names()
    assert len(names) > 80
    assert {"mem_fraction_static", "gpu_memory_utilization", "get_kv_cache_configs"} <= names


def test_no_name_of_the_traced_code_in_the_engine() -> None:
    names = route_names()
    pattern = re.compile(
        r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, names)) + r")(?![A-Za-z0-9_])"
    )
    found = sorted(
        f"{path.relative_to(ROOT).as_posix()}:{number}: {match.group(1)}"
        for folder in ENGINE
        for path in (ROOT / "tracer" / folder).rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        for match in pattern.finditer(line)
    )
    assert found == []
