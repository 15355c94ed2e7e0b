"""`sgtrace explain HOST:PATH --journal UNIT` over the real sshd on 127.0.0.1: the journal is
read on the source's host, and a unit that logged nothing is one line naming the fix."""

from __future__ import annotations

import shutil
from collections.abc import Callable

from tests.integration.fetching import Run
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
