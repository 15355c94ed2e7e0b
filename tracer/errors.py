"""The failures a user can act on; the CLI prints each as one line with the fix."""


def printable(text: str) -> str:
    """TEXT safe to print on a terminal: characters that are not printable (control codes, a
    name's undecodable bytes, bidi overrides) written as escapes. Names from a host or a tree
    may hold them, and a terminal would run them or a line would break."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else escaped(c) for c in text)


def escaped(char: str) -> str:
    """CHAR as Python would write it in a string literal."""
    if char in "\t\n\r":
        return repr(char)[1:-1]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, as surrogateescape kept it
        code -= 0xDC00
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


class SgtraceError(Exception):
    """Base: `message` says what was wrong, `hint` what to do about it."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        text = f"{self.message}: {self.hint}" if self.hint else self.message
        return printable(text)  # one line, whatever names it quotes


class SourceNotFound(SgtraceError):
    """The SOURCE argument names nothing that exists."""


class VersionNotFound(SgtraceError):
    """`pypi:NAME==VERSION` names a release the index does not have."""


class NoPythonFiles(SgtraceError):
    """The source exists but holds no Python file."""


class TooManyFiles(SgtraceError):
    """A local tree holds more Python files, or names, than one project can: a whole disk,
    or /proc (tracer/sources/snapshot.py, MAX_FILES and MAX_NAMES)."""


class LogUnreadable(SgtraceError):
    """The log given is missing, unreadable, compressed, not text, over its cap, or not a
    file (a device, a socket)."""


class JournalUnreadable(SgtraceError):
    """A unit's journal cannot be read (tracer/sources/journal.py): no journalctl where the
    source lives, a unit it cannot read, or an empty journal."""


class UnsafeArchive(SgtraceError):
    """A downloaded or streamed archive has a member that would escape its target."""


class IndexUnreachable(SgtraceError):
    """The package index did not answer, or answered with something that is not an index."""


class DamagedRelease(SgtraceError):
    """A file downloaded from the package index is not a readable archive, or does not match
    the hash the index gives for it."""


class NameNotFound(SgtraceError):
    """The traced NAME occurs nowhere in the source."""


class HostUnreachable(SgtraceError):
    """The host did not answer, or refused the connection."""


class ConnectionTimeout(SgtraceError):
    """The host did not answer in time."""


class AuthFailed(SgtraceError):
    """The host refused every key we offered."""


class HostKeyUnknown(SgtraceError):
    """The host's key is not in known_hosts."""


class HostKeyChanged(SgtraceError):
    """The host's key differs from the one in known_hosts: refused, always."""


class KnownHostsUnusable(SgtraceError):
    """A known_hosts file cannot be read or written: a folder, unreadable, not in the
    known_hosts format, read-only, or a token of the ssh config naming it is unknown."""


class RemotePathMissing(SgtraceError):
    """The path given on the host does not exist."""


class PackageNotFound(SgtraceError):
    """No path was given and the package was found nowhere on the host."""


class RemoteToolMissing(SgtraceError):
    """The host lacks a command the fetch needs (tar)."""


class TransferFailed(SgtraceError):
    """The stream from the host broke or did not hold what was asked."""


class CacheNotWritable(SgtraceError):
    """The cache folder cannot be written (full, read-only, not a folder, another user's):
    a fetch cannot keep what it receives."""


class WriteRefused(SgtraceError):
    """A file to write is refused by the rules of tracer/sources/safe_write.py: another
    user's file or folder, or a link of theirs on the way, could send the write elsewhere."""


class HostStalled(SgtraceError):
    """The host went silent in the middle of an answer for longer than the idle timeout, or
    a command on it ran past its time."""


class AnswerTooLarge(SgtraceError):
    """A command on the host sent more than its cap allows: a runaway or hostile command."""


class CacheDamaged(SgtraceError):
    """A cached file no longer matches its content hash: dropped, fetched again next time."""


class GraphvizMissing(SgtraceError):
    """An svg or png export needs Graphviz's `dot`, and it is not on PATH."""


class GraphvizFailed(SgtraceError):
    """Graphviz's `dot` ran and refused the graph."""


class NoReference(SgtraceError):
    """An audit's target is neither a git checkout nor a pip install, and no --against."""


class CacheUnsafe(SgtraceError):
    """The cache folder, a folder on the way to it or in it, or a link there, could be changed
    by someone else than us and root (another user's, writable by others, a link of theirs, or
    any link inside the cache): sgtrace reads and writes nothing there (tracer/sources/cache.py)."""


class SshConfigUnusable(SgtraceError):
    """An ssh config cannot be used: missing, unreadable, over its cap, Includes too deep or
    too many, a line that is no option, or a ProxyJump that loops or goes too far."""
