"""Which sources are remote, and how `parse_remote` reads them; a local path that exists wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracer.sources import open_source
from tracer.sources.remote import RemoteSpec, parse_remote


@pytest.mark.parametrize(
    ("text", "host", "user", "port", "path"),
    [
        ("gpu-box:/srv/sglang/python", "gpu-box", None, None, "/srv/sglang/python"),
        ("gpu-box:sglang", "gpu-box", None, None, "sglang"),
        ("gpu-box:", "gpu-box", None, None, None),  # no path: find the package
        ("10.0.0.7:/srv", "10.0.0.7", None, None, "/srv"),
        ("alice@gpu-box", "gpu-box", "alice", None, None),
        ("alice@gpu-box:~/sglang", "gpu-box", "alice", None, "~/sglang"),
        ("alice@gpu-box:/odd:name@here", "gpu-box", "alice", None, "/odd:name@here"),
        ("ssh://alice@gpu-box:2222/srv/sglang", "gpu-box", "alice", 2222, "/srv/sglang"),
        ("ssh://gpu-box", "gpu-box", None, None, None),
        ("ssh://gpu-box/srv", "gpu-box", None, None, "/srv"),
        ("ssh://alice@[::1]:2222/srv", "::1", "alice", 2222, "/srv"),
    ],
)
def test_remote_sources(
    text: str, host: str, user: str | None, port: int | None, path: str | None
) -> None:
    assert parse_remote(text) == RemoteSpec(host=host, user=user, port=port, path=path, text=text)


@pytest.mark.parametrize(
    "text",
    [
        "/srv/sglang/python",
        "./sglang",
        "../sglang",
        "~/sglang/python",
        "sglang",  # a bare name is a local folder, except for `fetch`
        "https://example.org/sglang",
        "file:///srv/sglang",
    ],
)
def test_not_remote(text: str) -> None:
    assert parse_remote(text) is None


def test_bare_host_only_for_fetch() -> None:
    assert parse_remote("gpu-box") is None
    assert parse_remote("gpu-box", bare_host=True) == RemoteSpec(
        host="gpu-box", user=None, port=None, path=None, text="gpu-box"
    )


def test_label_names_user_host_and_port() -> None:
    spec = parse_remote("ssh://alice@gpu-box:2222/srv")
    assert spec is not None and spec.label == "alice@gpu-box:2222"
    plain = parse_remote("gpu-box:/srv")
    assert plain is not None and plain.label == "gpu-box"


def test_local_path_that_exists_is_not_fetched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `box:tree` reads as host `box`, path `tree`; here it is also a folder in the cwd.
    package = tmp_path / "box:tree" / "sglang"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)

    snapshot = open_source("box:tree")

    assert parse_remote("box:tree") is not None
    assert snapshot.root == Path("box:tree")
    assert list(snapshot.files) == ["sglang/__init__.py"]
    assert "host" not in snapshot.meta
