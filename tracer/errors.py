"""The failures a user can act on; the CLI prints each as one line with the fix."""


class SgtraceError(Exception):
    """Base: `message` says what was wrong, `hint` what to do about it."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}: {self.hint}" if self.hint else self.message


class SourceNotFound(SgtraceError):
    """The SOURCE argument names nothing that exists."""


class VersionNotFound(SgtraceError):
    """`pypi:NAME==VERSION` names a release the index does not have."""


class NoPythonFiles(SgtraceError):
    """The source exists but holds no Python file."""


class UnsafeArchive(SgtraceError):
    """A downloaded or streamed archive has a member that would escape its target."""


class NameNotFound(SgtraceError):
    """The traced NAME occurs nowhere in the source."""
