"""`sgtrace fetch` and `sgtrace trace HOST:PATH` against a real sshd on 127.0.0.1: SGLang 0.4.6
laid out as a git checkout and as a site-packages install, found with and without a path,
fetched whole and then incrementally, from several hosts at once, and the connection errors a
user meets (one line on stderr, exit 2).

Every test has its own cache (SGTRACE_CACHE), so what a fetch leaves there is asserted
exactly. The trace of a fetched tree must be the trace of the same release from PyPI."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.integration.fetching import (
    Run,
    blob_names,
    cached_files,
    fake_program,
    hashes,
    mirror,
    mirrored_hashes,
    probed_files,
    sgtrace_process,
    write_package,
)
from tests.sshd import SESSION_PATH, SshServer, Target, free_port, generate_key
from tracer.cli import presets
from tracer.session import Session
from tracer.trace.chains import trace

VERSION = "0.4.6"
PARAMETER = "mem_fraction_static"
SINK = "self.max_total_num_tokens = self.profile_max_num_token(total_gpu_memory)"
MODEL_RUNNER = "sglang/srt/model_executor/model_runner.py"
Spine = list[tuple[str, int, str]]  # (file, line, first code line), origin first

# Lets the target's python3 import SGLang without its dependencies (numpy, tqdm, ...): any
# module it lacks becomes an empty stand-in, as if the GPU box had them all installed.
STAND_INS = """
import importlib.abc, importlib.machinery, sys, types

class StandIn(types.ModuleType):
    __path__ = []
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return StandIn(name)
    def __call__(self, *args, **kwargs):
        return StandIn("result")
    def __mro_entries__(self, bases):
        return (object,)

class StandInFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.partition(".")[0] == "sglang":
            return None
        return importlib.machinery.ModuleSpec(name, self)
    def create_module(self, spec):
        return StandIn(spec.name)
    def exec_module(self, module):
        pass

sys.meta_path.append(StandInFinder())
"""


@pytest.fixture(scope="module")
def pypi_spine(release: Callable[[str], Session]) -> Spine:
    """The spine of mem_fraction_static in the same release from PyPI: what a fetched copy
    of it must give."""
    session = release(VERSION)
    chain = trace(session.graph, PARAMETER, sinks=presets.SINKS)
    steps = {step.id: step for step in chain.steps}
    spine = [(steps[i].file, steps[i].line, steps[i].code.splitlines()[0]) for i in chain.spine]
    assert spine[-1] == (MODEL_RUNNER, spine[-1][1], SINK), spine[-1]
    return spine


def traced_spine(run: Run) -> Spine:
    """The spine of `trace --json` output."""
    assert run.code == 0, run.err
    chain = json.loads(run.out)
    nodes = {node["id"]: node for node in chain["nodes"]}
    return [
        (nodes[i]["file"], nodes[i]["line"], nodes[i]["code"].splitlines()[0])
        for i in chain["spine"]
    ]


def head_commit(checkout: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def fetched_facts(run: Run) -> dict[str, object]:
    """The one host's `fetch --json` result, without the fields that vary between runs."""
    assert (run.code, run.err) == (0, ""), run.err
    [result] = run.results()
    assert isinstance(result["seconds"], float | int)
    # zstd, or lz4 when the probe's manifest came fast: loopback is fast or not by the load.
    assert result["compressor"] in ("zstd", "lz4")
    varying = ("seconds", "fetched_bytes", "compressor")
    return {k: v for k, v in result.items() if k not in varying}


def python_files(root: Path) -> int:
    return sum(1 for path in probed_files(root) if path.endswith(".py"))


# -- a real release laid out as a git checkout ------------------------------------------------


def test_checkout_python_folder_is_fetched_and_traced_like_pypi(
    client: SshServer,
    sgtrace: Callable[..., Run],
    cache: Path,
    target_checkout: Callable[..., Target],
    pypi_spine: Spine,
) -> None:
    target = target_checkout(VERSION)
    source = f"{client.alias}:{target.package_root}"
    tree = probed_files(target.package_root)

    run = sgtrace("fetch", source, "--json")

    assert fetched_facts(run) == {
        "source": source,
        "host": client.alias,
        "root": str(target.package_root),
        "package": "sglang",
        "version": VERSION,
        "git_commit": head_commit(target.root),
        "git_modified": [],
        "chosen_because": "",
        "other_candidates": [],
        "files": python_files(target.package_root),
        "fetched_files": python_files(target.package_root),
        "skipped": [],
    }
    assert run.results()[0]["fetched_bytes"] > 0
    # The cache holds the tree's manifest and one blob per distinct content, nothing else.
    assert sorted(p.name for p in cache.iterdir()) == ["blobs", "remote"]
    assert mirror(cache)["root"] == str(target.package_root)
    assert mirrored_hashes(cache) == hashes(tree)
    assert blob_names(cache) == set(hashes(tree).values())

    traced = sgtrace("trace", source, PARAMETER, "--json", "--quiet")
    assert traced_spine(traced) == pypi_spine


def test_checkout_top_with_a_modified_file(
    client: SshServer,
    sgtrace: Callable[..., Run],
    target_checkout: Callable[..., Target],
    make_patch: Callable[[Target, str, str, str], Path],
    tmp_path: Path,
) -> None:
    clean = target_checkout(VERSION)
    patch = make_patch(clean, "sglang/version.py", VERSION, f"{VERSION}+patched")
    patched = target_checkout(VERSION, patch=patch, dest=tmp_path / "sglang")
    source = f"{client.alias}:{patched.root}"  # the checkout's top, not its python/ folder

    facts = fetched_facts(sgtrace("fetch", source, "--json"))

    assert facts["root"] == str(patched.root / "python")
    assert facts["package"] == "sglang"
    assert facts["version"] == f"{VERSION}+patched"
    assert facts["git_commit"] == head_commit(clean.root)  # same commit, uncommitted change
    assert facts["git_modified"] == [" M python/sglang/version.py"]

    summary = sgtrace("fetch", source)
    assert summary.code == 0 and summary.err == ""
    first, second = summary.out.splitlines()
    assert first.startswith(
        f"{client.alias}: {facts['files']} files under {patched.root / 'python'} "
        f"(sglang {VERSION}+patched); fetched 0 files, 0.0 MB in "
    )
    assert second == f"  git checkout at {head_commit(clean.root)[:12]}, 1 modified file(s)"


# -- a real release installed in site-packages -----------------------------------------------


def test_site_packages_version_comes_from_the_dist_info(
    client: SshServer,
    sgtrace: Callable[..., Run],
    cache: Path,
    target_site_packages: Callable[..., Target],
    target_checkout: Callable[..., Target],
    make_patch: Callable[[Target, str, str, str], Path],
    tmp_path: Path,
    pypi_spine: Spine,
) -> None:
    # version.py edited in place says 9.9.9; the installed distribution is still 0.4.6.
    patch = make_patch(target_checkout(VERSION), "sglang/version.py", VERSION, "9.9.9")
    target = target_site_packages(VERSION, patch=patch, dest=tmp_path / "venv")
    source = f"{client.alias}:{target.package_root}"
    tree = probed_files(target.package_root)
    assert f"sglang-{VERSION}.dist-info/METADATA" in tree

    assert fetched_facts(sgtrace("fetch", source, "--json")) == {
        "source": source,
        "host": client.alias,
        "root": str(target.package_root),
        "package": "sglang",
        "version": VERSION,
        "git_commit": "",
        "git_modified": [],
        "chosen_because": "",
        "other_candidates": [],
        "files": python_files(target.package_root),
        "fetched_files": python_files(target.package_root),  # RECORD and METADATA are not
        "skipped": [],
    }
    assert mirrored_hashes(cache) == hashes(tree)

    traced = sgtrace("trace", source, PARAMETER, "--json", "--quiet")
    assert traced_spine(traced) == pypi_spine


# -- no path: the tool finds the package and says why ------------------------------------------


def test_no_path_finds_a_checkout_in_a_usual_location(
    fresh_client: SshServer,
    sgtrace: Callable[..., Run],
    target_checkout: Callable[..., Target],
    pypi_spine: Spine,
) -> None:
    assert "~/sglang/python" in presets.CHECKOUT_LOCATIONS
    target = target_checkout(VERSION, dest=fresh_client.remote_home / "sglang")

    facts = fetched_facts(sgtrace("fetch", fresh_client.alias, "--json"))

    assert facts["root"] == str(target.package_root)
    assert facts["version"] == VERSION
    assert facts["git_commit"] == head_commit(target.root)
    assert facts["chosen_because"] == f"checkout at {target.package_root}"
    assert facts["other_candidates"] == []

    summary = sgtrace("fetch", fresh_client.alias)
    assert f"  chosen: checkout at {target.package_root}" in summary.out.splitlines()

    # `HOST:` with nothing after the colon is the same search, for trace.
    traced = sgtrace("trace", f"{fresh_client.alias}:", PARAMETER, "--json", "--quiet")
    assert traced_spine(traced) == pypi_spine


def test_no_path_prefers_the_package_python3_imports(
    fresh_client: SshServer,
    sgtrace: Callable[..., Run],
    target_checkout: Callable[..., Target],
    target_site_packages: Callable[..., Target],
    tmp_path: Path,
) -> None:
    checkout = target_checkout(VERSION, dest=fresh_client.remote_home / "sglang")
    installed = target_site_packages(VERSION)
    stand_ins = tmp_path / "stand-ins"
    stand_ins.mkdir()
    (stand_ins / "sitecustomize.py").write_text(STAND_INS)
    real_python = shutil.which("python3", path=SESSION_PATH)
    fakes = tmp_path / "bin"
    python3 = fake_program(
        fakes,
        "python3",
        f"PYTHONPATH={stand_ins}:{installed.package_root} PYTHONDONTWRITEBYTECODE=1 "
        f'exec {real_python} "$@"\n',
    )
    fresh_client.prepend_remote_path(fakes)

    facts = fetched_facts(sgtrace("fetch", fresh_client.alias, "--json"))

    assert facts["chosen_because"] == f"{python3} can import sglang"
    assert facts["root"] == str(installed.package_root)
    assert facts["version"] == VERSION
    assert facts["git_commit"] == ""
    assert facts["other_candidates"] == [str(checkout.package_root)]

    lines = sgtrace("fetch", fresh_client.alias).out.splitlines()
    assert lines[1:] == [
        f"  chosen: {python3} can import sglang",
        f"  also found: {checkout.package_root}",
    ]


def test_no_path_and_no_package_anywhere(client: SshServer, sgtrace: Callable[..., Run]) -> None:
    homes = [Path(p.replace("~", str(client.remote_home))) for p in presets.CHECKOUT_LOCATIONS]
    if any((home / "sglang").exists() for home in homes):
        pytest.skip("this machine has an SGLang checkout in a usual location")

    line = sgtrace("fetch", client.alias).error_line()

    assert f"no sglang found on {client.alias}" in line
    assert f"give the path: {client.alias}:/path/to/folder-holding-sglang" in line


# -- what the stream carries -------------------------------------------------------------------


def test_long_and_non_ascii_paths_arrive_whole(
    client: SshServer, sgtrace: Callable[..., Run], cache: Path, tmp_path: Path
) -> None:
    tree = write_package(tmp_path / "tree", {"mod.py": "x = 1\n"})
    deep = tree / "sglang" / "/".join(["a_rather_long_folder_name"] * 5)  # past tar's 100
    for rel, text in (("module_with_a_long_name.py", "y = 2\n"), ("caf\u00e9.py", "z = 3\n")):
        (deep / rel).parent.mkdir(parents=True, exist_ok=True)
        (deep / rel).write_text(text)
    (tree / "sglang" / "\u6a21\u578b.py").write_text("w = 4\n")

    [result] = sgtrace("fetch", f"{client.alias}:{tree}", "--json").results()

    assert (result["files"], result["fetched_files"]) == (5, 5)
    assert result["compressor"] == "zstd"  # a manifest this short says nothing of the link
    assert mirrored_hashes(cache) == hashes(probed_files(tree))


@pytest.mark.parametrize(("tools", "compressor"), [(("gzip",), "gzip"), ((), "none")])
def test_without_zstd_or_lz4_the_stream_is_gzip_else_plain(
    tools: tuple[str, ...], compressor: str, fresh_sshd: SshServer, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "tar", "find", "git", "mktemp", "cat", "rm", "dirname", *tools):
        found = shutil.which(tool, path=SESSION_PATH)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    fresh_sshd.restart({"PATH": str(bin_dir)})
    source = "x = 1\n" * 20_000
    tree = write_package(tmp_path / "tree", {"mod.py": source})
    cache = tmp_path / "cache"

    run = sgtrace_process(fresh_sshd, cache, "fetch", f"{fresh_sshd.alias}:{tree}", "--json")

    [result] = run.results()
    assert (result["compressor"], result["fetched_files"]) == (compressor, 2)
    if compressor == "gzip":
        assert result["fetched_bytes"] < len(source) // 20
    else:
        assert result["fetched_bytes"] > len(source)
    assert mirrored_hashes(cache) == hashes(probed_files(tree))


# -- incremental fetches -------------------------------------------------------------------------


def test_second_fetch_of_an_unchanged_tree_transfers_nothing(
    client: SshServer,
    sgtrace: Callable[..., Run],
    cache: Path,
    target_checkout: Callable[..., Target],
) -> None:
    target = target_checkout(VERSION)
    source = f"{client.alias}:{target.package_root}"
    first = sgtrace("fetch", source, "--json")
    assert first.code == 0, first.err
    before = cached_files(cache)

    [again] = sgtrace("fetch", source, "--json").results()

    assert (again["fetched_files"], again["fetched_bytes"]) == (0, 0)
    assert again["compressor"] == "-"
    assert again["files"] == first.results()[0]["files"]
    assert cached_files(cache) == before


def test_only_the_changed_file_is_fetched_again(
    client: SshServer,
    sgtrace: Callable[..., Run],
    cache: Path,
    target_checkout: Callable[..., Target],
    tmp_path: Path,
) -> None:
    target = target_checkout(VERSION, dest=tmp_path / "sglang")
    root = target.package_root
    source = f"{client.alias}:{root}"
    assert sgtrace("fetch", source, "--json").code == 0
    old_blobs = blob_names(cache)

    changed = root / MODEL_RUNNER
    changed.write_text(changed.read_text() + "\n# tuned on this box\n")
    [result] = sgtrace("fetch", source, "--json").results()

    assert result["fetched_files"] == 1
    assert 0 < result["fetched_bytes"] < changed.stat().st_size
    assert mirrored_hashes(cache) == hashes(probed_files(root))
    assert blob_names(cache) == old_blobs | {hashes(probed_files(root))[MODEL_RUNNER]}

    # Touched, same bytes: fetched again (sizes and mtimes are compared), stored once.
    touched = root / "sglang/srt/server_args.py"
    stat = touched.stat()
    os.utime(touched, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    [result] = sgtrace("fetch", source, "--json").results()
    assert result["fetched_files"] == 1
    assert blob_names(cache) == old_blobs | {hashes(probed_files(root))[MODEL_RUNNER]}

    # Removed: nothing to fetch, and the mirror forgets it.
    (root / "sglang/srt/aio_rwlock.py").unlink()
    [result] = sgtrace("fetch", source, "--json").results()
    assert result["fetched_files"] == 0
    assert mirrored_hashes(cache) == hashes(probed_files(root))
    assert "sglang/srt/aio_rwlock.py" not in mirrored_hashes(cache)


# -- several hosts at once ------------------------------------------------------------------------


@pytest.fixture
def trio(
    sshd_trio: list[SshServer], use_client_home: Callable[[SshServer], Path]
) -> list[SshServer]:
    """Three hosts, each with its own small sglang 0.0.N in ~/sglang/python."""
    for n, server in enumerate(sshd_trio, start=1):
        write_package(
            server.remote_home / "sglang" / "python",
            {"version.py": f'__version__ = "0.0.{n}"\n', f"host{n}.py": "x = 1\n"},
        )
    use_client_home(sshd_trio[0])  # one client home names all three
    return sshd_trio


def test_three_hosts_in_one_command(trio: list[SshServer], sgtrace: Callable[..., Run]) -> None:
    run = sgtrace("fetch", *(server.alias for server in trio), "--json")

    assert (run.code, run.err) == (0, "")
    assert [
        (r["host"], r["version"], r["root"], r["chosen_because"], r["files"]) for r in run.results()
    ] == [
        (
            server.alias,
            f"0.0.{n}",
            str(server.remote_home / "sglang" / "python"),
            f"checkout at {server.remote_home / 'sglang' / 'python'}",
            3,
        )
        for n, server in enumerate(trio, start=1)
    ]


def test_one_failing_host_does_not_spoil_the_others(
    trio: list[SshServer], sgtrace: Callable[..., Run]
) -> None:
    dead = f"ssh://{trio[0].user}@127.0.0.1:{free_port()}/srv"

    run = sgtrace("fetch", trio[0].alias, dead, trio[2].alias, "--json")

    assert run.code == 2
    good, bad, other = run.results()
    assert (good["host"], other["host"]) == (trio[0].alias, trio[2].alias)
    assert bad["source"] == dead and "cannot connect" in str(bad["error"])
    [line] = run.err.splitlines()
    assert line.startswith(f"sgtrace: error: {dead}: cannot connect to ")


# -- errors a user meets: one line on stderr, exit 2 ----------------------------------------------


def test_connection_refused(sshd: SshServer, tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    run = sgtrace_process(sshd, tmp_path / "cache", "fetch", f"ssh://127.0.0.1:{port}/srv")

    line = run.error_line()
    assert f"cannot connect to 127.0.0.1:{port}" in line
    assert run.out == ""
    assert cached_files(tmp_path / "cache") == {}


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts TCP connections and never says a word."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


def test_host_that_never_answers(sshd: SshServer, tmp_path: Path, silent_port: int) -> None:
    run = sgtrace_process(
        sshd,
        tmp_path / "cache",
        "fetch",
        f"ssh://127.0.0.1:{silent_port}/srv",
        "--connect-timeout",
        "1",
    )

    assert "127.0.0.1:" in run.error_line() and "did not answer in time" in run.error_line()


def test_wrong_key_is_refused(sshd: SshServer, tmp_path: Path) -> None:
    wrong = generate_key(tmp_path / "wrong_ed25519", "not-authorized")
    run = sgtrace_process(sshd, tmp_path / "cache", "fetch", f"{sshd.alias}:/srv", "-i", str(wrong))

    line = run.error_line()
    assert f"{sshd.alias} refused every key offered" in line
    assert "-i KEY" in line


def test_remote_without_tar(fresh_sshd: SshServer, tmp_path: Path) -> None:
    tools = tmp_path / "no-tar-bin"
    tools.mkdir()
    for tool in ("sh", "find", "git", "grep", "awk", "ps", "readlink", "dirname", "basename"):
        found = shutil.which(tool, path=SESSION_PATH)
        assert found, tool
        (tools / tool).symlink_to(found)
    fresh_sshd.restart({"PATH": str(tools)})
    tree = write_package(tmp_path / "tree", {"mod.py": "x = 1\n"})

    run = sgtrace_process(fresh_sshd, tmp_path / "cache", "fetch", f"{fresh_sshd.alias}:{tree}")

    assert f"{fresh_sshd.alias} has no `tar`: install tar on the host" in run.error_line()
    assert cached_files(tmp_path / "cache") == {}
