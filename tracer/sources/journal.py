"""A systemd unit's journal, read on the host the source lives on (over SSH for a remote
source, with the local `journalctl` otherwise), capped as it arrives and in time."""

from __future__ import annotations

import asyncio
import shlex
import shutil
import subprocess
import threading
from typing import IO

import asyncssh

from tracer.errors import HostStalled, JournalUnreadable, SgtraceError
from tracer.sources.answers import CHUNK, STDERR_KEPT, Watchdog, run_streamed, too_large
from tracer.sources.hint import PackageHint
from tracer.sources.remote import RemoteSpec, SshOptions
from tracer.sources.ssh import connect, connection_error

JOURNAL_LINES = 50_000  # the newest lines: a server start is near the end
MAX_JOURNAL_BYTES = 128 << 20  # JOURNAL_LINES of long lines fit
TIMEOUT = 60.0  # for the whole read: journalctl -n takes seconds
JOURNAL_HINT = "give the server's log with --log FILE instead"


def journal_command(unit: str) -> list[str]:
    return ["journalctl", "--no-pager", "-o", "cat", "-n", str(JOURNAL_LINES), "-u", unit]


def read_journal(
    unit: str, remote: RemoteSpec | None, options: SshOptions, hint: PackageHint
) -> str:
    """The newest lines of UNIT's journal, messages only (the server's own prefix kept);
    HINT names the package whose units an empty journal's message suggests looking for."""
    if remote is None:
        return local_journal(unit, hint)
    return asyncio.run(remote_journal(unit, remote, options, hint))


def local_journal(unit: str, hint: PackageHint) -> str:
    if shutil.which("journalctl") is None:
        raise JournalUnreadable(
            "journalctl is not installed here", "give the log with --log FILE or --log -"
        )
    expired = threading.Event()
    with subprocess.Popen(
        journal_command(unit), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as process:
        assert process.stdout is not None and process.stderr is not None

        def expire() -> None:
            expired.set()
            process.kill()

        # Both pipes read at once (a full stderr pipe would stall stdout), each capped; the
        # timer ends a journalctl that takes too long.
        errors = bytearray()
        reading = threading.Thread(target=drain, args=(process.stderr, errors), daemon=True)
        timer = threading.Timer(TIMEOUT, expire)
        timer.start()
        reading.start()
        try:
            out = capped(unit, "this machine", process.stdout)
            reading.join()
            status = process.wait()
        except BaseException:
            process.kill()
            raise
        finally:
            timer.cancel()
    if expired.is_set():
        raise late(unit, "this machine")
    return checked(unit, "this machine", status, out, bytes(errors), hint)


def drain(stream: IO[bytes], kept: bytearray) -> None:
    """STREAM read to its end, its first STDERR_KEPT bytes kept."""
    while chunk := stream.read1(CHUNK):
        kept += chunk[: STDERR_KEPT - len(kept)]


def capped(unit: str, where: str, stream: IO[bytes]) -> bytes:
    """STREAM read to its end, at most MAX_JOURNAL_BYTES."""
    out = bytearray()
    while chunk := stream.read1(CHUNK):
        out += chunk
        if len(out) > MAX_JOURNAL_BYTES:
            raise too_large(where, f"journalctl -u {unit}", MAX_JOURNAL_BYTES, JOURNAL_HINT)
    return bytes(out)


async def remote_journal(
    unit: str, spec: RemoteSpec, options: SshOptions, hint: PackageHint
) -> str:
    out = bytearray()

    def consume(chunk: bytes) -> bool:
        out.extend(chunk)
        if len(out) > MAX_JOURNAL_BYTES:
            raise too_large(spec.label, f"journalctl -u {unit}", MAX_JOURNAL_BYTES, JOURNAL_HINT)
        return False

    watchdog = Watchdog(options.idle_timeout, spec.label, f"reading the journal of {unit}")
    try:
        async with await connect(spec, options) as conn:
            command = shlex.join(journal_command(unit))
            finished = await asyncio.wait_for(
                run_streamed(conn, command, consume, watchdog), TIMEOUT
            )
    except SgtraceError:
        raise
    except asyncio.TimeoutError:
        raise late(unit, spec.label) from None
    except (OSError, asyncssh.Error) as exc:
        raise connection_error(spec, exc) from exc
    status = finished.status if finished.status is not None else 255
    return checked(unit, spec.label, status, bytes(out), finished.stderr, hint)


def late(unit: str, where: str) -> HostStalled:
    return HostStalled(
        f"journalctl -u {unit} on {where} did not finish in {TIMEOUT:g} s", JOURNAL_HINT
    )


def checked(unit: str, where: str, status: int, out: object, err: object, hint: PackageHint) -> str:
    stdout = out if isinstance(out, bytes) else str(out).encode()
    stderr = err if isinstance(err, bytes) else str(err).encode()
    if status == 127 or b"not found" in stderr and not stdout:
        raise JournalUnreadable(
            f"journalctl is not available on {where}", "give the log with --log FILE or --log -"
        )
    if status != 0 and not stdout:
        reason = stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise JournalUnreadable(
            f"the journal of {unit} on {where} could not be read: {reason[0]}",
            "check the unit name (systemctl list-units) and that the user may read the journal",
        )
    text = stdout.decode("utf-8", "replace")
    if not text.strip() or text.strip() == "-- No entries --":
        raise JournalUnreadable(
            f"the journal of {unit} on {where} is empty",
            "check the unit name (systemctl list-units"
            + (f" | grep -i {hint.name})" if hint.name else ")"),
        )
    return text
