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
        stdout=popen.pop("stdout", subprocess.PIPE),
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


# A server at work after its start: its decode reports (a logging call of the tree) and the
# HTTP server's access lines (printed by no call), numbers changing on every line.
RUNTIME = {
    "pkg/scheduler.py": """
        import logging

        logger = logging.getLogger(__name__)


        def report(running, tokens, throughput):
            logger.info(
                f"Decode batch. #running-req: {running}, #token: {tokens}, "
                f"gen throughput (token/s): {throughput:.2f}"
            )
    """,
}
SAME_PEAK = 4 << 10  # KB: a reader keeping 5 bytes of each line would grow by more


def long_log(path: Path, lines: int) -> Path:
    """LOG, then the server at work until the log has LINES lines."""
    with path.open("w") as out:
        out.write(LOG)
        for n in range(lines - LOG.count("\n")):
            if n % 4:
                out.write(
                    f"[2026-11-29 1{n // 36000 % 10}:{n // 600 % 60:02d}:{n // 10 % 60:02d} "
                    f"TP{n % 2}] Decode batch. #running-req: {n % 50}, #token: {n % 9000}, "
                    f"gen throughput (token/s): {n % 997 / 7:.2f}\n"
                )
            else:
                out.write(
                    f'INFO:     127.0.0.1:{40000 + n % 20000} - "POST /generate HTTP/1.1" 200 OK\n'
                )
    return path


def peak(root: Path, log: Path) -> tuple[int, str]:
    """The peak memory (KB) of `sgtrace explain ROOT --log LOG` in a process of its own, and
    what it printed."""
    out = log.with_suffix(".out")
    with out.open("wb") as printed:
        process = explain(root, str(log), stdout=printed)
        _, status, usage = os.wait4(process.pid, 0)
    assert process.stderr is not None
    said = process.stderr.read().decode()
    assert (os.waitstatus_to_exitcode(status), said) == (EXPLAINED_CODE, "")
    return usage.ru_maxrss, out.read_text()


def test_a_log_ten_times_longer_is_read_in_the_same_memory(root, tmp_path):
    for rel, text in RUNTIME.items():
        (root / rel).write_text(textwrap.dedent(text).lstrip("\n"))
    short, printed = peak(root, long_log(tmp_path / "short.log", 10**5))
    long, printed_long = peak(root, long_log(tmp_path / "long.log", 10**6))
    assert EXPLAINED in printed
    # The same explanation; only the counts of lines differ.
    counts = ("750000 of 1000000 log lines", "of the log's 750001 server lines")
    assert all(count in printed_long for count in counts)
    shorter = ("75000 of 100000 log lines", "of the log's 75001 server lines")
    for count, short_count in zip(counts, shorter, strict=True):
        printed_long = printed_long.replace(count, short_count)
    assert printed_long == printed
    assert long - short < SAME_PEAK, (short, long)
