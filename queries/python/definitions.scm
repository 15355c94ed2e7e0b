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

; Names a function binds in its module or an enclosing function: `global x`, `nonlocal x`
(global_statement (identifier) @declared.global)
(nonlocal_statement (identifier) @declared.nonlocal)
