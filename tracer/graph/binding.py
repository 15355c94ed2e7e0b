"""Which steps an argument is bound to when a call runs its target: the parameters of a
function (positional, keyword, `*args`, `**kwargs`), or the fields of a dataclass-like class
whose `__init__` is synthesized, each with how sure the binding is."""

from __future__ import annotations

from tracer.extract.facts import Arg
from tracer.index.index import Index
from tracer.index.resolve import GUESS
from tracer.index.targets import CallTarget
from tracer.store import step_ids


def bindings(
    index: Index,
    target: CallTarget,
    arg: Arg,
    siblings: tuple[Arg, ...] = (),
    keys: frozenset[str] | None = None,
) -> list[tuple[str, str, float]]:
    """Steps ARG is bound to when TARGET is called: parameters, or dataclass fields.
    A `**kwargs` or `*args` argument may fill any of them that SIBLINGS leave open: a
    `**d` whose KEYS are known fills those of these names (and a `**kwargs` parameter
    the others), surely; one whose keys are not known, any of them, as a guess."""
    if arg.star:  # what the siblings fill: only a splat fills what they leave open
        by_name = {a.keyword for a in siblings if a.keyword}
        by_position = sum(1 for a in siblings if a.position is not None)
    if target.function is None:
        if target.klass is None:
            return []
        fields = [(o, f) for o, f in index.fields(target.klass) if f.annotation]
        chosen = [
            (o, f)
            for i, (o, f) in enumerate(fields)
            if (arg.keyword == f.name) or (arg.keyword is None and arg.position == i)
        ]
        if arg.star == 2:
            chosen = [(o, f) for o, f in fields[by_position:] if f.name not in by_name]
            if keys is not None:
                chosen = [(o, f) for o, f in chosen if f.name in keys]
        sure = arg.star == 0 or (arg.star == 2 and keys is not None)
        result = []
        for owner, definition in chosen:
            path, klass = index.classes[owner]
            step_id = step_ids.field_id(path, klass.qualname, definition.name)
            result.append((step_id, "arg_to_field", 1.0 if sure else GUESS))
        return result
    path, function = index.functions[target.function]
    params = list(function.params)
    if target.bound and params and not function.is_static:
        params = params[1:]
    plain = [p for p in params if p.kind in ("positional", "keyword_only")]
    chosen: list[tuple[str, float]] = []
    if arg.star == 2 and keys is not None:
        open_names = {p.name for p in plain[by_position:] if p.name not in by_name}
        chosen = [(p.name, 1.0) for p in plain if p.name in keys and p.name in open_names]
        if keys - {p.name for p in plain}:  # the other keys land in **kwargs
            chosen += [(p.name, 0.8) for p in params if p.kind == "kwargs"]
    elif arg.star == 2:
        open_params = [p for p in plain[by_position:] if p.name not in by_name]
        chosen = [(p.name, GUESS) for p in open_params]
    elif arg.star == 1:
        chosen = [(p.name, GUESS) for p in plain[by_position:] if p.kind == "positional"]
    elif arg.keyword is not None:
        if any(p.name == arg.keyword for p in plain):
            chosen = [(arg.keyword, 1.0)]
        else:
            chosen = [(p.name, 0.8) for p in params if p.kind == "kwargs"]
    elif arg.position is not None:
        positional = [p for p in params if p.kind == "positional"]
        if arg.position < len(positional):
            chosen = [(positional[arg.position].name, 1.0)]
        else:
            chosen = [(p.name, 0.8) for p in params if p.kind == "varargs"]
    return [
        (step_ids.param_id(path, function.qualname, name), "arg_to_param", confidence)
        for name, confidence in chosen
    ]
