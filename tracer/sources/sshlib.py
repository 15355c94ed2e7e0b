"""asyncssh, imported about 40 ms faster. On import it looks for liboqs (an optional
post-quantum key exchange) with ctypes.util.find_library, which on Linux runs
`ldconfig -p`, then `gcc` and `ld` when the library is absent, for two names: 40-60 ms at
every start of `sgtrace fetch`. While asyncssh imports, the lookup asks the ld.so cache
alone: a liboqs installed as a system library is found as before."""

from __future__ import annotations

import ctypes.util
import sys
from collections.abc import Callable


def ld_cache_only(find: Callable[[str], str | None]) -> Callable[[str], str | None]:
    """FIND restricted to its first step on Linux, the ld.so cache (`ldconfig -p`)."""
    search = getattr(ctypes.util, "_findSoname_ldconfig", None)
    if not sys.platform.startswith("linux") or search is None:
        return find
    return search


if "asyncssh" not in sys.modules:
    original = ctypes.util.find_library
    ctypes.util.find_library = ld_cache_only(original)
    try:
        import asyncssh
    finally:
        ctypes.util.find_library = original
else:
    import asyncssh

__all__ = ["asyncssh"]
