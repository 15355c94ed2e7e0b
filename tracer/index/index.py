"""The global index: module names, import resolution, classes with their MRO, symbol lookup.

Everything here is computed from FileSummary facts only; nothing reads a file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from operator import attrgetter
from typing import Any

from tracer.extract.facts import (
    RECORD_BASES,
    ClassDef,
    FieldDef,
    FileSummary,
    FunctionDef,
    ImportDef,
)

# A module's aliases (name -> value), imports (local name -> import), `import *` modules.
Namespace = tuple[dict[str, str], dict[str, ImportDef], list[str]]
# Tables computed on first use from the summaries alone; kept with the snapshot's facts.
DERIVED = ("importers", "subclasses", "renamed_to", "renames")
ALIAS = attrgetter("alias")  # an import's local name ("*" for `import *`)
UNKNOWN: Any = object()  # not resolved yet (None is a kept answer: nothing)
BUILTINS = frozenset(
    [
        "abs",
        "all",
        "any",
        "bool",
        "bytes",
        "callable",
        "chr",
        "dict",
        "dir",
        "divmod",
        "enumerate",
        "filter",
        "float",
        "format",
        "frozenset",
        "getattr",
        "hasattr",
        "hash",
        "hex",
        "id",
        "int",
        "isinstance",
        "issubclass",
        "iter",
        "len",
        "list",
        "map",
        "max",
        "min",
        "next",
        "object",
        "oct",
        "open",
        "ord",
        "pow",
        "print",
        "range",
        "repr",
        "reversed",
        "round",
        "set",
        "setattr",
        "slice",
        "sorted",
        "str",
        "sum",
        "super",
        "tuple",
        "type",
        "vars",
        "zip",
    ]
)


@dataclass(frozen=True, slots=True)
class Symbol:
    """What a dotted name denotes: kind is module, class, function or external."""

    kind: str
    name: str  # full dotted name: "pkg.mod.Class.method", or "numpy.zeros" for external


def module_names(paths: Iterable[str]) -> dict[str, str]:
    """Path -> dotted module name, starting at the shallowest folder that is a package
    (holds `__init__.py`), so namespace subpackages inside it keep their place:
    `python/sglang/srt/x.py` -> `sglang.srt.x`."""
    paths = list(paths)
    packages = {p.rsplit("/", 1)[0] for p in paths if p.endswith("/__init__.py")}
    names = {}
    for path in paths:
        parts = path[:-3].split("/")
        start = next(
            (i for i in range(len(parts) - 1) if "/".join(parts[: i + 1]) in packages),
            len(parts) - 1,
        )
        module = parts[start:]
        if module[-1] == "__init__" and len(module) > 1:
            module = module[:-1]
        names[path] = ".".join(module)
    return names


class Index:
    def __init__(self, summaries: Mapping[str, FileSummary]) -> None:
        self.summaries = dict(summaries)
        self.module_of = module_names(self.summaries)
        self.path_of: dict[str, str] = {}
        for path, module in sorted(self.module_of.items(), key=lambda kv: len(kv[0])):
            self.path_of.setdefault(module, path)  # the shorter path wins a clash
        self.classes: dict[str, tuple[str, ClassDef]] = {}
        self.functions: dict[str, tuple[str, FunctionDef]] = {}
        for path, summary in self.summaries.items():
            module = self.module_of[path]
            for klass in summary.classes:
                self.classes[f"{module}.{klass.qualname}"] = (path, klass)
            for function in summary.functions:
                self.functions[f"{module}.{function.qualname}"] = (path, function)
        self.mro_cache: dict[str, list[str]] = {}
        self.resolved: dict[tuple[str, str], Symbol | None] = {}
        self.descendants_cache: dict[str, list[str]] = {}
        self.namespaces: dict[str, Namespace] = {}
        self.reimports: dict[str, dict[str, list[ImportDef]]] = {}

    # -- names -----------------------------------------------------------------------------

    def is_package(self, module: str) -> bool:
        return self.path_of.get(module, "").endswith("__init__.py")

    def absolute(self, module: str, level: int, current: str) -> str:
        """The absolute module of `from <level dots><module> import ...` written in CURRENT."""
        if level == 0:
            return module
        package = current if self.is_package(current) else current.rpartition(".")[0]
        for _ in range(level - 1):
            package = package.rpartition(".")[0]
        return f"{package}.{module}" if module and package else (module or package)

    def resolve(self, module: str, dotted: str) -> Symbol | None:
        """What DOTTED means inside MODULE's namespace: local definitions, aliases, imports
        (relative, aliased, re-exported through `__init__`), then members of what it found.
        Every answer is kept: a re-exported name is asked for by each module importing it."""
        key = (module, dotted)
        found = self.resolved.get(key, UNKNOWN)
        if found is not UNKNOWN:
            return found
        self.resolved[key] = None  # a name met again while resolving it (a cycle) is unknown
        head, _, rest = dotted.partition(".")
        symbol = self.resolve(module, head) if rest else self.resolve_name(module, head)
        for part in rest.split(".") if rest else ():
            if symbol is None:
                break
            symbol = self.member(symbol, part)
        self.resolved[key] = symbol
        return symbol

    def resolve_name(self, module: str, name: str) -> Symbol | None:
        """`resolve` of a plain NAME."""
        path = self.path_of.get(module)
        if path is None:
            return None
        full = f"{module}.{name}"
        if full in self.classes:
            return Symbol("class", full)
        if full in self.functions:
            return Symbol("function", full)
        aliases, imports, star_modules = self.namespace(module, path)
        alias = aliases.get(name)
        if alias is not None:
            return self.resolve(module, alias)
        imp = imports.get(name)
        if imp is not None:
            return self.imported(module, imp)
        for star in star_modules:
            if star in self.path_of:
                found = self.resolve(star, name)
                if found is not None:
                    return found
        if name in self.path_of and "." not in module:
            return Symbol("module", name)
        if name in BUILTINS:
            return Symbol("external", f"<builtin>.{name}")
        if self.is_package(module) and f"{module}.{name}" in self.path_of:
            return Symbol("module", f"{module}.{name}")
        return None

    def imported(self, module: str, imp: ImportDef) -> Symbol | None:
        """What the import IMP, written in MODULE, binds its local name to."""
        if imp.name is None:  # import a.b.c (binds a) / import a.b as c
            target = imp.module if imp.alias != imp.module.split(".")[0] else imp.alias
            return self.module_symbol(target)
        source = self.absolute(imp.module, imp.level, module)
        submodule = f"{source}.{imp.name}" if source else imp.name
        if submodule in self.path_of:
            return Symbol("module", submodule)
        if source in self.path_of:
            return self.resolve(source, imp.name)
        return Symbol("external", submodule)

    def renamed(self, module: str, names: Iterable[str]) -> set[str]:
        """Those of NAMES (plain names MODULE binds) that stand for something named otherwise:
        what `resolve` gives has another last name. Worked out without a Symbol, nor a kept
        answer, where MODULE defines the name or imports it from outside the tree or as a
        module (most of the names a file imports)."""
        found: set[str] = set()
        path = self.path_of.get(module)
        if path is None:
            return found
        aliases, imports, _ = self.namespace(module, path)
        resolved, classes, functions = self.resolved, self.classes, self.functions
        modules = self.path_of
        prefix = module + "."
        renamed_to = self.renamed_to
        for name in dict.fromkeys(names):
            if name not in renamed_to and "." not in name:
                continue  # no import or alias anywhere binds it to another name
            full: str | None
            imp = imports.get(name)
            if (module, name) in resolved or "." in name:
                symbol = self.resolve(module, name)
                full = None if symbol is None else symbol.name
            elif (full := prefix + name) in classes or full in functions:
                continue  # a definition of its own: never renamed
            elif imp is None or name in aliases:
                symbol = self.resolve(module, name)
                full = None if symbol is None else symbol.name
            elif imp.name is None:  # as `imported` gives it
                full = imp.module if imp.alias != imp.module.split(".")[0] else imp.alias
            else:
                source = self.absolute(imp.module, imp.level, module)
                full = f"{source}.{imp.name}" if source else imp.name
                if full in classes or full in functions:
                    pass  # what `resolve(source, imp.name)` finds first: that definition
                elif full not in modules and source in modules:
                    symbol = self.resolve(source, imp.name)
                    full = None if symbol is None else symbol.name
            if full is not None and full.rpartition(".")[2] != name:
                found.add(name)
        return found

    def imports_again(self, path: str) -> dict[str, list[ImportDef]]:
        """The local names PATH imports more than once from different places (each branch
        of a function importing its own `launch_server`), each with its imports in order."""
        found = self.reimports.get(path)
        if found is None:
            imports = self.summaries[path].imports
            found = {}
            if len(set(map(ALIAS, imports))) < len(imports):  # else no name is imported twice
                counts = Counter(map(ALIAS, imports))  # counted in C
                repeated = {alias for alias, n in counts.items() if n > 1} - {"*"}
                by_alias: dict[str, list[ImportDef]] = {}
                for imp in imports:
                    if imp.alias in repeated:
                        by_alias.setdefault(imp.alias, []).append(imp)
                for alias, imps in by_alias.items():
                    if len({(i.module, i.level, i.name) for i in imps}) > 1:
                        found[alias] = imps
            self.reimports[path] = found
        return found

    def namespace(self, module: str, path: str) -> Namespace:
        """MODULE's names, as `resolve_name` reads them: each name's first alias to another
        name, each local name's first import, and the modules of its `import *`, in order."""
        found = self.namespaces.get(path)
        if found is None:
            summary = self.summaries[path]
            aliases: dict[str, str] = {}
            for alias in summary.aliases:
                if alias.value != alias.name:
                    aliases.setdefault(alias.name, alias.value)
            # Each local name's first import: the dict made backward (in C), the first last.
            backward = summary.imports[::-1]
            imports: dict[str, ImportDef] = dict(zip(map(ALIAS, backward), backward, strict=True))
            stars = []
            if imports.pop("*", None) is not None:  # `import *` binds no name of its own
                stars = [
                    self.absolute(imp.module, imp.level, module)
                    for imp in summary.imports
                    if imp.name == "*"
                ]
            found = self.namespaces[path] = (aliases, imports, stars)
        return found

    def module_symbol(self, dotted: str) -> Symbol:
        return Symbol("module" if dotted in self.path_of else "external", dotted)

    def member(self, symbol: Symbol, name: str) -> Symbol | None:
        if symbol.kind == "external":
            return Symbol("external", f"{symbol.name}.{name}")
        if symbol.kind == "module":
            if f"{symbol.name}.{name}" in self.path_of:
                return Symbol("module", f"{symbol.name}.{name}")
            return self.resolve(symbol.name, name)
        if symbol.kind == "class":
            method = self.method(symbol.name, name)
            if method is not None:
                return Symbol("function", method)
            nested = f"{symbol.name}.{name}"
            if nested in self.classes:
                return Symbol("class", nested)
            return None
        return None

    # -- classes ---------------------------------------------------------------------------

    def bases(self, class_name: str) -> list[str]:
        """Resolved base classes (full names) of a known class; unknown bases dropped."""
        path, klass = self.classes[class_name]
        module = self.module_of[path]
        outer = klass.qualname.rpartition(".")[0]
        found = []
        for base in klass.bases:
            symbol = self.resolve(module, base)
            if symbol is None and outer:  # a sibling nested class
                symbol = self.resolve(module, f"{outer}.{base}")
            if symbol is not None and symbol.kind == "class" and symbol.name != class_name:
                found.append(symbol.name)
        return found

    def mro(self, class_name: str) -> list[str]:
        """Depth-first, left-to-right ancestors with duplicates kept last (close to C3)."""
        cached = self.mro_cache.get(class_name)
        if cached is not None:
            return cached
        result: list[str] = []

        def visit(name: str, depth: int) -> None:
            if depth > 50 or name not in self.classes:
                return
            result.append(name)
            for base in self.bases(name):
                visit(base, depth + 1)

        visit(class_name, 0)
        # Keep the last occurrence, so shared bases come after every class that derives them.
        last = {name: i for i, name in enumerate(result)}
        order = [name for i, name in enumerate(result) if last[name] == i]
        self.mro_cache[class_name] = order
        return order

    def derived(self) -> dict[str, Any]:
        """The tables computed so far from the summaries alone, to be kept beside them."""
        return {name: self.__dict__[name] for name in DERIVED if name in self.__dict__}

    def restore(self, derived: Mapping[str, Any]) -> None:
        """Take back tables `derived` gave for this same set of summaries."""
        for name in DERIVED:
            if name in derived:
                self.__dict__[name] = derived[name]

    @cached_property
    def importers(self) -> dict[str, int]:
        """How many modules import each module: a measure of how central a module is."""
        counts: dict[str, int] = {}
        for path in self.summaries:
            for target in self.modules_imported(path):
                counts[target] = counts.get(target, 0) + 1
        return counts

    def modules_imported(self, path: str) -> set[str]:
        """The modules PATH's module imports: what each import names as a module, and the
        module each `from m import x` reads (m)."""
        current = self.module_of[path]
        targets = set()
        for imp in self.summaries[path].imports:
            module = self.absolute(imp.module, imp.level, current)
            targets.add(module)
            if imp.name and f"{module}.{imp.name}" in self.path_of:
                targets.add(f"{module}.{imp.name}")
        return targets

    def renamings(self) -> Iterator[tuple[str | None, str]]:
        """Each import or alias of the tree that binds something under another name, as (the
        name of what it binds, None for a module imported as another name; that other name):
        `from m import a as b` and `b = m.a` give (a, b), `import a.b as c` gives (None, c)."""
        for summary in self.summaries.values():
            for imp in summary.imports:
                if imp.alias != (imp.name or imp.module.rpartition(".")[2]):
                    yield imp.name, imp.alias
            for alias in summary.aliases:
                last = alias.value.rpartition(".")[2]
                if last != alias.name:
                    yield last, alias.name

    @cached_property
    def renamed_to(self) -> frozenset[str]:
        """The names some import or alias of the tree binds to what is named otherwise: a
        plain name that is none of these stands for something of its own name wherever it is
        imported from."""
        return frozenset(alias for _, alias in self.renamings())

    @cached_property
    def renames(self) -> dict[str, frozenset[str]]:
        """Each name an import or alias of the tree binds under another name, with those
        names (`from m import a as b`, `b = m.a`: a -> b), and the names those are bound
        under in turn: where a definition may be called by a name that is not its own."""
        direct: dict[str, set[str]] = {}
        for name, alias in self.renamings():
            if name is not None:
                direct.setdefault(name, set()).add(alias)
        found: dict[str, frozenset[str]] = {}
        for name in direct:
            names: set[str] = set()
            stack = [name]
            while stack:
                for other in direct.get(stack.pop(), ()):
                    if other != name and other not in names:
                        names.add(other)
                        stack.append(other)
            found[name] = frozenset(names)
        return found

    @cached_property
    def subclasses(self) -> dict[str, list[str]]:
        children: dict[str, list[str]] = {}
        for name in self.classes:
            for base in self.bases(name):
                children.setdefault(base, []).append(name)
        return children

    def descendants(self, class_name: str) -> list[str]:
        known = self.descendants_cache.get(class_name)
        if known is not None:
            return list(known)
        found: list[str] = []
        stack = [class_name]
        while stack:
            for child in self.subclasses.get(stack.pop(), ()):
                if child not in found and child != class_name:
                    found.append(child)
                    stack.append(child)
        self.descendants_cache[class_name] = found
        return list(found)

    def family(self, class_name: str) -> list[str]:
        """Classes whose instances may be `self` where CLASS_NAME's code runs, and whose
        attributes that code may read: the class, its ancestors, its descendants."""
        return list(dict.fromkeys(self.mro(class_name) + self.descendants(class_name)))

    def method(self, class_name: str, name: str) -> str | None:
        """Full name of the method NAME found first along CLASS_NAME's MRO."""
        for klass in self.mro(class_name):
            if f"{klass}.{name}" in self.functions:
                return f"{klass}.{name}"
        return None

    def fields(self, class_name: str) -> list[tuple[str, FieldDef]]:
        """Class-level fields along the MRO, base classes first, as (class, field)."""
        seen: dict[str, tuple[str, FieldDef]] = {}
        for klass in reversed(self.mro(class_name)):
            for field in self.classes[klass][1].fields:
                seen[field.name] = (klass, field)
        return list(seen.values())

    def is_record(self, class_name: str) -> bool:
        """A dataclass-like class, whose synthesized `__init__` takes its annotated fields:
        a dataclass, a NamedTuple, a msgspec Struct, a pydantic model, or a class made by
        a decorator or base class of the tree marked `@dataclass_transform` (PEP 681: the
        standard way a library says it makes dataclass-like classes)."""
        path, definition = self.classes[class_name]
        if definition.is_dataclass or any(
            base.split(".")[-1] in RECORD_BASES for base in definition.bases
        ):
            return True
        module = self.module_of[path]
        for decorator in definition.decorators:
            symbol = self.resolve(module, decorator)
            if (
                symbol is not None
                and symbol.kind == "function"
                and transforms(self.functions[symbol.name][1].decorators)
            ):
                return True
        for base in self.mro(class_name)[1:]:
            if base in self.classes and transforms(self.classes[base][1].decorators):
                return True
        return False

    def annotation_class(self, module: str, annotation: str | None) -> str | None:
        """The known class an annotation names: `Settings`, `"Runner"`,
        `Optional[X]`, `X | None`, `List[X]` is not a class of X."""
        if not annotation:
            return None
        text = annotation.strip().strip("'\"")
        for wrapper in ("Optional[", "typing.Optional[", "Final[", "ClassVar[", "Type[", "type["):
            if text.startswith(wrapper) and text.endswith("]"):
                text = text[len(wrapper) : -1].strip().strip("'\"")
        if "|" in text:
            options = [t.strip().strip("'\"") for t in text.split("|") if t.strip() != "None"]
            text = options[0] if len(options) == 1 else ""
        if not text or "[" in text:
            return None
        symbol = self.resolve(module, text)
        return symbol.name if symbol is not None and symbol.kind == "class" else None


def transforms(decorators: Iterable[str]) -> bool:
    """Do DECORATORS mark a function or class as making dataclass-like classes (PEP 681)?"""
    return any(d.rpartition(".")[2] == "dataclass_transform" for d in decorators)
