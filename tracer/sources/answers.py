"""A host's answers, read as a hostile host might send them: a host may go silent in the
middle of one (a Watchdog ends the wait after the idle timeout), or never stop (every reader
here checks its cap as the bytes arrive, not once they are all in)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from tracer.errors import AnswerTooLarge, HostStalled
from tracer.sources.sshlib import asyncssh

CHUNK = 1 << 18
STDERR_KEPT = 8 << 10  # enough for the first lines of an error message


class Watchdog:
    """Cancels the task that enters it once nothing was heard from the host for IDLE
    seconds (`heard()` after each chunk); that cancellation leaves the block as HostStalled,
    naming the host (LABEL) and what it was DOING. One timer for the whole block, moved
    along lazily: a chunk costs one clock read, not a timer of its own."""

    def __init__(self, idle: float, label: str, doing: str) -> None:
        self.idle = idle
        self.label = label
        self.doing = doing
        self.fired = False

    def __enter__(self) -> Watchdog:
        self.fired = False
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.current_task()
        self.last = self.loop.time()
        self.timer = self.loop.call_later(self.idle, self.check)
        return self

    def heard(self) -> None:
        self.last = self.loop.time()

    def check(self) -> None:
        quiet = self.loop.time() - self.last
        if quiet < self.idle:
            self.timer = self.loop.call_later(self.idle - quiet, self.check)
        elif self.task is not None:
            self.fired = True
            self.task.cancel()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.timer.cancel()
        if self.fired and kind is not None and issubclass(kind, asyncio.CancelledError):
            uncancel = getattr(self.task, "uncancel", None)  # Python 3.11+: the cancel is ours
            if uncancel is not None:
                uncancel()
            raise HostStalled(
                f"{self.label} sent nothing for {self.idle:g} s while {self.doing}",
                "check the host (a hung disk or command?), or wait longer: --idle-timeout",
            ) from None


@dataclass(frozen=True, slots=True)
class Finished:
    """How a command ended."""

    status: int | None  # its exit status; None: not waited for (the reader had all), or lost
    stderr: bytes  # the start of what it wrote to stderr

    def reason(self) -> str:
        """Its error message's first line, for people."""
        lines = self.stderr.decode("utf-8", "replace").strip().splitlines()
        return lines[0] if lines else "no message"


async def run_streamed(
    conn: asyncssh.SSHClientConnection,
    command: str,
    consume: Callable[[bytes], bool],
    watchdog: Watchdog,
) -> Finished:
    """Run COMMAND on CONN and hand its output to CONSUME as it arrives, until CONSUME says
    it has all it wants (True: the command is then closed, not waited for) or the output
    ends. CONSUME raises to stop at its cap; WATCHDOG bounds every wait."""
    process: asyncssh.SSHClientProcess | None = None
    errors: asyncio.Future[bytes] | None = None
    try:
        with watchdog:
            process = await conn.create_process(command, encoding=None)
            errors = asyncio.ensure_future(kept_start(process.stderr, watchdog))
            while chunk := await process.stdout.read(CHUNK):
                watchdog.heard()
                if consume(chunk):
                    return Finished(None, b"")
            stderr = await errors
            await process.wait()
    finally:
        if errors is not None:
            errors.cancel()
            errors.add_done_callback(retrieved)
        if process is not None:
            process.close()
    return Finished(process.exit_status, stderr)


async def kept_start(stream: asyncssh.SSHReader[bytes], watchdog: Watchdog) -> bytes:
    """The first STDERR_KEPT bytes of STREAM; the rest read and dropped (unread, it would
    fill the channel's window and stall the output that matters)."""
    kept = bytearray()
    while chunk := await stream.read(CHUNK):
        watchdog.heard()
        kept += chunk[: STDERR_KEPT - len(kept)]
    return bytes(kept)


def retrieved(task: asyncio.Future[bytes]) -> None:
    """Take a finished task's error, if any: left alone, asyncio prints it at exit."""
    if not task.cancelled():
        task.exception()


def too_large(label: str, what: str, cap: int, hint: str) -> AnswerTooLarge:
    """The error of WHAT (a command) on the host LABEL sending past CAP bytes."""
    return AnswerTooLarge(f"{what} on {label} sent over {cap >> 20} MB", hint)
