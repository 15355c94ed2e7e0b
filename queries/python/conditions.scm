; Reads that steer control flow: the value is used, not moved.

(if_statement condition: (_) @use.condition)

(elif_clause condition: (_) @use.condition)

(while_statement condition: (_) @use.condition)

(assert_statement) @use.assert
