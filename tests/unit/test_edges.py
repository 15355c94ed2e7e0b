"""A trace's edges kept by pair as they are met are the edges a pass over all of them pairs."""

from __future__ import annotations

from dataclasses import replace

from tracer.graph.steps import Edge, Edges, edge_pairs, pairs_of


def test_the_pairs_follow_every_edge_set_and_replaced():
    edges = Edges()
    met = [
        Edge("a", "b", "local", 1.0),
        Edge("a", "b", "attr", 0.8),
        Edge("b", "c", "arg_to_param", 0.5),
        Edge("a", "b", "local", 1.0),  # met again
    ]
    for edge in met:
        edges[(edge.src, edge.dst, edge.kind)] = edge
    sure = replace(met[2], confidence=1.0)
    edges[("b", "c", "arg_to_param")] = sure  # made sure by a later check
    assert edges.pairs == edge_pairs(edges.values())
    assert edges.pairs == {("a", "b"): met[:2], ("b", "c"): [sure]}
    assert pairs_of(dict(edges)) == edges.pairs  # a plain dict is paired when asked
