"""`sgtrace explain HOST:PATH --journal UNIT` over the real sshd on 127.0.0.1: the journal is
read on the source's host, and a unit that logged nothing is one line naming the fix."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable

from tests.integration.fetching import Run
from tests.integration.logbuild import REAL_LOGS
from tests.sshd import SshServer, Target


def test_journal_of_a_unit_that_logged_nothing(
    client: SshServer, target_checkout: Callable[..., Target], sgtrace: Callable[..., Run]
) -> None:
    target = target_checkout("0.4.6")
    run = sgtrace(
        "explain", f"{client.alias}:{target.package_root}", "--journal", "no-such.service"
    )
    assert run.code == 2
    if shutil.which("journalctl"):  # the sshd runs on this machine: its journalctl answers
        assert run.error_line() == (
            "sgtrace: error: the journal of no-such.service on target is empty: "
            "check the unit name (systemctl list-units | grep -i sglang)"
        )
    else:
        assert run.error_line().startswith("sgtrace: error: journalctl is not available on target")


def test_explain_a_remote_checkout(
    client: SshServer, target_checkout: Callable[..., Target], sgtrace: Callable[..., Run]
) -> None:
    # The source fetched over SSH, the log a real excerpt from the issue tracker (its URL is in
    # its first line): the same numbers as with the release from PyPI.
    target = target_checkout("0.4.6")
    log = REAL_LOGS / "sglang-0.4.6-qwen3-8b-tp1.log"
    run = sgtrace("explain", f"{client.alias}:{target.package_root}", "--log", str(log), "--json")
    assert run.code == 0, run.err
    out = json.loads(run.out)
    assert out["source"] == f"{client.alias}:{target.package_root}"
    assert out["result"] == 404890
    assert out["steps"][0]["evaluated"] == "63.49 - 78.84 * (1 - 0.9)"
