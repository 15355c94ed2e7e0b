; Class-level attributes: dataclass fields, annotated attributes, plain class variables.

; name: T = default   /   name: T   /   name = default
(class_definition
  body: (block
    (expression_statement
      (assignment
        left: (identifier) @name.definition.field) @definition.field)))
