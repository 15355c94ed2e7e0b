; Module-level bindings of one name to another: `Runner = ModelRunner`, `x = pkg.mod.y`.

(module
  (expression_statement
    (assignment
      left: (identifier) @name.definition.alias
      right: [(identifier) (attribute)] @definition.alias.value)))
