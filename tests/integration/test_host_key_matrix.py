"""Host keys exactly as OpenSSH checks them: a generated matrix of ssh configs and known_hosts
files (HostKeyAlias x Port 22 or not x HostName as a name or an address x CheckHostIP x
hashed, wildcard, negated, @revoked and @cert-authority lines, RevokedHostKeys, a key of
another type x UserKnownHostsFile, its second file or GlobalKnownHostsFile x HashKnownHosts x
ProxyJump,
and the jump host's own key), each cell run by the real `ssh -o BatchMode=yes` and by
sgtrace's connect on a copy of the same files, through real sshds: sgtrace accepts exactly
the keys ssh accepts, refuses exactly those it refuses (for the same cause, naming the host
whose key it is), and records an accepted key where and as ssh records it.

ssh's StrictHostKeyChecking=yes is sgtrace without --accept-new-host-key, accept-new is with
it. Where sgtrace is deliberately stricter (docs/commands.md), the cell says so and the
difference is asserted: the config's `StrictHostKeyChecking no`; under CheckHostIP an
address recorded with no flag given, or a host recorded before its address refuses it; a
host certificate no @cert-authority line verifies (ssh checks the plain key instead).

The ssh runs go on in a few threads while sgtrace's connects run in one event loop."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import socket
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.sshd import (
    SSH,
    SSH_KEYGEN,
    SshServer,
    generate_key,
    ssh_client_env,
    start_sshd,
    stop_all,
)
from tracer.errors import HostKeyChanged, HostKeyUnknown, SgtraceError
from tracer.sources.remote import RemoteSpec, SshOptions
from tracer.sources.ssh import connect

RELAY = Path(__file__).resolve().parents[1] / "relay.py"
ALIAS = "keyalias"
FILES = ("user", "second", "global")  # UserKnownHostsFile's two files, GlobalKnownHostsFile
Files = dict[str, list[tuple[str, ...]]]


# -- the cells -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Form:
    """How the config names the target: which server, HostName, HostKeyAlias, CheckHostIP."""

    server: str  # "plain", "port22" (Port 22 through a relay), "remote" (not loopback), "certified"
    hostname: str  # "ip" or "name" (localhost)
    alias: bool
    check_ip: bool = False


@dataclass(frozen=True, slots=True)
class Cell:
    form: Form
    entry: str  # what the known_hosts files hold (ENTRIES)
    strict: str  # ssh's StrictHostKeyChecking: "yes", "accept-new", or "no" in the config
    where: str  # the file the entry is in (FILES)
    hashed: bool  # HashKnownHosts
    jump: bool  # through a jump host (ProxyJump)

    @property
    def id(self) -> str:
        form = self.form
        parts = [form.server, form.hostname, *(["alias"] if form.alias else [])]
        parts += ["checkip"] if form.check_ip else []
        parts += [self.entry, self.strict, self.where]
        parts += ["hashed"] * self.hashed + ["jump"] * self.jump
        return "-".join(parts)


FORMS = [
    Form("plain", "ip", False),
    Form("plain", "ip", True),
    Form("plain", "name", False),
    Form("plain", "name", True),
    Form("port22", "ip", False),
    Form("port22", "name", False),
    Form("port22", "name", True),
    Form("remote", "ip", True, check_ip=True),
    Form("remote", "ip", False, check_ip=True),
    Form("remote", "ip", True, check_ip=False),
    Form("certified", "ip", False),
    Form("certified", "ip", True),
    Form("certified", "name", False),
]
ENTRIES = [
    "none",  # nothing recorded
    "right",  # the host's key under the name ssh looks up
    "wrong",  # another key there
    "other-type",  # an ecdsa key there (the host has ed25519)
    "bare-right",  # the host's key under the host name without the port
    "bare-wrong",
    "alias-port-wrong",  # another key under [alias]:port, the name sgtrace once looked up
    "hashed-right",
    "hashed-wrong",
    "wildcard-wrong",  # another key under `*`
    "negated-wrong",  # another key under `*,!NAME`
    "revoked",  # the key recorded, and @revoked
    "revoked-file",  # the key recorded, and listed by RevokedHostKeys
    "ca-only",  # a @cert-authority line for the host, no key
    "ca-right",  # the CA that signed the host's certificate
    "ca-other",  # another CA
    "ca-revoked",  # the CA that signed the host's certificate, and the host's key @revoked
    "ip-wrong",  # the key under the name, another under the address (CheckHostIP)
    "ip-right",  # the key under the address alone
]
JUMP_ENTRIES = ["none", "right", "wrong", "hashed-wrong", "revoked"]  # of the jump host


def applies(form: Form, entry: str) -> bool:
    if entry.startswith("bare-"):
        return not form.alias and form.server != "port22"
    if entry == "alias-port-wrong":
        return form.alias
    if entry.startswith("ip-"):
        return form.check_ip
    if entry.startswith("ca-") and entry != "ca-only":
        return form.server == "certified"
    if form.server == "certified":
        return entry in ("none", "right", "wrong")
    return True


def cells() -> list[Cell]:
    """Every form with every entry that means something for it, under yes and accept-new;
    which file the entry is in, HashKnownHosts and ProxyJump turn in a cycle, so each
    value meets each form and most entries; `StrictHostKeyChecking no` on a few."""
    found = []
    for n, (form, entry) in enumerate((f, e) for f in FORMS for e in ENTRIES if applies(f, e)):
        where = FILES[n % 3]
        hashed = n % 4 == 1
        jump = form.server in ("plain", "remote") and n % 5 == 2
        for strict in ("yes", "accept-new"):
            found.append(Cell(form, entry, strict, where, hashed, jump))
        if entry in ("none", "wrong") and form.server in ("plain", "remote"):
            found.append(Cell(form, entry, "no", where, hashed, jump))
    for n, entry in enumerate(JUMP_ENTRIES):  # the jump host's own key
        for strict in ("yes", "accept-new"):
            found.append(
                Cell(
                    Form("plain", "ip", False), f"jump-{entry}", strict, FILES[n % 3], n == 1, True
                )
            )
    return found


CELLS = cells()


# -- the servers and their files --------------------------------------------------------------


def outward_address() -> str:
    """An address of this machine that is not loopback (CheckHostIP is off for loopback)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("192.0.2.1", 9))  # no packet is sent: the route picks the address
        except OSError as error:
            pytest.fail(f"CheckHostIP needs an address other than loopback: {error}")
        address = sock.getsockname()[0]
    if address.startswith("127."):
        pytest.fail("CheckHostIP needs an address other than loopback; this machine has none")
    return address


@dataclass
class Lab:
    servers: dict[str, SshServer]
    client_key: Path
    wrong: str  # `TYPE BASE64` of a key no server has
    other_type: str  # an ecdsa key
    authority: str  # the CA that signed the certified server's key
    other_authority: str


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    work = tmp_path_factory.mktemp("matrix")
    plain = start_sshd(work / "plain", alias="target")
    key = plain.client_key
    servers = {"plain": plain}
    try:
        servers["jump"] = start_sshd(work / "jump", alias="jump", client_key=key)
        servers["remote"] = start_sshd(
            work / "remote", alias="remote", client_key=key, host=outward_address()
        )
        servers["certified"] = start_sshd(work / "certified", alias="certified", client_key=key)
        authority = servers["certified"].certify(generate_key(work / "ca", "ca"), ["127.0.0.1"])
        lab = Lab(
            servers,
            key,
            public(work / "wrong", "ed25519"),
            public(work / "other", "ecdsa"),
            authority,
            public(work / "other-ca", "ed25519"),
        )
        yield lab
    finally:
        stop_all(list(servers.values()))


def public(path: Path, kind: str) -> str:
    subprocess.run([SSH_KEYGEN, "-q", "-t", kind, "-N", "", "-f", str(path)], check=True)
    return " ".join(Path(f"{path}.pub").read_text().split()[:2])


def server_of(cell: Cell, lab: Lab) -> SshServer:
    return lab.servers["plain" if cell.form.server == "port22" else cell.form.server]


def lookup_names(cell: Cell, lab: Lab) -> tuple[str, str | None, str | None]:
    """The name ssh looks the target up under, the name without its port, the address's."""
    server = server_of(cell, lab)
    host = "localhost" if cell.form.hostname == "name" else server.host
    port = 22 if cell.form.server == "port22" else server.port
    named = host if port == 22 else f"[{host}]:{port}"
    ip = f"[{server.host}]:{server.port}" if cell.form.check_ip else None
    if cell.form.alias:
        return ALIAS, None, ip
    return named, host if port != 22 else None, ip


def hashed(name: str) -> str:
    salt = b"0123456789abcdefghij"
    digest = hmac.new(salt, name.encode(), hashlib.sha1).digest()
    return f"|1|{base64.b64encode(salt).decode()}|{base64.b64encode(digest).decode()}"


def entry_lines(cell: Cell, lab: Lab) -> list[str]:
    """The known_hosts lines of CELL's entry."""
    jump = lab.servers["jump"]
    right = server_of(cell, lab).host_public_key
    name, bare, ip = lookup_names(cell, lab)
    entry = cell.entry
    if entry.startswith("jump-"):  # the target known; the jump host's key as the entry says
        name, right, entry = jump.known_hosts_name, jump.host_public_key, entry[5:]
    table = {
        "none": [],
        "right": [f"{name} {right}"],
        "wrong": [f"{name} {lab.wrong}"],
        "other-type": [f"{name} {lab.other_type}"],
        "bare-right": [f"{bare} {right}"],
        "bare-wrong": [f"{bare} {lab.wrong}"],
        "alias-port-wrong": [f"[{ALIAS}]:{server_of(cell, lab).port} {lab.wrong}"],
        "hashed-right": [f"{hashed(name)} {right}"],
        "hashed-wrong": [f"{hashed(name)} {lab.wrong}"],
        "wildcard-wrong": [f"* {lab.wrong}"],
        "negated-wrong": [f"*,!{name} {lab.wrong}"],
        "revoked": [f"{name} {right}", f"@revoked * {right}"],
        "revoked-file": [f"{name} {right}"],
        "ca-only": [f"@cert-authority * {lab.other_authority}"],
        "ca-right": [f"@cert-authority * {lab.authority}"],
        "ca-other": [f"@cert-authority * {lab.other_authority}", f"{name} {right}"],
        "ca-revoked": [f"@cert-authority * {lab.authority}", f"@revoked * {right}"],
        "ip-wrong": [f"{name} {right}", f"{ip} {lab.wrong}"],
        "ip-right": [f"{ip} {right}"],
    }
    return table[entry]


def write_cell(cell: Cell, lab: Lab, folder: Path) -> Path:
    """CELL's ssh config and known_hosts files in FOLDER; returns the config."""
    folder.mkdir(parents=True)
    for name in FILES:
        (folder / name).write_text("")
    lines = entry_lines(cell, lab)
    if cell.entry.startswith("jump-") or cell.jump:
        target = server_of(cell, lab)  # known, when the jump host's key is what is checked
        if cell.entry.startswith("jump-"):
            lines = [target.known_hosts_line().strip(), *lines]
        else:
            lines = [lab.servers["jump"].known_hosts_line().strip(), *lines]
    (folder / cell.where).write_text("".join(f"{x}\n" for x in lines))
    (folder / "revoked").write_text(f"{server_of(cell, lab).host_public_key}\n")
    config = folder / "config"
    config.write_text(target_block(cell, lab, folder) + jump_block(cell, lab, folder))
    return config


def common(cell: Cell, lab: Lab, folder: Path) -> list[str]:
    return [
        f"User {lab.servers['plain'].user}",
        f"IdentityFile {lab.client_key}",
        "IdentitiesOnly yes",
        f"UserKnownHostsFile {folder / 'user'} {folder / 'second'}",
        f"GlobalKnownHostsFile {folder / 'global'}",
        f"StrictHostKeyChecking {cell.strict}",  # what the jump host's ssh reads
        f"HashKnownHosts {'yes' if cell.hashed else 'no'}",
        "BatchMode yes",
        "ConnectTimeout 20",
    ]


def target_block(cell: Cell, lab: Lab, folder: Path) -> str:
    server = server_of(cell, lab)
    form = cell.form
    lines = [f"HostName {'localhost' if form.hostname == 'name' else server.host}"]
    if form.server == "port22":
        lines += [
            "Port 22",
            f"ProxyCommand {sys.executable} {RELAY} 127.0.0.1 {server.port} /dev/null",
        ]
    else:
        lines += [f"Port {server.port}"]
    lines += [f"HostKeyAlias {ALIAS}"] * form.alias
    lines += [f"CheckHostIP {'yes' if form.check_ip else 'no'}"]
    lines += ["ProxyJump jump"] * cell.jump
    lines += [f"RevokedHostKeys {folder / 'revoked'}"] * (cell.entry == "revoked-file")
    return "Host target\n" + "".join(f"    {x}\n" for x in lines + common(cell, lab, folder))


def jump_block(cell: Cell, lab: Lab, folder: Path) -> str:
    jump = lab.servers["jump"]
    lines = [f"HostName {jump.host}", f"Port {jump.port}", "CheckHostIP no"]
    return "Host jump\n" + "".join(f"    {x}\n" for x in lines + common(cell, lab, folder))


# -- running a cell ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    accepted: bool
    cause: str  # refused: "unknown", "changed", "revoked", "certificate"; accepted: ""
    said: str  # what it printed (the last lines)
    files: Files  # each known_hosts file, normalized


def run_ssh(config: Path, cell: Cell) -> subprocess.CompletedProcess[str]:
    strict = ["-o", f"StrictHostKeyChecking={cell.strict}"] if cell.strict != "no" else []
    return subprocess.run(
        [SSH, "-F", str(config), "-o", "BatchMode=yes", *strict, "target", "true"],
        capture_output=True,
        text=True,
        timeout=60,
        env=ssh_client_env(config.parent),
        stdin=subprocess.DEVNULL,
    )


def ssh_cause(stderr: str) -> str:
    if "REVOKED HOST KEY" in stderr or "revoked by file" in stderr:
        return "revoked"
    if "HAS CHANGED" in stderr or "differs from the key for the IP address" in stderr:
        return "changed"
    if "host key is known for" in stderr:
        return "unknown"
    return "other"


async def run_sgtrace(config: Path, cell: Cell) -> str | SgtraceError:
    options = SshOptions(config=config, accept_new_host_key=cell.strict == "accept-new")
    try:
        conn = await connect(RemoteSpec("target", None, None, None, "target"), options)
    except SgtraceError as error:
        return error
    conn.close()
    await conn.wait_closed()
    return ""


def our_cause(error: SgtraceError) -> str:
    if isinstance(error, HostKeyUnknown):
        return "unknown"
    if isinstance(error, HostKeyChanged) and "revoked" in error.message:
        return "revoked"
    if isinstance(error, HostKeyChanged):
        return "certificate" if "certificate" in error.message else "changed"
    return "other"


def normalized(folder: Path, names: list[str]) -> Files:
    """Each known_hosts file of FOLDER as its lines' fields, a hashed name as the NAMES it
    hashes (the salt differs from run to run)."""
    files = {}
    for name in FILES:
        lines = []
        for line in (folder / name).read_text().splitlines():
            fields = line.split()
            at = 1 if fields[0].startswith("@") else 0
            if fields[at].startswith("|1|"):
                fields[at] = "hashed:" + ",".join(n for n in names if check_hash(fields[at], n))
            lines.append(tuple(fields))
        files[name] = lines
    return files


def check_hash(field: str, name: str) -> bool:
    salt, digest = (base64.b64decode(x) for x in field[3:].split("|"))
    return hmac.new(salt, name.encode(), hashlib.sha1).digest() == digest


@pytest.fixture(scope="module")
def outcomes(
    lab: Lab, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[Outcome, Outcome, Files]]:
    """Every cell's outcome by ssh and by sgtrace, each on its own copy of the files, and
    the files as they were."""
    work = tmp_path_factory.mktemp("cells")
    jump = lab.servers["jump"]

    def names(cell: Cell) -> list[str]:
        name, bare, ip = lookup_names(cell, lab)
        return list(dict.fromkeys(n for n in (name, bare, ip, jump.known_hosts_name) if n))

    initial = {
        c.id: normalized(write_cell(c, lab, work / c.id / "initial").parent, names(c))
        for c in CELLS
    }
    configs = {
        cell.id: (
            write_cell(cell, lab, work / cell.id / "ssh"),
            write_cell(cell, lab, work / cell.id / "sgtrace"),
        )
        for cell in CELLS
    }

    async def all_ours() -> list[str | SgtraceError]:
        room = asyncio.Semaphore(16)  # below sshd's MaxStartups, which drops the rest

        async def one(cell: Cell) -> str | SgtraceError:
            async with room:
                return await run_sgtrace(configs[cell.id][1], cell)

        return await asyncio.gather(*(one(c) for c in CELLS))

    # ssh in threads while sgtrace's connects run here: the two cores both work.
    with ThreadPoolExecutor(4) as pool, pytest.MonkeyPatch.context() as patch:
        running = [pool.submit(run_ssh, configs[c.id][0], c) for c in CELLS]
        patch.delenv("SSH_AUTH_SOCK", raising=False)
        ours = dict(zip(configs, asyncio.run(all_ours()), strict=True))
        theirs = {c.id: done.result() for c, done in zip(CELLS, running, strict=True)}
    found = {}
    for cell in CELLS:
        done, mine = theirs[cell.id], ours[cell.id]
        ssh_outcome = Outcome(
            done.returncode == 0,
            "" if done.returncode == 0 else ssh_cause(done.stderr),
            "\n".join(done.stderr.splitlines()[-3:]),
            normalized(configs[cell.id][0].parent, names(cell)),
        )
        our_outcome = Outcome(
            mine == "",
            "" if mine == "" else our_cause(mine),
            str(mine),
            normalized(configs[cell.id][1].parent, names(cell)),
        )
        found[cell.id] = (ssh_outcome, our_outcome, initial[cell.id])
    return found


# -- what is asserted ------------------------------------------------------------------------


def expected(
    cell: Cell, theirs: Outcome, as_if_yes: Outcome | None, initial: Files
) -> tuple[bool, str, Files]:
    """What sgtrace does in CELL: what ssh does, but where sgtrace is deliberately stricter
    (docs/commands.md). AS_IF_YES: ssh's outcome of the same cell under `yes`."""
    if cell.strict == "no":  # ignored: no flag is `yes`, whatever the config says
        assert theirs.accepted  # ssh connects, recording a new key, warning of a changed one
        assert as_if_yes is not None
        return as_if_yes.accepted, as_if_yes.cause, as_if_yes.files
    if cell.form.server == "certified" and (
        cell.entry == "ca-other" or (cell.entry == "ca-right" and not certificate_names(cell))
    ):  # ssh checks the plain key of a certificate it cannot verify; sgtrace refuses it
        return False, "certificate", initial
    if cell.form.check_ip and (
        theirs.accepted and cell.strict == "yes" or theirs.cause == "changed"
    ):
        # Under CheckHostIP, ssh records the address of a known host even under `yes`, and
        # records a new host before its address refuses it: sgtrace records neither.
        return theirs.accepted, theirs.cause, initial
    return theirs.accepted, theirs.cause, theirs.files


def certificate_names(cell: Cell) -> bool:
    """Whether the certified server's certificate names the host as CELL looks it up."""
    return not cell.form.alias and cell.form.hostname == "ip"  # its principal: 127.0.0.1


@pytest.mark.parametrize("cell", CELLS, ids=[c.id for c in CELLS])
def test_sgtrace_checks_the_host_key_as_ssh_does(
    cell: Cell, outcomes: dict[str, tuple[Outcome, Outcome, Files]]
) -> None:
    theirs, ours, initial = outcomes[cell.id]
    assert theirs.cause != "other", theirs.said  # ssh failed for no host key reason
    yes = Cell(cell.form, cell.entry, "yes", cell.where, cell.hashed, cell.jump)
    as_if_yes = outcomes[yes.id][0] if cell.strict == "no" else None

    wanted = expected(cell, theirs, as_if_yes, initial)

    assert (ours.accepted, ours.cause, ours.files) == wanted, (theirs.said, ours.said)
    if not ours.accepted:  # the host whose key it is
        whose = "jump (jump host to target)" if cell.entry.startswith("jump-") else "target"
        assert f" of {whose} " in ours.said
