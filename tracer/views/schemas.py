"""The JSON documents sgtrace prints, each named with its schema and version: a script reads
`"schema"` first and knows the shape (docs/DESIGN.md documents each). A version changes when a
key is removed or changes meaning; added keys keep it."""

TRACE = "sgtrace.trace/2"  # sgtrace trace --json (1: no schema key, no `to`)
AUDIT = "sgtrace.audit/2"  # sgtrace audit --format json
EXPLAIN = "sgtrace.explain/2"  # sgtrace explain --json (2: the release choice in `release`)
FETCH = "sgtrace.fetch/2"  # sgtrace fetch --json (1: one object per host per line)
EXPORT = "sgtrace.export/1"  # sgtrace export -f json, in the graph's own attributes
