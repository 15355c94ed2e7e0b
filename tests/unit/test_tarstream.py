"""TarReader reads the archives that tar writes (GNU, pax and ustar headers, long and
non-ASCII names) in any slicing of the stream, and refuses damaged or oversized ones."""

from __future__ import annotations

import io
import tarfile

import pytest

from tracer.errors import TransferFailed, UnsafeArchive
from tracer.sources import tarstream
from tracer.sources.tarstream import TarReader

LONG = "sglang/" + "/".join(["a_rather_long_folder_name"] * 6) + "/module_with_a_long_name.py"
FILES = {
    "sglang/__init__.py": b"",
    "sglang/srt/server_args.py": b"mem_fraction_static = 0.9\n" * 300,
    LONG: b"x = 1\n",
    "sglang/caf\u00e9/\u6a21\u578b.py": "name = '\u6a21\u578b'\n".encode(),
}


def tar_bytes(files: dict[str, bytes], format: int) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=format) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def read_all(archive: bytes, wanted: set[str], piece: int) -> dict[str, bytes]:
    got: dict[str, bytes] = {}
    reader = TarReader(wanted, "box", got.__setitem__)
    for start in range(0, len(archive), piece):
        reader.feed(archive[start : start + piece])
    reader.finish()
    return got


@pytest.mark.parametrize("piece", [1, 511, 513, 4096, 1 << 20])
@pytest.mark.parametrize("format", [tarfile.GNU_FORMAT, tarfile.PAX_FORMAT], ids=["gnu", "pax"])
def test_every_member_arrives_whole_however_the_stream_is_cut(format: int, piece: int) -> None:
    assert read_all(tar_bytes(FILES, format), set(FILES), piece) == FILES


def test_ustar_prefix_field_is_part_of_the_name() -> None:
    name = "sglang/" + "p" * 90 + "/" + "n" * 90 + ".py"  # fits ustar only split in two
    archive = tar_bytes({name: b"y = 2\n"}, tarfile.USTAR_FORMAT)
    assert archive[345:350] == b"sglan"  # the prefix field is used

    assert read_all(archive, {name}, 700) == {name: b"y = 2\n"}


def test_bytes_after_the_end_of_the_archive_are_ignored() -> None:
    archive = tar_bytes({"sglang/__init__.py": b"ok\n"}, tarfile.GNU_FORMAT)

    got = read_all(archive + b"trailing junk", {"sglang/__init__.py"}, 512)

    assert got == {"sglang/__init__.py": b"ok\n"}


def test_a_corrupted_header_is_damage() -> None:
    archive = bytearray(tar_bytes({"sglang/__init__.py": b"ok\n"}, tarfile.GNU_FORMAT))
    archive[0] ^= 0x20  # the name changes, the checksum no longer matches

    with pytest.raises(TransferFailed, match="archive from box is damaged .bad header checksum"):
        read_all(bytes(archive), {"sglang/__init__.py"}, 512)


def test_a_stream_that_stops_inside_a_member_is_damage() -> None:
    archive = tar_bytes({"sglang/srt/server_args.py": FILES["sglang/srt/server_args.py"]}, 0)

    with pytest.raises(TransferFailed, match="it ends inside a member"):
        read_all(archive[:2048], {"sglang/srt/server_args.py"}, 512)


def test_a_file_over_the_size_cap_is_skipped_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tarstream, "MAX_MEMBER_BYTES", 1000)
    files = {"sglang/big.py": b"z" * 5000, "sglang/small.py": b"ok\n"}
    archive = tar_bytes(files, tarfile.GNU_FORMAT)
    got: dict[str, bytes] = {}
    reader = TarReader(set(files), "box", got.__setitem__)

    for start in range(0, len(archive), 700):
        reader.feed(archive[start : start + 700])
        assert len(reader.buffer) < 1000 + 2 * 700  # its bytes are dropped as they come
    reader.finish()

    assert got == {"sglang/small.py": b"ok\n"}
    assert reader.skipped == [("sglang/big.py", 5000)]


# -- archives written to attack the reader ----------------------------------------------------


def header(name: bytes, size: bytes, kind: bytes = b"0", checksum: bytes | None = None) -> bytes:
    """A ustar header with SIZE written as is in its size field (a valid checksum unless
    CHECKSUM is given)."""
    block = bytearray(512)
    block[0 : len(name)] = name
    block[100:108] = b"0000644\0"
    block[124 : 124 + len(size)] = size
    block[156:157] = kind
    block[257:265] = b"ustar\x0000"
    block[148:156] = b" " * 8
    block[148:156] = checksum or b"%06o\0 " % sum(block)
    return bytes(block)


END = bytes(1024)


@pytest.mark.parametrize(
    "size",
    [b"-0000001000\0", b"-1\0", b"0000_001000\0", b"00 0001000\0", b"\xff" + b"\xff" * 11],
    ids=["negative", "small-negative", "underscore", "space-inside", "base256-negative"],
)
def test_a_size_that_is_not_a_size_is_a_hostile_archive(size: bytes) -> None:
    archive = header(b"sglang/a.py", size) + bytes(4096) + END
    reader = TarReader({"sglang/a.py"}, "box", lambda path, data: None)

    with pytest.raises(UnsafeArchive, match="box sent a member whose size is not a size"):
        reader.feed(archive)


def test_the_same_file_twice_is_refused() -> None:
    once = header(b"sglang/a.py", b"00000000000\0")
    reader = TarReader({"sglang/a.py", "sglang/b.py"}, "box", lambda path, data: None)

    with pytest.raises(UnsafeArchive, match="box sent the same file twice: 'sglang/a.py'"):
        reader.feed(once + once)


def test_members_past_the_cap_are_refused_before_they_add_up() -> None:
    global_header = header(b"pax_global_header", b"00000000000\0", b"g")
    reader = TarReader({"sglang/a.py"}, "box", lambda path, data: None)

    with pytest.raises(UnsafeArchive, match="box sent over 260 members for 1 files"):
        for _ in range(1000):
            reader.feed(global_header)
    assert reader.members == 261


def test_the_archive_ends_at_its_two_zero_blocks_whatever_follows() -> None:
    archive = tar_bytes({"sglang/__init__.py": b"ok\n"}, tarfile.GNU_FORMAT)
    end = archive.index(END, 1024)
    reader = TarReader({"sglang/__init__.py"}, "box", lambda path, data: None)

    reader.feed(archive[: end + 1024])
    assert reader.ended
    reader.feed(header(b"sglang/other.py", b"00000000001\0") + b"x" * 512)  # never looked at
    reader.finish()
    assert reader.total == end + 1024


def test_a_lone_zero_block_inside_the_archive_is_damage() -> None:
    archive = bytes(512) + header(b"sglang/a.py", b"00000000000\0")
    reader = TarReader({"sglang/a.py"}, "box", lambda path, data: None)

    with pytest.raises(TransferFailed, match="damaged .a lone zero block inside it"):
        reader.feed(archive)


@pytest.mark.parametrize(
    "records",
    [b"x path=sglang/a.py\n", b"99 path=sglang/a.py\n", b"3 p\n", b"18 path sglang/a.py\n"],
    ids=["length-not-a-number", "length-past-the-header", "length-too-short", "no-equals"],
)
def test_a_malformed_pax_header_is_damage(records: bytes) -> None:
    pax = header(b"PaxHeader/a.py", b"%011o\0" % len(records), b"x")
    body = records + bytes(-len(records) % 512)
    reader = TarReader({"sglang/a.py"}, "box", lambda path, data: None)

    with pytest.raises(TransferFailed, match="damaged .a malformed pax header"):
        reader.feed(pax + body + header(b"sglang/a.py", b"00000000000\0") + END)


def test_the_whole_archive_is_capped_counting_every_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tarstream, "MAX_MEMBER_BYTES", 1000)  # skipped members count too
    files = {f"sglang/m{n}.py": b"z" * 300_000 for n in range(4)}
    reader = TarReader(set(files), "box", lambda path, data: None, max_total=1 << 20)

    with pytest.raises(UnsafeArchive, match="box sent over 1 MB"):
        reader.feed(tar_bytes(files, tarfile.GNU_FORMAT))
