"""Plain facts extracted from one Python file; no tree-sitter object survives extraction.

Two layers, cached separately: `FileSummary` (symbols: imports, classes, functions) is made
for every file when a source is indexed; `FileFlows` (statements, calls, value references) is
made on demand for the files a query reaches, because it costs far more to extract.
A *reference* is a dotted access path read by an expression: `x`, `self.settings.mem`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

MODULE_SCOPE = "<module>"


def compact_pickle(cls: type) -> type:
    """Pickle as (class, field values): several times faster to load than the default
    state-dict of slotted frozen dataclasses, which matters for a warm index."""
    names = tuple(f.name for f in fields(cls))
    # One C call for all fields (a 1-field class gets a 1-tuple all the same).
    values = attrgetter(*names) if len(names) > 1 else lambda self: (getattr(self, names[0]),)

    def __reduce__(self: object) -> tuple[type, tuple[object, ...]]:
        return cls, values(self)

    cls.__reduce__ = __reduce__  # type: ignore[method-assign]
    return cls


@compact_pickle
@dataclass(frozen=True, slots=True)
class Span:
    line: int
    end_line: int


@compact_pickle
@dataclass(frozen=True, slots=True)
class Param:
    name: str
    kind: str  # "positional", "keyword_only", "varargs", "kwargs"
    annotation: str | None
    default_refs: tuple[str, ...]
    line: int
    code: str


@compact_pickle
@dataclass(frozen=True, slots=True)
class FunctionDef:
    qualname: str  # within the module: "Class.method", "f.<locals>.g" is written "f.g"
    name: str
    class_qualname: str | None  # set for methods defined directly in a class body
    params: tuple[Param, ...]
    decorators: tuple[str, ...]
    returns: str | None
    line: int
    end_line: int
    start_byte: int
    end_byte: int
    is_lambda: bool = False
    # The names its body declares `global` or `nonlocal`, each with the declaration's word:
    # (name, "global" | "nonlocal"). Its bindings of such a name are of that outer scope.
    declared: tuple[tuple[str, str], ...] = ()

    @property
    def is_static(self) -> bool:
        return "staticmethod" in self.decorators

    @property
    def is_classmethod(self) -> bool:
        return "classmethod" in self.decorators


@compact_pickle
@dataclass(frozen=True, slots=True)
class FieldDef:
    name: str
    annotation: str | None
    default_refs: tuple[str, ...]
    line: int
    end_line: int
    code: str


@compact_pickle
@dataclass(frozen=True, slots=True)
class ClassDef:
    qualname: str
    name: str
    bases: tuple[str, ...]
    decorators: tuple[str, ...]
    fields: tuple[FieldDef, ...]
    line: int
    end_line: int
    # `self.x: T` declared without a value at the top of one of its methods' bodies (PEP
    # 526): the attribute's annotation, for what the instance's attribute holds.
    declared: tuple[FieldDef, ...] = ()

    @property
    def is_dataclass(self) -> bool:
        return any(d.split(".")[-1] in DATACLASS_DECORATORS for d in self.decorators)


# Decorators and bases that synthesize `__init__` from annotated fields.
DATACLASS_DECORATORS = frozenset(
    {"dataclass", "dataclasses.dataclass", "define", "frozen", "attrs"}
)
RECORD_BASES = frozenset({"NamedTuple", "Struct", "BaseModel", "TypedDict"})


@compact_pickle
@dataclass(frozen=True, slots=True)
class ImportDef:
    module: str  # as written, without the leading dots
    level: int  # number of leading dots (0 = absolute)
    name: str | None  # None for `import a.b`
    alias: str  # the local name it binds
    line: int


@compact_pickle
@dataclass(frozen=True, slots=True)
class AliasDef:
    """A module-level `Name = dotted.value` binding (re-exports, factories by table)."""

    name: str
    value: str
    line: int


@compact_pickle
@dataclass(frozen=True, slots=True)
class FileSummary:
    imports: tuple[ImportDef, ...]
    classes: tuple[ClassDef, ...]
    functions: tuple[FunctionDef, ...]
    aliases: tuple[AliasDef, ...]
    warnings: tuple[str, ...]

    def function_at(self, line: int) -> FunctionDef | None:
        """The innermost function whose lines hold LINE; None at the module's level."""
        around = (f for f in self.functions if f.line <= line <= f.end_line)
        return max(around, key=lambda f: f.line, default=None)


# The structure of an expression that holds values inside it, as nested tuples (plain
# tuples pickle small and load fast), each headed by its form:
#   ("name", "a.b")             a dotted name          ("call", ID)     call ID's result
#   ("const", "k") / ("const", 1)   a string or integer literal
#   ("dict", ((KEY, VALUE), ...))   a dict display; `**d` is (None, ("star", D))
#   ("list" | "tuple" | "set", (ELEMENT, ...))   a display; `*xs` is ("star", XS)
#   ("each", ELEMENT)           a comprehension: ELEMENT at every index (`[(a, b) for ...]`)
#   ("as_keys", OBJECT)         OBJECT's attributes, each at the key of its name
#                               (`{k: getattr(o, k) for k in names}`, as `vars(o)` holds them)
#   ("item", CONTAINER, KEY)    `c[k]`; KEY may be ("slice", LO, HI), bounds int or None
#   ("attr", OBJECT, "name")    an attribute of what is not a dotted name (`f().x`)
#   ("lambda", START_BYTE)      the lambda defined there
#   ("except", CONTAINER, (KEY, ...))   the container but for what it keeps at the constant
#                               keys or indices named (what `case {"k": v, **rest}` binds rest to)
#   ("parts", (ITEM, ...))      an expression of another form (`conf["k"] * 2`), as a whole
#                               only: the items it reads out of names it reads only so
# A part that is none of these is None. A pattern (what an assignment stores into) has the
# same forms: names, tuples of patterns, ("star", P), items and attributes.
Shape = tuple[Any, ...]


@compact_pickle
@dataclass(frozen=True, slots=True)
class Value:
    """What an expression reads: dotted references, and calls whose results it takes."""

    refs: tuple[str, ...]
    calls: tuple[int, ...]
    arithmetic: bool = False
    literal: str | None = None  # the text of a plain string literal
    # The expression's structure when it is a display, a subscript, a lambda or an integer;
    # else the constant items it reads ("parts"), if any.
    shape: Shape | None = None


@compact_pickle
@dataclass(frozen=True, slots=True)
class Arg:
    keyword: str | None
    position: int | None
    star: int  # 0 plain, 1 for *args, 2 for **kwargs
    value: Value
    line: int
    end_line: int


@compact_pickle
@dataclass(frozen=True, slots=True)
class Call:
    id: int
    scope: str
    callee: str  # dotted text: "self.f", "mod.Class", "super().__init__", "" if not a name
    # What `x` reads in `x.f(...)` when x is not a plain name (`g().f()`); when the callee
    # is no dotted name, its shape is the callee's (`d["k"]()`, `f()()`, `C().m()`).
    receiver: Value
    args: tuple[Arg, ...]
    discarded: bool  # the result is thrown away (an expression statement)
    line: int
    end_line: int


@compact_pickle
@dataclass(frozen=True, slots=True)
class Target:
    path: str  # "x", "self.x", "a.b.c"; "" for targets we do not follow (subscripts)
    index: int | None  # position in a tuple unpacking, None for the whole value


@compact_pickle
@dataclass(frozen=True, slots=True)
class Assign:
    scope: str
    targets: tuple[Target, ...]
    value: Value
    items: tuple[Value, ...]  # per-element values of a tuple right-hand side, else ()
    # "=", "+=", ..., "for", "with", ":="; "case": a name a `case` pattern binds, its value
    # the expression that takes its part out of the subject (`s["k"][0]`, `s.x`)
    op: str
    annotation: str | None
    line: int
    end_line: int


@compact_pickle
@dataclass(frozen=True, slots=True)
class Return:
    scope: str
    value: Value
    items: tuple[Value, ...]
    line: int
    end_line: int


@compact_pickle
@dataclass(frozen=True, slots=True)
class Use:
    """A read whose value goes nowhere we follow: a condition, an assert."""

    scope: str
    value: Value
    line: int
    end_line: int


@compact_pickle
@dataclass(frozen=True, slots=True)
class Raise:
    """`raise E`: what the statement raises."""

    scope: str
    value: Value
    line: int


@compact_pickle
@dataclass(frozen=True, slots=True)
class FileFlows:
    """Sequences indexed by position (a call's id is its index); tuples when extracted,
    `tracer.store.rows.Rows` when read from the cache."""

    calls: Sequence[Call]
    assigns: Sequence[Assign]
    returns: Sequence[Return]
    uses: Sequence[Use]
    # Assignment index -> the whole pattern it stores into, where that is more than names
    # and a flat tuple of them: `a, (b, c) = ...`, `a, *b = ...`, `d["k"] = ...`.
    patterns: Mapping[int, Shape] = field(default_factory=dict)
    yields: AbstractSet[int] = frozenset()  # the returns that are `yield`s
    raises: Sequence[Raise] = ()
    # Lines where a simple statement starts at the top level of its module or function: no
    # branch or loop of its scope is around it.
    straight: AbstractSet[int] = frozenset()
