"""The `sgtrace` command line: one module per command, the presets it hands the engine."""

# What `sgtrace --version` says when the package's metadata is missing (run from a source
# tree without installing); pyproject.toml's version otherwise, which this one follows.
__version__ = "0.1.0"
