"""The names a misspelled one may have meant, from what the index already knows (class
fields, function parameters, class and function names): no file is read or parsed again."""

from __future__ import annotations

import difflib
from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tracer.index.index import Index

MAX_NAMES = 3
WORD_CUTOFF = 0.8  # difflib's ratio: a letter or two off in a name of ten letters
OWNER_CUTOFF = 0.6  # owners are short: `Setting` for `Settings` scores 0.93, `Runner` 0.14


def bound_words(index: Index) -> dict[str, set[str]]:
    """Each name the tree binds -> the short names of what binds it: the class of a field,
    the function of a parameter, "" for a class or function name itself."""
    owners: dict[str, set[str]] = defaultdict(set)
    for _, klass in index.classes.values():
        owners[klass.name].add("")
        for field in klass.fields:
            owners[field.name].add(klass.qualname)
    for _, function in index.functions.values():
        if function.is_lambda:
            continue
        owners[function.name].add("")
        for param in function.params:
            if param.name not in ("self", "cls"):
                owners[param.name].add(function.qualname)
    return owners


def nearest_names(index: Index, name: str, limit: int = MAX_NAMES) -> list[str]:
    """What NAME may have meant, nearest first. Its last part is matched: misspelled, the
    names spelled nearest (the owner kept, `Settings.mem_fractoin` ->
    `Settings.mem_fraction`); spelled right, the owners nearest the one given that
    do bind it, then the name alone."""
    owner, _, word = name.rpartition(".")
    owners = bound_words(index)
    if word not in owners:
        words = difflib.get_close_matches(word, list(owners), n=limit, cutoff=WORD_CUTOFF)
        return [f"{owner}.{w}" if owner else w for w in words]
    if not owner:
        return []  # bound, yet by no step a trace starts from: nothing nearer to offer
    holders = sorted(o for o in owners[word] if o)
    near = difflib.get_close_matches(owner, holders, n=limit - 1, cutoff=OWNER_CUTOFF)
    return [f"{o}.{word}" for o in near] + [word]


def did_you_mean(index: Index, name: str) -> str:
    """`did you mean a, b or c?` for the names NAME may have meant; "" if none is near."""
    names = nearest_names(index, name)
    if not names:
        return ""
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    return f"did you mean {listed}?"
