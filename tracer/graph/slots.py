"""Which objects an attribute is read from or written to ("slots"): how sure a read or a
write of `x.ATTR` is on an object of a class family, which classes bind an attribute, and the
declared fields a read through a bag filled by `setattr` may come from (`get_limits().x`). A
collaborator of FlowGraph (`graph.slots`): it asks the graph only what `SlotQueries` declares."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from tracer.graph.callsites import COMMON_WORD_FILES
from tracer.graph.policies import FLAGGED
from tracer.graph.steps import FLAG_EDGES, TRUSTED, Edge
from tracer.index.index import Index
from tracer.index.resolve import DYNAMIC, GUESS, Resolver
from tracer.store.facts import Facts

if TYPE_CHECKING:
    from tracer.graph.step_tables import Read

MAX_DYNAMIC = 8  # declared fields a dynamic read may come from


class SlotQueries(Protocol):
    """What the slots ask of the flow graph."""

    index: Index
    facts: Facts
    resolver: Resolver
    field_index: dict[str, list[str]]

    def writes(self, path: str, attr: str) -> list[Read]: ...

    def writing(self, attr: str) -> list[str]: ...

    def mentioning(self, word: str) -> list[str]: ...

    def centrality(self, step_id: str) -> int: ...

    def edges(self, step_id: str, forward: bool) -> list[Edge]: ...

    def flag_edges(self, field_step: str) -> list[Edge]: ...

    def field_step(self, klass: str, attr: str) -> str: ...


class Slots:
    """Attribute slots, for one flow graph."""

    def __init__(self, graph: SlotQueries) -> None:
        self.graph = graph
        self.owners: dict[str, set[str]] = {}  # attribute -> the classes that bind it
        self.bound: dict[tuple[str, str], bool] = {}  # (class, attribute) -> binds()
        # (path, scope, base, class, attribute, declared) -> match(): a read or a write is
        # met again for each step its attribute joins to.
        self.matched: dict[tuple[str, str, str, str | None, str, bool], float] = {}
        self.families: dict[str, set[str]] = {}  # class -> its family

    def slot_match(
        self, path: str, access: Read, klass: str | None, attr: str, declared: bool
    ) -> float:
        """How sure ACCESS (a read or a write of ATTR in PATH) is on an object of the family
        of KLASS (none when None); DECLARED when the other side is a class-level field.
        Answered once for each scope and receiver: the access's step and line do not count."""
        key = (path, access.scope, access.base, klass, attr, declared)
        found = self.matched.get(key)
        if found is None:
            family = self.families.get(klass) if klass else set()
            if family is None:
                family = self.families[klass] = set(self.graph.index.family(klass))
            found = self.match(path, access.scope, access.base, family, attr, declared)
            self.matched[key] = found
        return found

    def match(
        self, path: str, scope: str, base: str, family: set[str], attr: str, declared: bool
    ) -> float:
        """`slot_match` of an access of `BASE.ATTR` in SCOPE, on FAMILY."""
        if base == "<class>":
            owner = f"{self.graph.index.module_of[path]}.{scope}"
        else:
            owner = self.graph.resolver.ref_type(path, scope, base)
        if owner is not None and family:
            if owner in family:
                return 1.0
            # A class that never binds ATTR yet has it read (a bag filled by setattr, like
            # a config namespace) may carry the value of any declared field of that name: a
            # guess (see dynamic_fields).
            if declared and not self.binds(owner, attr):
                return DYNAMIC
            return 0.0
        # One side untyped: accept only if a single class family holds ATTR.
        return GUESS if self.single_owner(attr) else 0.0

    def binds(self, klass: str, attr: str) -> bool:
        """Does any class of KLASS's family declare ATTR or assign `self.ATTR`? (Asked for
        each read of ATTR on a KLASS: answered once.)"""
        key = (klass, attr)
        found = self.bound.get(key)
        if found is None:
            found = self.bound[key] = self.family_binds(klass, attr)
        return found

    def family_binds(self, klass: str, attr: str) -> bool:
        for member in self.graph.index.family(klass):
            path, definition = self.graph.index.classes[member]
            if any(f.name == attr for f in definition.fields):
                return True
            prefix = definition.qualname + "."
            writes = self.graph.writes(path, attr)
            if any(w.base == "self" and w.scope.startswith(prefix) for w in writes):
                return True
        return False

    def declared_fields(self, attr: str) -> list[str]:
        """Steps of the class-level fields named ATTR, the more central modules first."""
        found = [
            self.graph.field_step(klass, attr) for klass in self.graph.field_index.get(attr, [])
        ]
        return sorted(found, key=lambda s: -self.graph.centrality(s))

    def dynamic_fields(self, attr: str) -> tuple[list[str], float]:
        """The declared fields ATTR that a read of `x.ATTR`, through a bag filled
        by setattr (`get_limits().x`), may come from, and how sure that is: of the fields of
        that name, the one a command-line flag sets, when one alone does (a bag of settings
        carries the command line's; every field of the name is asked, not only the first
        MAX_DYNAMIC), trusted; else the first MAX_DYNAMIC, as guesses. (No word of the
        receiver's name chooses among them.)"""
        fields = self.declared_fields(attr)
        flagged = [f for f in fields if self.set_by_flag(f)]
        if len(flagged) == 1:
            return flagged, FLAGGED
        return fields[:MAX_DYNAMIC], DYNAMIC

    def set_by_flag(self, field_step: str) -> bool:
        """Does a command-line flag set the field FIELD_STEP (surely)?"""
        return any(
            e.kind in FLAG_EDGES and e.confidence >= TRUSTED
            for e in self.graph.flag_edges(field_step)
        )

    def single_owner(self, attr: str) -> bool:
        if len(self.graph.mentioning(attr)) > COMMON_WORD_FILES:
            return False
        owners = self.slot_owners(attr)
        if not owners:
            return True
        # One family: the family of some owner (the base of the others) holds them all.
        # (Asked of each owner, not of the first a set gives: a subclass's family holds its
        # bases but not its siblings.)
        family = self.graph.index.family
        return any(owners <= set(family(owner)) for owner in sorted(owners))

    def slot_owners(self, attr: str) -> set[str]:
        """Classes that declare ATTR or assign it (`self.ATTR = ...`, `obj.ATTR = ...`)."""
        found = self.owners.get(attr)
        if found is None:
            found = set(self.graph.field_index.get(attr, ()))
            for path in self.graph.writing(attr):
                for write in self.graph.writes(path, attr):
                    if write.base == "<class>":
                        found.add(f"{self.graph.index.module_of[path]}.{write.scope}")
                    else:
                        owner = self.graph.resolver.ref_type(path, write.scope, write.base)
                        if owner is not None:
                            found.add(owner)
            self.owners[attr] = found
        return found
