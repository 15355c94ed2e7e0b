; Reads that steer control flow: the value is used, not moved.

(if_statement condition: (_) @use.condition)

(elif_clause condition: (_) @use.condition)

(while_statement condition: (_) @use.condition)

; case PATTERN if GUARD: the guard reads the names the pattern binds
(case_clause guard: (if_clause (_) @use.condition))

(assert_statement) @use.assert
