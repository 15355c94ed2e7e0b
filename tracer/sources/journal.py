"""A systemd unit's journal, read on the host the source lives on (over SSH for a remote
source, with the local `journalctl` otherwise)."""

from __future__ import annotations

import asyncio
import shlex
import shutil
import subprocess

import asyncssh

from tracer.errors import SgtraceError
from tracer.sources.hint import PackageHint
from tracer.sources.remote import RemoteSpec, SshOptions
from tracer.sources.ssh import connect, connection_error

JOURNAL_LINES = 50_000  # the newest lines: a server start is near the end
TIMEOUT = 60.0


class JournalUnreadable(SgtraceError):
    pass


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
    done = subprocess.run(journal_command(unit), capture_output=True, timeout=TIMEOUT, check=False)
    return checked(unit, "this machine", done.returncode, done.stdout, done.stderr, hint)


async def remote_journal(
    unit: str, spec: RemoteSpec, options: SshOptions, hint: PackageHint
) -> str:
    try:
        async with await connect(spec, options) as conn:
            result = await asyncio.wait_for(
                conn.run(shlex.join(journal_command(unit)), encoding=None, check=False), TIMEOUT
            )
    except SgtraceError:
        raise
    except (OSError, asyncssh.Error, asyncio.TimeoutError) as exc:
        raise connection_error(spec, exc) from exc
    status = result.exit_status if result.exit_status is not None else 255
    return checked(unit, spec.label, status, result.stdout or b"", result.stderr or b"", hint)


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
