"""`python -m tracer.cli`: the `sgtrace` command."""

from tracer.cli.main import entry

entry()
