"""The call graph's engine: what one call runs (`rules`), functions as values (`values`), and
the callers and callees of one function on demand (`queries`). `sgtrace callgraph`
(tracer/analyses/callgraph.py) applies the same rules to every scope of the tree."""
