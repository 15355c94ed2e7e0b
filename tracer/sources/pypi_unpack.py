"""A release's archive (a wheel, or an sdist as .tar.* or .zip) unpacked safely: only the
Python files and package metadata, never a link or device, nothing outside the target, one
file per path, names a file system takes, sizes and counts of members and of Python files
capped, every read bounded. A zip's members are all checked against every rule and cap from
its table of members before any is written; a tar's, as the stream brings each, before it is
written. A damaged archive is a DamagedRelease; a hostile one an UnsafeArchive. Nothing in
the archive is run."""

from __future__ import annotations

import bz2
import gzip
import lzma
import stat
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from tracer.errors import DamagedRelease, UnsafeArchive
from tracer.sources.snapshot import MAX_FILE_BYTES, MAX_FILES, MAX_NAMES

KEPT_SUFFIXES = (".py", "/RECORD", "/METADATA", "/PKG-INFO")
MAX_MEMBER_BYTES = 4 * MAX_FILE_BYTES
MAX_TOTAL_BYTES = 2 << 30  # what is kept
MAX_EXPANDED_BYTES = 4 << 30  # what an sdist's tar decompresses to, read or skipped
MAX_MEMBERS = 200_000  # a wheel of torch has 15,000
MAX_CENTRAL_DIRECTORY = 16 << 20  # a zip's table of members (torch's: 2 MB), read whole
MAX_NAME_BYTES = 255  # one file or folder name: what Linux file systems take (NAME_MAX)
MAX_PATH_BYTES = 1024  # a member's path: the cache's goes before it, within PATH_MAX (4096)
MAX_DEPTH = 64  # folders a member is in: a real package nests a dozen at most
# Any one read of the tar (a member kept, a pax or long-name header) is at most this.
MAX_READ = MAX_MEMBER_BYTES + (1 << 20)
# What the readers raise on bytes that are not a valid archive of their kind.
DAMAGE = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    tarfile.TarError,
    EOFError,
    zlib.error,
    lzma.LZMAError,
    NotImplementedError,
    struct.error,
    ValueError,
    OSError,  # gzip.BadGzipFile, bz2's "Invalid data stream"
)
TARS = {
    ".tar.gz": gzip.open,
    ".tgz": gzip.open,
    ".tar.bz2": bz2.open,
    ".tbz": bz2.open,
    ".tar.xz": lzma.open,
    ".txz": lzma.open,
    ".tar": open,
}


def unpack(archive: Path, target: Path) -> int:
    """Extract the Python files (and package metadata) of ARCHIVE into TARGET; how many
    Python files it kept. An sdist's top folder (NAME-VERSION/) is left out; a wheel's paths
    are kept."""
    target.mkdir(parents=True)
    out = Unpacked(archive.name, target)
    if archive.name.endswith((".whl", ".zip")):
        unpack_zip(archive, out, sdist=not archive.name.endswith(".whl"))
        return out.python
    opener = next((TARS[s] for s in TARS if archive.name.lower().endswith(s)), None)
    if opener is None:
        raise DamagedRelease(f"{archive.name} is not an archive sgtrace reads", ZIP_OR_TAR)
    with reading(archive.name):
        raw = opener(archive, "rb")
    with raw:
        bounded = BoundedReader(raw, archive.name)
        with reading(archive.name):
            tf = tarfile.TarFile(fileobj=bounded, mode="r")  # type: ignore[arg-type]
        with tf:
            unpack_tar(tf, archive.name, out)
        with reading(archive.name):  # to the end: a cut or damaged stream fails its check
            while bounded.read(1 << 20):
                pass
    return out.python


def unpack_zip(archive: Path, out: Unpacked, sdist: bool) -> None:
    with archive.open("rb") as raw:
        with reading(archive.name):
            table = central_directory_size(raw)
        if table > MAX_CENTRAL_DIRECTORY:
            raise UnsafeArchive(f"{archive.name} lists too many members", NOTHING_KEPT)
        with reading(archive.name):
            zf = zipfile.ZipFile(raw)
        with zf:
            unpack_members(zf, archive.name, out, sdist)


def unpack_members(zf: zipfile.ZipFile, name: str, out: Unpacked, sdist: bool) -> None:
    """The members of ZF kept into OUT: every one checked, and every cap, from the table of
    members first; then the kept ones written."""
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise UnsafeArchive(f"{name} has over {MAX_MEMBERS} members", NOTHING_KEPT)
    kept: list[tuple[PurePosixPath, zipfile.ZipInfo]] = []
    for info in infos:
        path = safe_member(info.filename, name)
        if info.is_dir() or stat.S_ISLNK(info.external_attr >> 16):
            continue  # links never leave the archive
        if info.filename.endswith(KEPT_SUFFIXES):
            out.claim(path, info.file_size, sdist)
            kept.append((path, info))
    for path, info in kept:
        with reading(name):
            data = zf.read(info)
        out.write(path, data, sdist)


def unpack_tar(tf: tarfile.TarFile, name: str, out: Unpacked) -> None:
    members = 0
    while True:
        with reading(name):
            member = tf.next()
        if member is None:
            return
        members += 1
        if members > MAX_MEMBERS:
            raise UnsafeArchive(f"{name} has over {MAX_MEMBERS} members", NOTHING_KEPT)
        if member.size < 0:
            raise UnsafeArchive(f"{name}: member {member.name!r} has a negative size", HOSTILE)
        path = safe_member(member.name, name)
        if not member.isfile() or not member.name.endswith(KEPT_SUFFIXES):
            continue  # links and devices never leave the archive
        out.claim(path, member.size, sdist=True)
        with reading(name):
            source = tf.extractfile(member)
            data = source.read() if source is not None else b""
        out.write(path, data, sdist=True)


class Unpacked:
    """The files claimed in TARGET so far: each path once, never both a file and a folder,
    the sizes they claim capped one by one and in total, the Python files and the names (files
    and folders) at most as many as one tree may have (tracer/sources/snapshot.py)."""

    def __init__(self, archive: str, target: Path) -> None:
        self.archive = archive
        self.target = target
        self.files: set[PurePosixPath] = set()
        self.folders: set[PurePosixPath] = set()
        self.total = 0
        self.python = 0

    def claim(self, member: PurePosixPath, size: int, sdist: bool) -> None:
        """Room for MEMBER's SIZE bytes, or UnsafeArchive; nothing is written."""
        path = self.path(member, sdist)
        if path in self.files:
            raise UnsafeArchive(f"{self.archive} holds {path.as_posix()!r} twice", HOSTILE)
        file = path if path in self.folders else None
        file = file or next((p for p in path.parents if p in self.files), None)
        if file is not None:
            raise UnsafeArchive(
                f"{self.archive} holds {file.as_posix()!r} both as a file and as a folder",
                HOSTILE,
            )
        if size > MAX_MEMBER_BYTES:
            raise UnsafeArchive(f"{self.archive}: {member.as_posix()!r} is {size} bytes", HOSTILE)
        self.total += size
        if self.total > MAX_TOTAL_BYTES:
            raise UnsafeArchive(f"{self.archive} unpacks past 2 GiB", "refusing oversized archives")
        self.files.add(path)
        self.folders.update(path.parents)
        if path.name.endswith(".py"):
            self.python += 1
        if self.python > MAX_FILES:
            raise UnsafeArchive(
                f"{self.archive} holds more than {MAX_FILES} Python files, the most one tree "
                "may have",
                NOTHING_KEPT,
            )
        if len(self.files) + len(self.folders) > MAX_NAMES:
            raise UnsafeArchive(
                f"{self.archive} unpacks to more than {MAX_NAMES} files and folders, the most "
                "one tree may have",
                NOTHING_KEPT,
            )

    def write(self, member: PurePosixPath, data: bytes, sdist: bool) -> None:
        """MEMBER's DATA written, once claimed."""
        path = self.path(member, sdist)
        out = self.target.joinpath(*path.parts)
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("xb") as file:
            file.write(data)

    @staticmethod
    def path(member: PurePosixPath, sdist: bool) -> PurePosixPath:
        """Where MEMBER goes: an sdist's members without their top folder (NAME-VERSION/)."""
        if sdist and len(member.parts) > 1:
            return PurePosixPath(*member.parts[1:])
        return member


def safe_member(name: str, archive: str) -> PurePosixPath:
    """NAME as a relative path that stays inside the target and that a file system takes
    (no NUL, names of at most MAX_NAME_BYTES, at most MAX_DEPTH folders deep and
    MAX_PATH_BYTES long), or UnsafeArchive naming it."""
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or name.startswith(("/", "\\")) or ":" in name:
        raise UnsafeArchive(f"{archive}: member {shown(name)} would escape the target", HOSTILE)
    if "\0" in name:
        raise UnsafeArchive(f"{archive}: member {shown(name)} holds a NUL byte", HOSTILE)
    if len(path.parts) > MAX_DEPTH + 1:
        raise UnsafeArchive(
            f"{archive}: member {shown(name)} is {len(path.parts) - 1} folders deep, more "
            f"than the {MAX_DEPTH} sgtrace takes",
            HOSTILE,
        )
    longest = max((size_of(part) for part in path.parts), default=0)
    if longest > MAX_NAME_BYTES:
        raise UnsafeArchive(
            f"{archive}: member {shown(name)} has a name of {longest} bytes, more than the "
            f"{MAX_NAME_BYTES} a file system takes",
            HOSTILE,
        )
    if size_of(name) > MAX_PATH_BYTES:
        raise UnsafeArchive(
            f"{archive}: member {shown(name)} has a path of {size_of(name)} bytes, more than "
            f"the {MAX_PATH_BYTES} sgtrace takes",
            HOSTILE,
        )
    return path


def size_of(name: str) -> int:
    """NAME's length in bytes, as the file system is given it."""
    return len(name.encode("utf-8", "surrogatepass"))


def shown(name: str) -> str:
    """NAME quoted for a message, its middle left out when long (a hostile one may be
    thousands of characters)."""
    return repr(name if len(name) <= 72 else f"{name[:40]}...{name[-24:]}")


class BoundedReader:
    """The decompressed tar, read by tarfile through this: no single read past MAX_READ (a
    pax header claiming gigabytes is refused, not allocated), nothing past
    MAX_EXPANDED_BYTES (a decompression bomb stops there)."""

    def __init__(self, raw: BinaryIO, name: str) -> None:
        self.raw = raw
        self.name = name

    def read(self, size: int = -1) -> bytes:
        if size < 0 or size > MAX_READ:
            raise UnsafeArchive(
                f"{self.name} has a member or header past {MAX_READ} bytes", HOSTILE
            )
        data = self.raw.read(size)
        if self.raw.tell() > MAX_EXPANDED_BYTES:
            raise UnsafeArchive(f"{self.name} expands past 4 GiB", "refusing oversized archives")
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence == 0 and offset > MAX_EXPANDED_BYTES:
            raise UnsafeArchive(f"{self.name} expands past 4 GiB", "refusing oversized archives")
        return self.raw.seek(offset, whence)

    def tell(self) -> int:
        return self.raw.tell()


def central_directory_size(raw: BinaryIO) -> int:
    """The size a zip's end record gives its table of members (zipfile reads it whole); 0
    when there is no end record (zipfile then says the file is not a zip)."""
    end = raw.seek(0, 2)
    raw.seek(max(0, end - (1 << 16) - 22))
    tail = raw.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        return 0
    entries, size = struct.unpack_from("<HI", tail, at + 10)
    locator = at - 20
    if (entries == 0xFFFF or size == 0xFFFFFFFF) and tail[locator : locator + 4] == b"PK\x06\x07":
        (offset,) = struct.unpack_from("<Q", tail, locator + 8)
        raw.seek(offset)
        record = raw.read(56)
        if record[:4] == b"PK\x06\x06" and len(record) == 56:
            (size,) = struct.unpack_from("<Q", record, 40)
    raw.seek(0)
    return size


@contextmanager
def reading(archive: str) -> Iterator[None]:
    """Errors of the archive readers, as one DamagedRelease naming the archive."""
    try:
        yield
    except DAMAGE as error:
        raise DamagedRelease(f"{archive} is damaged: {error}", DAMAGED) from None


HOSTILE = "the download is corrupt or hostile; nothing was kept"
NOTHING_KEPT = "refusing it; nothing was kept"
DAMAGED = "nothing was unpacked; try another version, or tell the package's maintainers"
ZIP_OR_TAR = "sgtrace reads wheels, and sdists as .tar.gz, .tar.bz2, .tar.xz, .tar or .zip"
