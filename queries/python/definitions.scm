; Definitions: the scopes of a module, in one pass.
; Decorators are read from the enclosing decorated_definition in Python.

; Classes, with their base-class list
(class_definition
  name: (identifier) @name.definition.class
  superclasses: (argument_list)? @definition.class.bases) @definition.class

; Functions and methods, with their parameter list and return annotation
(function_definition
  name: (identifier) @name.definition.function
  parameters: (parameters) @definition.function.parameters
  return_type: (_)? @definition.function.returns) @definition.function

; Lambdas are scopes too (`mod.<lambda1>` in the call graph)
(lambda) @definition.lambda
