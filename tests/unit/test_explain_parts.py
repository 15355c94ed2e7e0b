"""The pieces of `explain`, on snippets: log templates read from logging calls, log prefixes,
and the arithmetic evaluator (which never runs the code it reads)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tree_sitter import Node

from tracer.analyses.explain.arith import Unbound, evaluate, statement_value
from tracer.analyses.explain.evaluate import neutral
from tracer.analyses.explain.logread import read_log
from tracer.analyses.explain.templates import Hole, file_templates

SNIPPET = b"""
import logging
logger = logging.getLogger(__name__)

class Runner:
    def load(self):
        before = get_free(self.device)
        after = get_free(self.device)
        self.usage = before - after
        logger.info(
            f"Load end. {'cuda' if self.cuda else 'cpu'} "
            f"avail mem={after:.2f} GB, mem usage={self.usage:.2f} GB."
        )
        logger.warning("tokens %d of %.1f%%, %s", self.n, self.pct, self.name)
        logger.info("ratio: %.3f" % ratio)
        logger.info("{} and {x:.1f}".format(a, x=b))
        print(f"{self.n=} done")
        logger.info(message_held_in_a_variable)
"""


def parts(template) -> list[object]:
    return [p if not isinstance(p, Hole) else ("hole", p.expr, p.spec) for p in template.parts]


def test_templates_of_every_message_form() -> None:
    templates = file_templates("m.py", SNIPPET)
    assert [t.line for t in templates] == [10, 14, 15, 16, 17]
    load, warning, ratio, formatted, printed = templates
    assert load.symbol == "Runner.load" and load.level == "info"
    assert parts(load) == [
        "Load end. ",
        ("cuda", "cpu"),
        " avail mem=",
        ("hole", "after", ".2f"),
        " GB, mem usage=",
        ("hole", "self.usage", ".2f"),
        " GB.",
    ]
    assert load.holes[0].measured_by == ("get_free",)
    usage = load.holes[1]
    assert (usage.minuend, usage.subtrahend, usage.minuend_measured_by) == (
        "before",
        "after",
        ("get_free",),
    )
    assert parts(warning) == [
        "tokens ",
        ("hole", "self.n", "d"),
        " of ",
        ("hole", "self.pct", ".1f"),
        "%, ",
        ("hole", "self.name", ""),
    ]
    assert parts(ratio) == ["ratio: ", ("hole", "ratio", ".3f")]
    assert parts(formatted) == [("hole", "a", ""), " and ", ("hole", "b", ".1f")]
    assert parts(printed) == ["self.n=", ("hole", "self.n", ""), " done"]


def test_a_template_reads_its_own_lines_back() -> None:
    load = file_templates("m.py", SNIPPET)[0]
    found = load.pattern.fullmatch("Load end. cpu avail mem=21.71 GB, mem usage=72.31 GB.")
    assert found is not None
    assert [found[f"h{i}"] for i, p in enumerate(load.parts) if isinstance(p, Hole)] == [
        "21.71",
        "72.31",
    ]
    assert load.pattern.fullmatch("Load end. gpu avail mem=1 GB, mem usage=2 GB.") is None


def test_log_prefixes_ranks_and_journal_headers() -> None:
    lines = read_log(
        "[2025-10-16 09:06:10 TP3] Load weight begin. avail mem=137.29 GB\n"
        "[2025-10-16 09:06:10 DP1 TP0 EP2] x=1\n"
        "Nov 29 12:00:00 gpu-box python3[4242]: [2025-10-16 09:06:11 PP0 TP1] y=2\n"
        "\n"
        "[2025-10-16 09:06:12] server_args=ServerArgs(a=[1, 2])\n"
        "Capture cuda graph bs [1, 2, 4]\n"
        "[gpu_id=3] Load weight begin.\n"
    )
    assert [(line.number, line.rank, line.message) for line in lines] == [
        (1, "TP3", "Load weight begin. avail mem=137.29 GB"),
        (2, "DP1 TP0 EP2", "x=1"),
        (3, "PP0 TP1", "y=2"),
        (5, "", "server_args=ServerArgs(a=[1, 2])"),
        (6, "", "Capture cuda graph bs [1, 2, 4]"),
        # A rank named in the message its call prints: kept there, and read as the rank.
        (7, "gpu_id=3", "[gpu_id=3] Load weight begin."),
    ]
    assert lines[0].time == "2025-10-16 09:06:10"


def values(**bound: float):
    return lambda name, _node: bound.get(name)


def test_the_evaluator_substitutes_and_computes() -> None:
    node = statement_value("rest = avail - total * (\n    1 - self.mfs\n)")
    result = evaluate(node, values(avail=21.71, total=94.02, **{"self.mfs": 0.88}))
    assert result.value == pytest.approx(10.4276)
    assert result.shown == "21.71 - 94.02 * (1 - 0.88)"
    node = statement_value("return int(rest * (1 << 30)) // cell")
    assert evaluate(node, values(rest=1.5, cell=1024)).value == 1572864


def test_the_evaluator_refuses_what_is_not_arithmetic() -> None:
    for code in ("x = open('/etc/passwd').read()", "x = __import__('os')", "x = a[0] + 1"):
        with pytest.raises(Unbound):
            evaluate(statement_value(code), values(a=1))
    with pytest.raises(Unbound):
        evaluate(statement_value("x = 2 ** 10000"), values())
    with pytest.raises(Unbound, match="division by zero"):
        evaluate(statement_value("x = a / 0"), values(a=1))


def test_an_adjustment_the_log_cannot_give_leaves_the_value_as_it_is() -> None:
    """Where the value on its way (here `tokens`) is adjusted by something the log does not
    give, that something is taken as what changes it least; anything else stays unknown."""

    def neutral_of(code: str, name: str) -> tuple[float, str] | None:
        """What NAME, read in CODE's value, is taken as when the log cannot give it."""
        node = statement_value(code)
        assert node is not None
        found = [n for n in walk(node) if n.text.decode() == name and n.type in NAMES]
        return neutral(found[0], "tokens")

    assert neutral_of("x = max(tokens - self.overhead, 0)", "self.overhead")[0] == 0.0
    assert neutral_of("x = tokens // page * page", "page")[0] == 1.0
    assert neutral_of("x = 1 - fraction", "fraction") is None  # no adjustment of the value
    assert neutral_of("x = tokens // cell", "cell") is None  # the count solves a divisor
    assert neutral_of("x = budget - tokens", "budget") is None
    augmented = statement_value("tokens *= scale")
    assert augmented is not None and augmented.type == "augmented_assignment"
    scale = augmented.child_by_field_name("right")
    assert scale is not None
    assert neutral(scale, "tokens") == (1.0, "the value on its way is scaled by it: taken as 1")


NAMES = ("identifier", "attribute")


def walk(node: Node) -> Iterator[Node]:
    yield node
    for child in node.named_children:
        yield from walk(child)
