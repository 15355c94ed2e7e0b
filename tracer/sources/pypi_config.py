"""Where the package index is, as pip is configured for `pip download`: its config files and
PIP_* variables, read through `pip config list` (which runs pip, never a package)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import dataclass

DEFAULT_INDEX = "https://pypi.org/simple"
# pip's own default; a configured `timeout` (or `default-timeout`) replaces it.
DEFAULT_TIMEOUT = 15.0
KEYS = (
    "index-url",
    "extra-index-url",
    "find-links",
    "no-index",
    "trusted-host",
    "cert",
    "client-cert",
    "proxy",
    "timeout",
)
ALIASES = {"default-timeout": "timeout"}
# `pip download` reads these sections of its config, later ones winning, then PIP_* variables.
SECTIONS = ("global", "download", ":env:")


@dataclass(frozen=True, slots=True)
class IndexSettings:
    """The indexes and link pages to look a release up in, and how to reach them."""

    index_urls: tuple[str, ...]  # index-url, then every extra-index-url (none with no-index)
    find_links: tuple[str, ...]  # folders, or pages of links
    trusted_hosts: frozenset[str]  # hosts (or host:port) reached by plain http, unverified
    cert: str | None = None
    client_cert: str | None = None
    proxy: str | None = None
    timeout: float = DEFAULT_TIMEOUT


def index_settings() -> IndexSettings:
    """pip's settings for `pip download`, or those of the PIP_* variables alone when pip
    cannot say (not installed for this Python)."""
    values = pip_config()
    if values is None:
        values = environment_config()
    index = values.get("index-url") or DEFAULT_INDEX
    extra = values.get("extra-index-url", "").split()
    no_index = values.get("no-index", "").lower() in ("1", "true", "yes", "on")
    return IndexSettings(
        index_urls=() if no_index else (index, *extra),
        find_links=tuple(values.get("find-links", "").split()),
        trusted_hosts=frozenset(values.get("trusted-host", "").split()),
        cert=values.get("cert") or None,
        client_cert=values.get("client-cert") or None,
        proxy=values.get("proxy") or None,
        timeout=timeout_of(values.get("timeout")),
    )


def pip_config() -> dict[str, str] | None:
    """`pip config list` as {key: value}, the sections `pip download` reads merged in pip's
    order; None if pip did not answer. `-I`: the current folder (maybe the analysed tree)
    is not put on pip's import path."""
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    found: dict[str, dict[str, str]] = {section: {} for section in SECTIONS}
    for line in done.stdout.splitlines():
        entry = config_line(line)
        if entry is not None and entry[0] in found:
            found[entry[0]][entry[1]] = entry[2]
    return {key: value for section in SECTIONS for key, value in found[section].items()}


def config_line(line: str) -> tuple[str, str, str] | None:
    """`global.index-url='https://...'` -> (section, key, value); None for other lines."""
    name, equals, text = line.partition("=")
    section, dot, key = name.rpartition(".")
    if not (equals and dot):
        return None
    key = ALIASES.get(key, key)
    if key not in KEYS:
        return None
    try:
        value = ast.literal_eval(text)  # pip prints each value with repr()
    except (ValueError, SyntaxError):
        return None
    return (section, key, value) if isinstance(value, str) else None


def environment_config() -> dict[str, str]:
    """The PIP_* variables pip would read, by key."""
    values: dict[str, str] = {}
    for key in (*KEYS, *ALIASES):
        value = os.environ.get("PIP_" + key.upper().replace("-", "_"))
        if value is not None:
            values[ALIASES.get(key, key)] = value
    return values


def timeout_of(text: str | None) -> float:
    try:
        value = float(text) if text else DEFAULT_TIMEOUT
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT
