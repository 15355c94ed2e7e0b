"""What some callables outside the tree do with the functions they are given: they run them
later, with arguments given beside them. A process or a thread runs `target(*args, **kwargs)`
(`multiprocessing.Process(target=run, args=(server_args,))`): the value `server_args` reaches
`run`'s first parameter, in another process. Standard library knowledge, by the dotted name
the index resolves the callee to; nothing of any analysed project."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Launcher:
    """A callable that runs the function given as TARGET (by keyword, or at TARGET_POSITION)
    with the tuple given as ARGS and the dict given as KWARGS."""

    target: str
    target_position: int
    args: str
    kwargs: str


PROCESS = Launcher(target="target", target_position=1, args="args", kwargs="kwargs")

LAUNCHERS = {
    "multiprocessing.Process": PROCESS,
    "multiprocessing.context.Process": PROCESS,
    "multiprocessing.process.BaseProcess": PROCESS,
    "torch.multiprocessing.Process": PROCESS,
    "threading.Thread": PROCESS,
}
LAUNCHER_NAMES = frozenset(name.rpartition(".")[2] for name in LAUNCHERS)
