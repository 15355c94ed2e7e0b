"""Flags read out of the namespace their parser returns: argparse puts each flag's value at
the attribute of its dest in the namespace (a `parsed` edge, tracer/graph/parsed.py), and
the search follows the namespace as any object (tracer/graph/held.py) to the reads of the
dest out of it, in the same function, through arguments, returns, `self.args = args`, the
methods called on the object that keeps it, `getattr(args, "dest")` and `**vars(args)`."""

from __future__ import annotations

from tests.conftest import spine_code, trace

TRAINER = {
    "tool/__init__.py": "",
    "tool/cli.py": """
        import argparse

        from tool.trainer import Trainer


        def get_parser():
            parser = argparse.ArgumentParser()
            group = parser.add_argument_group("optim")
            group.add_argument("--learning-rate", type=float, default=1e-3)
            parser.add_argument("--epochs", type=int, default=3)
            return parser


        def main():
            args = get_parser().parse_args()
            trainer = Trainer(args)
            trainer.fit()


        if __name__ == "__main__":
            main()
    """,
    "tool/trainer.py": """
        class Trainer:
            def __init__(self, args):
                self.args = args
                self.steps = 0

            def fit(self):
                for epoch in range(self.args.epochs):
                    self.step_size = self.schedule(epoch)

            def schedule(self, epoch):
                lr = self.args.learning_rate / (1 + epoch)
                return lr
    """,
}


def test_a_flag_is_read_out_of_the_namespace_kept_in_an_attribute(snippet_session):
    """The parser is made and returned by one function and parsed on its result by another;
    the namespace is handed to a constructor, kept as `self.args` and read in another method.
    With no preset and no `--to`, the spine ends where the value is kept; on the way, the
    object's own route (made by the constructor, handed to the methods called on it)."""
    session = snippet_session(TRAINER)
    chain = trace(session.graph, "learning_rate")
    assert spine_code(chain) == [
        'group.add_argument("--learning-rate", type=float, default=1e-3)',
        "args = get_parser().parse_args()",
        "trainer = Trainer(args)",
        "args",
        "self.args = args",
        "trainer = Trainer(args)",  # the object the constructor made, with the namespace in it
        "self",  # `trainer.fit()`
        "self",  # `self.schedule(epoch)`
        "lr = self.args.learning_rate / (1 + epoch)",
        "return lr",
        "self.step_size = self.schedule(epoch)",
    ]
    kinds = {(e.kind, e.label) for e in chain.edges}
    assert ("parsed", "learning_rate") in kinds
    assert ("store", "args") in kinds
    assert ("read", "args.learning_rate") in kinds
    # The other flag's read is no step of this one.
    assert all("self.args.epochs" not in s.code for s in chain.steps)


SCRIPT = {
    "run.py": """
        import argparse


        def build(args):
            return {"size": args.size, "fraction": args.fraction}


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--fraction", type=float, default=0.5)
            parser.add_argument("--size", type=int)
            args = parser.parse_args()
            scaled = args.fraction * 100
            return build(args), scaled
    """,
}


def test_reads_in_the_parsing_function_and_where_the_namespace_is_passed(snippet_session):
    """Both reads of `args.fraction` are found from the flag, and the read's own way back
    (a backward trace from the formula) reaches the flag through the namespace."""
    session = snippet_session(SCRIPT)
    forward = trace(session.graph, "fraction", direction="forward")
    codes = {s.code for s in forward.steps}
    assert 'return {"size": args.size, "fraction": args.fraction}' in codes
    assert "scaled = args.fraction * 100" in codes
    backward = trace(session.graph, "scaled", direction="backward")
    assert spine_code(backward) == [
        'parser.add_argument("--fraction", type=float, default=0.5)',
        "args = parser.parse_args()",
        "scaled = args.fraction * 100",
    ]


def test_a_flag_with_a_field_still_lands_in_the_field(snippet_session):
    """Where a class declares the dest, the flag's value goes to the field, not to the
    namespace's reads (the settings-object rule stays first)."""
    files = {
        "app.py": """
            import argparse
            from dataclasses import dataclass


            @dataclass
            class Settings:
                fraction: float = 0.9


            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--fraction", type=float, default=Settings.fraction)
                args = parser.parse_args()
                settings = Settings(fraction=args.fraction)
                return settings.fraction * 2
        """,
    }
    session = snippet_session(files)
    flag = next(s for s in session.graph.seeds("fraction") if "flag" in s)
    kinds = {e.kind for e in session.graph.edges(flag, True)}
    assert kinds == {"flag_to_field"}


def test_a_namespace_spread_into_keywords_fills_the_parameter_of_the_dest(snippet_session):
    """`train(**vars(args))` hands each dest to the parameter of that name: the flag's value is
    taken out of the namespace there, surely (the spread alone binds every parameter as a
    guess)."""
    session = snippet_session(
        {
            "run.py": """
                import argparse


                def train(lr, epochs=3, **rest):
                    step = lr * 0.1
                    return step


                def main():
                    parser = argparse.ArgumentParser()
                    parser.add_argument("--lr", type=float, default=0.1)
                    parser.add_argument("--epochs", type=int, default=3)
                    args = parser.parse_args()
                    result = train(**vars(args))
                    return result
            """,
        }
    )
    chain = trace(session.graph, "lr", sinks=["result"])
    assert spine_code(chain) == [
        'parser.add_argument("--lr", type=float, default=0.1)',
        "args = parser.parse_args()",
        "result = train(**vars(args))",
        "lr",
        "step = lr * 0.1",
        "return step",
        "result = train(**vars(args))",
    ]
    spread, param = chain.spine[2], chain.spine[3]
    kinds = {(e.kind, e.confidence) for e in chain.edges if (e.src, e.dst) == (spread, param)}
    assert ("arg_to_param", 1.0) in kinds
    # `vars(args)` gives each attribute at the key of its name: `epochs` is no step of it.
    assert all(step.name != "epochs" for step in chain.steps)


def test_without_a_sink_the_value_ends_where_it_is_returned_out_of_the_tree(snippet_session):
    """No attribute keeps the value: the spine ends at the return of the entry point that no
    code of the tree calls, after the value is computed."""
    session = snippet_session(
        {
            "run.py": """
                import argparse


                def scale(lr):
                    return lr * 0.1


                def main():
                    parser = argparse.ArgumentParser()
                    parser.add_argument("--lr", type=float, default=0.1)
                    args = parser.parse_args()
                    step = scale(args.lr)
                    return step
            """,
        }
    )
    chain = trace(session.graph, "lr")
    assert spine_code(chain)[-3:] == ["return lr * 0.1", "step = scale(args.lr)", "return step"]


def test_a_flag_whose_dest_only_a_guess_declares_is_read_in_the_namespace(snippet_session):
    """Two unrelated classes declare a field of the dest (no `default=` names either): the
    flag's edges to them stay guesses, and its reads out of the namespace are followed too."""
    session = snippet_session(
        {
            "cfg.py": """
                from dataclasses import dataclass


                @dataclass
                class ClusterConfig:
                    machines: int = 1


                @dataclass
                class CloudConfig:
                    machines: int = 1
            """,
            "launch.py": """
                import argparse


                def main():
                    parser = argparse.ArgumentParser()
                    parser.add_argument("--machines", type=int, default=None)
                    args = parser.parse_args()
                    threads = 64 // args.machines
                    return threads
            """,
        }
    )
    flag = next(s for s in session.graph.seeds("machines") if "flag" in s)
    kinds = sorted({(e.kind, e.confidence) for e in session.graph.edges(flag, True)})
    assert ("parsed", 1.0) in kinds
    assert all(c < 0.8 for kind, c in kinds if kind == "flag_to_field")
    chain = trace(session.graph, "machines", sinks=["threads"])
    assert spine_code(chain) == [
        'parser.add_argument("--machines", type=int, default=None)',
        "args = parser.parse_args()",
        "threads = 64 // args.machines",
    ]


def test_a_parser_handed_to_a_function_that_parses_it_and_a_value_passed_on(snippet_session):
    """`args = parse_eval_args(setup_parser())`-style: the parser is made by one function and
    parsed by another that returns the namespace; the value is followed from there to `size`."""
    session = snippet_session(
        {
            "cli.py": """
                import argparse

                from work import evaluate


                def setup_parser():
                    parser = argparse.ArgumentParser()
                    parser.add_argument("--limit", type=int, default=None)
                    return parser


                def parse_eval_args(parser):
                    return parser.parse_args()


                def cli_evaluate():
                    parser = setup_parser()
                    args = parse_eval_args(parser)
                    evaluate(limit=args.limit)


                if __name__ == "__main__":
                    cli_evaluate()
            """,
            "work.py": """
                def sample_size(limit):
                    return limit * 2


                def evaluate(limit=None):
                    size = sample_size(limit)
                    print(size)
            """,
        }
    )
    chain = trace(session.graph, "limit", sinks=["size"])
    assert spine_code(chain) == [
        'parser.add_argument("--limit", type=int, default=None)',
        "return parser.parse_args()",
        "args = parse_eval_args(parser)",
        "evaluate(limit=args.limit)",
        "limit=None",
        "size = sample_size(limit)",
        "limit",
        "return limit * 2",
        "size = sample_size(limit)",
    ]


def test_a_commands_flag_is_parsed_by_the_root_parser(snippet_session):
    """A command's parser (`sub.add_parser("run")`, from `sub = parser.add_subparsers()`,
    made in a function given `sub`) is parsed by its root parser: the flag's value is in the
    root's namespace."""
    session = snippet_session(
        {
            "cli.py": """
                import argparse


                def add_run_command(sub):
                    run = sub.add_parser("run")
                    run.add_argument("--steps", type=int, default=10)


                def main():
                    parser = argparse.ArgumentParser()
                    sub = parser.add_subparsers()
                    add_run_command(sub)
                    args = parser.parse_args()
                    total = args.steps * 2
                    return total
            """,
        }
    )
    chain = trace(session.graph, "steps")
    assert spine_code(chain) == [
        'run.add_argument("--steps", type=int, default=10)',
        "args = parser.parse_args()",
        "total = args.steps * 2",
        "return total",
    ]


def test_a_dest_read_by_a_constant_name(snippet_session):
    """`getattr(args, "lr")` reads the dest like `args.lr`; another constant name does not."""
    session = snippet_session(
        {
            "run.py": """
                import argparse


                def main():
                    parser = argparse.ArgumentParser()
                    parser.add_argument("--lr", type=float, default=0.1)
                    parser.add_argument("--wd", type=float, default=0.0)
                    args = parser.parse_args()
                    rate = getattr(args, "lr") * 2
                    decay = getattr(args, "wd") * 2
                    return rate, decay
            """,
        }
    )
    chain = trace(session.graph, "lr", direction="forward")
    codes = {step.code for step in chain.steps}
    assert 'rate = getattr(args, "lr") * 2' in codes
    assert 'decay = getattr(args, "wd") * 2' not in codes
    backward = trace(session.graph, "decay", direction="backward")
    assert spine_code(backward) == [
        'parser.add_argument("--wd", type=float, default=0.0)',
        "args = parser.parse_args()",
        'decay = getattr(args, "wd") * 2',
    ]
