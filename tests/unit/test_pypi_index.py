"""Which file of a release is fetched, and how pip's settings are read: pure functions over
file names and `pip config list` lines."""

from __future__ import annotations

import pytest

from tracer.errors import SourceNotFound
from tracer.sources.pypi import parse_spec
from tracer.sources.pypi_config import config_line
from tracer.sources.pypi_http import loads_shallow
from tracer.sources.pypi_index import (
    THIS_PYTHON,
    IndexFile,
    rank,
    release_file,
    release_of,
    version_key,
    version_order,
)


def listed(*filenames: str) -> list[IndexFile]:
    files = []
    for name in filenames:
        found = release_of(name, "sglang")
        assert found is not None, name
        files.append(IndexFile(name, f"https://files/{name}", "https://index/", *found, None))
    return files


def chosen(*filenames: str) -> str:
    return min(listed(*filenames), key=rank).filename


def test_a_wheel_for_this_python_comes_before_the_sdist_and_other_wheels() -> None:
    here = f"sglang-0.5.12-cp{THIS_PYTHON}-cp{THIS_PYTHON}-manylinux_2_34_x86_64.whl"
    assert (
        chosen(
            "sglang-0.5.12-cp39-cp39-manylinux_2_34_x86_64.whl",
            "sglang-0.5.12.tar.gz",
            f"sglang-0.5.12-cp{THIS_PYTHON}-cp{THIS_PYTHON}-manylinux_2_34_aarch64.whl",
            here,
        )
        == here
    )
    assert chosen("sglang-0.4.6.tar.gz", "sglang-0.4.6-py3-none-any.whl") == (
        "sglang-0.4.6-py3-none-any.whl"
    )


def test_without_a_wheel_for_this_python_the_sdist_then_a_common_wheel() -> None:
    other = "sglang-0.5.12-cp312-cp312-manylinux_2_34_aarch64.whl"
    x86 = "sglang-0.5.12-cp312-cp312-manylinux_2_28_x86_64.whl"
    assert chosen(other, "sglang-0.5.12.tar.gz", "sglang-0.5.12-cp38-cp38-win_amd64.whl") == (
        "sglang-0.5.12.tar.gz"
    )
    assert chosen("sglang-0.5.12-cp38-cp38-win_amd64.whl", other, x86) == x86


@pytest.mark.parametrize(
    ("filename", "found"),
    [
        ("sglang-0.5.9-py3-none-any.whl", ("wheel", "0.5.9")),
        ("SGLang-0.5.9.tar.gz", ("sdist", "0.5.9")),
        ("sglang_router-0.5.9.tar.gz", None),
        ("sglang-router-0.5.9.tar.gz", None),
        ("sglang-0.5.9-py3-none-any.egg", None),
        ("sglang-0.5.9-1-py3-none-any.whl", ("wheel", "0.5.9")),
    ],
)
def test_a_file_is_a_release_of_the_project_by_its_name(
    filename: str, found: tuple[str, str] | None
) -> None:
    assert release_of(filename, "sglang") == found


def test_versions_compare_as_pip_does_for_equality_and_sort_for_the_hint() -> None:
    assert version_key("1.0") == version_key("1.0.0") == version_key("v1.0")
    assert version_key("1.0RC1") == version_key("1.0rc1") != version_key("1.0")
    versions = ["0.5.10", "0.5.9", "0.5.10rc0", "0.5.10.post1", "0.5.2"]
    assert sorted(versions, key=version_order) == [
        "0.5.2",
        "0.5.9",
        "0.5.10rc0",
        "0.5.10",
        "0.5.10.post1",
    ]


def test_pip_config_lines_are_read_by_section_and_key() -> None:
    assert config_line("global.index-url='https://example.org/simple'") == (
        "global",
        "index-url",
        "https://example.org/simple",
    )
    assert config_line(":env:.default-timeout='180'") == (":env:", "timeout", "180")
    assert config_line("global.cert='/etc/ssl/x.pem'") == ("global", "cert", "/etc/ssl/x.pem")
    assert config_line("global.constraint='/etc/c.txt'") is None
    assert config_line("global.index-url=__import__('os')") is None


def nested(depth: int) -> object:
    """A list holding a list... DEPTH lists in all, the innermost empty."""
    value: list[object] = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        (b'{"a": "[[[[{{{{", "b": [[1]]}', {"a": "[[[[{{{{", "b": [[1]]}),
        (b'{"a": "\\"[[[[", "b": "\\\\", "c": ["]"]}', {"a": '"[[[[', "b": "\\", "c": ["]"]}),
        (b"[" * 32 + b"]" * 32, nested(32)),
    ],
    ids=["brackets in strings", "escaped quotes and backslashes", "32 deep"],
)
def test_json_as_deep_as_the_cap_is_read(text: bytes, parsed: object) -> None:
    assert loads_shallow(text) == parsed


@pytest.mark.parametrize(
    "text",
    [b"[" * 33 + b"]" * 33, b"[" * 2_000_000, b'{"a": ' * 40 + b"1" + b"}" * 40],
    ids=["33 deep", "two million opened", "objects 40 deep"],
)
def test_json_deeper_than_the_cap_is_refused_unparsed(text: bytes) -> None:
    with pytest.raises(ValueError, match="^nested more than 32 deep$"):
        loads_shallow(text)


def test_a_file_name_no_file_system_takes_is_no_release() -> None:
    """The file is downloaded under its name: one over 255 bytes is not a release file."""

    def named(length: int) -> str:
        return "sglang-0.5.9-" + "x" * (length - 30) + "-py3-none-any.whl"

    assert release_of(named(256), "sglang") == ("wheel", "0.5.9")
    assert release_file(f"https://files/{named(256)}", None, "https://i/", "sglang") is None
    found = release_file(f"https://files/{named(255)}", None, "https://i/", "sglang")
    assert found is not None and found.filename == named(255)


def test_a_release_too_long_for_its_cache_folder_is_refused() -> None:
    spec = "pypi:sglang==0.5." + "9" * 200
    with pytest.raises(SourceNotFound) as refused:
        parse_spec(spec)

    assert str(refused.value) == (
        f"{spec[:60]!r}... is not a PyPI release: its name and version are over 200 "
        "characters: check the name and version"
    )
