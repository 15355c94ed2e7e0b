"""The call graph's rules and its value follower: what one call runs by name (`rules`),
functions as values through parameters and decorators (`values`), what an expression may hold
(`objects`, with `bindings`, `contents`, `chosen`, `obj`, `answers`) and which statements are
answered by value (`statements`). Built from the index, the facts and the resolver alone, so
any stage above the index may ask it; the whole graph (tracer/analyses/callgraph.py) and the
on-demand queries (tracer/analyses/calls/queries.py) drive it."""
