"""What the user's tool expects a tree to hold: the engine names no package of its own."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PackageHint:
    """The package a tree is expected to hold (its import name, also its name on PyPI), and
    where a checkout of it usually sits on a host: what a fetch looks for when a host is given
    without a path, and what messages name. The empty hint expects nothing: a host must then
    be given with its path."""

    name: str = ""
    checkout_locations: tuple[str, ...] = ()

    def pypi(self, version: str) -> str:
        """The release of the package at VERSION as a source: `pypi:NAME==VERSION`."""
        return f"pypi:{self.name or 'NAME'}=={version}"


NO_PACKAGE = PackageHint()
