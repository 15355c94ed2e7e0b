"""The callers and callees of one function on demand (`queries`), by the call graph's rules
(tracer/index/calls/). `sgtrace callgraph` (tracer/analyses/callgraph.py) applies the same
rules to every scope of the tree."""
