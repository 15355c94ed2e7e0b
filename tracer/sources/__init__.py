"""Where trees come from. `open_source(spec)` turns what the user typed into a Snapshot."""

from __future__ import annotations

from pathlib import Path

from tracer.sources.snapshot import Snapshot, local_snapshot


def open_source(spec: str) -> Snapshot:
    """`pypi:NAME==VERSION`, or a local folder or file."""
    if spec.startswith("pypi:"):
        from tracer.sources.pypi import pypi_snapshot

        return pypi_snapshot(spec)
    return local_snapshot(Path(spec), label=spec)


__all__ = ["Snapshot", "open_source", "local_snapshot"]
