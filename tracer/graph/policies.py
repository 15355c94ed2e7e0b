"""Ranking rules: where Python's rules leave the engine a choice between several ways a value
may have come, which one it takes as sure. Each is a policy, not a rule of Python, and has a
test on a snippet of its own (tests/unit/test_policies.py).

- `FLAGGED`: a read `get_settings().x` of an object filled by `setattr` (a bag) binds no `x`
  of its own, so any declared field `x` of the tree may be where the value comes from. A bag
  of settings carries the command line's record: of those fields, the one a command-line flag
  sets, when exactly one does, is taken as sure (this confidence); the others, and all of them
  when no single one is flag-set, are guesses (`DYNAMIC` in tracer/index/resolve.py)."""

from __future__ import annotations

FLAGGED = 0.8  # the one field of the name a flag sets, read through a bag: taken as sure
