"""`match` statements (tracer/extract/cases.py): the subject's value flows into the names each
case's patterns bind, as Python binds them: a capture takes the subject whole, a sequence
pattern each position, a mapping pattern each key, a class pattern each attribute named, a
star or double star what the others leave; each binding is a step of kind local_assign on
the case's header, and the case's body reads its names there."""

from __future__ import annotations

from collections.abc import Callable

from tracer.analyses.callgraph import call_graph
from tracer.extract.flows import extract_flows
from tracer.extract.parse import parse
from tracer.extract.symbols import summarize
from tracer.session import Session
from tracer.trace.chains import Chain, trace

Snippets = Callable[[dict[str, str]], Session]
# Every program below hands what it wants to see to `sink` (each argument a step).
SINK = """
    SECRET = "s"
    PLAIN = "p"


    def sink(value):
        return value

"""


def forward(snippet_session: Snippets, body: str) -> Chain:
    """SECRET traced forward through the program SINK + BODY, as far as it goes."""
    session = snippet_session({"prog.py": SINK + body})
    return trace(session.graph, "SECRET", direction="forward", max_depth=100, branch_depth=100)


def bound(chain: Chain) -> set[str]:
    """The names a case binds that the value reaches."""
    return {s.name for s in chain.steps if s.kind == "local_assign" and s.code.startswith("case")}


def passed(chain: Chain) -> set[str]:
    """The lines of the arguments of `sink` the value reaches."""
    return {s.code for s in chain.steps if s.kind == "call_arg" and "sink(" in s.code}


def test_a_capture_binds_the_subject_whole_as_a_step_of_the_case(snippet_session):
    chain = forward(
        snippet_session,
        """
    def run():
        match SECRET:
            case whole:
                sink(whole)
    """,
    )
    binding = next(s for s in chain.steps if s.name == "whole")
    assert (binding.kind, binding.code, binding.symbol) == ("local_assign", "case whole:", "run")
    assert passed(chain) == {"sink(whole)"}


def test_a_mapping_pattern_binds_each_name_to_its_key(snippet_session):
    chain = forward(
        snippet_session,
        """
    def run():
        match {"a": SECRET, "b": PLAIN}:
            case {"a": x, "b": y}:
                sink(x)
                sink(y)
    """,
    )
    assert bound(chain) == {"x"}
    assert passed(chain) == {"sink(x)"}


def test_a_double_star_holds_the_keys_the_pattern_does_not_name(snippet_session):
    named = forward(
        snippet_session,
        """
    def run():
        match {"a": SECRET, "b": PLAIN}:
            case {"a": x, **others}:
                sink(x)
                sink(others)
    """,
    )
    assert bound(named) == {"x"}
    assert passed(named) == {"sink(x)"}
    left = forward(
        snippet_session,
        """
    def run():
        match {"a": PLAIN, "b": SECRET}:
            case {"a": x, **others}:
                sink(x)
                sink(others["b"])
                sink(others["a"])
    """,
    )
    assert bound(left) == {"others"}
    assert passed(left) == {'sink(others["b"])'}


def test_sequence_patterns_bind_by_position_as_unpacking_does(snippet_session):
    chain = forward(
        snippet_session,
        """
    def run():
        match (PLAIN, SECRET):
            case (first, second):
                sink(first)
                sink(second)
        match [SECRET, PLAIN]:
            case [one, two]:
                sink(one)
                sink(two)
        match PLAIN, SECRET:
            case left, right:
                sink(left)
                sink(right)
    """,
    )
    assert bound(chain) == {"second", "one", "right"}
    assert passed(chain) == {"sink(second)", "sink(one)", "sink(right)"}


def test_a_star_holds_the_tail_at_indices_not_known(snippet_session):
    tail = forward(
        snippet_session,
        """
    def run():
        match [PLAIN, SECRET, PLAIN]:
            case [head, *rest]:
                sink(head)
                sink(rest[0])
    """,
    )
    assert bound(tail) == {"rest"}
    assert passed(tail) == {"sink(rest[0])"}
    head = forward(
        snippet_session,
        """
    def run():
        match (SECRET, PLAIN):
            case (head, *rest):
                sink(head)
                sink(rest[0])
    """,
    )
    assert bound(head) == {"head"}
    assert passed(head) == {"sink(head)"}


def test_nested_patterns_compose_their_keys(snippet_session):
    chain = forward(
        snippet_session,
        """
    def run():
        match [{"k": SECRET, "j": PLAIN}, PLAIN]:
            case [{"k": inner, "j": other}, last]:
                sink(inner)
                sink(other)
                sink(last)
    """,
    )
    assert bound(chain) == {"inner"}
    assert passed(chain) == {"sink(inner)"}


def test_a_class_pattern_binds_the_attributes_it_names(snippet_session):
    chain = forward(
        snippet_session,
        """
    class Job:
        def __init__(self, path, name):
            self.path = path
            self.name = name


    def run():
        job = Job(SECRET, "n")
        match job:
            case Job(path=p, name=n):
                sink(p)
                sink(n)
    """,
    )
    assert bound(chain) == {"p"}
    assert passed(chain) == {"sink(p)"}


def test_a_positional_pattern_of_a_class_of_the_tree_binds_a_value_not_known(snippet_session):
    """`Job(p)` binds p to the attribute `Job.__match_args__` names, not followed: p is bound
    (what it held before is not read in the case), to nothing the value reaches."""
    chain = forward(
        snippet_session,
        """
    class Job:
        __match_args__ = ("path",)

        def __init__(self, path):
            self.path = path


    def run(p):
        p = SECRET
        job = Job(SECRET)
        match job:
            case Job(p):
                sink(p)  # in the case
        sink(p)  # after
    """,
    )
    assert bound(chain) == set()
    assert passed(chain) == {"sink(p)  # after"}


def test_a_builtin_class_pattern_binds_the_subject_itself(snippet_session):
    chain = forward(
        snippet_session,
        """
    def run():
        match SECRET:
            case int(number) | str(number):
                sink(number)
    """,
    )
    assert bound(chain) == {"number"}
    assert passed(chain) == {"sink(number)"}


def test_an_as_pattern_binds_the_whole_and_its_parts(snippet_session):
    chain = forward(
        snippet_session,
        """
    def run():
        match (PLAIN, SECRET):
            case [a, b] as both:
                sink(a)
                sink(both[1])
    """,
    )
    assert bound(chain) == {"b", "both"}
    assert passed(chain) == {"sink(both[1])"}


def test_each_alternative_of_an_or_pattern_binds(snippet_session):
    chain = forward(
        snippet_session,
        """
    def run():
        match (SECRET, 1):
            case (1, found) | (found, 1):
                sink(found)
    """,
    )
    assert passed(chain) == {"sink(found)"}
    binders = [s for s in chain.steps if s.name == "found" and s.kind == "local_assign"]
    assert len(binders) == 1  # the first alternative takes position 1, which holds 1


def test_a_guard_reads_the_names_its_pattern_binds(snippet_session):
    chain = forward(
        snippet_session,
        """
    def run():
        match SECRET:
            case text if sink(text):
                pass
            case other if other > 0:
                pass
    """,
    )
    assert passed(chain) == {"case text if sink(text):"}
    assert ("use", "case other if other > 0:") in {(s.kind, s.code) for s in chain.steps}


def test_a_case_binding_overwrites_the_name_in_its_body_only(snippet_session):
    chain = forward(
        snippet_session,
        """
    def run(items):
        x = SECRET
        match items:
            case [x]:
                sink(x)  # the case's own
            case _:
                sink(x)  # another case's
        sink(x)  # after the match
    """,
    )
    assert passed(chain) == {"sink(x)  # another case's", "sink(x)  # after the match"}


def test_a_subject_from_a_caller_keeps_its_keys(snippet_session):
    chain = forward(
        snippet_session,
        """
    def handle(message):
        match message:
            case {"command": command, "argument": argument}:
                sink(command)
                sink(argument)


    def main():
        handle({"command": SECRET, "argument": PLAIN})
    """,
    )
    assert bound(chain) == {"command"}
    assert passed(chain) == {"sink(command)"}


def test_literals_values_and_wildcards_bind_nothing():
    source = b"""
match event:
    case "quit" | 0 | -1 | None | True | 1.5 | 2j:
        pass
    case Mode.FAST | Mode.SLOW:
        pass
    case _ | [_, *_] | {"k": _}:
        pass
    case Point(x=0, y=Mode.FAST):
        pass
    case {"k": kept, **rest}:
        pass
    case Point(px, y=py):
        pass
"""
    parsed = parse(source)
    flows = extract_flows(parsed, summarize(parsed))
    assert [(a.targets[0].path, a.op, a.line, a.value.refs) for a in flows.assigns] == [
        ("kept", "case", 11, ("event",)),
        ("rest", "case", 11, ("event",)),
        ("px", "case", 13, ()),
        ("py", "case", 13, ("event.y",)),
    ]


def test_the_call_graph_runs_what_a_case_binds(snippet_session):
    """A function kept at a key of the subject is what the name bound at that key runs; the
    functions at other keys are not."""
    graph = call_graph(
        snippet_session(
            {
                "app.py": """
        def start():
            pass

        def stop():
            pass

        def dispatch(name):
            match {"run": start, "halt": stop}:
                case {"run": action, **rest}:
                    action()
        """
            }
        )
    )
    assert graph["app.dispatch"] == ["app.start"]


def test_broken_and_deep_patterns_bind_only_names_they_hold():
    """A name the parser's recovery left out binds nothing; a pattern 180 levels deep (a list
    in a dict, 45 times) binds its name at the whole path of keys and positions."""
    broken = parse(
        b'match event:\n    case {"k": }:\n        pass\n    case (a as):\n        pass\n'
    )
    assert [a.targets[0].path for a in extract_flows(broken, summarize(broken)).assigns] == ["a"]
    deep = parse(
        b"match event:\n    case " + b'[{"k": ' * 45 + b"y" + b"}]" * 45 + b":\n        pass\n"
    )
    (binding,) = extract_flows(deep, summarize(deep)).assigns
    shape, depth = binding.value.shape, 0
    while shape[0] == "item":
        shape, depth = shape[1], depth + 1
    assert (binding.targets[0].path, shape, depth, deep.warnings) == (
        "y",
        ("name", "event"),
        90,
        (),
    )
