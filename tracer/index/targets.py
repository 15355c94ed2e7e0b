"""What a call may run (`CallTarget`), and the one question the readers of types and factories
ask of call resolution (`CallResolver`): kept apart so that they need not import the resolver
that uses them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from tracer.extract.facts import Call

BY_DEFAULT = "by default"  # how a factory's branch says the class it makes when no condition holds


@dataclass(frozen=True, slots=True)
class CallTarget:
    function: str | None  # full name of the function called, None for a synthesized __init__
    klass: str | None  # the class constructed, for constructor calls
    confidence: float
    bound: bool  # the first parameter (self/cls) is filled by the receiver
    # Where a factory's result is the receiver: the branch of the factory that makes its class.
    why: str = ""


class CallResolver(Protocol):
    """What resolves calls, as types and factories ask it."""

    def resolve_call(self, path: str, call: Call) -> list[CallTarget]: ...

    def resolve_call_id(self, path: str, call_id: int) -> list[CallTarget]: ...
