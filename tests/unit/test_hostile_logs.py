"""Logs built to hurt: devices that never end (`--log /dev/zero`, `/dev/urandom`, `--log - <
/dev/zero`), binary and endless pipes, a FIFO nothing writes to, a log ten times longer. Each
runs the `sgtrace` script in its own process under a memory limit and a timeout, so a read
bounded by a size the file gives (0 for a device) fails at once instead of filling the
machine's memory; the answer is one line, or the explanation when the log is a log. Then what
a long log is read with: lines cut wherever its chunks end, a line of megabytes, a start of
many lines of one call, many starts, a file cut short while it is read."""

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
from tracer.analyses.explain.explain import explain as explain_log
from tracer.analyses.explain.logread import MAX_LINE, Log, LogLine
from tracer.analyses.explain.survey import KEPT_PER_KIND
from tracer.cli.logs import read_path
from tracer.errors import LogUnreadable
from tracer.session import Session

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


# Line ends of every kind `str.splitlines` knows, colours, a digit that is not ASCII.
ODD = (
    "[2026-11-29 10:00:00 TP0] a=1\r\n\x1b[31m[2026-11-29 10:00:01 TP1] b=\u06632\x1b[0m\r"
    "plain 7\x0c\n[gpu_id=3] c \u00b7 5  \u2028last"
)


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1 << 20])
def test_a_log_is_cut_into_lines_wherever_its_chunks_end(size):
    log = Log(lambda: (ODD[i : i + size] for i in range(0, len(ODD), size)))
    assert list(log) == [
        LogLine(1, "2026-11-29 10:00:00", (("TP", 0),), "a=1", "TP0"),
        LogLine(2, "2026-11-29 10:00:01", (("TP", 1),), "b=\u06632", "TP1"),
        LogLine(3, "", (), "plain 7", ""),
        LogLine(5, "", (("gpu_id=", 3),), "[gpu_id=3] c \u00b7 5", "gpu_id=3"),
        LogLine(6, "", (), "last", ""),
    ]
    # Each message's shape: its ASCII digits all 0.
    shapes = [shape for _, shape in log.shaped()]
    assert shapes == ["a=0", "b=\u06630", "plain 0", "[gpu_id=0] c \u00b7 0", "last"]


def test_a_line_of_megabytes_is_read_up_to_its_first_mib():
    text = "[2026-11-29 10:00:00] first\n" + "x" * (3 << 20) + "\n[2026-11-29 10:00:02] third\n"
    lines = list(Log.of_text(text))
    assert [(line.number, len(line.message)) for line in lines] == [(1, 5), (2, MAX_LINE), (3, 5)]


def test_a_start_keeps_the_first_lines_of_each_call_on_each_rank(snippet_session):
    tree: Session = snippet_session(TREE)
    load_end = "[2026-11-29 10:00:11 TP0] Load end. avail mem={:.2f} GB\n"
    log = LOG + "".join(load_end.format(20 + n / 100) for n in range(2 * KEPT_PER_KIND))
    e, alone = (explain_log(tree, text, "fraction", ("size",)) for text in (log, LOG))
    # Bound as in LOG alone; of the 512 lines after it, the first 255 are kept.
    bound = [[(b.name, b.value, b.why) for b in x.bindings.values()] for x in (e, alone)]
    assert bound[0] == bound[1] and e.result == alone.result
    ends = [o.line.number for o in e.timeline if o.template.literal.startswith("Load end")]
    assert ends == [5, *range(7, 7 + KEPT_PER_KIND - 1)]


def test_many_starts_are_named_by_their_first_and_last(snippet_session):
    e = explain_log(snippet_session(TREE), LOG * 12, "fraction", ("size",))
    assert (e.start, e.starts) == (12, 12)
    assert e.notes[0] == (
        "the log holds 12 server starts (each begins with Args(...) at log lines 1, 7, 13, 19, "
        "25, ..., 43, 49, 55, 61, 67); start 12 (log lines 67 to the end) is explained, with its "
        "own lines only: --start N explains another"
    )


def test_a_log_cut_short_while_it_is_read_says_so(tmp_path):
    path = tmp_path / "server.log"
    path.write_text(LOG * 1000)
    log = read_path(path, str(path))
    assert len(list(log)) == 6000
    path.write_text(LOG)  # rotated in place: cut short
    with pytest.raises(LogUnreadable) as error:
        list(log)
    assert str(error.value) == (
        f"the log {path} was cut short while it was read: give a copy of the log that nothing "
        "writes to"
    )
