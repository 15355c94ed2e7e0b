"""A package index of our own for the `pypi:` tests: a folder laid out as pip's simple API
(simple/PROJECT/index.html as PEP 503, index.json beside it as PEP 691, the files in files/),
read through a file:// URL or served on 127.0.0.1 by a small HTTP server that counts the
requests and can hold a file back until the test lets it go."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import threading
import zipfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.integration.fetching import ROOT, Run

JSON_TYPE = "application/vnd.pypi.simple.v1+json"


class LocalIndex:
    """ROOT/simple/PROJECT/ pages listing the files added under ROOT/files/."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.listed: dict[str, list[tuple[str, str | None]]] = {}

    @property
    def url(self) -> str:
        return (self.root / "simple").as_uri()

    def add(self, project: str, filename: str, data: bytes, digest: str | None = "") -> Path:
        """FILENAME holding DATA, listed on PROJECT's pages with DIGEST (its sha256 when
        left out, none when None)."""
        path = self.root / "files" / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        given = hashlib.sha256(data).hexdigest() if digest == "" else digest
        self.listed.setdefault(project, []).append((filename, given))
        self.write_pages(project)
        return path

    def write_pages(self, project: str, href: str = "../../files/") -> None:
        folder = self.root / "simple" / project
        folder.mkdir(parents=True, exist_ok=True)
        links, files = [], []
        for filename, digest in self.listed[project]:
            fragment = f"#sha256={digest}" if digest else ""
            links.append(f'<a href="{href}{filename}{fragment}">{filename}</a>')
            hashes = {"sha256": digest} if digest else {}
            files.append({"filename": filename, "url": href + filename, "hashes": hashes})
        html = "<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n"
        (folder / "index.html").write_text(html)
        page = {"meta": {"api-version": "1.0"}, "name": project, "files": files}
        (folder / "index.json").write_text(json.dumps(page))


def sdist(top: str, files: dict[str, str | bytes]) -> bytes:
    """A .tar.gz holding FILES under the folder TOP (as `python -m build --sdist` lays out)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tf:
        for name, text in files.items():
            data = text.encode() if isinstance(text, str) else text
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def wheel(
    members: list[tuple[str, str]], name: str = "sgtrace_evil", version: str = "1.0"
) -> bytes:
    """A .whl (a zip, stored uncompressed) holding MEMBERS in this order, then the metadata
    pip reads from a wheel (so pip itself would take it)."""
    info = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    wheel_file = (
        "Wheel-Version: 1.0\nGenerator: sgtrace-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as zf:
        for member, text in members:
            zf.writestr(member, text)
        zf.writestr(f"{info}/METADATA", metadata)
        zf.writestr(f"{info}/WHEEL", wheel_file)
        zf.writestr(f"{info}/RECORD", "")
    return buffer.getvalue()


def evil_sdist(marker: Path) -> bytes:
    """The sdist of sgtrace-evil 1.0: its in-tree build backend, its setup.py and its
    package each write MARKER when run or imported."""
    touch = f"open({str(marker)!r}, 'w').write('ran')\n"
    return sdist(
        "sgtrace_evil-1.0",
        {
            "pyproject.toml": (
                '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
            ),
            "backend.py": touch + "def get_requires_for_build_wheel(config=None):\n    return []\n",
            "setup.py": touch,
            "PKG-INFO": "Metadata-Version: 2.1\nName: sgtrace-evil\nVersion: 1.0\n",
            "sgtrace_evil/__init__.py": touch + "limit = 4\nx = limit * 2\n",
        },
    )


class IndexServer(ThreadingHTTPServer):
    """Serves a LocalIndex's folder; REQUESTS counts each path asked for; a path in HELD
    waits until LET_GO is set."""

    def __init__(self, root: Path) -> None:
        super().__init__(("127.0.0.1", 0), partial(Handler, directory=str(root)))
        self.requests: Counter[str] = Counter()
        self.held: set[str] = set()
        self.let_go = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/simple"


class Handler(SimpleHTTPRequestHandler):
    server: IndexServer

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        self.server.requests[path] += 1
        if path in self.server.held:
            self.server.let_go.wait(60)
        folder = Path(self.translate_path(path))
        wants_json = JSON_TYPE in self.headers.get("Accept", "")
        if folder.is_dir() and wants_json and (folder / "index.json").exists():
            body = (folder / "index.json").read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", JSON_TYPE)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serving(index: LocalIndex) -> Iterator[IndexServer]:
    server = IndexServer(index.root)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.let_go.set()
        server.shutdown()
        server.server_close()


def index_env(cache: Path, index_url: str, **pip: str) -> dict[str, str]:
    """This environment with pip's settings replaced: no config file, INDEX_URL as its index
    and PIP (e.g. FIND_LINKS=...) as PIP_* variables; the sgtrace cache at CACHE."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update({f"PIP_{key}": value for key, value in pip.items()})
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL=index_url, SGTRACE_CACHE=str(cache))
    return env


def start_sgtrace(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    """`python -m tracer.cli ARGS` as its own process, as a user would start it."""
    return subprocess.Popen(
        [sys.executable, "-m", "tracer.cli", *args],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(process: subprocess.Popen[str]) -> Run:
    out, err = process.communicate(timeout=120)
    return Run(process.returncode, out, err)
