"""File -> FileSummary: the symbols of one module (imports, classes, functions, aliases)."""

from __future__ import annotations

from dataclasses import replace

from tree_sitter import Node

from tracer.extract.facts import (
    AliasDef,
    ClassDef,
    FieldDef,
    FileSummary,
    FunctionDef,
    ImportDef,
    Param,
)
from tracer.extract.parse import Match, Parsed, matches_by_concern, text
from tracer.extract.values import value_of

PARAM_KINDS = {
    "list_splat_pattern": "varargs",
    "dictionary_splat_pattern": "kwargs",
}


def summarize(parsed: Parsed) -> FileSummary:
    """The symbols of PARSED; the tree is only read."""
    by_concern = matches_by_concern(SUMMARY_QUERIES, parsed.tree.root_node, CONCERNS)
    functions, classes = definitions(by_concern["definitions"], class_fields(by_concern["fields"]))
    functions = with_declarations(functions, classes, by_concern["declarations"])
    classes = with_declared_attributes(classes, functions, by_concern["attributes"])
    return FileSummary(
        imports=tuple(imports(by_concern["imports"])),
        classes=tuple(classes),
        functions=tuple(functions),
        aliases=tuple(aliases(by_concern["aliases"])),
        warnings=parsed.warnings,
    )


SUMMARY_QUERIES = ("definitions", "imports", "fields", "aliases")
# The capture that tells which concern a match belongs to.
CONCERNS = {
    "definition.class": "definitions",
    "definition.function": "definitions",
    "definition.lambda": "definitions",
    "reference.import": "imports",
    "reference.import.from": "imports",
    "definition.field": "fields",
    "name.definition.alias": "aliases",
    "declared.attribute": "attributes",
    "declared.global": "declarations",
    "declared.nonlocal": "declarations",
}


def definitions(
    found: list[Match], fields: dict[int, list[FieldDef]]
) -> tuple[list[FunctionDef], list[ClassDef]]:
    """Functions and classes with qualified names; FIELDS by the start byte of their class."""
    found.sort(key=lambda m: definition_node(m).start_byte)
    functions: list[FunctionDef] = []
    classes: list[ClassDef] = []
    # Open scopes as (end_byte, qualname, is_class), innermost last.
    stack: list[tuple[int, str, bool]] = []
    lambdas: dict[str, int] = {}
    for match in found:
        node = definition_node(match)
        while stack and stack[-1][0] <= node.start_byte:
            stack.pop()
        outer = stack[-1][1] if stack else ""
        in_class = bool(stack) and stack[-1][2]
        if "definition.lambda" in match:
            lambdas[outer] = lambdas.get(outer, 0) + 1
            name = f"<lambda{lambdas[outer]}>"
        else:
            name_key = (
                "name.definition.class"
                if "definition.class" in match
                else ("name.definition.function")
            )
            name = text(match[name_key][0])
        qualname = f"{outer}.{name}" if outer else name
        if "definition.class" in match:
            bases = match.get("definition.class.bases", [])
            classes.append(
                ClassDef(
                    qualname=qualname,
                    name=name,
                    bases=tuple(base_names(bases[0])) if bases else (),
                    decorators=decorators(node),
                    fields=tuple(fields.get(node.start_byte, ())),
                    line=node.start_point[0] + 1,
                    end_line=node.end_point[0] + 1,
                )
            )
            stack.append((node.end_byte, qualname, True))
            continue
        functions.append(function_def(match, node, name, qualname, outer if in_class else None))
        stack.append((node.end_byte, qualname, False))
    return functions, classes


def with_declarations(
    functions: list[FunctionDef], classes: list[ClassDef], found: list[Match]
) -> list[FunctionDef]:
    """FUNCTIONS, each with the names its own body declares `global` or `nonlocal` (FOUND):
    a declaration belongs to the innermost function around it, unless a class body nearer
    holds it (a class body's own declaration binds no function's name)."""
    declared: dict[int, list[tuple[str, str]]] = {}
    for match in found:
        word = "global" if "declared.global" in match else "nonlocal"
        node = match[f"declared.{word}"][0]
        around = [
            (f.start_byte, i)
            for i, f in enumerate(functions)
            if f.start_byte <= node.start_byte < f.end_byte and not f.is_lambda
        ]
        if not around:
            continue  # at the module's level: names the module's own
        i = max(around)[1]
        line = node.start_point[0] + 1
        if any(functions[i].line < c.line and c.line <= line <= c.end_line for c in classes):
            continue
        pair = (text(node), word)
        if pair not in declared.setdefault(i, []):
            declared[i].append(pair)
    return [
        replace(f, declared=tuple(declared[i])) if i in declared else f
        for i, f in enumerate(functions)
    ]


def definition_node(match: dict[str, list[Node]]) -> Node:
    for key in ("definition.class", "definition.function", "definition.lambda"):
        if key in match:
            return match[key][0]
    raise KeyError("definition match without a definition capture")


def function_def(
    match: dict[str, list[Node]], node: Node, name: str, qualname: str, owner: str | None
) -> FunctionDef:
    is_lambda = "definition.lambda" in match
    if is_lambda:
        params_node = node.child_by_field_name("parameters")
        returns = None
    else:
        params_node = match["definition.function.parameters"][0]
        returns_nodes = match.get("definition.function.returns")
        returns = text(returns_nodes[0]) if returns_nodes else None
    return FunctionDef(
        qualname=qualname,
        name=name,
        class_qualname=owner,
        params=tuple(parameters(params_node)) if params_node is not None else (),
        decorators=() if is_lambda else decorators(node),
        returns=returns,
        line=node.start_point[0] + 1,
        end_line=node.end_point[0] + 1,
        start_byte=node.start_byte,
        end_byte=node.end_byte,
        is_lambda=is_lambda,
    )


def parameters(node: Node) -> list[Param]:
    """Parameters in order; a bare `*` switches the rest to keyword-only."""
    params: list[Param] = []
    keyword_only = False
    for child in node.named_children:
        kind = "keyword_only" if keyword_only else "positional"
        child_type = child.type
        if child_type == "identifier":  # most parameters (`self`, `x`): the name is the code
            name = text(child)
            params.append(Param(name, kind, None, (), child.start_point[0] + 1, name))
            continue
        annotation = None
        default: Node | None = None
        name_node: Node | None = child
        if child_type == "keyword_separator":
            keyword_only = True
            continue
        if child_type in ("positional_separator", "comment"):
            continue
        if child_type in PARAM_KINDS:
            kind = PARAM_KINDS[child_type]
            keyword_only = keyword_only or kind == "varargs"
            name_node = child.named_children[0] if child.named_children else None
        elif child_type in ("typed_parameter", "typed_default_parameter", "default_parameter"):
            first = child.named_children[0]
            if first.type in PARAM_KINDS:
                kind = PARAM_KINDS[first.type]
                keyword_only = keyword_only or kind == "varargs"
                first = first.named_children[0] if first.named_children else first
            name_node = child.child_by_field_name("name") or first
            type_node = child.child_by_field_name("type")
            annotation = text(type_node) if type_node is not None else None
            default = child.child_by_field_name("value")
        if name_node is None or name_node.type != "identifier":
            continue
        refs = value_of(default).refs if default is not None else ()
        params.append(
            Param(
                name=text(name_node),
                kind=kind,
                annotation=annotation,
                default_refs=refs,
                line=child.start_point[0] + 1,
                code=text(child),
            )
        )
    return params


def decorators(node: Node) -> tuple[str, ...]:
    """Decorator names (`dataclass`, `dataclasses.dataclass`), call arguments dropped."""
    parent = node.parent
    if parent is None or parent.type != "decorated_definition":
        return ()
    names = []
    for child in parent.named_children:
        if child.type != "decorator" or not child.named_children:
            continue
        expr = child.named_children[0]
        if expr.type == "call":
            expr = expr.child_by_field_name("function") or expr
        names.append(text(expr))
    return tuple(names)


def base_names(node: Node) -> list[str]:
    """Base classes as dotted text; keyword arguments (metaclass=...) and generics dropped."""
    bases = []
    for child in node.named_children:
        if child.type == "subscript":  # Generic[T], Base[Config]
            child = child.child_by_field_name("value") or child
        if child.type in ("identifier", "attribute"):
            bases.append(text(child))
    return bases


def with_declared_attributes(
    classes: list[ClassDef], functions: list[FunctionDef], found: list[Match]
) -> list[ClassDef]:
    """CLASSES with the attributes their methods declare without a value (`self.x: T`, the
    method's first parameter's attribute) at the top of their bodies (FOUND)."""
    if not found:
        return classes
    methods = {f.start_byte: f for f in functions if f.class_qualname is not None}
    declared: dict[str, list[FieldDef]] = {}
    for match in found:
        statement = match["declared.attribute"][0]
        if statement.child_by_field_name("right") is not None:
            continue  # `self.x: T = v`: an assignment, in the flows
        function = statement.parent.parent.parent  # < expression_statement < block < def
        method = methods.get(function.start_byte)
        receiver = text(match["declared.receiver"][0])
        if method is None or method.is_static or not method.params:
            continue
        if method.params[0].name != receiver:
            continue
        declared.setdefault(method.class_qualname or "", []).append(
            FieldDef(
                name=text(match["name.declared.attribute"][0]),
                annotation=text(match["declared.type"][0]),
                default_refs=(),
                line=statement.start_point[0] + 1,
                end_line=statement.end_point[0] + 1,
                code=text(statement),
            )
        )
    return [replace(c, declared=tuple(declared.get(c.qualname, ()))) for c in classes]


def class_fields(found: list[Match]) -> dict[int, list[FieldDef]]:
    """Class-level assignments keyed by the start byte of their class."""
    by_class: dict[int, list[FieldDef]] = {}
    for match in found:
        statement = match["definition.field"][0]
        klass = statement.parent.parent.parent  # assignment < expression_statement < block < class
        type_node = statement.child_by_field_name("type")
        value = statement.child_by_field_name("right")
        by_class.setdefault(klass.start_byte, []).append(
            FieldDef(
                name=text(match["name.definition.field"][0]),
                annotation=text(type_node) if type_node is not None else None,
                default_refs=value_of(value).refs if value is not None else (),
                line=statement.start_point[0] + 1,
                end_line=statement.end_point[0] + 1,
                code=text(statement),
            )
        )
    return by_class


def imports(found: list[Match]) -> list[ImportDef]:
    result: list[ImportDef] = []
    for node in (m["reference.import"][0] for m in found if "reference.import" in m):
        line = node.start_point[0] + 1
        for child in node.children_by_field_name("name"):
            if child.type == "aliased_import":
                module = text(child.child_by_field_name("name"))
                alias = text(child.child_by_field_name("alias"))
                result.append(ImportDef(module, 0, None, alias, line))
            else:
                module = text(child)
                # `import a.b` binds `a`; resolution keeps the full path in `module`.
                result.append(ImportDef(module, 0, None, module.split(".")[0], line))
    for match in found:
        if "reference.import.from" in match:
            result.extend(from_import(match["reference.import.from"][0]))
    return result


def from_import(node: Node) -> list[ImportDef]:
    line = node.start_point[0] + 1
    module_node = node.child_by_field_name("module_name")
    level = 0
    module = ""
    if module_node is not None and module_node.type == "relative_import":
        for child in module_node.children:
            if child.type == "import_prefix":
                level = text(child).count(".")
            elif child.type == "dotted_name":
                module = text(child)
    else:
        module = text(module_node)
    result = []
    if any(child.type == "wildcard_import" for child in node.children):
        result.append(ImportDef(module, level, "*", "*", line))
    for child in node.children_by_field_name("name"):
        if child.type == "aliased_import":
            name = text(child.child_by_field_name("name"))
            alias = text(child.child_by_field_name("alias"))
        else:
            name = alias = text(child)
        result.append(ImportDef(module, level, name, alias, line))
    return result


def aliases(found: list[Match]) -> list[AliasDef]:
    return [
        AliasDef(
            name=text(m["name.definition.alias"][0]),
            value=text(m["definition.alias.value"][0]),
            line=m["name.definition.alias"][0].start_point[0] + 1,
        )
        for m in found
    ]
