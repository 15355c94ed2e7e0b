"""The files the package indexes list for NAME==VERSION (PEP 691 JSON or PEP 503 HTML pages,
and pip's find-links), and the one to fetch: a wheel for this Python, else the sdist, else a
wheel for another Python or platform (only the .py files are kept, the same in all)."""

from __future__ import annotations

import os
import re
import sys
import sysconfig
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

from tracer.errors import IndexUnreachable, VersionNotFound
from tracer.sources.pypi_http import IndexClient, Page, file_path, loads_shallow

ACCEPT = (
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "
    "text/html;q=0.1"
)
SDIST_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tbz", ".tar.xz", ".txz", ".tar", ".zip")
HASHES = ("sha256", "sha512", "sha384", "sha224")  # the index's hashes we check, best first
# A plain file name, short enough for a file system to take (a longer one is no release).
FILENAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+!~-]{0,254}$")
VERSION = re.compile(r"^v?[0-9]")
# Pure-Python files are the same in every platform wheel: when none is for this Python, any
# one will do, these first.
WHEEL_PYTHONS = ("py3", "cp312", "cp311", "cp310", "cp313")
WHEEL_PLATFORMS = (
    "any",
    "manylinux_2_34_x86_64",
    "manylinux_2_28_x86_64",
    "manylinux2014_x86_64",
    "manylinux_2_34_aarch64",
)
THIS_PYTHON = f"{sys.version_info.major}{sys.version_info.minor}"
THIS_PLATFORM = sysconfig.get_platform().replace("-", "_").replace(".", "_")  # linux_x86_64


@dataclass(frozen=True, slots=True)
class IndexFile:
    """One file of a release, as a page or folder lists it."""

    filename: str
    url: str
    page: str  # the page or folder that lists it (links are checked against it)
    kind: str  # "wheel" or "sdist"
    version: str
    digest: tuple[str, str] | None  # (algorithm, hex digest) the index gives


def find_release(client: IndexClient, name: str, version: str) -> IndexFile:
    """The file to fetch for NAME==VERSION; VersionNotFound (with the versions there are) if
    no index lists it, IndexUnreachable if one that could have did not answer."""
    project = canonical_name(name)
    files: list[IndexFile] = []
    problems: list[IndexUnreachable] = []
    indexes = [url if "://" in url else local_url(url) for url in client.settings.index_urls]
    places = [(url.rstrip("/") + f"/{project}/", False) for url in indexes]
    places += [(link, True) for link in client.settings.find_links]
    for place, find_links in places:
        try:
            files += listed(client, place, find_links, project)
        except IndexUnreachable as problem:
            problems.append(problem)
    wanted = version_key(version)
    matching = [f for f in files if version_key(f.version) == wanted]
    if matching:
        return min(matching, key=rank)
    if problems:
        raise problems[0]
    hint = f"check the name and version with `pip index versions {name}`"
    versions = sorted({f.version for f in files}, key=version_order)
    if versions:
        hint = "recent versions: " + ", ".join(versions[-8:])
    raise VersionNotFound(f"{name}=={version} is not on the package index", hint)


def listed(client: IndexClient, place: str, find_links: bool, project: str) -> list[IndexFile]:
    """The files of PROJECT that PLACE lists: an index's project page, or a find-links page
    or folder (a folder is listed by its file names, as pip does)."""
    if find_links and "://" not in place:
        place = local_url(place)
    if find_links and place.startswith("file:") and file_path(place).is_dir():
        return in_folder(file_path(place), place, project)
    page = client.page(place, ACCEPT)
    if page is None:
        return []
    if page.content_type.split(";")[0].strip() == "application/vnd.pypi.simple.v1+json":
        links = json_links(page)
    else:
        links = html_links(page)
    found = (release_file(url, digest, page.url, project) for url, digest in links)
    return [f for f in found if f is not None]


def local_url(path: str) -> str:
    """A folder or file given as a path, as pip takes it, as a file: URL."""
    return Path(path).expanduser().resolve().as_uri()


def in_folder(folder: Path, place: str, project: str) -> list[IndexFile]:
    try:
        names = sorted(entry.name for entry in os.scandir(folder) if entry.is_file())
    except OSError as error:
        raise IndexUnreachable(
            f"cannot list {folder} (pip's find-links): {error.strerror}",
            "check pip's find-links setting (pip config list)",
        ) from None
    found = (release_file((folder / name).as_uri(), None, place, project) for name in names)
    return [f for f in found if f is not None]


def json_links(page: Page) -> list[tuple[str, tuple[str, str] | None]]:
    """(url, digest) of each file of a PEP 691 page."""
    try:
        found = loads_shallow(page.body)
        files = found["files"] if isinstance(found, dict) else None
        if not isinstance(files, list):
            raise TypeError("files is not a list")
    except (ValueError, KeyError, TypeError) as error:
        raise not_an_index(page.url, error) from None
    links = []
    for entry in files:
        url = entry.get("url") if isinstance(entry, dict) else None
        hashes = entry.get("hashes") if isinstance(entry, dict) else None
        if not isinstance(url, str):
            continue
        given = hashes if isinstance(hashes, dict) else {}
        found = [(a, given[a]) for a in HASHES if isinstance(given.get(a), str)]
        links.append((urljoin(page.url, url), found[0] if found else None))
    return links


def html_links(page: Page) -> list[tuple[str, tuple[str, str] | None]]:
    """(url, digest) of each link of a PEP 503 page; the digest is the URL's #sha256=..."""
    parser = LinkParser()
    parser.feed(page.body.decode("utf-8", errors="replace"))
    parser.close()
    base = urljoin(page.url, parser.base) if parser.base else page.url
    links = []
    for href in parser.hrefs:
        url = urljoin(base, href)
        algorithm, _, digest = urlsplit(url).fragment.partition("=")
        links.append((url, (algorithm, digest) if algorithm in HASHES and digest else None))
    return links


class LinkParser(HTMLParser):
    """The hrefs of a page's <a> tags, and its <base href>."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.base = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if href and tag == "a":
            self.hrefs.append(href)
        elif href and tag == "base" and not self.base:
            self.base = href


def release_file(
    url: str, digest: tuple[str, str] | None, page: str, project: str
) -> IndexFile | None:
    """The file at URL if it is a wheel or sdist of PROJECT with a plain name; else None."""
    parts = urlsplit(url)
    filename = unquote(parts.path.rpartition("/")[2])
    if not FILENAME.match(filename):
        return None
    found = release_of(filename, project)
    if found is None:
        return None
    plain = urlunsplit(parts._replace(fragment=""))
    return IndexFile(filename, plain, page, found[0], found[1], digest)


def release_of(filename: str, project: str) -> tuple[str, str] | None:
    """("wheel" or "sdist", version) if FILENAME is a release file of PROJECT (a version
    starts with a digit: sglang-router-0.5.9.tar.gz is not a release of sglang)."""
    if filename.endswith(".whl"):
        parts = filename[:-4].split("-")
        if len(parts) in (5, 6) and canonical_name(parts[0]) == project:
            return ("wheel", parts[1]) if VERSION.match(parts[1]) else None
        return None
    suffix = next((s for s in SDIST_SUFFIXES if filename.lower().endswith(s)), None)
    if suffix is None:
        return None
    stem = filename[: -len(suffix)]
    for at, char in enumerate(stem):
        if char == "-" and canonical_name(stem[:at]) == project:
            version = stem[at + 1 :]
            return ("sdist", version) if VERSION.match(version) else None
    return None


# -- choosing --------------------------------------------------------------------------------


def rank(file: IndexFile) -> tuple[int, int, int, str]:
    """Smaller is better: a wheel for this Python, the sdist, then other wheels, the
    Pythons and platforms named above first."""
    if file.kind == "sdist":
        return (1, 0, 0, file.filename)
    pythons, abis, platforms = (tag.split(".") for tag in file.filename[:-4].split("-")[-3:])
    tier = 0 if runs_here(pythons, abis, platforms) else 2
    python = min((WHEEL_PYTHONS.index(p) for p in pythons if p in WHEEL_PYTHONS), default=9)
    platform = min((WHEEL_PLATFORMS.index(p) for p in platforms if p in WHEEL_PLATFORMS), default=9)
    return (tier, python, platform, file.filename)


def runs_here(pythons: list[str], abis: list[str], platforms: list[str]) -> bool:
    """Whether pip would install a wheel of these tags on this Python and machine (by its
    tags only: nothing of the wheel is run, this only picks the likeliest file)."""
    if not any(platform_here(p) for p in platforms):
        return False
    if "none" in abis and any(p in ("py3", f"py{THIS_PYTHON}") for p in pythons):
        return True
    if f"cp{THIS_PYTHON}" in pythons and {f"cp{THIS_PYTHON}", "abi3", "none"} & set(abis):
        return True
    minor = sys.version_info.minor
    older = [p[3:] for p in pythons if p.startswith("cp3") and p[3:].isdigit()]
    return "abi3" in abis and any(int(m) <= minor for m in older)


def platform_here(platform: str) -> bool:
    if platform in ("any", THIS_PLATFORM):
        return True
    linux, _, arch = THIS_PLATFORM.partition("_")
    return linux == "linux" and "linux" in platform and platform.endswith("_" + arch)


# -- names and versions ----------------------------------------------------------------------


def canonical_name(name: str) -> str:
    """PEP 503's normalized project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def version_key(version: str) -> tuple[tuple[int, ...], str]:
    """VERSION as PEP 440 compares it for `==`, near enough: 1.0 == 1.0.0, 1.0RC1 == 1.0rc1."""
    match = re.match(r"v?(\d+(?:\.\d+)*)(.*)$", version.strip().lower())
    if match is None:
        return ((), version.strip().lower())
    release = [int(part) for part in match[1].split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    return (tuple(release), re.sub(r"[-_.]+", ".", match[2]).lstrip("."))


def version_order(version: str) -> tuple[tuple[int, ...], int, str]:
    """Releases in order, pre-releases (a, b, rc, dev) before their final release."""
    release, rest = version_key(version)
    stage = 1 if not rest else 0 if rest[0] in "abcdr" else 2
    return (release, stage, rest)


def not_an_index(url: str, error: Exception) -> IndexUnreachable:
    return IndexUnreachable(
        f"{url} is not a package index page ({error})",
        "check pip's index settings (pip config list)",
    )
