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


def test_a_member_over_the_size_cap_is_refused_before_it_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tarstream, "MAX_MEMBER_BYTES", 1000)
    archive = tar_bytes({"sglang/big.py": b"z" * 1001}, tarfile.GNU_FORMAT)
    got: dict[str, bytes] = {}
    reader = TarReader({"sglang/big.py"}, "box", got.__setitem__)

    with pytest.raises(UnsafeArchive, match="box sent an oversized file"):
        reader.feed(archive[:512])  # the header alone
    assert got == {}
