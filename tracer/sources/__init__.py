"""Where trees come from. `open_source(spec)` turns what the user typed into a Snapshot."""

from __future__ import annotations

from pathlib import Path

from tracer.sources.hint import NO_PACKAGE, PackageHint
from tracer.sources.remote import RemoteSpec, SshOptions, parse_remote
from tracer.sources.snapshot import Snapshot, local_snapshot


def open_source(
    spec: str,
    ssh_options: object | None = None,
    progress: object | None = None,
    hint: PackageHint = NO_PACKAGE,
) -> Snapshot:
    """`pypi:NAME==VERSION`, a local folder or file, or a remote `host:path` fetched over SSH
    (a local path that exists wins over a remote reading of the same text); HINT says what
    package a host holds (looked for where no path is given)."""
    if spec.startswith("pypi:"):
        from tracer.sources.pypi import pypi_snapshot

        return pypi_snapshot(spec)
    remote = None if Path(spec).expanduser().exists() else parse_remote(spec)
    if remote is not None:
        from tracer.sources.fetch import fetch_one

        options = ssh_options if isinstance(ssh_options, SshOptions) else SshOptions()
        return fetch_one(remote, options, progress, hint).snapshot  # type: ignore[arg-type]
    return local_snapshot(Path(spec), label=spec)


__all__ = [
    "NO_PACKAGE",
    "PackageHint",
    "RemoteSpec",
    "Snapshot",
    "local_snapshot",
    "open_source",
    "parse_remote",
]
