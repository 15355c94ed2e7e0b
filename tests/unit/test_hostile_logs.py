"""Logs built to hurt: devices that never end (`--log /dev/zero`, `/dev/urandom`, `--log - <
/dev/zero`), binary and endless pipes, a FIFO nothing writes to. Each runs the `sgtrace`
script in its own process under a memory limit and a timeout, so a read bounded by a size
the file gives (0 for a device) fails at once instead of filling the machine's memory; the
answer is one line, or the explanation when the log is a log."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.unit.test_explain_snippets import LOG, TREE

MEMORY = 1 << 30  # address space for the whole process: reading a 256 MB stream fits
SECONDS = 60
SCRIPT = [sys.executable, "-c", "from tracer.cli.main import entry; entry()"]
EXPLAINED = "29 - 79.5 * (1 - 0.85)"  # in the explanation of LOG by TREE
# LOG is explained, and its count is 12% off the formula's: explain says so and exits 1.
EXPLAINED_CODE = 1


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for rel, text in TREE.items():
        path = tmp_path / "tree" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return tmp_path / "tree"


def limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def explain(root: Path, log: str, **popen: object) -> subprocess.Popen[bytes]:
    """`sgtrace explain ROOT --log LOG` started under the memory limit."""
    env = {**os.environ, "SGTRACE_CACHE": str(root.parent / "cache")}
    command = [*SCRIPT, "explain", str(root), "--log", log, "--param", "fraction", "--to", "size"]
    return subprocess.Popen(
        command,
        stdin=popen.pop("stdin", subprocess.DEVNULL),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=limit_memory,
        **popen,  # type: ignore[arg-type]
    )


def answer(process: subprocess.Popen[bytes]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=SECONDS)
    return process.returncode, out.decode(), err.decode()


def refused(process: subprocess.Popen[bytes]) -> str:
    """The one error line of a refused log."""
    code, out, err = answer(process)
    assert (code, out, len(err.splitlines())) == (2, "", 1), err
    assert err.startswith("sgtrace: error: ")
    return err.strip()


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_the_log_is_refused_unopened(root, device):
    assert refused(explain(root, device)) == (
        f"sgtrace: error: the log {device} is a character device, not a log: give the server's "
        "log file, or - to read it from standard input"
    )


def test_a_device_on_standard_input_is_refused(root):
    with open("/dev/zero", "rb") as zero:
        message = refused(explain(root, "-", stdin=zero))
    assert message.startswith("sgtrace: error: standard input is a character device, not a log")


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_binary_stream_is_refused_at_its_first_bytes(root, device):
    source = subprocess.Popen(["cat", device], stdout=subprocess.PIPE)
    start = time.monotonic()
    try:
        message = refused(explain(root, "-", stdin=source.stdout))
    finally:
        source.kill()
        source.wait()
    assert message == "sgtrace: error: standard input is not text: give the server's log as text"
    assert time.monotonic() - start < 20  # the first 64 KB told it, not the end of the stream


def test_an_endless_text_stream_is_refused_past_the_cap(root):
    source = subprocess.Popen(["yes", "[2026-11-29 10:00:00] a line"], stdout=subprocess.PIPE)
    try:
        message = refused(explain(root, "-", stdin=source.stdout))
    finally:
        source.kill()
        source.wait()
    assert message == (
        "sgtrace: error: standard input sent over 256 MB, and a stream is read from its start: "
        "give the log as a file (it is read from its end), or pipe in only its end: "
        "tail -c 256M server.log | sgtrace explain SOURCE --log -"
    )


def test_a_log_on_standard_input_is_explained(root, tmp_path):
    log = tmp_path / "server.log"
    log.write_text(LOG)
    with open(log, "rb") as handle:  # a file: read from its end
        code, out, _ = answer(explain(root, "-", stdin=handle))
    assert code == EXPLAINED_CODE and EXPLAINED in out
    process = explain(root, "-", stdin=subprocess.PIPE)  # a pipe
    out, _ = process.communicate(LOG.encode(), timeout=SECONDS)
    assert process.returncode == EXPLAINED_CODE and EXPLAINED in out.decode()


def test_a_pipe_given_as_a_path_is_read(root):
    """`--log <(command)`: the shell gives /dev/fd/N, a pipe."""
    read_end, write_end = os.pipe()
    process = explain(root, f"/dev/fd/{read_end}", pass_fds=(read_end,))
    os.close(read_end)
    with os.fdopen(write_end, "wb") as pipe:
        pipe.write(LOG.encode())
    code, out, _ = answer(process)
    assert code == EXPLAINED_CODE and EXPLAINED in out


def test_a_fifo_nothing_writes_to_is_waited_for_and_said_so(root, tmp_path):
    fifo = tmp_path / "server.fifo"
    os.mkfifo(fifo)
    process = explain(root, str(fifo))
    assert process.stderr is not None
    line = process.stderr.readline().decode()  # said before anything is written
    assert line == (
        f"sgtrace: waiting for the log on the FIFO {fifo}, for a program to write to it; "
        "Ctrl-C stops\n"
    )
    with open(fifo, "wb") as writer:
        writer.write(LOG.encode())
    code, out, _ = answer(process)
    assert code == EXPLAINED_CODE and EXPLAINED in out


def test_a_fifo_wait_ends_cleanly_on_ctrl_c(root, tmp_path):
    fifo = tmp_path / "server.fifo"
    os.mkfifo(fifo)
    process = explain(root, str(fifo))
    assert process.stderr is not None
    assert process.stderr.readline().startswith(b"sgtrace: waiting for the log on the FIFO")
    process.send_signal(signal.SIGINT)
    code, out, err = answer(process)
    assert (code, out, err) == (130, "", "sgtrace: interrupted\n")
