; Statements that bind a value to a name, an attribute or a tuple of them.

; x = v, x: T = v, a, b = v, self.x = v
(assignment
  left: (_) @assign.target
  right: (_) @assign.value) @assign

; x += v
(augmented_assignment
  left: (_) @assign.target
  right: (_) @assign.value) @assign.augmented

; for x in v:
(for_statement
  left: (_) @assign.target
  right: (_) @assign.value) @assign.for

; with v as x:
(with_item
  value: (as_pattern
    (_) @assign.value
    alias: (as_pattern_target (_) @assign.target))) @assign.with

; (x := v)
(named_expression
  name: (identifier) @assign.target
  value: (_) @assign.value) @assign.walrus

; match v: case PATTERN: binds the names of PATTERN to parts of v (tracer/extract/cases.py)
(case_clause) @assign.case
