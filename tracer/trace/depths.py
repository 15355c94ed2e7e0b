"""How far a trace searches and how much around its spine it shows: defaults that the engine
and the command line share (the command line reads them without loading the engine)."""

DEFAULT_DEPTH = 32  # steps searched from the name
DEFAULT_BRANCH_DEPTH = 1  # steps shown around the spine when both directions are traced
ONE_WAY_BRANCH_DEPTH = 3  # ... when one direction is
