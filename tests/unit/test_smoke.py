from tests.conftest import spine_of, trace


def test_keyword_argument_to_attribute_to_formula(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/runner.py": """
                class Runner:
                    def __init__(self, fraction: float):
                        self.fraction = fraction

                    def size(self, total):
                        rest = total * (1 - self.fraction)
                        self.tokens = int(rest)
            """,
            "pkg/worker.py": """
                from pkg.runner import Runner

                def start(fraction):
                    return Runner(fraction=fraction)
            """,
        }
    )
    chain = trace(session.graph, "Runner.fraction", sinks=["tokens"])
    assert spine_of(session, chain) == [
        ("pkg/worker.py", 3, "param"),
        ("pkg/worker.py", 4, "call_arg"),
        ("pkg/runner.py", 2, "param"),
        ("pkg/runner.py", 3, "attr_write"),
        ("pkg/runner.py", 6, "formula"),
        ("pkg/runner.py", 7, "attr_write"),
    ]


def test_attribute_of_a_call_result_is_typed_by_the_return_annotation(snippet_session):
    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/config.py": """
                class Schedule:
                    def __init__(self, fraction: float):
                        self.fraction = fraction

                def get_schedule() -> "Schedule":
                    return CURRENT
            """,
            "pkg/use.py": """
                from pkg.config import get_schedule

                def size(total):
                    rest = total * get_schedule().fraction
                    return rest
            """,
        }
    )
    chain = trace(session.graph, "Schedule.fraction", direction="forward", sinks=["rest"])
    assert spine_of(session, chain) == [
        ("pkg/config.py", 3, "attr_write"),
        ("pkg/use.py", 4, "formula"),
    ]
    edge = next(e for e in chain.edges if e.dst.startswith("pkg/use.py"))
    assert (edge.kind, edge.confidence) == ("attr", 1.0)


def test_spine_only_keeps_the_spine_and_its_edges(snippet_session):
    from tracer.trace.chains import spine_only

    session = snippet_session(
        {
            "pkg/__init__.py": "",
            "pkg/runner.py": """
                class Runner:
                    def __init__(self, fraction: float):
                        self.fraction = fraction
                        self.copy = fraction

                    def size(self, total):
                        rest = total * (1 - self.fraction)
                        self.tokens = int(rest)
            """,
        }
    )
    chain = trace(session.graph, "Runner.fraction", sinks=["tokens"])
    spine = spine_only(chain)
    assert [s.id for s in spine.steps] == list(chain.spine)
    assert len(chain.steps) > len(spine.steps)
    pairs = list(zip(chain.spine, chain.spine[1:], strict=False))
    assert [(e.src, e.dst) for e in spine.edges] == pairs
