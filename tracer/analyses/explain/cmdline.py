"""The command line a log shows (`python -m pkg.launch --tp 2 ...`), read with the flags the
source declares (`parser.add_argument("--tensor-parallel-size", "--tp-size", type=int)`):
each flag to the field its value lands in, typed as the declaration types it, prefixes of a
long flag taken as argparse takes them."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from tree_sitter import Node

from tracer.analyses.explain.classcode import literal, walk
from tracer.analyses.explain.logread import LogLine
from tracer.extract.parse import parse, text

# A command line in a log: python running a module or a script.
COMMAND = re.compile(r"(?:^|[\s/$#>])python[\d.]*\s+(?:\S+\s+)*?(?:-m\s+\w|\S+\.py\b)")


@dataclass(frozen=True, slots=True)
class Flag:
    dest: str
    action: str  # "store", "store_true", "store_false"
    type: str  # "int", "float", "str"


@dataclass(frozen=True, slots=True)
class Given:
    field: str
    value: object
    flag: str  # as the log writes it
    line: int


def command_line(lines: list[LogLine]) -> tuple[LogLine, list[str]] | None:
    """The first line running python, with the lines a terminal wrapped it onto, as words."""
    for index, line in enumerate(lines):
        found = COMMAND.search(line.message)
        if found is None:
            continue
        command = line.message[found.start() :].strip()
        for following in lines[index + 1 :]:
            if following.time or following.ranks:
                break
            if command.endswith("\\"):
                command = command[:-1] + " " + following.message.strip()
            elif command.endswith("-") and following.message.startswith("-"):
                command += following.message.strip()  # a flag cut by the terminal's width
            else:
                break
        try:
            words = shlex.split(command, comments=False)
        except ValueError:
            words = command.split()
        return line, words
    return None


def declared_flags(source: bytes, fields: frozenset[str]) -> dict[str, Flag]:
    """Every `--flag` an `add_argument` call of SOURCE declares; a dest that is not one of
    FIELDS but is copied to one (`args.tp_size = args.tensor_parallel_size`) lands there."""
    root = parse(source).tree.root_node
    copies: dict[str, str] = {}
    flags: dict[str, Flag] = {}
    for node in walk(root):
        if node.type == "assignment":
            copied = attribute_copy(node)
            if copied is not None:
                copies[copied[1]] = copied[0]
        elif node.type == "call" and text(node.child_by_field_name("function")).endswith(
            "add_argument"
        ):
            names, keywords = arguments(node.child_by_field_name("arguments"))
            long = [n for n in names if n.startswith("--")]
            if not long:
                continue
            dest = keywords.get("dest", long[0][2:].replace("-", "_"))
            action = keywords.get("action", "store")
            kind = keywords.get("type", "str")
            for name in long:
                flags[name] = Flag(str(dest), str(action), str(kind))

    def lands(dest: str) -> str:
        copied = copies.get(dest, dest)
        return copied if dest not in fields and copied in fields else dest

    return {name: Flag(lands(flag.dest), flag.action, flag.type) for name, flag in flags.items()}


def attribute_copy(node: Node) -> tuple[str, str] | None:
    """(a, b) of `x.a = x.b`."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None or left.type != "attribute" or right.type != "attribute":
        return None
    if text(left.child_by_field_name("object")) != text(right.child_by_field_name("object")):
        return None
    return text(left.child_by_field_name("attribute")), text(right.child_by_field_name("attribute"))


def arguments(node: Node | None) -> tuple[list[str], dict[str, object]]:
    names: list[str] = []
    keywords: dict[str, object] = {}
    for arg in node.named_children if node is not None else []:
        if arg.type == "keyword_argument":
            value = arg.child_by_field_name("value")
            found = literal(value)
            keywords[text(arg.child_by_field_name("name"))] = (
                found if isinstance(found, str) else text(value)
            )
        elif arg.type == "string":
            found = literal(arg)
            if isinstance(found, str):
                names.append(found)
    return names, keywords


def given_fields(words: list[str], flags: dict[str, Flag], line: int) -> dict[str, Given]:
    """The fields WORDS set, by the flags FLAGS declares (a unique prefix of a long flag stands
    for it, as argparse reads it); words no flag declares are passed over."""
    out: dict[str, Given] = {}
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if not word.startswith("--"):
            continue
        name, eq, inline = word.partition("=")
        flag = flags.get(name)
        if flag is None:
            matches = [f for f in flags if f.startswith(name)]
            flag = flags[matches[0]] if len(matches) == 1 else None
        if flag is None:
            continue
        if flag.action in ("store_true", "store_false"):
            out[flag.dest] = Given(flag.dest, flag.action == "store_true", word, line)
            continue
        if not eq:
            if index >= len(words) or words[index].startswith("--"):
                continue
            inline = words[index]
            index += 1
        out[flag.dest] = Given(flag.dest, typed(inline, flag.type), f"{name} {inline}", line)
    return out


def typed(value: str, kind: str) -> object:
    try:
        if kind == "int":
            return int(value)
        if kind == "float":
            return float(value)
    except ValueError:
        return value
    return value
