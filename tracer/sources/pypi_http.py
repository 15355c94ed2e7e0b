"""Reading pages and files from a package index, bounded: every read has a size cap, a
per-read timeout and a deadline; a JSON page a cap on its nesting, checked before it is
parsed; plain http only from hosts pip trusts (or this machine); `file:` links only from
`file:` pages, and only regular files."""

from __future__ import annotations

import base64
import hashlib
import http.client
import ipaddress
import json
import netrc
import os
import ssl
import stat
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.client import HTTPResponse
from itertools import accumulate
from pathlib import Path
from typing import BinaryIO
from urllib.parse import unquote, urlsplit, urlunsplit

from tracer.errors import DamagedRelease, IndexUnreachable, UnsafeArchive
from tracer.sources.pypi_config import IndexSettings

MAX_PAGE_BYTES = 64 << 20  # pypi.org's largest project pages are a few MB
MAX_DOWNLOAD_BYTES = 2 << 30
PAGE_DEADLINE = 300.0  # seconds for one page, however slowly its bytes drip
DOWNLOAD_DEADLINE = 3600.0
CHUNK = 1 << 18
MAX_JSON_DEPTH = 32  # a PEP 691 page nests 4 deep
NOT_QUOTES_OR_BRACKETS = bytes(sorted(set(range(256)) - set(b'"[]{}')))
DEPTH_STEPS = bytes.maketrans(b"[]{}", b"\x01\xff\x01\xff")  # +1 and -1, as signed bytes
SETTINGS_HINT = "check the network, or pip's index settings (pip config list)"


@dataclass(frozen=True, slots=True)
class Page:
    url: str  # after redirects: links on the page are relative to it
    content_type: str
    body: bytes


def loads_shallow(data: bytes, limit: int = MAX_JSON_DEPTH) -> object:
    """DATA parsed as JSON; ValueError when it is not JSON, or nests deeper than LIMIT (json's
    reader recurses once a level: a page nested a million deep would overflow the stack).
    The depth is read first, without recursion: the brackets outside strings (escaped
    backslashes and quotes dropped, then every other quoted part), at C speed."""
    unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    quoted = unescaped.translate(None, NOT_QUOTES_OR_BRACKETS).split(b'"')
    steps = memoryview(b"".join(quoted[::2]).translate(DEPTH_STEPS)).cast("b")
    if max(accumulate(steps), default=0) > limit:
        raise ValueError(f"nested more than {limit} deep")
    return json.loads(data)


class IndexClient:
    """Pages and files of the indexes SETTINGS names, fetched with pip's certificates, proxy,
    trusted hosts and timeout, and with the credentials written in the configured URLs (or
    ~/.netrc)."""

    def __init__(self, settings: IndexSettings) -> None:
        self.settings = settings
        self.credentials: dict[str, str] = {}
        self.openers: dict[bool, urllib.request.OpenerDirector] = {}
        for url in (*settings.index_urls, *settings.find_links):
            self.remember_credentials(url)

    # -- pages and files -------------------------------------------------------------------

    def page(self, url: str, accept: str, referrer: str | None = None) -> Page | None:
        """The page at URL (a `file:` folder: its index.html); None if the index has no
        such page (404, 410, no such file)."""
        url = self.checked(without_credentials(url), referrer)
        if url.startswith("file:"):
            path = file_path(url)
            if path.is_dir():
                path = path / "index.html"
            if not path.exists():
                return None
            with open_regular(path, url) as source:
                body = read_bounded(source, url)
            return Page(url, "text/html", body)
        response = self.open(url, accept, missing_ok=True)
        if response is None:
            return None
        with response:
            check_length(response, MAX_PAGE_BYTES, page_too_large(url))
            body = read_bounded(response, url)
            content_type = response.headers.get("Content-Type", "text/html")
            return Page(response.geturl(), content_type, body)

    def download(
        self, url: str, referrer: str, dest: Path, expected: tuple[str, str] | None
    ) -> None:
        """The file at URL into DEST, its hash checked against EXPECTED ((algorithm, hex
        digest), from the index) on the way; past MAX_DOWNLOAD_BYTES it is refused."""
        url = self.checked(without_credentials(url), referrer)
        digest = hashlib.new(expected[0]) if expected else hashlib.sha256()
        with open(dest, "xb") as out:
            if url.startswith("file:"):
                with open_regular(file_path(url), url) as source:
                    copy_bounded(source, out, digest.update, url)
            else:
                response = self.open(url, "*/*")
                assert response is not None
                with response:
                    check_length(response, MAX_DOWNLOAD_BYTES, download_too_large(url))
                    copy_bounded(response, out, digest.update, url)
        if expected and digest.hexdigest() != expected[1].lower():
            raise DamagedRelease(
                f"{dest.name} does not match the {expected[0]} the index gives for it",
                "the download was damaged or tampered with; nothing was unpacked",
            )

    def open(self, url: str, accept: str, missing_ok: bool = False) -> HTTPResponse | None:
        """The response for URL (http or https, no credentials in it: they are sent as a
        header); None for a missing page if MISSING_OK."""
        parts = urlsplit(url)
        request = urllib.request.Request(url, headers={"Accept": accept})
        secret = self.credentials.get(parts.netloc)
        if secret:  # never sent on after a redirect to another place
            request.add_unredirected_header("Authorization", secret)
        opener = self.opener(verify=not self.trusted(parts.netloc))
        try:
            return opener.open(request, timeout=self.settings.timeout)
        except urllib.error.HTTPError as error:
            error.close()
            if missing_ok and error.code in (404, 410):
                return None
            raise IndexUnreachable(
                f"{parts.netloc} answered {error.code} {error.reason} for {url}", SETTINGS_HINT
            ) from None
        except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
            reason = getattr(error, "reason", None) or error
            raise IndexUnreachable(
                f"cannot reach the package index at {parts.netloc}: {reason}", SETTINGS_HINT
            ) from None

    # -- where bytes may come from ---------------------------------------------------------

    def checked(self, url: str, referrer: str | None) -> str:
        """URL if it may be read (https; http from this machine or a trusted host; `file:`
        when configured so or linked from a `file:` page), else IndexUnreachable."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme == "https":
            return url
        if scheme == "http" and (loopback(parts.hostname) or self.trusted(parts.netloc)):
            return url
        if scheme == "file" and (referrer is None or referrer.startswith("file:")):
            return url
        where = f"linked from {referrer}" if referrer else "configured"
        raise IndexUnreachable(
            f"refusing {url} ({where}): only https, http from a trusted host, and file: "
            "links on local pages are read",
            "use https, or add the host to pip's trusted-host",
        )

    def trusted(self, netloc: str) -> bool:
        """Whether pip's trusted-host names NETLOC (as host:port, or its host alone)."""
        host = netloc.rpartition("@")[2]
        return bool({host, host.split(":")[0]} & self.settings.trusted_hosts)

    def remember_credentials(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return
        host = parts.netloc.rpartition("@")[2]
        user, password = parts.username, parts.password
        if user is None and parts.hostname:
            user, password = netrc_login(parts.hostname)
        if user is not None:
            token = f"{unquote(user)}:{unquote(password or '')}".encode()
            self.credentials[host] = "Basic " + base64.b64encode(token).decode()

    def opener(self, verify: bool) -> urllib.request.OpenerDirector:
        """The opener that checks certificates (or not, for a trusted host), made once."""
        if verify not in self.openers:
            self.openers[verify] = self.new_opener(verify)
        return self.openers[verify]

    def new_opener(self, verify: bool) -> urllib.request.OpenerDirector:
        try:
            context = ssl.create_default_context(cafile=self.settings.cert)
            if self.settings.client_cert:
                context.load_cert_chain(self.settings.client_cert)
        except OSError as error:  # ssl.SSLError is one
            raise IndexUnreachable(
                f"cannot load the certificates pip is configured with: {error}",
                "check pip's cert and client-cert settings (pip config list)",
            ) from None
        if not verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        proxy = self.settings.proxy
        proxies = {"http": proxy, "https": proxy} if proxy else None
        director = urllib.request.OpenerDirector()
        for handler in (
            urllib.request.ProxyHandler(proxies),
            urllib.request.HTTPHandler(),
            urllib.request.HTTPSHandler(context=context),
            CheckedRedirects(self),
            urllib.request.HTTPDefaultErrorHandler(),
            urllib.request.HTTPErrorProcessor(),
        ):
            director.add_handler(handler)
        return director


class CheckedRedirects(urllib.request.HTTPRedirectHandler):
    """Redirects followed only to places the client may read."""

    def __init__(self, client: IndexClient) -> None:
        self.client = client

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        self.client.checked(newurl, req.full_url)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def without_credentials(url: str) -> str:
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def netrc_login(host: str) -> tuple[str | None, str | None]:
    try:
        found = netrc.netrc().authenticators(host)
    except (OSError, netrc.NetrcParseError):
        return None, None
    return (found[0], found[2]) if found else (None, None)


def loopback(host: str | None) -> bool:
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def file_path(url: str) -> Path:
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise IndexUnreachable(f"cannot read {url}: a file: URL on another host", SETTINGS_HINT)
    return Path(urllib.request.url2pathname(unquote(parts.path)))


@contextmanager
def open_regular(path: Path, url: str) -> Iterator[BinaryIO]:
    """PATH opened for reading if it is a regular file (a FIFO or device is refused, and
    opening one does not block)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise IndexUnreachable(f"cannot read {url}: {error.strerror}", SETTINGS_HINT) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise IndexUnreachable(f"refusing {url}: not a regular file", SETTINGS_HINT)
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as source:
        yield source


def check_length(response: HTTPResponse, limit: int, refusal: Exception) -> None:
    """Refuse at once what announces itself as too large (the reads count again)."""
    length = response.headers.get("Content-Length", "")
    if length.isdigit() and int(length) > limit:
        raise refusal


def read_bounded(source: BinaryIO, url: str) -> bytes:
    chunks: list[bytes] = []
    size = 0
    for chunk in chunks_of(source, url, PAGE_DEADLINE):
        size += len(chunk)
        if size > MAX_PAGE_BYTES:
            raise page_too_large(url)
        chunks.append(chunk)
    return b"".join(chunks)


def copy_bounded(
    source: BinaryIO, out: BinaryIO, update: Callable[[bytes], None], url: str
) -> None:
    size = 0
    for chunk in chunks_of(source, url, DOWNLOAD_DEADLINE):
        size += len(chunk)
        if size > MAX_DOWNLOAD_BYTES:
            raise download_too_large(url)
        update(chunk)
        out.write(chunk)


def chunks_of(source: BinaryIO, url: str, deadline: float) -> Iterator[bytes]:
    """What SOURCE sends, as it arrives (read1: a peer dripping bytes cannot make one read
    wait for a whole chunk), until DEADLINE seconds have passed."""
    end = time.monotonic() + deadline
    read = getattr(source, "read1", source.read)
    while True:
        try:
            chunk = read(CHUNK)
        except (OSError, http.client.HTTPException) as error:
            raise IndexUnreachable(f"reading {url} failed: {error}", SETTINGS_HINT) from None
        if not chunk:
            return
        yield chunk
        if time.monotonic() > end:
            raise IndexUnreachable(
                f"{url} took over {deadline:.0f} s", "run again, or check the network"
            )


def page_too_large(url: str) -> IndexUnreachable:
    return IndexUnreachable(
        f"{url} is over {MAX_PAGE_BYTES >> 20} MB", "the index is misbehaving or hostile"
    )


def download_too_large(url: str) -> UnsafeArchive:
    return UnsafeArchive(
        f"{url} is over {MAX_DOWNLOAD_BYTES >> 30} GiB", "refusing oversized archives"
    )
