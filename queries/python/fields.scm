; Class-level attributes: dataclass fields, annotated attributes, plain class variables.

; name: T = default   /   name: T   /   name = default
(class_definition
  body: (block
    (expression_statement
      (assignment
        left: (identifier) @name.definition.field) @definition.field)))

; self.name: T   (in a method's body, no value): what the instance's attribute will hold
(function_definition
  body: (block
    (expression_statement
      (assignment
        left: (attribute
          object: (identifier) @declared.receiver
          attribute: (identifier) @name.declared.attribute)
        type: (type) @declared.type) @declared.attribute)))
