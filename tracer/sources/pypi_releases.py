"""The releases of a project on the package indexes and when each was first uploaded (PEP 691
JSON pages give `upload-time`), read with the index client and kept in the cache a day; and how
well each release fits a log, kept by the log's content hash."""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from tracer.errors import CacheNotWritable, IndexUnreachable
from tracer.sources.cache import cache_root, content_hash, write_atomic
from tracer.sources.pypi_config import index_settings
from tracer.sources.pypi_http import IndexClient, Page, loads_shallow
from tracer.sources.pypi_index import (
    ACCEPT,
    canonical_name,
    local_url,
    release_of,
    version_order,
)
from tracer.versions import FITS, RELEASE_LISTS

KEEP_SECONDS = 24 * 3600  # a release list older than this is read again


@dataclass(frozen=True, slots=True)
class Release:
    version: str
    uploaded: str  # ISO date (YYYY-MM-DD) of its first file, "" when the index gives none


def releases(name: str) -> list[Release]:
    """NAME's releases, oldest first, from the cache when read in the last day."""
    project = canonical_name(name)
    kept = cache_root() / RELEASE_LISTS.name / f"{project}-{RELEASE_LISTS.version}.json"
    try:
        if time.time() - kept.stat().st_mtime < KEEP_SECONDS:
            return [Release(str(v), str(u)) for v, u in loads_shallow(kept.read_bytes())]
    except (OSError, ValueError, TypeError):
        pass  # missing or damaged: read the index again
    found = from_index(IndexClient(index_settings()), project)
    write_atomic(kept, json.dumps([[r.version, r.uploaded] for r in found]).encode())
    return found


def from_index(client: IndexClient, project: str) -> list[Release]:
    """The releases PROJECT's pages on every configured index list, with their first upload."""
    first: dict[str, str] = {}
    problems: list[IndexUnreachable] = []
    for url in client.settings.index_urls:
        place = (url if "://" in url else local_url(url)).rstrip("/") + f"/{project}/"
        try:
            page = client.page(place, ACCEPT)
        except IndexUnreachable as problem:
            problems.append(problem)
            continue
        for version, uploaded in page_releases(page, project) if page else []:
            if version not in first or (
                uploaded and (not first[version] or uploaded < first[version])
            ):
                first[version] = uploaded
    if not first and problems:
        raise problems[0]
    return [Release(v, first[v]) for v in sorted(first, key=version_order)]


def page_releases(page: Page, project: str) -> list[tuple[str, str]]:
    """(version, upload date) of each file a PEP 691 page lists; an HTML page gives none."""
    if page.content_type.split(";")[0].strip() != "application/vnd.pypi.simple.v1+json":
        return []
    try:
        files = loads_shallow(page.body)["files"]
    except (ValueError, KeyError, TypeError):
        return []
    out: list[tuple[str, str]] = []
    for entry in files if isinstance(files, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("filename"), str):
            continue
        found = release_of(entry["filename"], project)
        if found is None:
            continue
        out.append((found[1], upload_date(entry.get("upload-time"))))
    return out


def upload_date(value: object) -> str:
    if not isinstance(value, str):
        return ""
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).date().isoformat()
    except ValueError:
        return ""


def fits_file(log_text: str) -> Path:
    return cache_root() / FITS.name / f"{content_hash(log_text.encode())}-{FITS.version}.json"


def kept_fits(log_text: str) -> dict[str, tuple[int, int, int]]:
    """The fits kept for LOG_TEXT: by release version, (exact, loose, lines); {} when none
    are kept or the entry is damaged."""
    try:
        kept = loads_shallow(fits_file(log_text).read_bytes())
        return {str(v): (int(e), int(lo), int(n)) for v, (e, lo, n) in kept.items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def keep_fits(log_text: str, fits: dict[str, tuple[int, int, int]]) -> None:
    """Keep FITS (by release version) for LOG_TEXT beside those kept already; a cache that
    cannot be written keeps nothing, and the releases are tried again next time."""
    merged = kept_fits(log_text) | fits
    with contextlib.suppress(CacheNotWritable):
        write_atomic(fits_file(log_text), json.dumps(merged, sort_keys=True).encode())
